"""Search results are places: the passages that answer, with the ones around them, each
passage shown once across the results."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.relevance import places
from tiermem.storage import archive
from tiermem.storage import store as files
from tiermem.storage.entries import Entry, TierFile

T0 = "2026-03-01T09:00:00Z"
FILLER = [
    "the weather was mild all week",
    "we walked the dog by the river",
    "lunch was soup and bread again",
    "the train ran late on Tuesday",
    "my sister called about the holidays",
    "the garden needs more water soon",
    "a new cafe opened near the office",
    "the library extended its hours",
]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    yield made
    made.close()


def chat(turns: list[str]) -> str:
    """A conversation archived as one section: a turn a line, speakers taking turns."""
    lines = [f"{'Ann' if n % 2 == 0 else 'Bo'}: {text}." for n, text in enumerate(turns)]
    return "## Chat of 3 March\n\n" + "\n".join(lines) + "\n"


def archived(mem: Memory, text: str) -> str:
    record = archive.new_record("ada", T0, "hot-session", "hot/ada.md", "", text)
    archive.write(mem.layout, record)
    return record.id


def test_a_matching_turn_shows_with_the_turn_before_and_the_answer_after(mem: Memory) -> None:
    turns = [f"{FILLER[n % 8]} (day {n})" for n in range(40)]
    turns[20] = "where did you go camping this summer"
    turns[21] = "up at the lake, three nights in a tent"
    archived(mem, chat(turns))

    first = mem.search("camping", agent="ada")[0]
    assert "camping this summer" in first.text
    assert "three nights in a tent" in first.text  # the answer, which shares no word
    assert "(day 19)" in first.text  # the turn before
    assert "(day 2)" not in first.text and "(day 35)" not in first.text  # not the whole chat
    assert first.tokens <= places.PLACE_TOKENS + 40


def test_ten_results_are_ten_places_and_fit_their_room(mem: Memory) -> None:
    turns = [f"we talked about the marathon training plan, week {n}" for n in range(120)]
    archived(mem, chat(turns))

    hits = mem.search("marathon training", agent="ada")
    assert len(hits) == 10
    seen: set[tuple[int, int]] = set()
    for hit in hits:
        assert not set(hit.spans) & seen  # no passage in two results
        seen |= set(hit.spans)
    assert sum(h.tokens for h in hits) <= 10 * (places.PLACE_TOKENS + 40)


def test_a_sentence_a_summary_shows_is_not_shown_again_from_its_archived_note(
    mem: Memory,
) -> None:
    turns = [f"{FILLER[n % 8]} (day {n})" for n in range(30)]
    turns[10] = "the quarterly budget review moved to Friday"
    archived(mem, chat(turns))
    summary = Entry(
        "c-00000000aa",
        "session",
        "Budget review",
        "Ann: the quarterly budget review moved to Friday.",
        agent="ada",
        created=T0,
        used=T0,
    )
    path = mem.layout.tier_file("cold", "ada")
    files.save(
        mem.layout,
        path,
        TierFile(heading="ada: cold memory", meta={"tier": "cold"}, entries=[summary]),
    )

    hits = mem.search("quarterly budget review", agent="ada")
    shown = "\n".join(h.text for h in hits)
    assert shown.count("quarterly budget review moved to Friday") == 1
    # The archived note still shows what the summary left out around that sentence.
    assert any(h.tier == "archive" and "(day 11)" in h.text for h in hits)


def test_a_heading_that_repeats_its_first_line_is_left_out(mem: Memory) -> None:
    first = "Ann: the caching layer keeps keys for an hour"
    later = [f"Bo: {FILLER[n % 8]} (day {n})." for n in range(30)]
    later[25] = "Bo: the museum opened a new wing."
    body = "\n".join([first, *later])
    archived(mem, f"# ada: hot memory\n\n## Note: {first[:30]}…\n\n{body}\n")

    hit = mem.search("caching layer keys", agent="ada")[0]
    assert first in hit.text
    assert "## Note:" not in hit.text  # it says nothing the first line does not
    # Shown over a later turn, it says where that turn is: then it stays.
    hit = mem.search("museum wing", agent="ada")[0]
    assert "museum opened a new wing" in hit.text and "## Note:" in hit.text


def test_one_entry_gives_at_most_two_places_while_others_have_places(mem: Memory) -> None:
    # A long chat that says "release" on every turn, and three short notes that say it once.
    turns = [f"the release checklist grew again, item {n}" for n in range(120)]
    archived(mem, chat(turns))
    for n, topic in enumerate(("signing", "changelog", "rollback")):
        archived(mem, f"## Note {n}\n\nThe release {topic} step is written down in the wiki.\n")

    rows = [h.id for h in mem.search("release", agent="ada", limit=5)]
    assert len(rows) == 5
    assert max(rows.count(r) for r in rows) <= places.PLACES_PER_ENTRY
    # With nothing else left to show, the long chat's other places follow.
    assert len(mem.search("release checklist", agent="ada", limit=10)) == 10
