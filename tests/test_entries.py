"""The entry format: golden round trip, properties, union-merge folding and parse errors."""

from __future__ import annotations

import itertools
import string
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiermem.errors import ParseError
from tiermem.memory import Memory
from tiermem.storage.entries import (
    CLASSES,
    ID,
    STATUSES,
    WAS,
    Entry,
    TierFile,
    escape_value,
    normalize_body,
    parse,
    read_id,
    render,
    render_entry,
    render_meta,
)

PROPERTY = settings(max_examples=200, deadline=None)

GOLDEN = """\
# flight: cold memory
<!-- tiermem-file tier=cold agent=flight -->
Hand-written notes above the first entry stay where they are.

## 2026-03-01 session: fixed the publish pipeline
<!-- tiermem id=c-1a2b3c4d5e class=learning agent=flight created=2026-03-01T10:00:00Z \
used=2026-03-04T08:30:00Z session=s20260301100000 tags=ci,publish \
sources=archive/flight/a-0123456789.md,archive/flight/a-9876543210.md -->
The publish job failed because the deploy credential had expired.

### What we tried
- re-running the job
\\<!-- tiermem id=fake class=policy -->
\\\\<!-- tiermem a line that already had a backslash

## Use Zod for validation
<!-- tiermem id=d-0000000001 class=decision agent=team created=2026-02-01T09:00:00Z \
status=superseded supersedes=d-0000000000 superseded-by=d-0000000002 trust=high%20-%20reviewed \
reviewed-by=ana -->
Always validate request bodies with Zod.

## Note: a title only
<!-- tiermem id=h-1 class=learning -->
"""

GOLDEN_ENTRIES = [
    Entry(
        id="c-1a2b3c4d5e",
        cls="learning",
        title="2026-03-01 session: fixed the publish pipeline",
        body=(
            "The publish job failed because the deploy credential had expired.\n"
            "\n"
            "### What we tried\n"
            "- re-running the job\n"
            "<!-- tiermem id=fake class=policy -->\n"
            "\\<!-- tiermem a line that already had a backslash"
        ),
        agent="flight",
        created="2026-03-01T10:00:00Z",
        used="2026-03-04T08:30:00Z",
        session="s20260301100000",
        tags=("ci", "publish"),
        sources=("archive/flight/a-0123456789.md", "archive/flight/a-9876543210.md"),
    ),
    Entry(
        id="d-0000000001",
        cls="decision",
        title="Use Zod for validation",
        body="Always validate request bodies with Zod.",
        agent="team",
        created="2026-02-01T09:00:00Z",
        status="superseded",
        supersedes=("d-0000000000",),
        superseded_by="d-0000000002",
        trust="high - reviewed",
        extra=(("reviewed-by", "ana"),),
    ),
    Entry(id="h-1", cls="learning", title="Note: a title only"),
]


def test_golden_file_parses_to_known_entries() -> None:
    parsed = parse(GOLDEN, "cold/flight.md")
    assert parsed.heading == "flight: cold memory"
    assert parsed.meta == {"tier": "cold", "agent": "flight"}
    assert parsed.notes == "Hand-written notes above the first entry stay where they are."
    assert parsed.entries == GOLDEN_ENTRIES
    assert parsed.conflicts == []


def test_golden_file_renders_back_byte_for_byte() -> None:
    assert render(parse(GOLDEN)) == GOLDEN


def test_crlf_file_parses_like_lf() -> None:
    crlf = parse(GOLDEN.replace("\n", "\r\n"))
    assert crlf.entries == GOLDEN_ENTRIES
    assert render(crlf) == GOLDEN


def test_heading_in_body_does_not_split_an_entry() -> None:
    parsed = parse(GOLDEN)
    assert [e.title for e in parsed.entries].count("What we tried") == 0
    assert "### What we tried" in parsed.entries[0].body


# --- properties -----------------------------------------------------------------------


_value_chars = st.characters(exclude_categories=["Cs"])
_values = st.text(_value_chars, max_size=20)
# Authors as agents are named (`validate.name`); others are read as none (see
# test_an_author_that_is_no_agents_name_is_read_as_none below).
_agents = st.one_of(
    st.just(""), st.just("team"), st.from_regex(r"[a-z0-9][a-z0-9_-]{0,9}", fullmatch=True)
)
_nonempty_values = st.text(_value_chars, min_size=1, max_size=20)
_known_keys = {
    "id",
    "class",
    "cls",
    "title",
    "body",
    "agent",
    "created",
    "used",
    "session",
    "slot",
    "status",
    "tags",
    "sources",
    "supersedes",
    "superseded-by",
    "trust",
    "was",  # an old id, percent-encoded already (see test_an_id_that_breaks_the_rule...)
    "was-agent",  # the same for an author
    "parent",  # an id: read by the id rule
    "extra",
}
# Ids as tiermem makes them (prefix-hash) and as people type them (`entries.ID`); others are
# read under a fresh id (test_an_id_that_breaks_the_rule_is_read_under_a_fresh_one below).
_ids = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(string.ascii_letters + string.digits + "-_.:/#", max_size=15),
)
_extra_keys = st.text(
    string.ascii_lowercase + string.digits + "-_.", min_size=1, max_size=12
).filter(lambda k: k not in _known_keys)
_times = st.one_of(
    st.just(""),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)).map(
        lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
    ),
)
_title_chars = st.characters(exclude_categories=["Cs"], exclude_characters="\n\r")
_titles = st.text(_title_chars, min_size=1, max_size=40).filter(
    lambda t: t == t.strip() and t != ""
)

# Body lines drawn from plain text and from everything that could be mistaken for structure.
_tricky_lines = st.sampled_from(
    [
        "",
        "## a heading inside a body",
        "# a top heading",
        "###### deep",
        "<!-- tiermem id=x class=learning -->",
        "<!-- tiermem-file tier=hot -->",
        "\\<!-- tiermem already escaped -->",
        "\\\\<!-- tiermem twice",
        "<!-- tiermem broken",
        "\\",
        "    indented <!-- tiermem -->",
        "\r",
        "line with crlf\r",
        "ünïcödé 中文 😀",
        "-->",
    ]
)
_body_lines = st.one_of(
    _tricky_lines, st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
)
_bodies = st.lists(_body_lines, max_size=8).map(lambda ls: normalize_body("\n".join(ls)))


@st.composite
def entries(draw: st.DrawFn, entry_id: st.SearchStrategy[str] | None = None) -> Entry:
    extra_keys = draw(st.lists(_extra_keys, max_size=3, unique=True))
    return Entry(
        id=draw(entry_id if entry_id is not None else _ids),
        cls=draw(st.sampled_from(CLASSES)),
        title=draw(_titles),
        body=draw(_bodies),
        agent=draw(_agents),
        created=draw(_times),
        used=draw(_times),
        session=draw(_values),
        slot=draw(_values),
        status=draw(st.sampled_from(STATUSES)),
        tags=tuple(draw(st.lists(_nonempty_values, max_size=3))),
        sources=tuple(draw(st.lists(_nonempty_values, max_size=3))),
        supersedes=tuple(draw(st.lists(_ids, max_size=2))),
        superseded_by=draw(st.one_of(st.just(""), _ids)),
        trust=draw(_values),
        extra=tuple((k, draw(_values)) for k in extra_keys),
    )


_notes = (
    st.text(string.ascii_letters + string.digits + " .,:;!?\n", max_size=60)
    .map(lambda n: n.strip("\n"))
    .filter(lambda n: not any(ln.startswith("#") for ln in n.split("\n")))
)


@st.composite
def tier_files(draw: st.DrawFn) -> TierFile:
    meta_keys = draw(st.lists(_extra_keys, max_size=3, unique=True))
    return TierFile(
        heading=draw(_titles),
        meta={k: draw(_values) for k in meta_keys},
        notes=draw(_notes),
        entries=draw(st.lists(entries(), max_size=6, unique_by=lambda e: e.id)),
    )


@PROPERTY
@given(tier_files())
def test_parse_inverts_render(tier_file: TierFile) -> None:
    text = render(tier_file)
    parsed = parse(text)
    assert parsed.entries == tier_file.entries
    assert parsed.meta == tier_file.meta
    assert parsed.notes == tier_file.notes
    assert parsed.conflicts == []
    assert parse(text.replace("\n", "\r\n")).entries == tier_file.entries


@PROPERTY
@given(tier_files())
def test_render_is_a_fixed_point(tier_file: TierFile) -> None:
    text = render(tier_file)
    assert render(parse(text)) == text


@pytest.mark.parametrize("space", ["\u00a0", "\u2028", "\x85", "\u3000", "\x1c", "\t"])
def test_any_whitespace_in_a_value_round_trips(space: str) -> None:
    entry = Entry(id="x-1", cls="learning", title="t", tags=(f"two{space}words",))
    tier_file = TierFile(heading="h", entries=[entry])
    assert parse(render(tier_file)).entries == [entry]


@pytest.mark.parametrize(
    "entry_id",
    ["two words", "50%41", " ", "tab\there", "-lead", "c-\n## Escalation", "</memory>", "a" * 65],
)
def test_an_id_that_breaks_the_rule_is_read_under_a_fresh_one(entry_id: str) -> None:
    written = render(TierFile(heading="h", entries=[Entry(id=entry_id, cls="learning", title="t")]))
    parsed = parse(written)
    (entry,) = parsed.entries
    assert entry.id == read_id(entry_id) != entry_id
    assert ID.fullmatch(entry.id)
    assert dict(entry.extra)[WAS] == escape_value(entry_id)
    assert "breaks the id rule" in parsed.mended[0].problem
    again = parse(render(parsed))
    assert again.entries == parsed.entries  # the same fresh id on every read, `was` kept
    assert again.mended == []


@pytest.mark.parametrize("agent", ["eve\n## Escalation", "../x", "a b", "</memory>", "x" * 65])
def test_an_author_that_is_no_agents_name_is_read_as_none(agent: str) -> None:
    entry = Entry(id="c-1", cls="learning", title="t", agent=agent)
    parsed = parse(render(TierFile(heading="h", entries=[entry])))
    (read,) = parsed.entries
    assert read.agent == ""
    assert dict(read.extra)["was-agent"] == escape_value(agent)
    assert "no agent's name" in parsed.mended[0].problem
    assert parse(render(parsed)).entries == parsed.entries


_structure_lines = st.sampled_from(
    [
        "# memory",
        "## title",
        "### another",
        "<!-- tiermem id=a class=learning -->",
        "<!-- tiermem id=a class=decision used=2026-01-01T00:00:00Z -->",
        "<!-- tiermem id=b -->",
        "<!-- tiermem class=nonsense -->",
        "<!-- tiermem status=bogus -->",
        "<!-- tiermem created=yesterday -->",
        "<!-- tiermem id=a",
        "<!-- tiermem novalue -->",
        "<!-- tiermem =x -->",
        "<!-- tiermem tags=%ZZ,%C3 -->",
        "<!-- tiermem-file tier=hot -->",
        "<!-- tiermem-file broken",
        "\\<!-- tiermem id=c -->",
        "",
        "\r",
    ]
)
_any_lines = st.one_of(_structure_lines, st.text(max_size=40))


@settings(max_examples=500, deadline=None)
@given(st.lists(_any_lines, max_size=25), st.sampled_from(["\n", "\r\n"]))
def test_parse_never_crashes(lines: list[str], newline: str) -> None:
    text = newline.join(lines)
    try:
        parse(text, "hot/x.md")
    except ParseError as exc:
        assert 1 <= exc.line <= text.count("\n") + 1
        assert f"hot/x.md:{exc.line}:" in str(exc)


# --- union merges -------------------------------------------------------------------


def _file_of(*entries_: Entry) -> str:
    return render(
        TierFile(heading="ada: cold memory", meta={"tier": "cold"}, entries=list(entries_))
    )


BASE = Entry(
    id="c-aaaaaaaaaa",
    cls="learning",
    title="Fixed the flaky reader",
    body="ReadBuffer dropped the last chunk.",
    agent="ada",
    created="2026-03-01T10:00:00Z",
    used="2026-03-02T10:00:00Z",
)
OTHER = Entry(id="c-bbbbbbbbbb", cls="learning", title="Unrelated", agent="ada")


def test_identical_duplicate_folds_without_conflict() -> None:
    text = _file_of(BASE, OTHER) + "\n" + render_entry(BASE)
    parsed = parse(text)
    assert parsed.entries == [BASE, OTHER]
    assert parsed.conflicts == []


def test_duplicate_with_newer_metadata_folds_without_conflict() -> None:
    newer = replace(BASE, used="2026-03-09T10:00:00Z", tags=("io",))
    for first, second in ((BASE, newer), (newer, BASE)):
        parsed = parse(_file_of(first, OTHER) + "\n" + render_entry(second))
        assert parsed.entries == [newer, OTHER]
        assert parsed.conflicts == []


def test_duplicate_with_different_text_reports_a_conflict() -> None:
    edited = replace(BASE, body="ReadBuffer dropped the first chunk.", used="2026-03-05T10:00:00Z")
    text = _file_of(BASE, OTHER) + "\n" + render_entry(edited)
    parsed = parse(text)
    assert parsed.entries == [edited, OTHER]
    [conflict] = parsed.conflicts
    assert conflict.id == BASE.id
    assert conflict.lost == BASE
    lines = text.split("\n")
    headings = [n + 1 for n, ln in enumerate(lines) if ln == f"## {BASE.title}"]
    assert conflict.lines == tuple(headings)


@PROPERTY
@given(entries(st.just("c-same")), entries(st.just("c-same")))
def test_duplicate_folds_to_the_same_winner_in_either_order(a: Entry, b: Entry) -> None:
    ab = parse(_file_of(a) + "\n" + render_entry(b))
    ba = parse(_file_of(b) + "\n" + render_entry(a))
    assert len(ab.entries) == len(ba.entries) == 1
    assert ab.entries == ba.entries
    # The winner rule's version, untrusted when either is (a mark is never lost in a merge).
    assert ab.entries[0] in (a, b) or replace(ab.entries[0], trust="") in (a, b)
    assert bool(ab.entries[0].trust) == bool(a.trust or b.trust)
    texts_differ = (a.title, a.body) != (b.title, b.body)
    assert len(ab.conflicts) == len(ba.conflicts) == int(texts_differ)


def _merged_metadata(title: str, body: str, metas: list[Entry]) -> str:
    """One heading with several metadata lines, as a union merge of two metadata edits gives."""
    block = [f"## {title}", *(render_meta(m) for m in metas)]
    if body:
        block.append(body)
    return "# ada: cold memory\n<!-- tiermem-file tier=cold -->\n\n" + "\n".join(block) + "\n"


def test_two_metadata_lines_keep_the_newest_in_either_order() -> None:
    older = BASE
    newer = replace(BASE, used="2026-03-20T10:00:00Z", tags=("reviewed",))
    for order in ([older, newer], [newer, older]):
        parsed = parse(_merged_metadata(BASE.title, BASE.body, order))
        assert parsed.entries == [newer]
        assert len(parsed.conflicts) == 1
        assert parsed.conflicts[0].lines == (4,)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), min_size=2, max_size=3))
def test_merged_metadata_lines_resolve_regardless_of_order(metas: list[Entry]) -> None:
    title, body = "Shared heading", "Shared body."
    metas = [replace(m, title=title, body=body) for m in metas]
    winners = {
        tuple(parse(_merged_metadata(title, body, list(order))).entries)
        for order in itertools.permutations(metas)
    }
    assert len(winners) == 1
    [chosen] = winners.pop()
    assert chosen in metas or replace(chosen, trust="") in metas
    assert bool(chosen.trust) == any(m.trust for m in metas)


# --- unknown keys and hand edits ------------------------------------------------------


HAND_EDITED = """\
# ada: cold memory
<!-- tiermem-file tier=cold agent=ada owner=platform%20team -->

## Kept by hand
<!-- tiermem id=c-0000000009 class=learning reviewed-by=ana priority=high%20now empty= -->
Body.
"""


def test_unknown_metadata_keys_round_trip() -> None:
    parsed = parse(HAND_EDITED)
    assert parsed.meta["owner"] == "platform team"
    assert parsed.entries[0].extra == (
        ("reviewed-by", "ana"),
        ("priority", "high now"),
        ("empty", ""),
    )
    assert render(parsed) == HAND_EDITED


def test_unknown_metadata_keys_survive_a_hot_write(store: Memory) -> None:
    store.hot_set("ada", "ship the reader fix")
    path = store.layout.tier_file("hot", "ada")
    text = path.read_text(encoding="utf-8")
    edited = text.replace(" slot=task -->", " slot=task reviewed-by=ana -->")
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    store.hot_add("ada", "note", "a later note")
    after = path.read_text(encoding="utf-8")
    assert "reviewed-by=ana" in after
    assert "a later note" in after


# --- parse errors -------------------------------------------------------------------


_HEAD = "# ada: cold memory\n<!-- tiermem-file tier=cold -->\n\n## Title\n"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (_HEAD + "<!-- tiermem id=a class=learning\nbody\n", 5, "not closed"),
        (_HEAD + "<!-- tiermem id=a loose -->\nbody\n", 5, "not key=value"),
        (_HEAD + "<!-- tiermem id=a =v -->\n", 5, "not key=value"),
        (_HEAD + "<!-- tiermem id=a class=gossip -->\n", 5, "unknown class"),
        (_HEAD + "<!-- tiermem id=a status=gone -->\n", 5, "unknown status"),
        (_HEAD + "<!-- tiermem id=a created=last%20week -->\n", 5, "created"),
        (_HEAD + "<!-- tiermem id=a used=2026-13-40 -->\n", 5, "used"),
        (_HEAD + "<!-- tiermem id=a -->\n<!-- tiermem id=a broken\n", 6, "not closed"),
        (_HEAD + "<!-- tiermem id=a -->\nok\n\n## Second\n<!-- tiermem id=b x -->\n", 9, "x"),
        ("# ada: cold memory\n<!-- tiermem-file tier=cold\n", 2, "not closed"),
        ("# ada\r\n<!-- tiermem-file tier=cold -->\r\n\r\n## T\r\n<!-- tiermem y -->\r\n", 5, "y"),
    ],
)
def test_broken_metadata_names_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, Path("cold/ada.md"))
    assert caught.value.line == line
    assert str(caught.value).startswith(f"cold/ada.md:{line}: ")
    assert words in caught.value.reason


@PROPERTY
@given(tier_files(), st.lists(entries(), min_size=1, max_size=3, unique_by=lambda e: e.id))
def test_appending_entries_reads_back_as_rendering_them_with_the_file(
    tier_file: TierFile, added: list[Entry]
) -> None:
    """What `store.append` writes after a file is what a whole rendering would end with."""
    added = [e for e in added if tier_file.get(e.id) is None]
    whole = TierFile(tier_file.heading, tier_file.meta, tier_file.notes, tier_file.entries + added)
    appended = render(tier_file) + "".join("\n" + render_entry(e) for e in added)
    assert appended == render(whole)
    assert parse(appended).entries == whole.entries
