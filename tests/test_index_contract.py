"""The `Index` protocol, kept alike by the real index (SQLite FTS5) and by the fake that
`tiermem.testing` ships (a list in memory): the same documents, lookups, dates and totals,
the same changes found by a sync and by a check, the same scopes searched; and a whole store
run on the fake, with no SQLite file ever made."""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import copy_of
from tiermem import Memory
from tiermem.index.fts import FtsIndex
from tiermem.index.protocol import Index, Scope
from tiermem.testing import MemoryIndex

T1 = "2026-03-03T10:00:00Z"


@pytest.fixture
def pair(built_store: Path, tmp_path: Path) -> Iterator[tuple[Index, Index, Memory]]:
    """The real index and the fake, over one copy of the built store, both synced."""
    root = copy_of(built_store, tmp_path)
    mem = Memory(root, now=T1)
    real = FtsIndex(mem.context.layout, mem.context.tokens)
    fake = MemoryIndex(mem.context.layout, mem.context.tokens)
    real.sync()
    fake.sync()
    yield real, fake, mem
    real.close()
    mem.close()


def test_both_hold_the_same_documents_in_file_order(pair: tuple[Index, Index, Memory]) -> None:
    real, fake, _ = pair
    assert len(real.docs()) > 10
    assert fake.docs() == real.docs()
    for tier in ("hot", "cold", "wiki", "archive"):
        assert fake.docs(tier=tier) == real.docs(tier=tier) != []
    assert fake.docs(agent="flight") == real.docs(agent="flight") != []
    for path in {d.path for d in real.docs()}:
        assert fake.docs(path=path) == real.docs(path=path) != []
    assert fake.docs(tier="cold", agent="nobody") == real.docs(tier="cold", agent="nobody") == []
    assert fake.docs(cls="policy") == real.docs(cls="policy")
    tags = {t for d in real.docs() for t in d.tags.split(",") if t}
    assert tags
    for tag in tags:
        tagged = [d for d in real.docs() if tag in d.tags.split(",")]
        assert fake.docs(tag=tag) == real.docs(tag=tag) == tagged
    parts = {t[:-1] for t in tags if len(t) > 1} - tags  # a tag's start is no tag of its own
    assert parts
    for part in parts:
        assert real.docs(tag=part) == fake.docs(tag=part) == []


def test_both_look_up_by_id_entry_and_date_alike(pair: tuple[Index, Index, Memory]) -> None:
    real, fake, _ = pair
    ids = [d.id for d in real.docs()][::-1]
    assert fake.by_ids(ids) == real.by_ids(ids)
    owners = ["flight"]
    for scope in (
        Scope(("hot", "wiki"), owners, whole_wiki=True),
        Scope(("hot", "wiki"), owners),
        Scope(active_only=True),
    ):
        assert fake.by_ids(ids, scope) == real.by_ids(ids, scope) != []
    for parent in {d.parent for d in real.docs() if d.parent}:
        assert fake.parts(parent) == real.parts(parent) != []
    for agent in ("eecom", "flight", None):
        for tiers in (["cold"], ["cold", "wiki"], ["hot", "cold", "wiki", "archive"]):
            assert fake.newest(tiers, agent, 3) == real.newest(tiers, agent, 3)
    assert fake.totals() == real.totals()
    assert fake.token_counts(["one two", ""]) == real.token_counts(["one two", ""])


def test_both_find_the_same_changes_in_a_sync_and_a_check(
    pair: tuple[Index, Index, Memory],
) -> None:
    real, fake, mem = pair
    mem.hot_add("eecom", "note", "The reader now keeps a partial chunk between fills")
    hot = ".squad/memory/hot/eecom.md"
    assert real.check() == fake.check() == [f"changed: {hot}"]
    assert real.sync().changed == fake.sync().changed == [hot]
    assert real.check() == fake.check() == []
    wiki = mem.context.layout.tier_dir("wiki") / "release.md"
    wiki.unlink()
    assert real.sync().removed == fake.sync().removed == [".squad/memory/wiki/release.md"]
    assert fake.docs() == real.docs()


def test_both_search_within_the_same_scopes(pair: tuple[Index, Index, Memory]) -> None:
    real, fake, _ = pair
    for index in (real, fake):
        [top] = index.search("semver", Scope(tiers=("cold", "wiki")), limit=1)
        assert top.doc.tier == "wiki" and "semver" in top.doc.text and top.score > 0
        wiki = Scope(tiers=("wiki",))
        assert {h.doc.tier for h in index.search("release login", wiki)} == {"wiki"}
        owned = index.search("release login fix", Scope(agents=("eecom",), whole_wiki=True))
        assert all(h.doc.agent == "eecom" or h.doc.tier == "wiki" for h in owned)
        assert {h.doc.agent for h in owned} == {"eecom", "flight"}  # flight wrote the page
        assert index.search("zzzyzx") == [] == index.search("release", limit=0)
        scopes = [Scope(tiers=("hot",)), Scope(agents=("eecom",)), Scope(tiers=("wiki",))]
        found = index.search_each("release login reader", scopes, 5)
        for scope, hits in zip(scopes, found, strict=True):
            assert hits and all(scope.holds(h.doc.tier, h.doc.status, h.doc.agent) for h in hits)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            assert [h.doc for h in index.search("release login reader", scope, 5)] == [
                h.doc for h in hits
            ]


def test_both_are_asked_in_the_signatures_the_protocol_writes_once() -> None:
    """The real index and the fake derive from `Index`: a search is asked within a `Scope`,
    and neither writes a question's signature again (the real one takes its queries' own)."""
    assert issubclass(FtsIndex, Index) and issubclass(MemoryIndex, Index)
    assert list(inspect.signature(Index.search).parameters) == ["self", "query", "scope", "limit"]
    assert list(inspect.signature(Index.by_ids).parameters) == ["self", "ids", "scope"]
    for question in ("search", "search_each", "by_ids", "docs", "newest", "parts", "totals"):
        wanted = inspect.signature(getattr(Index, question))
        assert inspect.signature(getattr(FtsIndex, question)) == wanted, question
    assert "search" not in vars(MemoryIndex)  # the protocol's: its one ranking, per scope


def test_a_store_runs_on_the_fake_without_sqlite(built_store: Path, tmp_path: Path) -> None:
    root = copy_of(built_store, tmp_path)
    mem = Memory(root, now=T1, index=MemoryIndex)
    try:
        assert isinstance(mem.context.index, MemoryIndex)
        assert [h.tier for h in mem.search("semver tag")][:1] == ["wiki"]
        spawned = mem.spawn("flight", "Ship the login fix", auto=True)
        assert "login fix" in spawned.prompt and spawned.sources
        assert {row.tier for row in mem.stats().tiers} >= {"hot", "cold", "wiki", "archive"}
        assert mem.reindex(check=True) == []
        [cold] = [h for h in mem.search("ReadBuffer") if h.tier == "cold"]
        mem.forget(cold.id, reason="wrong")
        assert "cold" not in {h.tier for h in mem.search("ReadBuffer")}
    finally:
        mem.close()
    memory = root / ".squad" / "memory"
    assert not [p.name for p in memory.iterdir() if p.name.startswith("index.sqlite")]
    shutil.rmtree(root)
