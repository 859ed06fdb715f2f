"""Retiring passages of archived text merges and is never lost.

A retirement is a line of the ledger `.squad/memory/retired.txt` (union-merged), never a
change to the record: two clones that retire different passages of one record merge
without a conflict, and the merged store serves neither passage (real git). Eight
retirements at once, through the command line or through two MCP servers, all say
"retired" and all stay retired (tests/stress.py `retire` runs 50 trials of each).

A record an older tiermem retired passages in (its header rewritten in two clones) is left
by git with conflict markers: `doctor` names it, and `doctor --repair` writes it back as
archived with both retirements in the ledger, never archiving the markers as text; markers
that do not pair are refused.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import retirements
from reliability import cli
from tiermem.memory import Memory
from tiermem.storage import archive

TRIALS = 2  # in the suite; tests/stress.py retire --retire-trials 50 for the figure
EIGHT = list(range(1, 9))  # the passages `a-...#1` to `#8` (`#0` is the record's own id)


def test_eight_retirements_at_once_all_stay_retired(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        root = tmp_path / f"trial-{trial}"
        record = retirements.record_store(root)
        results = retirements.retire_at_once(root, record, EIGHT)
        assert retirements.said_retired(results) == 8, results
        assert retirements.served(root, EIGHT) == []
        assert len(retirements.retired_lines(root)) == 8
        assert retirements.served(root, [0, 9]) == [0, 9]  # the others are still served


def test_eight_retirements_over_two_mcp_servers_all_stay_retired(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        root = tmp_path / f"trial-{trial}"
        record = retirements.record_store(root)
        said = retirements.retire_over_servers(root, record, EIGHT)
        assert len(said) == 8 and all(s.startswith("retired ") for s in said), said
        assert retirements.served(root, EIGHT) == []
        assert len(retirements.retired_lines(root)) == 8


def test_a_retirement_leaves_the_record_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    record = retirements.record_store(root)
    [path] = (root / ".squad/memory/archive/flight").glob("*.md")
    before = path.read_bytes()
    code, out, err = cli(["--root", str(root), "--now", retirements.T0, "forget", f"{record}#2"])
    assert code == 0 and out.startswith("retired "), err
    assert path.read_bytes() == before
    assert retirements.retired_lines(root) == [f"{record}#2 2026-03-02"]
    assert retirements.served(root, [1, 2, 3]) == [1, 3]
    code, out, _ = cli(["--root", str(root), "reindex", "--check"])
    assert code == 0, out
    code, out, _ = cli(["--root", str(root), "search", f"{record}#2"])
    assert "was forgotten on 2026-03-02" in out


# --- clones merged with git ------------------------------------------------------------


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def _clones(tmp_path: Path, trust: str = "") -> tuple[Path, Path, str]:
    """An origin with the record committed, and two clones of it."""
    origin = tmp_path / "origin"
    record = retirements.record_store(origin, trust=trust)
    assert _git(origin, "init", "-q", "-b", "main").returncode == 0
    _git(origin, "add", "-A")
    assert _git(origin, "commit", "-qm", "memory").returncode == 0
    a, b = tmp_path / "a", tmp_path / "b"
    for clone in (a, b):
        assert _git(tmp_path, "clone", "-q", str(origin), clone.name).returncode == 0
    return a, b, record


def _commit_and_merge(a: Path, b: Path) -> subprocess.CompletedProcess[str]:
    """Commit both clones, then merge a's work into b."""
    for clone in (a, b):
        _git(clone, "add", "-A")
        assert _git(clone, "commit", "-qm", f"work in {clone.name}").returncode == 0
    _git(b, "remote", "add", "a", str(a))
    _git(b, "fetch", "-q", "a")
    return _git(b, "merge", "--no-edit", "a/main")


def _forget(root: Path, target: str) -> None:
    code, out, err = cli(["--root", str(root), "--now", retirements.T0, "forget", target])
    assert code == 0 and out.startswith("retired "), err


def _markers_under(root: Path) -> list[str]:
    memory = root / ".squad/memory"
    return [
        p.relative_to(memory).as_posix()
        for p in memory.rglob("*")
        if p.is_file() and "damaged" not in p.parts and archive.has_markers(p.read_bytes())
    ]


def test_two_clones_retiring_passages_of_one_record_merge(tmp_path: Path) -> None:
    a, b, record = _clones(tmp_path)
    _forget(a, f"{record}#3")
    _forget(b, f"{record}#5")
    assert retirements.served(b, [3, 5]) == [3]  # b's index, built before the merge
    merged = _commit_and_merge(a, b)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "CONFLICT" not in merged.stdout
    assert _markers_under(b) == []
    assert sorted(retirements.retired_lines(b)) == [
        f"{record}#3 2026-03-02",
        f"{record}#5 2026-03-02",
    ]
    assert retirements.served(b, [3, 4, 5]) == [4]
    code, out, _ = cli(["--root", str(b), "reindex", "--check"])
    assert code == 0, out
    code, out, _ = cli(["--root", str(b), "doctor"])
    assert code == 0, out


def _retire_in_header(root: Path, record: str, chunk: int) -> None:
    """Retire a chunk as a tiermem before the ledger did: in the record's header."""
    [path] = (root / ".squad/memory/archive/flight").glob(f"{record}.md")
    data = path.read_bytes()
    head, _, rest = data.partition(b"\n")
    head = head.replace(b" -->", f" retired={chunk} -->".encode())
    path.write_bytes(head + b"\n" + rest)


@pytest.mark.parametrize("style", ["merge", "diff3"])
@pytest.mark.parametrize("trust", ["", "untrusted"])
def test_doctor_resolves_a_record_two_older_clones_retired_in(
    tmp_path: Path, style: str, trust: str
) -> None:
    a, b, record = _clones(tmp_path, trust)
    [path] = (b / ".squad/memory/archive/flight").glob(f"{record}.md")
    archived = path.read_bytes()
    _retire_in_header(a, record, 3)
    _retire_in_header(b, record, 5)
    _git(b, "config", "merge.conflictStyle", style)
    merged = _commit_and_merge(a, b)
    assert "CONFLICT" in merged.stdout and archive.has_markers(path.read_bytes())
    code, out, _ = cli(["--root", str(b), "doctor"])
    assert code == 1 and "conflict markers" in out, out
    code, out, err = cli(["--root", str(b), "--now", retirements.T0, "doctor", "--repair"])
    assert code == 0, out + err
    assert path.read_bytes() == archived  # as archived, before either retirement
    assert _markers_under(b) == []
    assert sorted(retirements.retired_lines(b)) == [
        f"{record}#3 2026-03-02",
        f"{record}#5 2026-03-02",
    ]
    assert retirements.served(b, [3, 4, 5]) == [4]
    mem = Memory(b)
    hits = mem.search(retirements.word(4))
    mem.close()
    assert hits and all(h.trust == trust for h in hits)


def test_doctor_archives_each_version_of_a_record_in_conflict_never_the_markers(
    tmp_path: Path,
) -> None:
    """Two versions that differ in their text (a record written by hand in a clone): each
    version's text is archived again, the file set aside, no marker archived."""
    a, b, record = _clones(tmp_path)
    for clone, words in ((a, "alpha version"), (b, "beta version")):
        [path] = (clone / ".squad/memory/archive/flight").glob(f"{record}.md")
        path.write_bytes(path.read_bytes().replace(b"Section 4", f"Section 4 {words}".encode()))
    assert "CONFLICT" in _commit_and_merge(a, b).stdout
    _, out, err = cli(["--root", str(b), "--now", retirements.T0, "doctor", "--repair"])
    assert "archived again" in out, out + err
    assert _markers_under(b) == []
    texts = [
        archive.parse(p.read_bytes(), p).text
        for p in (b / ".squad/memory/archive/flight").glob("*.md")
    ]
    assert any("alpha version" in t for t in texts) and any("beta version" in t for t in texts)


def test_markers_that_do_not_pair_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    record = retirements.record_store(root)
    [path] = (root / ".squad/memory/archive/flight").glob(f"{record}.md")
    damaged = b"<<<<<<< HEAD\n" + path.read_bytes()
    path.write_bytes(damaged)
    code, out, _ = cli(["--root", str(root), "--now", retirements.T0, "doctor", "--repair"])
    assert code == 1 and "do not pair" in out, out
    assert path.read_bytes() == damaged
    assert _markers_under(root) == [path.relative_to(root / ".squad/memory").as_posix()]
