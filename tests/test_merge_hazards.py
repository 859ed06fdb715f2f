"""Merges that once hid a note or conflicted in the archive: each hazard of tests/hazards.py
merged both ways, with git's union merge and with tiermem's per-entry driver."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hazards
from merges import git, merge_both_ways, new_repository
from reliability import files_text

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
AFTER = "2026-03-05T10:00:00Z"


def _clones(tmp_path: Path, driver: bool, marks: set[str]) -> tuple[Path, Path]:
    origin = new_repository(tmp_path / "origin")
    hazards.ok(origin, hazards.T_BASE, "init")
    hazards.shared_session(origin, "flight", marks, "base")
    hazards.commit(origin, "base")
    for side in ("a", "b"):
        git(tmp_path, "clone", "-q", str(origin), side)
        if driver:
            hazards.ok(tmp_path / side, hazards.T_BASE, "init", "--merge-driver")
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.parametrize("driver", [False, True], ids=["union", "entry-merge"])
@pytest.mark.parametrize("hazard", sorted(hazards.HAZARDS))
def test_a_merge_hides_nothing_and_conflicts_nowhere(
    tmp_path: Path, hazard: str, driver: bool
) -> None:
    marks: set[str] = set()
    a, b = _clones(tmp_path, driver, marks)
    hazards.HAZARDS[hazard](a, b, "flight", marks, "h")
    hazards.commit(a, "a")
    hazards.commit(b, "b")
    for merged in merge_both_ways(a, b):
        assert merged.returncode == 0, merged.stdout + merged.stderr
        assert "CONFLICT" not in merged.stdout
    for clone in (a, b):
        assert hazards.merge_outcome(clone) == []
        assert hazards.broken_records(clone) == []
        text = files_text(clone)
        assert sorted(m for m in marks if m not in text) == [], "lost"
        assert hazards.hidden(clone, marks, AFTER) == [], "in the files, not found by search"
        assert hazards.twice_in_search(clone, marks, AFTER) == []
    # A's note is summarised by the next session end after the merge.
    for clone in (a, b):
        hazards.ok(clone, AFTER, "scribe", "end-session", "flight")
        hazards.ok(clone, AFTER, "scribe", "run")
        assert hazards.hidden(clone, marks, AFTER) == []


def test_one_text_archived_twice_is_two_readable_records(tmp_path: Path) -> None:
    marks: set[str] = set()
    a, b = _clones(tmp_path, False, marks)
    hazards.both_end_at_different_times(a, b, "flight", marks, "h")
    hazards.commit(a, "a")
    hazards.commit(b, "b")
    merge_both_ways(a, b)
    records = sorted((a / ".squad" / "memory" / "archive" / "flight").glob("*.md"))
    session_records = [p for p in records if b"kind=hot-session" in p.read_bytes()[:300]]
    assert len(session_records) == 2
    keys = {p.stem[: len("a-0123456789")] for p in session_records}
    assert len(keys) == 1, "one text, one key"
    out = hazards.ok(a, AFTER, "search", "mark-base-n1", "--tier", "archive")
    assert out.count("mark-base-n1") == 1, out
