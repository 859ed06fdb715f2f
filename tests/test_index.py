"""The index is a cache many processes share: built atomically under a lock, never deleted
under another process, and synced from files that may vanish while it reads them."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import races
from reliability import child_env, cli
from tiermem.bench.generated import NOW as GENERATED_NOW
from tiermem.bench.generated import generate
from tiermem.index import fts, matching, rows, schema, sync
from tiermem.index.protocol import Doc, Scope
from tiermem.index.tokens import O200K
from tiermem.memory import Memory
from tiermem.storage import files
from tiermem.testing import WordCounter


def test_a_fresh_clone_opened_by_many_processes_at_once(tmp_path: Path) -> None:
    for n in range(3):
        root = races.fresh_clone(tmp_path / f"clone{n}")
        results = races.open_at_once(root, ["search", "stats", "search", "end", "search", "note"])
        assert races.failures(results) == []
        # The next read brings the index up to date with the last writes, exactly.
        assert cli(["--root", str(root), "search", "reader"])[0] == 0
        code, out, err = cli(["--root", str(root), "reindex", "--check"])
        assert (code, out) == (0, "index matches the files\n"), err


def test_a_rebuild_while_others_read(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone")
    cli(["--root", str(root), "search", "reader"])
    results = races.open_at_once(root, ["reindex", "search", "reindex", "search", "stats"])
    assert races.failures(results) == []


def test_a_file_gone_between_the_listing_and_the_read_is_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=2)
    mem = Memory(root, now=races.T0)
    read = files.Folder.read

    def vanishing(folder: files.Folder, name: str) -> tuple[bytes, os.stat_result] | None:
        if name == "agent0.md":
            (folder.path / name).unlink(missing_ok=True)  # another process ended the session
        return read(folder, name)

    monkeypatch.setattr(files.Folder, "read", vanishing)
    mem.sync()
    paths = {d.path for d in mem.context.index.docs()}
    assert not any(p.endswith("agent0.md") for p in paths)
    assert any(p.endswith("agent1.md") for p in paths)


def test_a_folder_gone_between_the_listing_and_its_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=2)
    mem = Memory(root, now=races.T0)
    listing = files.listing

    def vanishing(folder: Path) -> list[files.Item]:
        items = listing(folder)
        if folder.name == "agent1" and folder.parent.name == "archive":
            for item in items:
                item.path.unlink()
            folder.rmdir()
        return items

    monkeypatch.setattr(files, "listing", vanishing)
    mem.sync()  # no FileNotFoundError, no AssertionError
    mem.close()


def test_an_index_that_is_not_a_database_is_built_again(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    (root / ".squad" / "memory" / "index.sqlite").write_bytes(b"not a database\n" * 100)
    code, out, err = cli(["--root", str(root), "search", "reader"])
    assert code == 0, err
    assert "agent0" in out


def test_a_damaged_index_is_built_again(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=3)
    assert cli(["--root", str(root), "search", "reader"])[0] == 0
    index = root / ".squad" / "memory" / "index.sqlite"
    data = bytearray(index.read_bytes())
    data[4096:] = b"\x5a" * (len(data) - 4096)  # every page after the first
    index.write_bytes(bytes(data))
    for side in ("-wal", "-shm"):
        Path(f"{index}{side}").unlink(missing_ok=True)
    code, out, err = cli(["--root", str(root), "search", "reader"])
    assert code in (0, 2), err
    assert err.count("\n") <= 1
    code, _, err = cli(["--root", str(root), "reindex"])
    assert code == 0, err
    code, out, _ = cli(["--root", str(root), "search", "reader"])
    assert code == 0 and "agent0" in out


def test_an_index_that_is_a_folder_fails_in_one_line(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    (root / ".squad" / "memory" / "index.sqlite").mkdir()
    for argv in (["search", "reader"], ["stats"], ["reindex"], ["hot", "note", "agent0", "x"]):
        code, _, err = cli(["--root", str(root), *argv])
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and "index.sqlite" in err, err


def test_another_schema_waits_for_the_open_index_instead_of_deleting_it(tmp_path: Path) -> None:
    """A process with the index open keeps it; one that needs another schema gives up in one
    line after the lock timeout rather than deleting the file under it."""
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    holder = Memory(root, now=races.T0)
    assert holder.search("reader")
    script = textwrap.dedent(
        """
        import sys
        from tiermem.storage import files
        from tiermem.memory import Memory
        from tiermem.errors import TiermemError
        from tiermem.testing import WordCounter
        files.LOCK_TIMEOUT_SECONDS = 1.0
        try:
            Memory(sys.argv[1], tokens=WordCounter()).search("reader")
        except TiermemError as exc:
            print("refused:", exc)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, env=child_env()
    )
    assert "refused:" in proc.stdout and "in another process" in proc.stdout, proc
    assert holder.search("reader")  # its database is still there, whole
    holder.close()
    # Once it is closed, the other schema gets an index of its own.
    assert Memory(root, tokens=WordCounter()).search("reader")


def test_a_lock_held_too_long_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    assert cli(["--root", str(root), "search", "reader"])[0] == 0
    (root / ".squad" / "memory" / "hot" / "agent0.md").write_text(
        "# agent0: hot memory\n<!-- tiermem-file tier=hot agent=agent0 session=s1 -->\n", "utf-8"
    )
    blocker = sqlite3.connect(root / ".squad" / "memory" / "index.sqlite", timeout=1)
    blocker.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(schema, "SQLITE_TIMEOUT_SECONDS", 0.5)
    try:
        code, _, err = cli(["--root", str(root), "search", "reader"])
    finally:
        blocker.rollback()
        blocker.close()
    assert code == 2 and err.count("\n") == 1 and "locked" in err, err


def test_no_index_file_is_left_half_built(tmp_path: Path) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    cli(["--root", str(root), "search", "reader"])
    memory = root / ".squad" / "memory"
    assert not [p for p in os.listdir(memory) if p.startswith(files.TEMP_PREFIX)]


def test_a_read_while_another_process_holds_the_index_reads_it_as_it_stood(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    assert cli(["--root", str(root), "search", "reader"])[0] == 0
    assert cli(["--root", str(root), "hot", "note", "agent0", "mark-after the last sync"])[0] == 0
    mem = Memory(root)
    mem.sync()  # opened before the lock is taken: an index that needs building waits for it
    layout = mem.layout
    holder = files.open_lock(layout, files._lock_name(layout, layout.index))  # another holder
    files.acquire(holder, "index")
    monkeypatch.setattr(files, "LOCK_TIMEOUT_SECONDS", 0.2)
    try:
        hits = mem.search("reader")
        notes = mem.context.take_notes()
    finally:
        os.close(holder)
    assert hits and not any("mark-after" in h.text for h in hits)  # the index as it stood
    assert notes == [sync.BUSY]
    assert any("mark-after" in h.text for h in mem.search("mark-after"))  # then brought up to date


def test_check_and_doctor_run_while_another_process_holds_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reindex --check` and `doctor` read the whole store: they compare one state of the
    index with the files without its lock, so a rebuild or many writers never make them
    wait, and they never make a writer wait."""
    root = races.fresh_clone(tmp_path / "clone", agents=1)
    assert cli(["--root", str(root), "search", "reader"])[0] == 0
    mem = Memory(root)
    layout = mem.layout
    holder = files.open_lock(layout, files._lock_name(layout, layout.index))  # another holder
    files.acquire(holder, "index")
    monkeypatch.setattr(files, "LOCK_TIMEOUT_SECONDS", 0.2)
    try:
        clean = _index(mem).check()
        assert cli(["--root", str(root), "doctor"])[0] == 0
        hot = root / ".squad" / "memory" / "hot" / "agent0.md"
        hot.write_text(hot.read_text("utf-8") + "\nhand-written\n", "utf-8")
        drift = _index(mem).check()
    finally:
        os.close(holder)
    assert clean == []
    assert drift == ["changed: .squad/memory/hot/agent0.md"]


def _bulk_store(root: Path) -> Memory:
    """A generated store whose first sync takes in more text than is derived at once."""
    root.mkdir()
    generate(root, 400, lambda _: None)
    mem = Memory(root, now=GENERATED_NOW)
    mem.sync()
    return mem


def _index(mem: Memory) -> fts.FtsIndex:
    index = mem.context.index
    assert isinstance(index, fts.FtsIndex)
    return index


def test_a_bulk_sync_leaves_token_counts_and_passages_to_the_reads_that_return_them(
    tmp_path: Path,
) -> None:
    mem = _bulk_store(tmp_path / "store")
    db = _index(mem).db
    blank = [r[0] for r in db.execute("SELECT id FROM docs WHERE tokens IS NULL ORDER BY id")]
    assert len(blank) > 100  # the archive's folders: more text than is derived at once
    assert _index(mem).check() == []  # rows not derived yet match their files
    read = mem.context.index.by_ids(blank[:5])
    assert len(read) == 5
    for doc in read:  # what a read returns is derived, as a small sync derives it
        assert doc.passages == schema.cut_passages(doc.text)
        assert doc.tokens == O200K.count_many([doc.text])[0]
    kept = db.execute(
        "SELECT id FROM docs WHERE tokens IS NOT NULL AND passages IS NOT NULL AND id IN"
        f" ({','.join('?' * len(blank))})",
        blank,
    ).fetchall()
    assert sorted(row[0] for row in kept) == blank[:5]  # kept after the read, no others
    assert _index(mem).check() == []
    mem.close()


def test_figures_over_a_bulk_index_count_every_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk = _bulk_store(tmp_path / "bulk")
    totals = bulk.context.index.totals()
    (blank,) = (
        _index(bulk)
        .db.execute(
            "SELECT COUNT(*) FROM docs WHERE tokens IS NULL"
            " AND sha NOT IN (SELECT sha FROM token_cache)"
        )
        .fetchone()
    )
    assert blank == 0  # the counts made for the figures are kept (in the cache)
    bulk.close()
    monkeypatch.setattr(rows, "EAGER_CHARS", 10**9)  # every count made when indexed
    eager = _bulk_store(tmp_path / "eager")
    assert bulk.context.index.totals() == totals == eager.context.index.totals()
    derived = {d.id: (d.tokens, d.passages) for d in eager.context.index.docs()}
    assert {d.id: (d.tokens, d.passages) for d in bulk.context.index.docs()} == derived
    eager.close()
    bulk.close()


def test_passages_of_a_file_whose_stamp_moved_are_derived_again(tmp_path: Path) -> None:
    mem = _bulk_store(tmp_path / "store")
    db = _index(mem).db
    [doc] = mem.context.index.search("release", limit=1)
    rel = doc.doc.path
    db.execute("UPDATE docs SET passages='[[0,1,0,[]]]' WHERE path=?", (rel,))
    os.utime(mem.context.layout.root / rel)  # the same content, a new stamp
    mem.sync()
    [again] = [d for d in mem.context.index.docs() if d.id == doc.doc.id]
    assert again.passages == schema.cut_passages(again.text) == doc.doc.passages
    mem.close()


def test_reads_of_a_bulk_index_keep_what_they_derive_while_others_build_and_read(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    _bulk_store(root).close()
    for path in (root / ".squad" / "memory").glob("index.sqlite*"):
        path.unlink()  # as a clone brings it
    kinds = ["stats", "search", "stats", "reindex", "stats", "search"]
    assert races.failures(races.open_at_once(root, kinds)) == []
    code, out, err = cli(["--root", str(root), "reindex", "--check"])
    assert (code, out) == (0, "index matches the files\n"), err


@settings(max_examples=200, deadline=None)
@given(
    agent=st.text(max_size=12),
    tier=st.sampled_from(["hot", "cold", "wiki", "archive"]),
)
def test_sqlite_makes_the_owner_terms_python_makes(agent: str, tier: str) -> None:
    # An agent's owner term is one FTS5 token, whatever its name: a search as that agent
    # finds its own documents (and, asked so, the wiki's) and no other agent's.
    db = sqlite3.connect(":memory:")
    db.executescript(schema.TABLES)
    mine = Doc(id="x", tier=tier, agent=agent, path="p", title="A title", text="some words")
    other = Doc(id="y", tier="cold", agent=agent + "x", path="q", title="A title", text="words")
    for rowid, doc in ((1, mine), (2, other)):
        db.execute(schema.INSERT_TERMS, (rowid, *schema.terms(doc)))
    for whole_wiki in (False, True):
        match = matching.match('"words"', Scope(agents=(agent,), whole_wiki=whole_wiki))
        found = db.execute("SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?", (match,))
        assert [r[0] for r in found] == [1]
    db.close()


def test_the_policies_and_tagged_documents_kept_between_reads_follow_every_write(
    tmp_path: Path,
) -> None:
    mem, _ = Memory.init(tmp_path, now="2026-03-04T10:00:00Z")
    other = Memory(
        tmp_path, now="2026-03-04T10:00:00Z"
    )  # another writer, on a connection of its own
    try:
        index = mem.context.index
        mem.decide(
            "### 2026-03-01: Release rule\n**What:** Always tag releases from main.", by="ada"
        )
        index.sync()
        first = index.docs(cls="policy")
        assert [d.title for d in first] == ["Release rule"]
        assert index.docs(cls="policy") == first  # kept: the same answer
        # Committed by another connection: the next read sees it.
        other.decide("### 2026-03-02: Commit rule\n**What:** Never commit to main.", by="bo")
        other.sync()
        assert sorted(d.title for d in index.docs(cls="policy")) == ["Commit rule", "Release rule"]
        # Written by this one's own sync: seen too.
        mem.decide("### 2026-03-03: Review rule\n**What:** Always ask for one review.", by="ada")
        index.sync()
        titles = sorted(d.title for d in index.docs(cls="policy"))
        assert titles == ["Commit rule", "Release rule", "Review rule"]
        assert index.docs(tag="no-such-tag") == []
    finally:
        other.close()
        mem.close()
