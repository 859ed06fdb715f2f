"""Search as an agent sees it: its own memory and the team's, each text once, entries whole."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import archive_note_and_summary
from tiermem.index import queries
from tiermem.index.matching import fts_query
from tiermem.index.protocol import Scope
from tiermem.memory import Memory
from tiermem.results.reading import SearchHit
from tiermem.storage import archive
from tiermem.storage import store as files
from tiermem.storage.entries import Entry, TierFile, split_entry
from tiermem.team import use

T0 = "2026-03-01T09:00:00Z"


def put(mem: Memory, tier: str, name: str, *entries: Entry) -> None:
    path = mem.layout.tier_file(tier, name)
    heading = f"{name}: {tier} memory" if tier == "cold" else name
    files.save(mem.layout, path, TierFile(heading=heading, meta={"tier": tier}, entries=[*entries]))


def entry(entry_id: str, title: str, body: str, agent: str = "") -> Entry:
    return Entry(entry_id, "decision", title, body, agent=agent, created=T0, used=T0)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    yield made
    made.close()


# --- scope ----------------------------------------------------------------------------------


def test_an_agent_finds_its_own_memory_and_the_teams_but_not_another_agents(mem: Memory) -> None:
    put(mem, "cold", "ada", entry("c-000000000a", "Retry policy", "Parser retries twice.", "ada"))
    put(mem, "cold", "team", entry("d-000000000b", "Retry budget", "Parser retries cap at 3."))
    put(mem, "cold", "bo", entry("c-000000000c", "Retry notes", "Parser retries in bo's code."))

    found = {h.id for h in mem.search("parser retries", agent="ada")}
    assert found == {"c-000000000a", "d-000000000b"}
    assert {h.id for h in mem.search("parser retries")} == {
        "c-000000000a",
        "d-000000000b",
        "c-000000000c",
    }


def test_an_identifier_is_found_by_its_words(mem: Memory) -> None:
    # An identifier is made of words: `PdfViewer`, `useSimilarBooks`, `normalize_book`.
    body = "View PDF opens `PdfViewer`; related titles come from `useSimilarBooks`."
    modal = entry("c-000000000a", "Book modal", body, "ada")
    cleanup = entry("c-000000000b", "Cleanup", "We call `normalize_book` first.", "ada")
    put(mem, "cold", "ada", modal, cleanup)
    assert [h.id for h in mem.search("pdf viewer", agent="ada")] == ["c-000000000a"]
    # "book" is in both: the name that holds every word of the query ranks first.
    assert next(h.id for h in mem.search("similar books", agent="ada")) == "c-000000000a"
    assert next(h.id for h in mem.search("normalize book", agent="ada")) == "c-000000000b"
    # The name as written is found too, and a word of a name ranks below the same word said.
    put(mem, "cold", "bo", entry("c-000000000c", "Viewer", "The PDF viewer is slow.", "bo"))
    assert [h.id for h in mem.search("pdfviewer")] == ["c-000000000a"]
    assert next(iter(mem.search("pdf viewer"))).id == "c-000000000c"


def test_an_agent_finds_the_whole_wiki_whoever_wrote_each_entry(mem: Memory) -> None:
    put(mem, "wiki", "parsing", entry("k-000000000a", "Parser retries", "Bo's finding.", "bo"))
    put(mem, "cold", "bo", entry("c-000000000c", "Parser retries", "Bo's own session."))
    (mem.layout.squad / "agents" / "ada").mkdir(parents=True)  # on the team, no memory yet

    found = {h.id for h in mem.search("parser retries", agent="ada")}
    assert found == {"k-000000000a"}
    assert {h.id for h in mem.search("parser retries", agent="ada", tier="wiki")} == {
        "k-000000000a"
    }
    assert mem.search("parser retries", agent="ada", tier="cold") == []


def test_on_an_equal_match_the_agents_own_entry_ranks_first(mem: Memory) -> None:
    put(mem, "cold", "team", entry("d-000000000b", "Parser retry", "Retries cap at three."))
    put(mem, "cold", "ada", entry("c-000000000a", "Parser retry", "Retries cap at four."))

    assert [h.id for h in mem.search("parser retry", agent="ada")] == [
        "c-000000000a",
        "d-000000000b",
    ]
    assert [h.id for h in mem.search("parser retry", agent="ada", limit=1)] == ["c-000000000a"]


# --- each text once -------------------------------------------------------------------------


def test_a_text_repeated_by_a_union_merge_shows_once(mem: Memory) -> None:
    body = "We pin the tokenizer to o200k_base for every count."
    put(
        mem,
        "cold",
        "team",
        entry("d-000000000a", "Tokenizer pin", body),
        entry("d-000000000b", "Tokenizer pin", body),
        entry("d-000000000c", "Tokenizer pin", "We pin nothing else."),
    )
    hits = mem.search("tokenizer pin")
    assert len(hits) == 2
    assert sorted(h.text for h in hits) == sorted(
        ["Tokenizer pin\n" + body, "Tokenizer pin\nWe pin nothing else."]
    )


def test_a_text_repeated_many_times_does_not_crowd_out_the_others(mem: Memory) -> None:
    repeats = [entry(f"d-{n:010x}", "Tokenizer pin", "Pin the tokenizer pin.") for n in range(40)]
    others = [entry(f"d-{n:010x}", f"Note {n}", "tokenizer") for n in range(100, 104)]
    put(mem, "cold", "team", *repeats, *others)
    hits = mem.search("tokenizer pin", limit=3)
    assert len(hits) == 3
    assert hits[0].title == "Tokenizer pin"
    assert {h.title for h in hits[1:]} <= {f"Note {n}" for n in range(100, 104)}


def test_a_text_kept_in_the_archive_and_as_an_entry_shows_as_the_entry(mem: Memory) -> None:
    raw = "### Tokenizer pin\n\nWe pin the tokenizer to o200k_base for every count.\n"
    archive.write(mem.layout, archive.new_record("team", T0, "decision", "decisions.md", "", raw))
    put(
        mem,
        "wiki",
        "tooling",
        entry(
            "d-000000000a", "Tokenizer pin", "We pin the tokenizer to o200k_base for every count."
        ),
    )
    [hit] = mem.search("tokenizer pin")
    assert (hit.tier, hit.id) == ("wiki", "d-000000000a")


def test_a_decision_archived_under_its_dated_heading_shows_once_as_the_entry(
    mem: Memory,
) -> None:
    body = "**By:** ada | **Status:** Record\n\nWe pin the tokenizer to o200k_base for every count."
    raw = f"## 2026-03-04 — User Directive: Tokenizer pin\n\n{body}\n"
    archive.write(mem.layout, archive.new_record("team", T0, "decision", "decisions.md", "", raw))
    put(mem, "wiki", "tooling", entry("d-000000000a", "User Directive: Tokenizer pin", body))
    put(mem, "wiki", "notes", entry("d-000000000b", "Tokenizer pin, again", "Done."))
    put(mem, "wiki", "misc", entry("d-000000000c", "Tokenizer pin, once more", "Done."))

    found = [(h.tier, h.id) for h in mem.search("tokenizer pin")]
    assert found.count(("wiki", "d-000000000a")) == 1
    assert not any(tier == "archive" for tier, _ in found)
    # Short bodies alike do not make two entries one.
    assert {"d-000000000b", "d-000000000c"} <= {entry_id for _, entry_id in found}


def test_an_archived_summary_of_a_text_shown_above_it_gives_its_place_to_another_result(
    mem: Memory,
) -> None:
    archive_note_and_summary(mem, T0, "Session: tokenizer pin")
    put(mem, "cold", "team", entry("d-000000000b", "Tokenizer in CI", "CI checks the pin."))

    hits = mem.search("tokenizer pin in tokens.py, by the counter", agent="ada", limit=2)
    assert [h.tier for h in hits] == ["archive", "cold"]
    assert "The pin lives in tokens.py" in hits[0].text


def test_an_entry_is_kept_even_when_archived_text_above_it_holds_its_words(mem: Memory) -> None:
    notes = (
        "## Note: tokenizer pin\n"
        "We pin the tokenizer to o200k_base for every count. "
        "The pin lives in tokens.py next to the counter.\n"
    )
    archive.write(mem.layout, archive.new_record("ada", T0, "hot", "hot/ada.md", "", notes))
    summary = "- We pin the tokenizer to o200k_base for every count."
    put(mem, "cold", "ada", entry("c-000000000a", "Session: tokenizer", summary, "ada"))

    hits = mem.search("tokenizer pin in tokens.py, by the counter", agent="ada")
    assert [h.tier for h in hits] == ["archive", "cold"]  # its use keeps it from expiring


def test_a_question_is_searched_by_what_it_asks_about() -> None:
    assert fts_query("What did we decide about the retries?") == '"decide" OR "retries"'
    assert fts_query("What did?") == '"what" OR "did"'  # nothing else to go by
    # Without a question mark, the words may be a heading the team wrote.
    assert fts_query("What was done") == '"what" OR "done"'


def test_a_quoted_run_of_words_is_searched_as_a_phrase(mem: Memory) -> None:
    assert fts_query('the "src/cli/retry.py" path') == '"src cli retry py" OR "path"'
    assert fts_query('"the end"') == '"the end"'  # a phrase keeps its stop words
    put(mem, "cold", "ada", entry("c-000000000a", "Retry budget", "Retries cap at 3.", "ada"))
    put(mem, "cold", "bo", entry("c-000000000b", "Budget review", "No retry for now.", "bo"))
    mem.sync()
    assert [h.id for h in mem.search('"retry budget"')] == ["c-000000000a"]
    assert {h.id for h in mem.search("retry budget")} == {"c-000000000a", "c-000000000b"}


# --- entries whole --------------------------------------------------------------------------


def long_decision() -> tuple[Entry, list[Entry]]:
    sections = [
        f"## Part {n}\n" + f"Step {n} of the rollout names `stage_{n}`. " * 30 for n in range(3)
    ]
    whole = entry("d-00000000aa", "Rollout plan", "\n\n".join(sections), "team")
    parts = split_entry(whole)
    assert len(parts) >= 3
    return whole, parts


def test_a_match_in_one_part_of_a_long_entry_shows_the_passages_that_match(mem: Memory) -> None:
    whole, parts = long_decision()
    put(mem, "wiki", "release", *parts)

    hits = mem.search("stage_2 rollout")
    hit = hits[0]
    assert (hit.id, hit.title) == (whole.id, whole.title)
    assert "`stage_2`" in hit.text and hit.spans
    full = mem.context.index.parts(whole.id)
    assert hit.tokens < sum(d.tokens for d in full)
    # More places of the same entry, each of other passages: ten results are ten places.
    assert {h.id for h in hits} == {whole.id}
    assert_distinct_places(hits)
    # The id reads the entry whole: every part, in order.
    [read] = mem.search(whole.id)
    for n in range(3):
        assert f"`stage_{n}`" in read.text
    assert read.spans == ()
    assert read.tokens == sum(d.tokens for d in full)


def test_using_a_whole_entry_refreshes_every_part(mem: Memory) -> None:
    _, parts = long_decision()
    put(mem, "cold", "team", *parts)
    later = Memory(mem.root, now="2026-03-05T09:00:00Z")
    later.search("stage_1")
    # Use is recorded in this clone (the tier file is left as it is) until Scribe folds it.
    recorded = use.recorded(mem.layout)
    assert {recorded.get(p.id) for p in parts} == {"2026-03-05"}
    later.scribe_run()
    ledger = use.ledger(mem.layout)  # the team's use ledger, not the tier file, holds it
    assert {ledger.get(p.id) for p in parts} == {"2026-03-05"}


def test_parts_of_one_entry_are_promoted_to_one_page(mem: Memory) -> None:
    from tiermem.team import topics, wiki

    body = (
        "## Build\n" + "The ci workflow builds the release on every push. " * 20 + "\n\n"
        "## Tests\n" + "The test suite and its fixtures run in the test job. " * 20 + "\n\n"
        "## Docs\n" + "The docs and the readme are rendered from markdown. " * 20
    )
    parts = split_entry(entry("d-00000000bb", "Release process", body, "team"))
    others = [
        entry(f"d-00000000c{n}", title, "Kept short.", "team")
        for n, title in enumerate(["Tests flake", "Tests timeout", "Tests on arm64", "Docs site"])
    ]
    # Each part alone would go on another page by the words of its own title.
    batch = [*parts, *others]
    vocabulary = topics.Vocabulary(batch, [])
    assert len({vocabulary.topic(p) for p in parts}) > 1
    put(mem, "cold", "team", *batch)
    mem.sync()

    moved = wiki.promote(mem.context, [("team", e) for e in batch])
    [home] = [topic for topic, ids in moved.items() if parts[0].id in ids]
    assert set(moved[home]) >= {p.id for p in parts}
    assert next(p for p in mem.wiki_pages() if p.topic == home).entries >= len(parts)


# --- archive chunks -------------------------------------------------------------------------


def test_a_section_shorter_than_the_target_is_one_section_of_chunks() -> None:
    head = "## 2026-03-01: Cache keys\n\n**What:** hash the path.\n\n"
    why = "### Why\n\nRenames are rare.\n"
    assert archive.chunks(head + why) == [
        archive.Chunk("2026-03-01: Cache keys", head, 0),
        archive.Chunk("Why", why, 0),
    ]


def test_a_long_record_has_a_section_for_each_part_and_long_parts_for_their_subsections() -> None:
    filler = "A line of the long decision that keeps going. " * 20 + "\n\n"
    short = "## Short decision\n\nKept whole.\n\n### Why\n\nIt is short.\n\n"
    long = "## Long decision\n\nIntro.\n\n" + "".join(
        f"### Step {n}\n\n{filler * 2}" for n in range(1, 4)
    )
    text = "# Decisions\n\n" + short + long
    assert len(long) > archive.CHUNK_TARGET_CHARS

    pieces = archive.chunks(text)
    assert "".join(p.text for p in pieces) == text
    assert [(p.title, p.section) for p in pieces] == [
        ("Decisions", 0),
        ("Short decision", 1),
        ("Why", 1),
        ("Long decision", 2),
        ("Step 1", 3),
        ("Step 2", 4),
        ("Step 3", 5),
    ]


def test_headings_inside_code_fences_do_not_split_a_chunk() -> None:
    code = "```bash\n# install\npip install tiermem\n```\n"
    text = "## Setup\n\n" + ("Prose. " * 400 + "\n\n") * 2 + code + "## Next\n\nDone.\n"
    titles = [p.title for p in archive.chunks(text)]
    assert "install" not in titles
    assert titles[0] == "Setup"


def test_a_long_text_without_headings_is_cut_at_blank_lines() -> None:
    paragraph = "word " * 200 + "\n\n"
    text = paragraph * 20
    pieces = archive.chunks(text)
    assert "".join(p.text for p in pieces) == text
    assert all(len(p.text) <= archive.CHUNK_MAX_CHARS for p in pieces)
    assert all(p.text.endswith("\n\n") for p in pieces)


def test_a_match_in_a_chunk_of_an_archived_text_shows_its_section(mem: Memory) -> None:
    first = "## Cache keys\n\nWe hash the path.\n\n### Why\n\nRenames are rare, zebra.\n\n"
    second = "## Release\n\n" + "Tag on Mondays. " * 300 + "\n"  # the record: two sections
    record = archive.new_record("ada", T0, "hot-session", "hot/ada.md", "", first + second)
    archive.write(mem.layout, record)

    [hit] = mem.search("zebra", agent="ada")
    assert (hit.id, hit.title, hit.text, hit.spans) == (record.id, "Cache keys", first, ())
    hits = mem.search("mondays")  # a long section: its passages that match, not all of it
    for hit in hits:
        assert hit.spans and "Tag on Mondays." in hit.text and len(hit.text) < len(second) / 4
        for start, end in hit.spans:
            assert second[start:end].strip() in hit.text
    assert_distinct_places(hits)


def assert_distinct_places(hits: list[SearchHit]) -> None:
    """No two results show one passage of an entry: what two show both is a short line that
    introduces each (a heading)."""
    shown: dict[str, set[tuple[int, int]]] = {}
    for hit in hits:
        spans = set(hit.spans)
        again = spans & shown.get(hit.id, set())
        assert spans - again and all(b - a < 40 for a, b in again)
        shown.setdefault(hit.id, set()).update(spans)


# --- several scopes in one query --------------------------------------------------------------


def test_one_query_over_several_scopes_ranks_each_as_its_own_search_would(mem: Memory) -> None:
    # Equal scores at every cut: which entries make it depends on their dates, then their ids.
    def dated(n: int, agent: str) -> Entry:
        made = entry(f"c-{n:010x}", "Parser retry", f"Retries cap at {n}.", agent)
        return replace(made, created=f"2026-03-{1 + n % 9:02d}T09:00:00Z")

    put(mem, "cold", "ada", *(dated(n, "ada") for n in range(1, 8)))
    put(mem, "cold", "bo", *(dated(n, "bo") for n in range(8, 12)))
    put(mem, "cold", "team", *(dated(n, "") for n in range(12, 15)))
    stale = replace(
        entry("d-00000000ff", "Parser retry", "Retries cap at ten."),
        status="superseded",
        superseded_by="d-00000000fe",
    )
    put(mem, "wiki", "parsing", entry("d-00000000fe", "Parser retry budget", "Cap 9."), stale)
    mem.sync()
    scopes = [
        Scope(tiers=("cold",), agents=("ada", files.TEAM), active_only=True),
        Scope(tiers=("wiki",), active_only=True),
        Scope(agents=("bo",)),
    ]
    retired = Scope(tiers=("cold", "wiki"), status="superseded")
    for limit in (1, 3, 5, 60):
        index = mem.context.index
        *together, gone = index.search_each("parser retry cap", [*scopes, retired], limit)
        apart = [index.search("parser retry cap", s, limit) for s in [*scopes, retired]]
        assert [*together, gone] == apart
        assert [h.doc.id for h in gone] == ["d-00000000ff"]
    assert [h.doc.id for h in together[1]] == ["d-00000000fe"]
    assert {h.doc.agent for h in together[0]} == {"ada", files.TEAM}
    assert {h.doc.agent for h in together[2]} == {"bo"}


def test_a_spawn_query_ranks_the_documents_holding_its_rarest_words(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "parser" is in every entry: with room for three documents, the spawn's query ranks
    # those holding its rarer words, by those words; search ranks all of them by every word.
    monkeypatch.setattr(queries, "RARE_ROWS", 3)
    notes = [entry(f"c-{n:010x}", f"Parser note {n}", f"Parser tidy {n}.", "ada") for n in range(9)]
    put(mem, "cold", "ada", *notes, entry("c-00000000ff", "Retry cap", "Parser retry cap jitter."))
    mem.sync()
    index, cold, words = mem.context.index, [Scope(tiers=("cold",))], "parser retry cap jitter"
    [found] = index.search_each(words, cold, 20)
    assert [h.doc.id for h in found] == ["c-00000000ff"]
    assert found[0].score == index.search("retry cap jitter", limit=1)[0].score
    assert found[0].score != index.search(words, limit=1)[0].score
    assert len(index.search(words, limit=20)) == 10
    assert len(index.search_each("parser", cold, 20)[0]) == 10  # one word, however common


def test_the_rarest_words_are_counted_again_when_another_process_writes(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queries, "RARE_ROWS", 3)
    put(mem, "cold", "ada", *(entry(f"c-a{n:09x}", f"Alpha {n}", "Alpha.") for n in range(2)))
    put(mem, "cold", "bo", *(entry(f"c-b{n:09x}", f"Beta {n}", "Beta.") for n in range(3)))
    mem.sync()
    cold = [Scope(tiers=("cold",))]
    assert len(mem.context.index.search_each("alpha beta", cold, 20)[0]) == 2  # alpha's two

    other = Memory(mem.root, now=T0)  # alpha grows common: beta's three are ranked instead
    put(other, "cold", "cleo", *(entry(f"c-c{n:09x}", f"Alpha {n}", "Alpha.") for n in range(5)))
    other.sync()
    other.close()
    assert len(mem.context.index.search_each("alpha beta", cold, 20)[0]) == 3


def test_a_small_scope_is_read_again_when_its_documents_change(mem: Memory) -> None:
    # The wiki's members are kept from one ranking to the next, until a write changes them:
    # another process's, or this one's.
    wiki = [Scope(tiers=("wiki",))]
    put(mem, "wiki", "parsing", entry("d-00000000a1", "Parser retry", "Retry cap."))
    mem.sync()
    index = mem.context.index
    assert len(index.search_each("retry", wiki, 20)[0]) == 1

    other = Memory(mem.root, now=T0)
    put(other, "wiki", "cache", entry("d-00000000a2", "Cache retry", "Retry warmup."))
    other.sync()
    other.close()
    assert len(index.search_each("retry", wiki, 20)[0]) == 2

    put(mem, "wiki", "queue", entry("d-00000000a3", "Queue retry", "Retry later."))
    mem.sync()
    assert len(index.search_each("retry", wiki, 20)[0]) == 3


def test_a_cut_through_tied_rare_matches_still_ranks_only_them(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three equal "alpha" entries tie at the cut of two: the tie is broken by date, among the
    # documents the rare word chose, though "beta beta beta" outscores them all.
    monkeypatch.setattr(queries, "RARE_ROWS", 3)

    def dated(entry_id: str, title: str, body: str, day: int) -> Entry:
        return replace(entry(entry_id, title, body), created=f"2026-02-{day:02d}T09:00:00Z")

    alphas = [dated(f"c-a{n:09x}", "Note", "Alpha.", 1 + n) for n in range(3)]
    betas = [dated(f"c-b{n:09x}", "Beta", "Beta beta beta.", 9) for n in range(5)]
    others = [dated(f"c-c{n:09x}", "Other", "Gamma.", 9) for n in range(22)]
    put(mem, "cold", "ada", *alphas, *betas, *others)
    mem.sync()
    [found] = mem.context.index.search_each("alpha beta", [Scope(tiers=("cold",))], 2)
    assert [h.doc.id for h in found] == ["c-a000000002", "c-a000000001"]
    assert mem.context.index.search("alpha beta", limit=1)[0].doc.id.startswith("c-b")


def test_a_cut_through_a_tie_takes_the_newer_then_the_smaller_id(mem: Memory) -> None:
    # Two better matches, then forty equal ones: the cut at five takes the three newest of
    # the forty, the two of the same day by id; search and search_each alike.
    def dated(entry_id: str, title: str, day: int) -> Entry:
        made = entry(entry_id, title, "Cache warmup.", "ada")
        return replace(made, created=f"2026-02-{day:02d}T09:00:00Z")

    tied = [dated(f"c-t{n:09x}", "Note", 1 + n % 20) for n in range(40)]
    better = [dated(f"c-b{n:09x}", "Cache warmup", 1) for n in range(2)]
    put(mem, "cold", "ada", *tied, *better)
    mem.sync()
    index = mem.context.index
    expected = ["c-b000000000", "c-b000000001", "c-t000000013", "c-t000000027", "c-t000000012"]
    assert [h.doc.id for h in index.search("cache warmup", limit=5)] == expected
    [found] = index.search_each("cache warmup", [Scope(tiers=("cold",))], 5)
    assert [h.doc.id for h in found] == expected


# --- looking entries up by id -------------------------------------------------------------------


def test_a_query_of_ids_returns_those_entries_in_the_agents_scope(mem: Memory) -> None:
    put(mem, "cold", "ada", entry("c-000000000a", "Retry policy", "Parser retries twice.", "ada"))
    put(mem, "cold", "team", entry("d-000000000b", "Retry budget", "Parser retries cap at 3."))
    put(mem, "cold", "bo", entry("c-000000000c", "Retry notes", "Bo's own notes.", "bo"))

    hits = mem.search("d-000000000b, c-000000000a", agent="ada")
    assert [(h.id, h.score) for h in hits] == [("d-000000000b", 0.0), ("c-000000000a", 0.0)]
    assert mem.search("c-000000000c", agent="ada") == []  # another agent's session
    assert [h.id for h in mem.search("c-000000000c")] == ["c-000000000c"]
    assert mem.search("c-000000000a", tier="wiki") == []
    # Words beside an id make it a search by words again.
    by_words = mem.search("c-000000000a retry policy")
    assert by_words[0].id == "c-000000000a" and len(by_words) == 3


def test_the_id_of_one_part_of_a_long_entry_returns_the_whole_entry(mem: Memory) -> None:
    body = "\n\n".join(
        f"## Step {n}\n" + f"Release step {n} runs the publish job. " * 40 for n in range(6)
    )
    parts = split_entry(entry("d-00000000aa", "Release runbook", body))
    assert len(parts) > 2
    put(mem, "wiki", "release", *parts)

    hits = mem.search(parts[2].id)
    assert [h.id for h in hits] == ["d-00000000aa"]
    assert all(f"Step {n}" in hits[0].text for n in range(6))


def test_a_file_broken_since_it_was_indexed_does_not_fail_the_search(mem: Memory) -> None:
    put(mem, "wiki", "release", entry("d-000000000a", "Release tags", "Tags are signed.", "bo"))
    mem.sync()
    path = mem.layout.tier_file("wiki", "release")
    broken = path.read_text(encoding="utf-8").replace(f"created={T0}", "created=yesterday")
    assert broken != path.read_text(encoding="utf-8")
    path.write_text(broken, encoding="utf-8")

    later = Memory(mem.root, now="2026-04-01T09:00:00Z")  # a day on: using it would refresh it
    try:
        hits = later.search("release tags", agent="ada")
    finally:
        later.close()
    assert [h.id for h in hits] == ["d-000000000a"]  # as indexed before the damage
    assert path.read_text(encoding="utf-8") == broken  # not rewritten
