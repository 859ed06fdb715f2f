"""Git merges that once hid or broke memory: a note added in one clone while the other ends
the session (git took the emptied hot file and its archive record for a rename), and one
text archived in both clones at different times (one file name, two contents).

tests/test_merge_hazards.py runs each hazard once per merge mode; tests/stress.py (`merge`)
mixes them into randomized rounds, with the checks here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from merges import git
from reliability import cli
from tiermem.errors import ParseError
from tiermem.storage import archive

MARK = re.compile(r"mark-[0-9a-z-]+")


def ok(root: Path, now: str, *argv: str) -> str:
    """A command that must succeed."""
    code, out, err = cli(["--root", str(root), "--now", now, *argv])
    if code != 0:
        raise RuntimeError(f"tiermem {' '.join(argv)} -> {code}: {err.strip()}")
    return out


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def merge_outcome(root: Path) -> list[str]:
    """Conflicts a merge left (git said CONFLICT, or unmerged paths remain)."""
    found = []
    status = git(root, "status", "--porcelain").stdout
    for line in status.splitlines():
        if line[:2] in ("UU", "AA", "DU", "UD", "AU", "UA", "DD"):
            found.append(f"conflict: {line[3:]}")
    return found


def broken_records(root: Path) -> list[str]:
    """Archive records that do not match their recorded size and hash."""
    found = []
    base = root / ".squad" / "memory" / "archive"
    for path in sorted(base.glob("*/*.md")):
        try:
            archive.parse(path.read_bytes(), path)
        except ParseError as exc:
            found.append(f"{path.relative_to(base)}: {exc.reason}")
    return found


def hidden(root: Path, marks: set[str], now: str) -> list[str]:
    """Texts that are in the store's files but that search does not find."""
    missing = []
    for mark in sorted(marks):
        out = ok(root, now, "search", mark, "--format", "json", "--limit", "50")
        if not any(mark in hit["text"] or mark in hit["title"] for hit in json.loads(out)):
            missing.append(mark)
    return missing


def twice_in_search(root: Path, marks: set[str], now: str) -> list[str]:
    """Texts that search lists more than once (two records of one text must fold)."""
    found = []
    for mark in sorted(marks):
        hits = json.loads(ok(root, now, "search", mark, "--format", "json", "--limit", "50"))
        texts = [h["text"] for h in hits if mark in h["text"]]
        if len(texts) != len(set(texts)):
            found.append(mark)
    return found


# --- the hazards: each makes the origin, then the work of each clone ----------------------

T_BASE = "2026-03-01T09:00:00Z"
T_A = "2026-03-02T09:00:00Z"
T_B = "2026-03-02T15:30:00Z"


def shared_session(origin: Path, agent: str, marks: set[str], tag: str) -> None:
    """An open session of a shared agent, committed in the origin."""
    ok(origin, T_BASE, "hot", "set", agent, "--task", f"Fix the login flow mark-{tag}-task")
    for k in range(3):
        ok(origin, T_BASE, "hot", "note", agent, f"Base note {k} on the reader mark-{tag}-n{k}")
    marks.update({f"mark-{tag}-task", *(f"mark-{tag}-n{k}" for k in range(3))})


def note_while_other_ends(a: Path, b: Path, agent: str, marks: set[str], tag: str) -> None:
    """A adds a note to the open session; B ends it."""
    ok(a, T_A, "hot", "note", agent, f"Clone A note mark-{tag}-a")
    marks.add(f"mark-{tag}-a")
    ok(b, T_B, "scribe", "end-session", agent)


def note_while_other_clears(a: Path, b: Path, agent: str, marks: set[str], tag: str) -> None:
    """A adds a note; B clears hot (its text goes to the archive and the queue)."""
    ok(a, T_A, "hot", "note", agent, f"Clone A note mark-{tag}-a")
    marks.add(f"mark-{tag}-a")
    ok(b, T_B, "hot", "clear", agent)


def both_end_at_different_times(a: Path, b: Path, agent: str, marks: set[str], tag: str) -> None:
    """Both clones end the same session: one hot text archived at two times."""
    ok(a, T_A, "scribe", "end-session", agent)
    ok(b, T_B, "scribe", "end-session", agent)


def queue_while_other_checkpoints(a: Path, b: Path, agent: str, marks: set[str], tag: str) -> None:
    """A pushes actions out of hot into the queue; B checkpoints and ends the session."""
    for k in range(7):
        ok(a, T_A, "hot", "action", agent, f"step {k} mark-{tag}-a{k}")
        marks.add(f"mark-{tag}-a{k}")
    for k in range(7):
        ok(b, T_B, "hot", "action", agent, f"other step {k} mark-{tag}-b{k}")
        marks.add(f"mark-{tag}-b{k}")
    ok(b, T_B, "scribe", "run")
    ok(b, T_B, "scribe", "end-session", agent)


HAZARDS = {
    "note-while-other-ends": note_while_other_ends,
    "note-while-other-clears": note_while_other_clears,
    "both-end-at-different-times": both_end_at_different_times,
    "queue-while-other-checkpoints": queue_while_other_checkpoints,
}
