"""The seams a step is handed: the index, the token counter and the ranker, with their fakes."""

from __future__ import annotations

from pathlib import Path

from tiermem.index import passages
from tiermem.index.fts import FtsIndex
from tiermem.index.protocol import Doc, Hit, Index
from tiermem.index.tokens import O200K, TokenCounter
from tiermem.memory import Memory
from tiermem.relevance import engine, query
from tiermem.relevance.candidates import Candidate
from tiermem.relevance.ranking import OwnFirst, Ranker
from tiermem.testing import ByScore, FirstWords, MemoryIndex, RecordingIndex, WordCounter

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
    assert isinstance(MemoryIndex(mem.context.layout, mem.context.tokens), Index)
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


def test_a_session_is_summarized_by_the_summarizer_it_is_handed(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path, now=NOW)[0]
    mem.close()
    mem = Memory(tmp_path, now=NOW, summarizer=FirstWords())
    mem.hot_set("ada", "Tune the glyph atlas packing")
    notes = " ".join(
        f"Packing trial {n} kept the atlas under budget by skyline." for n in range(40)
    )
    mem.hot_add("ada", "note", notes)
    report = mem.end_session("ada")
    assert report.summarizer == "first-words"
    cold = mem.context.layout.tier_file("cold", "ada").read_text(encoding="utf-8")
    assert "Packing trial 0 kept the atlas" in cold
    assert "Packing trial 39" not in cold  # cut at the budget, as the fake promises


def test_a_search_asks_the_index_it_is_handed(tmp_path: Path) -> None:
    _team(tmp_path).close()
    mem = Memory(tmp_path, now=NOW, index=RecordingIndex)
    found = mem.search("skyline packing", agent="ada")
    index = mem.context.index
    assert isinstance(index, RecordingIndex) and isinstance(index, Index)
    assert found and any("skyline" in q for q in index.queries)


def test_the_shipped_summarizer_is_the_one_config_names(tmp_path: Path) -> None:
    mem = _team(tmp_path)
    assert mem.context.summarizer().name == "extractive"
    assert mem.end_session("ada").summarizer == "extractive"


def _entry(doc_id: str, agent: str, text: str) -> Candidate:
    doc = Doc(
        id=doc_id,
        tier="cold",
        agent=agent,
        path=f".squad/memory/cold/{agent}.md",
        title="Glyph atlas packing",
        text=text,
        tokens=len(text.split()),
        passages=passages.encode(passages.cut(text)),
    )
    return Candidate(doc, 1.0)


def test_a_spawns_passages_weigh_by_the_ranker_it_is_handed() -> None:
    # The same words, one entry the asking agent's and one the team's, room for one of them.
    own = _entry("c-1", "ada", "Glyph atlas packing: skyline first, shelf packing as fallback.")
    team = _entry("d-2", "team", "Glyph atlas packing: shelf first, skyline packing as fallback.")
    asked = query.build("Fix the glyph atlas packing")

    def chosen(ranker: Ranker) -> list[str]:
        ask = engine.Ask(asked, "ada", {"cold": 1.0}, room=40)
        choice = engine.choose([own, team], ask, ranker=ranker)
        return [group.doc.id for group in choice.groups]

    assert chosen(OwnFirst()) == ["c-1"]  # its own weigh 1.5, the team's 1.2
    assert chosen(ByScore()) == ["d-2"]  # no preference for its own: the team's weigh more
