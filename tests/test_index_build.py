"""An index that is not there (a fresh clone) or may not be read is built whole in a file of
its own, with no lock held while it is built, its files parsed by worker processes when they
are many: it holds exactly what a sync of the files writes, row for row."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import races
from test_index_ahead import _before, _probe
from tiermem.bench.generated import NOW as GENERATED_NOW
from tiermem.bench.generated import generate
from tiermem.index import database, parsing, sync
from tiermem.memory import Memory
from tiermem.storage import files


def _tables(root: Path) -> dict[str, Any]:
    """What the index holds: every document (but what reads derive from its text, and a
    sync within the clock's tick derives again), its search terms, and every file, folder and
    fact recorded (but time stamps)."""
    db = sqlite3.connect(root / ".squad" / "memory" / "index.sqlite")
    columns = "rowid, id, path, tier, agent, cls, status, title, text, created, used, session,"
    columns += " trust, tags, sha, ord, parent, sources"
    try:
        return {
            "docs": db.execute(f"SELECT {columns} FROM docs ORDER BY rowid").fetchall(),
            "terms": db.execute("SELECT rowid, * FROM docs_fts ORDER BY rowid").fetchall(),
            # Stamps of files changed within the clock's tick are recorded as 0: left out.
            "files": db.execute(
                "SELECT path, dir, size, sha, rows FROM files ORDER BY path"
            ).fetchall(),
            "dirs": db.execute("SELECT path FROM dirs ORDER BY path").fetchall(),
            "meta": db.execute("SELECT * FROM meta WHERE key != 'fingerprint'").fetchall(),
        }
    finally:
        db.close()


def _built(root: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> dict[str, Any]:
    """The index a first read of the store builds, with this many workers."""
    for path in (root / ".squad" / "memory").glob("index.sqlite*"):
        path.unlink()
    monkeypatch.setattr(parsing, "WORKERS", workers)
    mem = Memory(root, now=GENERATED_NOW)
    assert mem.context.index.sync().errors == []
    mem.close()
    return _tables(root)


def test_a_build_by_worker_processes_holds_what_one_process_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    root.mkdir()
    generate(root, 400, lambda _: None)
    monkeypatch.setattr(parsing, "PARALLEL_FILES", 1)
    monkeypatch.setattr(parsing, "JOB_FILES", 3)  # many jobs, handed over in order
    pools: list[object] = []
    _before(monkeypatch, parsing.Parsing, "__init__", lambda *args: pools.append(args[0]))
    parallel = _built(root, monkeypatch, workers=2)
    assert len(pools) == 1
    serial = _built(root, monkeypatch, workers=0)
    assert len(pools) == 1
    assert len(parallel["docs"]) == 400 and len(parallel["files"]) > 100
    assert parallel == serial
    mem = Memory(root, now=GENERATED_NOW)
    mem.reindex()  # the sync's own way, under the lock: the same rows
    mem.close()
    assert _tables(root) == serial


def test_a_fresh_clone_is_built_in_a_file_of_its_own_with_the_index_lock_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    index = root / ".squad" / "memory" / "index.sqlite"
    mem = Memory(root, now=races.T0)
    seen: list[tuple[str, bool]] = []
    _before(
        monkeypatch,
        sync.Sync,
        "fill",
        lambda *_: seen.append((_probe(mem.layout), index.exists())),
    )
    report = mem.context.index.sync()
    assert seen == [("free", False)]  # no lock held, nothing in place of the index yet
    assert len(report.changed) == len(set(report.changed)) == 19  # what the build read, said
    assert mem.context.index.sync().changed == []
    mem.close()


def test_the_first_read_says_what_the_build_could_not_read(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    record = sorted((root / ".squad" / "memory" / "archive" / "agent1").glob("a-*.md"))[0]
    record.write_bytes(record.read_bytes() + b"more than was archived\n")
    mem = Memory(root, now=races.T0)
    report = mem.context.index.sync()
    assert [e.path for e in report.errors] == [record]
    assert "does not match its recorded size and hash" in str(report.errors[0])
    mem.close()


def test_reindex_of_a_fresh_clone_reads_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    parsed: list[str] = []
    _before(monkeypatch, parsing, "parsed_docs", lambda *args: parsed.append(args[1]))
    mem = Memory(root, now=races.T0)
    assert mem.reindex() == ["indexed 19 files"]
    assert len(parsed) == len(set(parsed)) == 19
    mem.close()


def test_a_build_killed_midway_leaves_nothing_the_next_build_keeps(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    memory = root / ".squad" / "memory"
    left = memory / f"{database.BUILDING}4242-0123456789ab"
    left.write_bytes(b"half an index" * 1000)  # a build killed midway
    mem = Memory(root, now=races.T0)
    mem.sync()
    assert not left.exists()
    assert [p.name for p in memory.glob(".tmp-*")] == []
    assert mem.context.index.documents() > 0
    mem.close()


def _stuck(folder: str, rel_dir: str, tier: str, names: list[str]) -> list[Any]:
    """A worker that never answers (as one killed would)."""
    import time

    time.sleep(30)
    return []


def test_a_worker_that_never_answers_leaves_the_parsing_to_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    serial = _built(root, monkeypatch, workers=0)
    monkeypatch.setattr(parsing, "PARALLEL_FILES", 1)
    monkeypatch.setattr(parsing, "JOB_WAIT_SECONDS", 0.5)
    monkeypatch.setattr(parsing, "_parse_files", _stuck)
    assert _built(root, monkeypatch, workers=1) == serial


def test_files_read_just_after_the_checkout_are_trusted_by_the_end_of_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh clone's build reads its first files moments after the checkout wrote them: a
    # write after such a read could leave their size and mtime as they were. A build that
    # lasts longer than the clock's tick (a large store's does) reads them again at its end
    # and trusts them, so the command after it reads no file.
    root = races.fresh_clone(tmp_path / "clone")
    now = time.time()
    for path in (root / ".squad").rglob("*"):
        os.utime(path, (now, now), follow_symlinks=False)  # all just checked out
    first: list[float] = []
    parse = parsing.parsed_docs

    def slowly(*args: Any) -> Any:
        if not first:  # the first file parsed, then the rest of a long build
            first.append(time.time())
            time.sleep(2.2)
        return parse(*args)

    monkeypatch.setattr(parsing, "parsed_docs", slowly)
    mem = Memory(root, now=races.T0)
    assert mem.context.index.sync().changed
    monkeypatch.setattr(parsing, "parsed_docs", parse)
    assert first and first[0] - now < 1.0  # the first file was read within the tick
    reads: list[str] = []
    _before(monkeypatch, files.Folder, "read", lambda _, name: reads.append(name))
    assert mem.context.index.sync().changed == []
    assert reads == []  # nothing read again: the fingerprint was kept
    mem.close()
