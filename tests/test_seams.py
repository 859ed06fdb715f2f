"""The seams a step is handed: the index, the token counter and the ranker, with their fakes."""

from __future__ import annotations

from pathlib import Path

from tiermem.fts import FtsIndex
from tiermem.index import Doc, Hit, Index
from tiermem.memory import Memory
from tiermem.ranking import ByScore, OwnFirst, Ranker
from tiermem.tokens import O200K, TokenCounter, WordCounter

NOW = "2026-03-02T10:00:00Z"


def _team(root: Path, **seams: object) -> Memory:
    root.mkdir(exist_ok=True)
    Memory.init(root, now=NOW)
    mem = Memory(root, now=NOW, **seams)  # type: ignore[arg-type]
    mem.hot_set("ada", "Tune the glyph atlas packing")
    mem.hot_add("ada", "note", "Skyline packing beats shelf packing for the glyph atlas.")
    mem.end_session("ada")
    mem.decide("Glyph atlas packing uses skyline packing, with shelf packing as fallback.", "bo")
    return mem


def test_the_implementations_meet_their_protocols(tmp_path: Path) -> None:
    mem = _team(tmp_path)
    assert isinstance(mem.context.index, Index)
    assert isinstance(mem.context.index, FtsIndex)
    for counter in (O200K, WordCounter()):
        assert isinstance(counter, TokenCounter)
    for ranker in (OwnFirst(), ByScore()):
        assert isinstance(ranker, Ranker)


def test_a_spawn_counts_with_the_counter_it_is_handed(tmp_path: Path) -> None:
    words = _team(tmp_path / "words", tokens=WordCounter())
    exact = _team(tmp_path / "o200k")
    task = "Fix the glyph atlas packing"
    counted = words.spawn("ada", task, include_cold=True, budget=1000)
    assert counted.tokens["total"] == len(counted.prompt.split()) <= 1000
    assert counted.tokens["cold"] > 0
    # The same store and task under the real counter load the same entries.
    real = exact.spawn("ada", task, include_cold=True, budget=1000)
    assert [s.id for s in counted.sources] == [s.id for s in real.sources]
    assert real.tokens["total"] != counted.tokens["total"]


def test_stored_counts_follow_the_counter(tmp_path: Path) -> None:
    mem = _team(tmp_path)
    mem.sync()
    exact = {h.id: h.tokens for h in mem.search("glyph atlas packing")}
    mem.close()
    by_words = Memory(tmp_path, now=NOW, tokens=WordCounter())
    counted = {h.id: (h.tokens, h.text) for h in by_words.search("glyph atlas packing")}
    assert counted.keys() == exact.keys()
    for entry_id, (tokens, text) in counted.items():
        assert tokens == len(text.split()) != exact[entry_id]


def _hit(agent: str, score: float, doc_id: str) -> Hit:
    doc = Doc(id=doc_id, tier="cold", agent=agent, path="p", title="t", text="t")
    return Hit(doc, score)


def test_own_entries_weigh_more_only_under_the_default_ranker() -> None:
    team, own = _hit("team", 3.0, "d-1"), _hit("ada", 2.5, "c-2")
    assert [h.doc.id for h in OwnFirst().rank([team, own], "ada")] == ["c-2", "d-1"]
    assert [h.doc.id for h in OwnFirst().rank([team, own], None)] == ["d-1", "c-2"]
    assert [h.doc.id for h in ByScore().rank([team, own], "ada")] == ["d-1", "c-2"]


def test_search_ranks_with_the_ranker_it_is_handed(tmp_path: Path) -> None:
    _team(tmp_path).close()
    ranked = {
        name: [h.agent for h in Memory(tmp_path, now=NOW, ranker=r).search("glyph", agent="ada")]
        for name, r in (("own", OwnFirst(boost=100.0)), ("plain", ByScore()))
    }
    assert ranked["own"][0] == "ada"
    assert sorted(ranked["own"]) == sorted(ranked["plain"])
