"""A sync and a rebuild read and parse the files before they take the index lock, and hold
it only to write: another process may take the lock meanwhile, and a file changed between
the parse and the write is indexed as it is at the write."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import races
from reliability import cli
from tiermem.index import parsing, rows, sync
from tiermem.index.protocol import SyncReport
from tiermem.memory import Memory
from tiermem.storage import files
from tiermem.storage.layout import Layout

# Another process asks for the index lock without waiting: "free" or "held".
PROBE = textwrap.dedent(
    """
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("held")
    else:
        print("free")
    """
)


def _probe(layout: Layout) -> str:
    """What another process finds of the index lock."""
    lock = layout.locks / files._lock_name(layout, layout.index)
    probe = [sys.executable, "-c", PROBE, str(lock)]
    return subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[tuple[Path, Memory]]:
    """A clone whose index was built, then a note written in each of its 7 hot files: the
    next sync parses those."""
    root = races.fresh_clone(tmp_path / "clone")
    mem = Memory(root, now=races.T0)
    mem.sync()
    for agent in [*(f"agent{n}" for n in range(6)), "eecom"]:
        mem.hot_add(agent, "note", f"Later note of {agent}")
    yield root, mem
    mem.close()


def _before(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, step: Any) -> None:
    """Make `step(*args)` run before each call of `owner.name`."""
    original = getattr(owner, name)

    def stepped(*args: Any) -> Any:
        step(*args)
        return original(*args)

    monkeypatch.setattr(owner, name, stepped)


def _probe_while_parsing_and_writing(
    monkeypatch: pytest.MonkeyPatch, layout: Layout
) -> dict[str, set[str]]:
    """What another process finds of the index lock at each parse and each write."""
    seen: dict[str, set[str]] = {"parse": set(), "write": set()}
    for owner, name, when in (
        (parsing, "parsed_docs", "parse"),
        (rows.Rows, "_insert", "write"),
    ):
        _before(monkeypatch, owner, name, lambda *_, w=when: seen[w].add(_probe(layout)))
    return seen


def _counted_parses(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"parsed": 0}
    _before(
        monkeypatch, parsing, "parsed_docs", lambda *_: counts.update(parsed=counts["parsed"] + 1)
    )
    return counts


def test_a_sync_parses_while_the_index_lock_is_free(
    clone: tuple[Path, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = clone[1]
    seen = _probe_while_parsing_and_writing(monkeypatch, mem.layout)
    mem.sync()
    assert seen == {"parse": {"free"}, "write": {"held"}}
    assert any("agent3" in h.doc.text for h in mem.context.index.search("later note"))


def test_a_rebuild_parses_the_whole_store_while_the_index_lock_is_free(
    clone: tuple[Path, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = clone[1]
    mem.sync()
    before = sorted((d.path, d.id, d.text) for d in mem.context.index.docs())
    seen = _probe_while_parsing_and_writing(monkeypatch, mem.layout)
    assert mem.reindex() == ["indexed 19 files"]
    assert seen == {"parse": {"free"}, "write": {"held"}}
    assert sorted((d.path, d.id, d.text) for d in mem.context.index.docs()) == before


def _changed_after_the_parse(monkeypatch: pytest.MonkeyPatch, change: Any) -> dict[str, int]:
    """Make `change()` run between a sync's parse and its write; counts the parses and the
    reads of files made after it, under the lock."""
    counts = _counted_parses(monkeypatch)
    counts["read under the lock"] = 0
    ahead = sync.Sync._read_ahead

    def then_change(syncing: sync.Sync, everything: bool) -> None:
        ahead(syncing, everything)
        change()
        _before(
            monkeypatch,
            files.Folder,
            "read",
            lambda *_: counts.update({"read under the lock": counts["read under the lock"] + 1}),
        )

    monkeypatch.setattr(sync.Sync, "_read_ahead", then_change)
    return counts


def test_a_file_replaced_after_its_parse_is_indexed_as_it_is_at_the_write(
    clone: tuple[Path, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, mem = clone
    hot = root / ".squad" / "memory" / "hot" / "agent2.md"

    def replace() -> None:
        files.atomic_write(hot, hot.read_text("utf-8").replace("Open note 2", "Shut note 2"))

    counts = _changed_after_the_parse(monkeypatch, replace)
    mem.sync()
    texts = [d.text for d in mem.context.index.docs()]
    assert any("Shut note 2" in t for t in texts) and not any("Open note 2" in t for t in texts)
    assert counts["parsed"] == 7 + 1  # every file once, the replaced one again
    assert cli(["--root", str(root), "reindex", "--check"])[:2] == (0, "index matches the files\n")


def test_a_file_rewritten_in_place_with_its_old_size_and_mtime_is_read_again(
    clone: tuple[Path, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files older than the clock's tick are taken as parsed when their stat is the same
    (none read again under the lock); a write in place that keeps the size and restores the
    mtime still moves the change time, and that file is read again."""
    monkeypatch.setattr(sync, "_RACY_NS", 0)  # the clone's files count as long written
    root, mem = clone
    mem.sync()  # every file's stamp recorded (none within the tick now)
    mem.hot_add("agent4", "note", "One more note")
    hot = root / ".squad" / "memory" / "hot" / "agent4.md"
    old = hot.stat()

    def rewrite() -> None:
        time.sleep(0.05)  # a tick of the clock that stamps change times
        with open(hot, "r+b") as handle:
            data = handle.read().replace(b"Open note 4", b"Shut note 4")
            handle.seek(0)
            handle.write(data)
        os.utime(hot, ns=(old.st_atime_ns, old.st_mtime_ns))

    counts = _changed_after_the_parse(monkeypatch, rewrite)
    mem.sync()
    assert (hot.stat().st_size, hot.stat().st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    texts = [d.text for d in mem.context.index.docs()]
    assert any("Shut note 4" in t for t in texts) and not any("Open note 4" in t for t in texts)
    assert counts == {"parsed": 1 + 1, "read under the lock": 1}


def test_syncs_take_turns_so_that_two_never_parse_the_same_changes(
    clone: tuple[Path, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, first = clone
    other = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # another holder of locks
    second = other.submit(Memory, root, now=races.T0).result()
    parses = _counted_parses(monkeypatch)
    ahead = sync.Sync._read_ahead
    meanwhile: list[SyncReport] = []

    def asked_meanwhile(syncing: sync.Sync, everything: bool) -> None:
        ahead(syncing, everything)
        if not meanwhile:  # the second asks while the first holds its turn
            meanwhile.append(other.submit(second.context.index.sync).result())

    monkeypatch.setattr(files, "LOCK_TIMEOUT_SECONDS", 0.2)
    monkeypatch.setattr(sync.Sync, "_read_ahead", asked_meanwhile)
    first.sync()
    assert [r.stale for r in meanwhile] == [sync.BUSY]  # it waited, parsing nothing
    assert parses["parsed"] == 7
    assert not other.submit(second.context.index.sync).result().changed  # found done
    assert parses["parsed"] == 7
    other.submit(second.close).result()
    other.shutdown()
