"""`tiermem squad install`: wire tiermem into a Squad team, report what is in place, take it out.

An install registers `tiermem serve` in `.mcp.json` (and `.vscode/mcp.json` where `.vscode/`
exists), creates the tiermem store, appends a marked memory section to every charter, puts
the runtime `tiered-memory` skill in place of Squad's design-only one and, with
`coordinator`, replaces every instruction of Squad's that loads an agent's whole history or
decision log at or before a spawn: the spawn template's two lines, and each such line of the
coordinator's prompt, Squad's templates and the charters (`lines`). What it replaced is
marked in place or kept in `.squad/memory/tiermem-install.json`, so `uninstall` puts back the
bytes Squad wrote.

Everything is planned before anything is written: a refusal (a symbolic link, a file that
is not JSON, a state backend other than local, an install record tiermem did not write as
it writes them) leaves the repository untouched. A cloned repository is untrusted input, so
no path is read or written through a link, nor outside the root, and what uninstall puts
back comes from tiermem or from Squad's own files, never from the record alone (`record`).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import StoreError, UsageError
from ..storage import bootstrap, clone, files, validate
from ..storage.layout import Layout, discover_root
from . import lines, texts
from .paths import (
    COORDINATOR,
    MANIFEST,
    MCP_JSON,
    SKILLS,
    SPAWN_TEMPLATE,
    SQUAD_SKILL_COPY,
    STORE,
    STORE_DIRS,
    STORE_FILES,
    VSCODE_MCP,
)
from .record import Record, is_squads_skill
from .repo import Repo

SERVER = "tiermem"
# Derived, transient or local files of a store (the index, temp files, this clone's spawn
# log and list of tracked files): an unused store may hold them.
_TRANSIENT = re.compile(r"index\.sqlite(-\w+)?|\.tmp-.*|spawns\.jsonl|citations\.cache")
# What tiermem keeps in `local/` (Squad's folder too): this clone's use of entries, its report.
_LOCAL = ("local/used", "local/report/report.html", "local/report/.gitignore")
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
    kind: str = "file"  # file | store | text (written with the other steps on its file)
    number: int = 0  # the line it is about, in a file an install changes line by line
    key: str = ""  # what the install record lists for it (default: its path)

    @property
    def writes(self) -> bool:
        """Whether applying this step changes the repository."""
        return self.before != self.after

    @property
    def recorded(self) -> str:
        """The name the install record lists this step under."""
        return self.key or self.path

    def line(self) -> str:
        """The step as one line of the command's report."""
        note = f" ({self.note})" if self.note else ""
        where = f"{self.path}:{self.number}" if self.number else self.path
        return f"{self.state:<9} {where}: {self.what}{note}"

    def as_json(self) -> dict[str, str | int]:
        """The step for --format json."""
        said: dict[str, str | int] = {"path": self.path, "what": self.what, "state": self.state}
        if self.number:
            said["line"] = self.number
        return {**said, "note": self.note}


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
    if not team_is_here(config.get("teamRoot")):
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


def team_is_here(team_root: object) -> bool:
    """Whether `teamRoot` of `.squad/config.json` leaves the team in this repository, as
    Squad reads it: absent, empty or `"."` (Squad's word for "no separate team root"), or a
    path that comes back to the project root (`./`). Anything but a string names no root."""
    if not isinstance(team_root, str) or not team_root:
        return True
    return posixpath.normpath(team_root.replace("\\", "/")) == "."


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


class Edits:
    """The text files an install changes in more than one step (a charter's lines and its
    memory section; the spawn template's lines and its spawn step): what each held, and
    what the steps planned so far leave in it. Written once, after every step is planned."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.before: dict[str, bytes | None] = {}
        self.now: dict[str, str | None] = {}

    def get(self, rel: str) -> str | None:
        """The file's text as the steps planned so far leave it (None: no such file)."""
        if rel not in self.now:
            text = self.repo.text(rel)
            self.now[rel] = text
            self.before[rel] = None if text is None else text.encode("utf-8")
        return self.now[rel]

    def put(self, rel: str, text: str) -> None:
        self.get(rel)
        self.now[rel] = text

    def changed(self) -> list[tuple[str, bytes]]:
        """Every file whose text the planned steps change, and its new bytes."""
        found = []
        for rel, text in sorted(self.now.items()):
            after = None if text is None else text.encode("utf-8")
            if after is not None and after != self.before[rel]:
                found.append((rel, after))
        return found

    def write(self) -> None:
        for rel, data in self.changed():
            files.atomic_write(self.repo.path(rel), data)


def plan_charter(repo: Repo, edits: Edits, folder: str, rel: str, record: Record) -> Step:
    """Append (or refresh) the memory section that tells the agent how to use tiermem."""
    text = edits.get(rel) or ""
    try:
        agent = validate.name(folder)
    except UsageError:
        note = "its folder name is not a tiermem agent name"
        return Step(rel, "memory section", "skipped", None, None, note)
    scribe = _is_scribe(folder, text)
    block = texts.agent_memory_block(agent, scribe)
    after = with_memory_block(text, block)
    present = without_memory_block(text, rel) != text
    edits.put(rel, after)
    what = "memory section (Scribe)" if scribe else "memory section"
    step = _install_step(rel, what, text.encode(), after.encode(), present, record)
    return _as_text(step)


def unplan_charter(edits: Edits, rel: str) -> Step:
    raw = edits.get(rel) or ""
    after = without_memory_block(raw, rel)
    edits.put(rel, after)
    state = "removed" if after != raw else "absent"
    return Step(
        rel, "memory section", state, raw.encode("utf-8"), after.encode("utf-8"), kind="text"
    )


def _as_text(step: Step) -> Step:
    """A step whose file is written with the other steps on it (`Edits`)."""
    return Step(step.path, step.what, step.state, step.before, step.after, step.note, "text")


# --- Squad's instructions that load whole histories, line by line -------------------------


def line_files(repo: Repo) -> list[str]:
    """The files whose instructions an install replaces line by line: the coordinator's
    prompt, Squad's templates and every charter."""
    found = [COORDINATOR] if repo.read(COORDINATOR) is not None else []
    found += lines.templates(str(repo.root))
    return found + [rel for _, rel in charters(repo)]


def plan_lines(repo: Repo, edits: Edits, record: Record) -> list[Step]:
    """One step for each of Squad's instructions, and each of tiermem's steps, found."""
    return [_line_step(rel, item, record) for rel, item in _each_line(repo, edits, lines.replaced)]


def _each_line(
    repo: Repo, edits: Edits, change: Callable[[str], tuple[str, list[lines.Found]]]
) -> list[tuple[str, lines.Found]]:
    """Every instruction line `change` found in the line-by-line files, as it changed them."""
    found = []
    for rel in line_files(repo):
        text = edits.get(rel)
        if text is not None:
            after, items = change(text)
            edits.put(rel, after)
            found += [(rel, item) for item in items]
    return found


def _line_step(rel: str, found: lines.Found, record: Record) -> Step:
    key = f"{rel}#{found.line.key}"
    if found.state == "squad":
        state = "undone" if key in record.installed else "missing"
    else:
        state = found.state
    note = _upgraded(rel) if state == "undone" else ""
    return Step(rel, found.line.what, state, note=note, kind="text", number=found.number, key=key)


def _upgraded(rel: str) -> str:
    """Why something installed is gone again."""
    if rel.startswith(".squad/templates/") or rel == COORDINATOR:
        return f"`squad upgrade` rewrites {rel if rel == COORDINATOR else '.squad/templates/'}"
    return "put back since the install"


def unplan_lines(repo: Repo, edits: Edits) -> list[Step]:
    """Squad's own text back in place of each of tiermem's steps."""
    return [
        Step(rel, item.line.what, "restored", note="Squad's line", kind="text", number=item.number)
        for rel, item in _each_line(repo, edits, lines.restored)
    ]


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
        if not present and raw is not None and not is_squads_skill(repo, raw.decode("utf-8")):
            note = "not Squad's design-only skill; tiermem leaves it as it is"
            return Step(rel, "tiered-memory skill", "skipped", raw, raw, note)
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
    if rel in record.originals:  # a text the record's check vouched for as Squad's
        original = record.originals[rel]
    else:  # no record: Squad's copy under its templates is what init put there
        original = repo.text(SQUAD_SKILL_COPY) if rel.startswith(".github/") else None
    if original is None:
        return Step(rel, what, "removed", raw, None)
    return Step(rel, what, "restored", raw, original.encode("utf-8"), "Squad's design-only skill")


# --- the coordinator's spawn template ---------------------------------------------------

_SPAWN_LINES = texts.SQUAD_SPAWN_LINES.splitlines(keepends=True)
_FULL_HISTORY = re.compile(
    r"^(?P<indent>[ \t]*)"
    + re.escape(_SPAWN_LINES[0])
    + r"(?P=indent)"
    + re.escape(_SPAWN_LINES[1]),
    re.MULTILINE,
)
_SPAWN_BLOCK = re.compile(
    rf"^(?P<indent>[ \t]*){re.escape(texts.SPAWN_BEGIN)}\n(?:.*\n)*?"
    rf"[ \t]*{re.escape(texts.SPAWN_END)}\n",
    re.MULTILINE,
)


def squad_spawn_lines(indent: str) -> str:
    """Squad's two full-history lines of the spawn template, indented."""
    return "".join(indent + line for line in _SPAWN_LINES)


def plan_spawn(repo: Repo, edits: Edits, record: Record) -> Step:
    """Replace the two full-history lines of the spawn template with the tiermem step."""
    rel = SPAWN_TEMPLATE
    text = edits.get(rel)
    if text is None:
        raise UsageError(f"{rel} is missing; run `squad upgrade` to restore Squad's templates")
    block = _SPAWN_BLOCK.search(text)
    if block is not None:
        after = text[: block.start()] + texts.spawn_block(block["indent"]) + text[block.end() :]
        edits.put(rel, after)
        return _as_text(
            _install_step(rel, "spawn step", text.encode(), after.encode(), True, record)
        )
    found = _FULL_HISTORY.search(text)
    if found is None:
        raise UsageError(
            f"{rel} has no `Read agents/{{name}}/history.md` line followed by `Read "
            "decisions.md` as Squad writes them, to replace (nothing was written)"
        )
    record.originals[rel] = found.group(0)
    after = text[: found.start()] + texts.spawn_block(found["indent"]) + text[found.end() :]
    edits.put(rel, after)
    return _as_text(_install_step(rel, "spawn step", text.encode(), after.encode(), False, record))


def unplan_spawn(edits: Edits) -> Step:
    """Squad's two lines back in place of the spawn step, as tiermem knows them (the
    record's copy, checked to be the same, is never what is written)."""
    rel = SPAWN_TEMPLATE
    text = edits.get(rel)
    block = None if text is None else _SPAWN_BLOCK.search(text)
    if text is None or block is None:
        return Step(rel, "spawn step", "absent", kind="text")
    after = text[: block.start()] + squad_spawn_lines(block["indent"]) + text[block.end() :]
    edits.put(rel, after)
    note = "Squad's full-history lines"
    return Step(rel, "spawn step", "restored", text.encode(), after.encode(), note, "text")


# --- the tiermem store --------------------------------------------------------------------


def _store_paths() -> list[str]:
    return [f".squad/memory/{name}" for name in (*STORE_DIRS, *STORE_FILES)]


def plan_store(repo: Repo, record: Record) -> Step:
    """The store `tiermem serve` needs (created only where it is missing)."""
    for name in STORE_DIRS:  # refused now, not once `tiermem init` has made half of them
        rel = f".squad/memory/{name}"
        if repo.exists(rel) and not repo.is_dir(rel):
            raise UsageError(f"{rel} is not a folder (nothing was written)")
    for name in STORE_FILES:
        repo.read(f".squad/memory/{name}")  # a link or a folder is refused here
    missing = [rel for rel in _store_paths() if not repo.exists(rel)]
    if not record.store:
        record.store = "created" if len(missing) == len(_store_paths()) else "found"
    state = _install_state(STORE, not missing, False, record)
    return Step(STORE, "tiermem store (hot, cold, wiki, archive)", state, kind="store")


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
        return Step(STORE, what, "absent", kind="store")
    if record.store != "created":
        return Step(STORE, what, "kept", kind="store", note="it was there before")
    if not _unused_store(repo):
        note = "it holds the team's memory; delete it by hand if you mean to"
        return Step(STORE, what, "kept", kind="store", note=note)
    for rel in (".squad/memory/.locks", *(f".squad/memory/{name}" for name in _LOCAL)):
        repo.path(rel)  # a link is refused now, before anything is removed
    return Step(STORE, what, "removed", kind="store", note="it held no memory")


def _unused_store(repo: Repo) -> bool:
    fresh = _fresh_store_files()
    for name in STORE_DIRS:
        folder = repo.path(f".squad/memory/{name}")
        if folder.is_dir() and any(not files.is_temp(p) for p in folder.iterdir()):
            return False
    return all(repo.read(f".squad/memory/{name}") in (fresh[name], None) for name in fresh)


def remove_store(repo: Repo) -> None:
    """Delete an unused store: its folders, files, index, lock files and this clone's own
    files in `local/` (the folder itself is Squad's too)."""
    memory = repo.path(".squad/memory")
    for name in STORE_DIRS:
        folder = repo.path(f".squad/memory/{name}")
        if folder.is_dir():
            for temp in folder.iterdir():
                temp.unlink()
            folder.rmdir()
    for name in (*STORE_FILES, *_LOCAL):
        path = repo.path(f".squad/memory/{name}")
        if not path.is_symlink() and path.is_file():
            path.unlink()
    report = repo.path(".squad/memory/local/report")
    if repo.is_dir(".squad/memory/local/report") and not any(report.iterdir()):
        report.rmdir()
    for item in memory.iterdir():
        if _TRANSIENT.fullmatch(item.name) and not item.is_symlink():
            item.unlink()
    _remove_clone_files(repo)
    locks = repo.path(".squad/memory/.locks")
    if locks.is_dir():
        for lock in locks.iterdir():
            lock.unlink()
        locks.rmdir()


def _remove_clone_files(repo: Repo) -> None:
    """This clone's key (which sealed the index) and the ignore file made with it; `local/`
    itself may be Squad's, and stays."""
    local = repo.path(".squad/memory/local")
    for name, made in ((clone.KEY_NAME, None), (".gitignore", clone.IGNORE_ALL.encode())):
        path = local / name
        if path.is_file() and not path.is_symlink() and made in (None, path.read_bytes()):
            path.unlink()


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


def plan(repo: Repo, coordinator: bool) -> tuple[list[Step], Record, Edits]:
    """Every step of an install, the record it leaves, and the text files it changes
    (nothing is written)."""
    old = Record.load(repo)
    record = Record.load(repo)
    record.coordinator = coordinator or old.coordinator
    edits = Edits(repo)
    steps = [plan_store(repo, record), plan_mcp(repo, MCP_JSON, record)]
    if _is_link(repo, ".vscode"):
        note = ".vscode is a symbolic link; register tiermem there by hand (docs/mcp.md)"
        steps.append(Step(VSCODE_MCP, "tiermem MCP server", "skipped", note=note))
    elif repo.is_dir(".vscode"):
        steps.append(plan_mcp(repo, VSCODE_MCP, record))
    if record.coordinator:
        steps += plan_lines(repo, edits, record)
    steps += [plan_charter(repo, edits, folder, rel, record) for folder, rel in charters(repo)]
    steps += [plan_skill(repo, rel, record) for rel in skill_targets(repo)]
    if record.coordinator:
        steps.append(plan_spawn(repo, edits, record))
    record.installed = [s.recorded for s in steps if s.state != "skipped"]
    manifest = repo.read(MANIFEST)
    after = record.render()
    steps.append(_install_step(MANIFEST, "install record", manifest, after, bool(manifest), old))
    return steps, record, edits


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
    steps, _, edits = plan(repo, coordinator)
    report = Report("install", [_installed(s) for s in steps])
    if any(s.kind == "store" and s.state != "installed" for s in steps):
        bootstrap.init_store(repo.root, squad_files=False)
    # The record goes first: were the run cut short, it already holds Squad's texts.
    for step in sorted(steps, key=lambda s: s.path != MANIFEST):
        _write(repo, step)
    edits.write()
    return report


def _installed(step: Step) -> Step:
    if step.state in ("installed", "skipped"):
        state = "unchanged" if step.state == "installed" else "skipped"
    else:
        state = {"outdated": "updated", "undone": "restored"}.get(step.state, "added")
    return Step(
        step.path, step.what, state, step.before, step.after, step.note, step.kind, step.number
    )


def uninstall(root: str | Path | None) -> Report:
    """Take out everything the install put in, putting back Squad's own bytes.

    The record is checked whole, and every step planned, before the first write."""
    repo = open_repo(root)
    record = Record.load(repo)
    edits = Edits(repo)
    steps = [unplan_mcp(repo, MCP_JSON, record)]
    if not _is_link(repo, ".vscode") and repo.read(VSCODE_MCP) is not None:
        steps.append(unplan_mcp(repo, VSCODE_MCP, record))
    steps += unplan_lines(repo, edits)
    steps += [unplan_charter(edits, rel) for _, rel in charters(repo)]
    steps += [unplan_skill(repo, rel, record) for rel in SKILLS]
    steps += [unplan_spawn(edits), unplan_store(repo, record)]
    manifest = repo.read(MANIFEST)
    last = Step(MANIFEST, "install record", "removed" if manifest else "absent", manifest)
    folders = _created_dirs(repo, record, [s for s in steps if s.state == "removed"])
    for step in steps:
        _write(repo, step)
    edits.write()
    if any(s.kind == "store" and s.state == "removed" for s in steps):
        remove_store(repo)
    for folder in folders:
        if repo.is_dir(folder) and not any(repo.path(folder).iterdir()):
            repo.path(folder).rmdir()
    _write(repo, last)  # the record goes last: a run cut short can be run again
    return Report("uninstall", [s for s in [*steps, last] if s.state != "absent"])


def _created_dirs(repo: Repo, record: Record, steps: list[Step]) -> list[str]:
    """The folders uninstall removes once empty, innermost first, each checked now: a
    removed skill takes its own folder along; the folders above it go only when the record
    (checked to name none but those an install makes) says the install made them."""
    skills = [str(PurePosixPath(s.path).parent) for s in steps if s.path in SKILLS]
    found = sorted({*record.created_dirs, *skills}, key=len, reverse=True)
    for rel in found:
        repo.path(rel)  # a link or a path out of the repository is refused before any write
    return found


def _write(repo: Repo, step: Step) -> None:
    if step.kind != "file" or not step.writes:
        return
    path = repo.path(step.path)
    if step.after is None:
        path.unlink(missing_ok=True)
    else:
        files.atomic_write(path, step.after)
