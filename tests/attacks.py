"""A repository as an attacker would commit it: links out of `.squad/`, hostile names and
metadata, and the commands that meet them; with what must hold afterwards.

tests/test_attacks.py runs each attack once; tests/stress.py (`attacks`) runs every attack
against every command, and counts writes outside `.squad/memory/`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hostile import OUTSIDE_MARK
from reliability import cli
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"
T1 = "2026-03-20T10:00:00Z"
PWNED = "pwned"

# --- the store under attack ---------------------------------------------------------------


def build_store(root: Path) -> None:
    """A store with hot, cold, queue, wiki, archive, an index, Squad's files and an inbox."""
    mem, _ = Memory.init(root, now=T0)
    mem.hot_set("eecom", "Fix the flaky reader", why="releases are blocked")
    mem.hot_add("eecom", "note", "ReadBuffer.fill dropped the last chunk")
    mem.hot_add("eecom", "decision", "Keep retries off in the reader")
    mem.end_session("eecom")
    mem.hot_set("flight", "Ship the login fix")
    for n in range(7):
        mem.hot_add("flight", "action", f"step {n} of the login fix")
    mem.hot_add("flight", "blocker", "Waiting on staging keys")
    mem.wiki_write("release", "Tag every release\nEach release gets a semver tag.", by="flight")
    mem.search("release login")
    mem.close()
    squad = root / ".squad"
    (squad / "agents" / "flight").mkdir(parents=True, exist_ok=True)
    (squad / "agents" / "flight" / "history.md").write_text(
        "# Flight\n\n## Learnings\n\n### 2026-02-01: Pin the SDK\nPinned it.\n", encoding="utf-8"
    )
    (squad / "agents" / "flight" / "charter.md").write_text("# Flight\nShips.\n", "utf-8")
    inbox = squad / "decisions" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / "flight-cache.md").write_text(
        "### 2026-03-01: Cache the registry\n**By:** Flight\n**What:** cache it\n", "utf-8"
    )


def outside_tree(folder: Path) -> Path:
    """What links point at: files and folders outside the repository, each holding the mark."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.md").write_text(f"# notes\n{OUTSIDE_MARK} private text\n", "utf-8")
    (folder / "rc").write_text(f"# a shell rc file\nexport X=1  # {OUTSIDE_MARK}\n", "utf-8")
    target = folder / "dir"
    target.mkdir(exist_ok=True)
    (target / "flight.md").write_text(f"# flight\n{OUTSIDE_MARK} in a folder\n", "utf-8")
    (target / "decisions.md").write_text(f"# Decisions\n{OUTSIDE_MARK}\n", "utf-8")
    return folder


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file, folder and link under a folder, with content digests and modes."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[rel] = "dir"
    return found


# --- links --------------------------------------------------------------------------------

# Where a link is committed (relative to the root), and what it points at outside.
LINKS: dict[str, str] = {
    ".squad/memory/hot": "dir",
    ".squad/memory/cold": "dir",
    ".squad/memory/wiki": "dir",
    ".squad/memory/archive": "dir",
    ".squad/memory/queue": "dir",
    ".squad/memory/.locks": "dir",
    ".squad/memory/archive/flight": "dir",
    ".squad/memory/audit.jsonl": "rc",
    ".squad/memory/tiermem-audit.jsonl": "rc",
    ".squad/memory/config.toml": "notes.md",
    ".squad/memory/index.sqlite": "notes.md",
    ".squad/memory/index.sqlite-wal": "notes.md",
    ".squad/memory/hot/flight.md": "notes.md",
    ".squad/memory/cold/eecom.md": "notes.md",
    ".squad/memory/cold/team.md": "notes.md",
    ".squad/memory/wiki/release.md": "notes.md",
    ".squad/memory/.locks/hot__flight.md.lock": "rc",
    ".squad/memory/local": "dir",
    ".squad/memory/tiermem-local/clone-key": "notes.md",
    ".squad/memory/spawns.jsonl": "rc",
    ".squad/memory/damaged": "dir",
    ".squad/memory": "dir",
    ".squad/decisions": "dir",
    ".squad/decisions/inbox": "dir",
    ".squad/decisions.md": "notes.md",
    ".squad/agents": "dir",
    ".squad/agents/flight": "dir",
    ".squad/agents/flight/history.md": "notes.md",
    ".squad/agents/flight/charter.md": "notes.md",
    ".squad/.gitattributes": "rc",
}


def plant_link(root: Path, outside: Path, rel: str) -> None:
    """Replace what is at `rel` with a link to the outside target LINKS names."""
    path = root / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside / LINKS[rel])


# Every command a repository's content reaches (each run with --root and a fixed clock).
COMMANDS: list[list[str]] = [
    ["hot", "note", "flight", "a note"],
    ["hot", "set", "eecom", "--task", "a task"],
    ["hot", "show", "flight"],
    ["hot", "clear", "flight"],
    ["search", "login notes private"],
    ["search", "a-0000000000"],
    ["stats"],
    ["scribe", "end-session", "--all"],
    ["scribe", "end-session", "flight"],
    ["scribe", "run"],
    ["decision", "add", "--by", "flight", "Use pnpm"],
    ["wiki", "write", "release", "Sign tags\nwith the release key", "--by", "flight"],
    ["wiki", "list"],
    ["wiki", "show", "release"],
    ["spawn", "flight", "--task", "login notes", "--auto", "--charter"],
    ["import", "squad"],
    ["reindex"],
    ["reindex", "--check"],
    ["doctor"],
    ["doctor", "--repair"],
]


@dataclass
class Outcome:
    """What one command did to a store under attack."""

    code: int
    out: str
    err: str
    traceback: str = ""


def run(root: Path, argv: list[str], now: str = T1) -> Outcome:
    """A command in process; a traceback is caught and returned, not raised."""
    import traceback

    try:
        code, out, err = cli(["--root", str(root), "--now", now, *argv])
    except Exception:
        return Outcome(99, "", "", traceback.format_exc())
    return Outcome(code, out, err)


def problems(outcome: Outcome, before_outside: dict[str, str], outside: Path) -> list[str]:
    """What went wrong: a traceback, a failure not in one line, outside text shown or written."""
    found = []
    if outcome.traceback:
        found.append("traceback: " + outcome.traceback.strip().splitlines()[-1][:200])
    if outcome.code == 2 and outcome.err.count("\n") != 1:
        found.append("failure not in one line: " + outcome.err[:200])
    if outcome.code not in (0, 1, 2, 99):
        found.append(f"exit status {outcome.code}")
    if OUTSIDE_MARK in outcome.out + outcome.err:
        found.append("text from outside the repository shown")
    if fingerprint(outside) != before_outside:
        found.append("wrote outside the repository")
    return found


def memory_holds_outside_text(root: Path) -> bool:
    """Whether any file tiermem keeps under .squad/memory holds text from outside."""
    memory = root / ".squad" / "memory"
    if memory.is_symlink() or (root / ".squad").is_symlink():
        return False  # nothing of tiermem's lies behind a link
    for folder, _, names in os.walk(memory):  # links to folders are not walked into
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink() and OUTSIDE_MARK.encode() in path.read_bytes():
                return True
    return False


# --- hostile metadata ---------------------------------------------------------------------

HEADER = "# {agent}: cold memory\n<!-- tiermem-file tier=cold agent={agent} -->\n\n"


def _entry(entry_id: str, title: str, body: str, **meta: str) -> str:
    items = " ".join(f"{k}={v}" for k, v in {"id": entry_id, "class": "learning", **meta}.items())
    return f"## {title}\n<!-- tiermem {items} -->\n{body}\n\n"


def traversal_in_a_merge_loser(root: Path, depth: int = 4) -> Path:
    """A cold file after a merge: one entry in two versions, the losing one naming an agent
    that climbs out of the repository. Returns where that folder would be."""
    climb = "..%2F" * depth + "OUTSIDE"
    path = root / ".squad" / "memory" / "cold" / "eecom.md"
    text = path.read_text(encoding="utf-8")
    text += _entry(
        "c-dup0000001", "Reader notes", "the newer text", agent="eecom", used="2026-03-05T00:00:00Z"
    )
    text += _entry(
        "c-dup0000001", "Reader notes", "the older text", agent=climb, used="2026-03-01T00:00:00Z"
    )
    path.write_text(text, encoding="utf-8")
    return (root / ".squad" / "memory" / "archive" / ("../" * depth)).resolve() / "OUTSIDE"


HOSTILE_NAMES: dict[str, Callable[[Path], None]] = {}


def _hostile(func: Callable[[Path], None]) -> Callable[[Path], None]:
    HOSTILE_NAMES[func.__name__] = func
    return func


@_hostile
def loser_agent_climbs(root: Path) -> None:
    traversal_in_a_merge_loser(root)


@_hostile
def hot_meta_agent_climbs(root: Path) -> None:
    path = root / ".squad" / "memory" / "hot" / "flight.md"
    text = path.read_text(encoding="utf-8").replace("agent=flight", "agent=..%2F..%2F..%2Fx", 1)
    text += _entry("h-dup0000001", "Note: a", "one", slot="note", agent="flight")
    text += _entry("h-dup0000001", "Note: a", "two", slot="note", agent="..%2F..%2F..%2Fx")
    path.write_text(text, encoding="utf-8")


@_hostile
def tag_climbs(root: Path) -> None:
    path = root / ".squad" / "memory" / "cold" / "eecom.md"
    text = path.read_text(encoding="utf-8")
    text += _entry(
        "k-tag0000001",
        "Convention: always lint before a commit",
        "**What:** ruff before every commit\n**Why:** CI costs a run",
        tags="..%2F..%2F..%2Fpwned",
        created="2026-01-01T00:00:00Z",
    ).replace("class=learning", "class=convention")
    path.write_text(text, encoding="utf-8")


@_hostile
def inbox_name_runs_a_command(root: Path) -> None:
    inbox = root / ".squad" / "decisions" / "inbox"
    (inbox / f"flight-$(touch {PWNED}).md").write_text("### Use zod\n**What:** zod\n", "utf-8")
    (inbox / "flight-`touch pwned2`.md").write_text("### Use yup\n**What:** yup\n", "utf-8")


@_hostile
def squad_folder_names(root: Path) -> None:
    for name in ("_alumni", "con", "team", "..x"):
        folder = root / ".squad" / "agents" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "history.md").write_text(f"# {name}\n\n## Learnings\n\n### Old\nx\n", "utf-8")


@_hostile
def tier_file_names(root: Path) -> None:
    memory = root / ".squad" / "memory"
    for rel in ("queue/..md", "cold/x..y.md", "hot/con.md", "wiki/..md", "archive/..x/a.md"):
        path = memory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# x\n<!-- tiermem-file tier=cold agent=x -->\n", encoding="utf-8")


@_hostile
def record_header_climbs(root: Path) -> None:
    folder = root / ".squad" / "memory" / "archive" / "flight"
    text = "hostile record text\n"
    import hashlib as _h

    digest = _h.sha256(text.encode()).hexdigest()
    header = (
        "<!-- tiermem-archive id=a-..%2F..%2Fx agent=..%2F..%2F..%2Fx created=2026-03-01T00:00:00Z "
        f"kind=hot source=..%2F..%2Fetc%2Fpasswd bytes={len(text)} sha256={digest} -->\n"
    )
    (folder / "a-1234567890.md").write_text(header + text, encoding="utf-8")


@_hostile
def sources_climb(root: Path) -> None:
    path = root / ".squad" / "memory" / "cold" / "eecom.md"
    text = path.read_text(encoding="utf-8")
    text += _entry("c-src0000001", "Sourced", "body", sources="archive%2F..%2F..%2F..%2Fx.md")
    path.write_text(text, encoding="utf-8")


@_hostile
def committed_foreign_index(root: Path) -> None:
    import sqlite3

    index = root / ".squad" / "memory" / "index.sqlite"
    for side in ("", "-wal", "-shm"):
        Path(f"{index}{side}").unlink(missing_ok=True)
    db = sqlite3.connect(index)
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES('schema', 'foreign')")
    db.commit()
    db.close()


def pwned(root: Path) -> bool:
    """Whether a hostile name ran as a command anywhere we look."""
    return any((p / PWNED).exists() for p in (root, root.parent, Path.cwd()))
