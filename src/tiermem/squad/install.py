"""`tiermem squad install`: wire tiermem into a Squad team, report what is in place, take it out.

An install registers `tiermem serve` in `.mcp.json` (and `.vscode/mcp.json` where `.vscode/`
exists), creates the tiermem store, appends a marked memory section to every charter, puts
the runtime `tiered-memory` skill in place of Squad's design-only one and, with
`coordinator`, replaces the two lines of Squad's spawn template that load an agent's whole
history and decision log. What it replaced is kept in `.squad/memory/tiermem-install.json`,
so `uninstall` puts back the bytes Squad wrote.

Everything is planned before anything is written: a refusal (a symbolic link, a file that
is not JSON, a state backend other than local) leaves the repository untouched. A cloned
repository is untrusted input, so no path is read or written through a link, nor outside
the root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .. import bootstrap, files, safepath, validate
from ..errors import StoreError, UsageError
from ..layout import Layout, discover_root
from . import texts

SERVER = "tiermem"
MANIFEST = ".squad/memory/tiermem-install.json"
MCP_JSON = ".mcp.json"
VSCODE_MCP = ".vscode/mcp.json"
SPAWN_TEMPLATE = ".squad/templates/spawn-reference.md"
SKILLS = (".squad/skills/tiered-memory/SKILL.md", ".github/skills/tiered-memory/SKILL.md")
SQUAD_SKILL_COPY = ".squad/templates/skills/tiered-memory/SKILL.md"
STORE_DIRS = ("hot", "cold", "wiki", "archive", "queue")
STORE_FILES = ("config.toml", ".gitignore", ".gitattributes")
# Derived, transient or local files of a store (the index, temp files, this clone's spawn
# log and list of tracked files): an unused store may hold them.
_TRANSIENT = re.compile(r"index\.sqlite(-\w+)?|\.tmp-.*|spawns\.jsonl|citations\.cache")
_LOCAL_BACKENDS = {"local", "worktree", "external", "external-stub"}

# States of a check that `install` would act on (exit status 1), and states of an install
# or uninstall that left the repository as it was.
NEEDS_INSTALL = frozenset({"missing", "undone", "outdated"})
UNCHANGED = frozenset({"installed", "unchanged", "skipped", "kept", "absent"})


@dataclass(frozen=True)
class Step:
    """One thing an install puts in place (or an uninstall takes out), and its state."""

    path: str
    what: str
    state: str
    before: bytes | None = None
    after: bytes | None = None
    note: str = ""
    kind: str = "file"  # file | store

    @property
    def writes(self) -> bool:
        """Whether applying this step changes the repository."""
        return self.before != self.after

    def line(self) -> str:
        """The step as one line of the command's report."""
        note = f" ({self.note})" if self.note else ""
        return f"{self.state:<9} {self.path}: {self.what}{note}"

    def as_json(self) -> dict[str, str]:
        """The step for --format json."""
        return {"path": self.path, "what": self.what, "state": self.state, "note": self.note}


@dataclass
class Report:
    """What an install, check or uninstall found or did, step by step."""

    action: str
    steps: list[Step] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when a check finds something that `install` would add or change."""
        return int(self.action == "check" and any(s.state in NEEDS_INSTALL for s in self.steps))

    def lines(self) -> list[str]:
        """The report for people: one line per step, then a verdict."""
        return [s.line() for s in self.steps] + [self._verdict()]

    def _verdict(self) -> str:
        if self.action == "check":
            todo = sum(s.state in NEEDS_INSTALL for s in self.steps)
            return f"{todo} item(s) need `tiermem squad install`" if todo else "all installed"
        changed = sum(s.state not in UNCHANGED for s in self.steps)
        done = {"install": "installed", "uninstall": "uninstalled"}[self.action]
        return f"{done}: {changed} change(s)" if changed else f"{done}: nothing to change"


# --- paths in an untrusted repository ---------------------------------------------------


class Repo:
    """A repository root whose paths are checked for links and escapes before any use."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def path(self, rel: str) -> Path:
        """The path of `rel`, refused when any part of it is a link or it leads outside."""
        current = self.root
        for part in PurePosixPath(rel).parts:
            if part in ("", ".", "..") or "/" in part:
                raise UsageError(f"{rel}: not a plain path inside the repository")
            current = current / part
            try:
                mode = current.lstat().st_mode
            except FileNotFoundError:
                break
            except OSError as exc:
                raise UsageError(f"{self.shown(current)} cannot be read ({exc.strerror})") from None
            if stat.S_ISLNK(mode):
                raise UsageError(
                    f"{self.shown(current)} is a symbolic link; tiermem reads and writes no "
                    "repository path through a link (nothing was written)"
                )
        target = self.root / rel
        real = Path(os.path.realpath(target))
        if real != self.root and self.root not in real.parents:
            raise UsageError(f"{rel} leads outside {self.root} (nothing was written)")
        return target

    def shown(self, path: Path) -> str:
        """A path as the user sees it: relative to the root."""
        return path.relative_to(self.root).as_posix()

    def read(self, rel: str) -> bytes | None:
        """A regular file's bytes, or None when it does not exist."""
        path = self.path(rel)
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(mode):
            raise UsageError(f"{rel} is not a regular file (nothing was written)")
        data = safepath.read_bytes(path)  # O_NOFOLLOW: a link put in since is refused
        if data is None:
            return None
        if len(data) > validate.MAX_INPUT_BYTES:
            limit = validate.MAX_INPUT_BYTES
            raise UsageError(f"{rel} is over {limit} bytes (nothing was written)")
        return data

    def text(self, rel: str) -> str | None:
        """A file's UTF-8 text, or None when it does not exist."""
        data = self.read(rel)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{rel} is not valid UTF-8 (nothing was written)") from None

    def exists(self, rel: str) -> bool:
        """Whether anything (a file, a folder, a link) is at `rel`."""
        try:
            self.path(rel).lstat()
        except FileNotFoundError:
            return False
        return True

    def is_dir(self, rel: str) -> bool:
        """Whether `rel` is a real folder (not a link to one)."""
        path = self.path(rel)
        try:
            return stat.S_ISDIR(path.lstat().st_mode)
        except FileNotFoundError:
            return False

    def missing_dirs(self, rel: str) -> list[str]:
        """The folders above `rel` that do not exist yet, outermost first."""
        parents = [p.as_posix() for p in reversed(PurePosixPath(rel).parents) if str(p) != "."]
        return [p for p in parents if not self.is_dir(p)]


# --- the repository as Squad left it ----------------------------------------------------


def open_repo(explicit: str | Path | None) -> Repo:
    """The repository of a Squad team: --root, TIERMEM_ROOT, else the nearest `.squad/`."""
    try:
        repo = Repo(discover_root(explicit))
    except StoreError:
        raise UsageError(
            "no .squad/ folder here or above: run `squad init` first, or pass --root"
        ) from None
    if not repo.is_dir(".squad/agents"):
        raise UsageError(f"no Squad team in {repo.root}: .squad/agents/ is missing")
    return repo


def refuse_remote_state(repo: Repo) -> None:
    """Refuse a team whose Squad state is not kept in this working tree's `.squad/`."""
    raw = repo.text(".squad/config.json")
    if raw is None:
        return
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f".squad/config.json is not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise UsageError(".squad/config.json is not a JSON object")
    backend = config.get("stateBackend", "local")
    if config.get("teamRoot"):
        raise UsageError(
            "this .squad/ points to a team kept elsewhere (teamRoot in .squad/config.json): "
            "run `tiermem squad install` in the team's own repository"
        )
    if config.get("stateLocation") == "external":
        raise UsageError(
            "this team's Squad state is kept outside the repository (stateLocation "
            "'external' in .squad/config.json); tiermem works with state kept in .squad/"
        )
    if backend not in _LOCAL_BACKENDS:
        raise UsageError(
            f"Squad state backend '{backend}' (stateBackend in .squad/config.json) keeps "
            "histories and decisions off the working tree; tiermem works with the local "
            "backend only"
        )


# --- the install record -------------------------------------------------------------------


@dataclass
class Record:
    """What an install did that uninstall needs: replaced texts and created folders."""

    coordinator: bool = False
    store: str = ""  # "created" or "found" (a store that existed before the install)
    installed: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    originals: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def load(cls, repo: Repo) -> Record:
        raw = repo.text(MANIFEST)
        if raw is None:
            return cls()
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{MANIFEST} is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise UsageError(f"{MANIFEST} is not a JSON object")
        return cls(
            coordinator=data.get("coordinator") is True,
            store=str(data.get("store", "")),
            installed=[str(p) for p in data.get("installed", [])],
            created_dirs=[str(p) for p in data.get("created_dirs", [])],
            originals={
                str(k): (None if v is None else str(v))
                for k, v in dict(data.get("originals", {})).items()
            },
        )

    def render(self) -> bytes:
        data: dict[str, Any] = {
            "about": "Written by `tiermem squad install`; `tiermem squad install --uninstall` "
            "uses it to put back what Squad wrote. Commit it with the files it describes.",
            "coordinator": self.coordinator,
            "store": self.store,
            "installed": sorted(set(self.installed)),
            "created_dirs": sorted(set(self.created_dirs)),
            "originals": dict(sorted(self.originals.items())),
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def keep_original(self, rel: str, current: bytes | None, ours: bool) -> None:
        """Remember what Squad had at `rel`, unless what is there now is tiermem's own."""
        if rel not in self.originals or not ours:
            self.originals[rel] = None if current is None else current.decode("utf-8")


# --- MCP registrations --------------------------------------------------------------------


def server_command() -> tuple[str, list[str]]:
    """How an MCP client starts tiermem: the `tiermem` on PATH, else this Python's module."""
    if shutil.which(SERVER):
        return SERVER, []
    return sys.executable, ["-m", "tiermem"]


def mcp_entries() -> dict[str, tuple[str, dict[str, Any]]]:
    """Per config file: the key holding its servers, and tiermem's entry.

    `.mcp.json` (Copilot CLI, Claude Code) names no root: like Squad's own `squad_state`
    server, tiermem finds the team from the folder the client starts it in (the nearest
    `.squad/` above), so the committed file works in every clone and worktree. VS Code
    expands `${workspaceFolder}` to the workspace's root.
    """
    command, prefix = server_command()
    return {
        MCP_JSON: (
            "mcpServers",
            {"command": command, "args": [*prefix, "serve"], "env": {}, "tools": ["*"]},
        ),
        VSCODE_MCP: (
            "servers",
            {
                "type": "stdio",
                "command": command,
                "args": [*prefix, "serve", "--root", "${workspaceFolder}"],
            },
        ),
    }


def _json_config(rel: str, raw: bytes | None, key: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(
            f"{rel} is not plain JSON ({exc}); add the tiermem server by hand (docs/mcp.md) "
            "or fix the file (nothing was written)"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
        raise UsageError(f'{rel}: expected a JSON object with a "{key}" object')
    return data


def _indent(raw: bytes | None) -> str | int:
    """The indentation unit of a JSON file (2 spaces, as Squad writes, when unknown)."""
    hit = re.search(rb'\n([ \t]+)"', raw or b"")
    if hit is None:
        return 2
    unit = hit.group(1).decode()
    return unit if "\t" in unit else len(unit)


def _dump(data: dict[str, Any], indent: str | int) -> bytes:
    # JSON.stringify(data, null, 2) + "\n", as Squad writes .mcp.json: a rewrite by Squad
    # then changes only what it means to change.
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def _with_server(data: dict[str, Any] | None, key: str, entry: dict[str, Any]) -> dict[str, Any]:
    data = dict(data or {})
    data[key] = {**data.get(key, {}), SERVER: entry}
    return data


def _without_server(data: dict[str, Any], key: str) -> dict[str, Any]:
    data = dict(data)
    data[key] = {k: v for k, v in data.get(key, {}).items() if k != SERVER}
    return data


def plan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Register `tiermem serve` beside whatever servers the file already has."""
    key, entry = mcp_entries()[rel]
    raw = repo.read(rel)
    data = _json_config(rel, raw, key)
    present = data is not None and SERVER in data.get(key, {})
    after = _dump(_with_server(data, key, entry), _indent(raw))
    if after != raw:
        record.keep_original(rel, raw, ours=present)
    return _install_step(rel, "tiermem MCP server", raw, after, present, record)


def unplan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Take tiermem's entry out; Squad's own bytes come back when nothing else changed."""
    raw = repo.read(rel)
    key = mcp_entries()[rel][0]
    data = _json_config(rel, raw, key)
    what = "tiermem MCP server"
    if data is None or SERVER not in data.get(key, {}):
        return Step(rel, what, "absent", raw, raw)
    stripped = _without_server(data, key)
    if rel in record.originals:
        original = record.originals[rel]
        if original is None and stripped == {key: {}}:
            return Step(rel, what, "removed", raw, None, "the install had made the file")
        if original is not None:
            before = _json_config(rel, original.encode("utf-8"), key) or {}
            if _without_server(before, key) == stripped:
                return Step(rel, what, "restored", raw, original.encode("utf-8"))
    return Step(rel, what, "removed", raw, _dump(stripped, _indent(raw)))


# --- charters ---------------------------------------------------------------------------

_MEMORY_BLOCK = re.compile(
    rf"^(?:{re.escape(texts.MEMORY_BEGIN)}|(?P<noeol>{re.escape(texts.MEMORY_BEGIN_NO_EOL)}))\n"
    rf"(?:.*\n)*?{re.escape(texts.MEMORY_END)}(?:\n|\Z)",
    re.MULTILINE,
)


def without_memory_block(text: str, rel: str = "charter") -> str:
    """A charter without tiermem's section, and without the blank line set before it."""
    while (hit := _MEMORY_BLOCK.search(text)) is not None:
        lead = 2 if hit.group("noeol") else 1
        start = hit.start() - lead if text[: hit.start()].endswith("\n" * lead) else hit.start()
        text = text[:start] + text[hit.end() :]
    if texts.MEMORY_BEGIN[:-4] in text:
        raise UsageError(f"{rel}: tiermem's memory section has lost its end marker; fix it by hand")
    return text


def with_memory_block(text: str, block: str) -> str:
    """A charter with tiermem's section at its end, after one blank line."""
    base = without_memory_block(text)
    if base.endswith("\n") or not base:
        return f"{base}\n{block}" if base else block
    return f"{base}\n\n{block.replace(texts.MEMORY_BEGIN, texts.MEMORY_BEGIN_NO_EOL, 1)}"


def charters(repo: Repo) -> list[tuple[str, str]]:
    """(folder name, charter path) of every agent under `.squad/agents/` with a charter."""
    found = []
    with os.scandir(repo.path(".squad/agents")) as listing:
        for item in sorted(listing, key=lambda e: e.name):
            rel = f".squad/agents/{item.name}/charter.md"
            if item.is_symlink() or (
                item.is_dir(follow_symlinks=False) and repo.read(rel) is not None
            ):
                repo.path(rel)  # a link is refused here, before anything is written
                found.append((item.name, rel))
    return found


def _is_scribe(folder: str, text: str) -> bool:
    return folder.lower() == "scribe" or text.startswith("# Scribe")


def plan_charter(repo: Repo, folder: str, rel: str, record: Record) -> Step:
    """Append (or refresh) the memory section that tells the agent how to use tiermem."""
    text = repo.text(rel) or ""
    try:
        agent = validate.name(folder)
    except UsageError:
        note = "its folder name is not a tiermem agent name"
        return Step(rel, "memory section", "skipped", None, None, note)
    scribe = _is_scribe(folder, text)
    block = texts.agent_memory_block(agent, scribe)
    after = with_memory_block(text, block).encode("utf-8")
    present = without_memory_block(text, rel) != text
    what = "memory section (Scribe)" if scribe else "memory section"
    return _install_step(rel, what, text.encode("utf-8"), after, present, record)


def unplan_charter(repo: Repo, rel: str) -> Step:
    raw = repo.text(rel) or ""
    after = without_memory_block(raw, rel)
    state = "removed" if after != raw else "absent"
    return Step(rel, "memory section", state, raw.encode("utf-8"), after.encode("utf-8"))


# --- the tiered-memory skill ------------------------------------------------------------


def is_our_skill(data: bytes | None) -> bool:
    """Whether a SKILL.md is the one tiermem installs (its front matter says so)."""
    head = (data or b"")[:1000].decode("utf-8", "replace")
    return head.startswith("---\n") and f"\n{texts.SKILL_SOURCE}\n" in head


def skill_targets(repo: Repo) -> list[str]:
    """`.squad/skills/` always; `.github/skills/` where Squad put its skills."""
    return [rel for rel in SKILLS if rel.startswith(".squad/") or repo.is_dir(".github/skills")]


def plan_skill(repo: Repo, rel: str, record: Record) -> Step:
    """Put the runtime skill in place of Squad's design-only one."""
    raw = repo.read(rel)
    after = texts.SKILL.encode("utf-8")
    present = is_our_skill(raw)
    if after != raw:
        record.keep_original(rel, raw, ours=present)
        record.created_dirs += repo.missing_dirs(rel)
    return _install_step(rel, "tiered-memory skill (runtime)", raw, after, present, record)


def unplan_skill(repo: Repo, rel: str, record: Record) -> Step:
    raw = repo.read(rel)
    what = "tiered-memory skill"
    if raw is None:
        return Step(rel, what, "absent")
    if not is_our_skill(raw):
        return Step(rel, what, "kept", raw, raw, "not tiermem's; left as it is")
    if rel in record.originals:
        original = record.originals[rel]
    else:  # no record: Squad's copy under its templates is what init put there
        original = repo.text(SQUAD_SKILL_COPY) if rel.startswith(".github/") else None
    if original is None:
        return Step(rel, what, "removed", raw, None)
    return Step(rel, what, "restored", raw, original.encode("utf-8"), "Squad's design-only skill")


# --- the coordinator's spawn template ---------------------------------------------------

_FULL_HISTORY = re.compile(
    r"^(?P<indent>[ \t]*)Read `agents/\{name\}/history\.md`.*\n[ \t]*Read `decisions\.md`.*\n",
    re.MULTILINE,
)
_SPAWN_BLOCK = re.compile(
    rf"^(?P<indent>[ \t]*){re.escape(texts.SPAWN_BEGIN)}\n(?:.*\n)*?"
    rf"[ \t]*{re.escape(texts.SPAWN_END)}\n",
    re.MULTILINE,
)


def plan_spawn(repo: Repo, record: Record) -> Step:
    """Replace the two full-history lines of the spawn template with the tiermem step."""
    rel = SPAWN_TEMPLATE
    text = repo.text(rel)
    if text is None:
        raise UsageError(f"{rel} is missing; run `squad upgrade` to restore Squad's templates")
    block = _SPAWN_BLOCK.search(text)
    if block is not None:
        after = text[: block.start()] + texts.spawn_block(block["indent"]) + text[block.end() :]
        return _install_step(rel, "spawn step", text.encode(), after.encode(), True, record)
    lines = _FULL_HISTORY.search(text)
    if lines is None:
        raise UsageError(
            f"{rel} has no `Read agents/{{name}}/history.md` line followed by `Read "
            "decisions.md` to replace (nothing was written)"
        )
    record.originals[rel] = lines.group(0)
    after = text[: lines.start()] + texts.spawn_block(lines["indent"]) + text[lines.end() :]
    return _install_step(rel, "spawn step", text.encode(), after.encode(), False, record)


def unplan_spawn(repo: Repo, record: Record) -> Step:
    rel = SPAWN_TEMPLATE
    text = repo.text(rel)
    block = None if text is None else _SPAWN_BLOCK.search(text)
    if text is None or block is None:
        return Step(rel, "spawn step", "absent")
    original = record.originals.get(rel) or "".join(
        f"{block['indent']}{line}\n" for line in texts.SQUAD_SPAWN_LINES.splitlines()
    )
    after = text[: block.start()] + original + text[block.end() :]
    note = "Squad's full-history lines"
    return Step(rel, "spawn step", "restored", text.encode(), after.encode(), note)


# --- the tiermem store --------------------------------------------------------------------


def _store_paths() -> list[str]:
    return [f".squad/memory/{name}" for name in (*STORE_DIRS, *STORE_FILES)]


def plan_store(repo: Repo, record: Record) -> Step:
    """The store `tiermem serve` needs (created only where it is missing)."""
    missing = [rel for rel in _store_paths() if not repo.exists(rel)]
    if not record.store:
        record.store = "created" if len(missing) == len(_store_paths()) else "found"
    state = _install_state(".squad/memory/", not missing, False, record)
    return Step(".squad/memory/", "tiermem store (hot, cold, wiki, archive)", state, kind="store")


def _fresh_store_files() -> dict[str, bytes]:
    """The files `tiermem init` makes, as it makes them today."""
    with tempfile.TemporaryDirectory() as scratch:
        bootstrap.init_store(Path(scratch), squad_files=False)
        memory = Layout(Path(scratch)).memory
        return {name: (memory / name).read_bytes() for name in STORE_FILES}


def unplan_store(repo: Repo, record: Record) -> Step:
    """The store goes only when the install made it and it still holds no memory."""
    what = "tiermem store"
    if not repo.is_dir(".squad/memory/hot"):
        return Step(".squad/memory/", what, "absent", kind="store")
    if record.store != "created":
        return Step(".squad/memory/", what, "kept", kind="store", note="it was there before")
    if not _unused_store(repo):
        note = "it holds the team's memory; delete it by hand if you mean to"
        return Step(".squad/memory/", what, "kept", kind="store", note=note)
    return Step(".squad/memory/", what, "removed", kind="store", note="it held no memory")


def _unused_store(repo: Repo) -> bool:
    fresh = _fresh_store_files()
    for name in STORE_DIRS:
        folder = repo.path(f".squad/memory/{name}")
        if folder.is_dir() and any(not files.is_temp(p) for p in folder.iterdir()):
            return False
    return all(repo.read(f".squad/memory/{name}") in (fresh[name], None) for name in fresh)


def remove_store(repo: Repo) -> None:
    """Delete an unused store: its folders, files, index and lock files."""
    memory = repo.path(".squad/memory")
    for name in STORE_DIRS:
        folder = repo.path(f".squad/memory/{name}")
        if folder.is_dir():
            for temp in folder.iterdir():
                temp.unlink()
            folder.rmdir()
    for name in STORE_FILES:
        repo.path(f".squad/memory/{name}").unlink(missing_ok=True)
    for item in memory.iterdir():
        if _TRANSIENT.fullmatch(item.name) and not item.is_symlink():
            item.unlink()
    locks = repo.path(".squad/memory/.locks")
    if locks.is_dir():
        for lock in locks.iterdir():
            lock.unlink()
        locks.rmdir()


# --- planning, checking, applying ---------------------------------------------------------


def _install_state(rel: str, done: bool, present: bool, record: Record) -> str:
    if done:
        return "installed"
    if present:
        return "outdated"
    return "undone" if rel in record.installed else "missing"


def _install_step(
    rel: str, what: str, before: bytes | None, after: bytes, present: bool, record: Record
) -> Step:
    state = _install_state(rel, before == after, present, record)
    note = ""
    if state == "undone" and rel.startswith(".squad/templates/"):
        note = "`squad upgrade` rewrites .squad/templates/"
    elif state == "undone":
        note = "removed since the install"
    return Step(rel, what, state, before, after, note)


def plan(repo: Repo, coordinator: bool) -> tuple[list[Step], Record]:
    """Every step of an install, and the record it leaves (nothing is written)."""
    old = Record.load(repo)
    record = Record.load(repo)
    record.coordinator = coordinator or old.coordinator
    steps = [plan_store(repo, record), plan_mcp(repo, MCP_JSON, record)]
    if _is_link(repo, ".vscode"):
        note = ".vscode is a symbolic link; register tiermem there by hand (docs/mcp.md)"
        steps.append(Step(VSCODE_MCP, "tiermem MCP server", "skipped", note=note))
    elif repo.is_dir(".vscode"):
        steps.append(plan_mcp(repo, VSCODE_MCP, record))
    steps += [plan_charter(repo, folder, rel, record) for folder, rel in charters(repo)]
    steps += [plan_skill(repo, rel, record) for rel in skill_targets(repo)]
    if record.coordinator:
        steps.append(plan_spawn(repo, record))
    record.installed = [s.path for s in steps if s.state != "skipped"]
    manifest = repo.read(MANIFEST)
    after = record.render()
    steps.append(_install_step(MANIFEST, "install record", manifest, after, bool(manifest), old))
    return steps, record


def _is_link(repo: Repo, rel: str) -> bool:
    """Whether `rel` (directly under the root) is a symbolic link, which is left alone."""
    return (repo.root / rel).is_symlink()


def check(root: str | Path | None, coordinator: bool = False) -> Report:
    """What is installed, missing, undone since the install (by `squad upgrade`, say)."""
    repo = open_repo(root)
    refuse_remote_state(repo)
    return Report("check", plan(repo, coordinator)[0])


def install(root: str | Path | None, coordinator: bool = False) -> Report:
    """Put everything in place; a second run changes nothing."""
    repo = open_repo(root)
    refuse_remote_state(repo)
    steps, _ = plan(repo, coordinator)
    report = Report("install", [_installed(s) for s in steps])
    if any(s.kind == "store" and s.state != "installed" for s in steps):
        bootstrap.init_store(repo.root, squad_files=False)
    # The record goes first: were the run cut short, it already holds Squad's texts.
    for step in sorted(steps, key=lambda s: s.path != MANIFEST):
        _write(repo, step)
    return report


def _installed(step: Step) -> Step:
    if step.state in ("installed", "skipped"):
        state = "unchanged" if step.state == "installed" else "skipped"
    else:
        state = {"outdated": "updated", "undone": "restored"}.get(step.state, "added")
    return Step(step.path, step.what, state, step.before, step.after, step.note, step.kind)


def uninstall(root: str | Path | None) -> Report:
    """Take out everything the install put in, putting back Squad's own bytes."""
    repo = open_repo(root)
    record = Record.load(repo)
    steps = [unplan_mcp(repo, MCP_JSON, record)]
    if not _is_link(repo, ".vscode") and repo.read(VSCODE_MCP) is not None:
        steps.append(unplan_mcp(repo, VSCODE_MCP, record))
    steps += [unplan_charter(repo, rel) for _, rel in charters(repo)]
    steps += [unplan_skill(repo, rel, record) for rel in SKILLS]
    steps += [unplan_spawn(repo, record), unplan_store(repo, record)]
    manifest = repo.read(MANIFEST)
    last = Step(MANIFEST, "install record", "removed" if manifest else "absent", manifest)
    for step in steps:
        _write(repo, step)
    if any(s.kind == "store" and s.state == "removed" for s in steps):
        remove_store(repo)
    _remove_created_dirs(repo, record, [s for s in steps if s.state == "removed"])
    _write(repo, last)  # the record goes last: a run cut short can be run again
    return Report("uninstall", [s for s in [*steps, last] if s.state != "absent"])


def _remove_created_dirs(repo: Repo, record: Record, steps: list[Step]) -> None:
    # A removed skill takes its own folder along; the folders above it go only when the
    # record says the install made them.
    skills = [str(PurePosixPath(s.path).parent) for s in steps if s.path in SKILLS]
    for rel in sorted({*record.created_dirs, *skills}, key=len, reverse=True):
        path = repo.path(rel)
        if repo.is_dir(rel) and not any(path.iterdir()):
            path.rmdir()


def _write(repo: Repo, step: Step) -> None:
    if step.kind != "file" or not step.writes:
        return
    path = repo.path(step.path)
    if step.after is None:
        path.unlink(missing_ok=True)
    else:
        files.atomic_write(path, step.after)
