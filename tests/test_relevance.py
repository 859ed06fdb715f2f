"""The relevance engine, part by part: words, passages, the query, packing, excerpts, labels."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiermem.index import passages, schema
from tiermem.index.passages import Passage
from tiermem.index.protocol import Doc, Hit
from tiermem.relevance import candidates, engine, excerpts, packing, places, query, scoring
from tiermem.relevance.candidates import Candidate
from tiermem.relevance.scoring import Piece
from tiermem.text import words

# --- words ------------------------------------------------------------------------------------


def test_a_joined_name_is_a_word_whole_and_in_parts() -> None:
    found = words.words("Wired StorageProvider into src/cli/nap.ts for stage_2")
    assert {"storageprovider", "storage", "provider"} <= set(found)
    assert {"src/cli/nap.ts", "nap", "ts", "stage_2", "stage", "2"} <= set(found)


def test_an_acronyms_plural_is_one_word() -> None:
    # `DTOs` is not the joint of `DT` and `Os`; `PdfViewers` still has its parts.
    assert words.name_parts("adding DTOs and PRs to the URLs") == []
    assert words.stem_counts("adding DTOs")["dto"] == 1.0
    assert words.terms("PRs Reviewed") == ["pr", "reviewed"]  # matches "PR #42" as written
    assert "dt" not in words.stem_counts("adding DTOs")
    assert words.name_parts("two PdfViewers") == ["pdf", "viewers"]


def test_a_names_parts_weigh_in_a_task_as_passages_count_them() -> None:
    # `RowFontSurface` is one subject; its three parts must not outweigh "renderer".
    asked = query.build("RowFontSurface Renderer")
    assert asked.weights["renderer"] == 1.0
    assert asked.weights["font"] == asked.weights["surface"] == words.PART_WEIGHT
    assert asked.task_terms == ["rowfontsurface", "row", "font", "surface", "renderer"]


def test_a_passage_is_read_with_its_neighbours() -> None:
    # The answer after a question holds none of its words: its neighbour lends it a share.
    assert scoring.regions([0.0, 1.0, 0.0, 0.0]) == [0.5, 1.0, 0.5, 0.25]


def test_a_question_drops_its_question_words_and_filler() -> None:
    assert words.terms("What did we decide about the retry policy?") == [
        "decide",
        "retry",
        "policy",
    ]
    assert words.terms("Fix the parser") == ["parser"]
    assert words.terms("the and of") == ["the", "and", "of"]  # all common: still means something


def test_stems_match_endings() -> None:
    assert words.stem("rendering") == words.stem("renders") == words.stem("render") == "render"
    assert words.stem("ids") == "ids"  # too short to cut


# --- passages ----------------------------------------------------------------------------------


def body(text: str, spans: list[passages.Span]) -> list[str]:
    return [text[a:b] for a, b, _, _ in spans]


def test_a_short_entry_is_one_passage_under_its_title() -> None:
    text = "Parser retries\nThe retry loop caps at 3 in `src/parse/retry.ts`."
    assert body(text, passages.spans(text)) == ["The retry loop caps at 3 in `src/parse/retry.ts`."]


def test_a_long_entry_is_cut_in_lines_and_long_lines_in_sentences() -> None:
    long_line = " ".join(f"Sentence {n} says something about retries." for n in range(20))
    text = "Title\n- first bullet with `a.ts`\n---\n\n" + long_line + "\n```\ncode line\n```\n"
    cut = passages.spans(text)
    shown = body(text, cut)
    assert shown[0] == "- first bullet with `a.ts`"
    assert "---" not in shown  # a rule says nothing alone
    assert all(b - a <= passages.MAX_CHARS for a, b, _, _ in cut)
    assert [c for _, _, c, _ in cut][-1] is True and shown[-1] == "code line"


LED = (
    "Retry rework\n"
    "The parser's retries were reworked this week, and the notes below say what changed.\n"
    "**Key files:**\n"
    "- `src/parse/retry.ts` holds the loop\n"
    "- `src/parse/backoff.ts` holds the delays\n"
    "### Owners\n"
    "| Part | Owner |\n"
    "|---|---|\n"
    "| retry loop | ada |\n"
    "\n"
    "A paragraph after the table, under its heading still.\n"
)


def test_a_line_that_introduces_others_is_their_lead_not_a_passage() -> None:
    cut = passages.cut(LED)
    shown = [LED[p.start : p.end] for p in cut]
    leads = [LED[p.lead[0] : p.lead[1]] if p.lead else None for p in cut]
    assert "**Key files:**" not in shown and "### Owners" not in shown
    assert leads[shown.index("- `src/parse/retry.ts` holds the loop")] == "**Key files:**"
    assert leads[shown.index("- `src/parse/backoff.ts` holds the delays")] == "**Key files:**"
    # A table row is read with its header row; a paragraph under a heading has it as lead.
    assert leads[shown.index("| retry loop | ada |")] == "| Part | Owner |\n|---|---|"
    assert leads[shown.index("A paragraph after the table, under its heading still.")] == (
        "### Owners"
    )
    assert passages.decode(passages.encode(cut)) == cut


@given(st.text(alphabet=st.sampled_from("ab .\n-`#"), max_size=800))
def test_passages_are_ordered_spans_of_the_text_that_round_trip(text: str) -> None:
    cut = passages.cut(text)
    assert all(0 <= p.start < p.end <= len(text) for p in cut)
    assert all(x.end <= y.start for x, y in itertools.pairwise(cut))
    # A lead comes before what it introduces, and is no passage of its own.
    assert all(p.lead[1] <= p.start for p in cut if p.lead)
    assert not {p.lead for p in cut if p.lead} & {(p.start, p.end) for p in cut}
    assert passages.decode(passages.encode(cut)) == cut


def test_a_damaged_stored_value_decodes_to_nothing() -> None:
    assert passages.decode("{not json") == [] and passages.decode('[["x"]]') == []


# --- the query ---------------------------------------------------------------------------------


def test_the_task_weighs_more_than_its_context() -> None:
    asked = query.build("Resume the parser retries", hot="Task: tokenizer tokenizer cache")
    assert asked.task_terms == ["resume", "parser", "retries"]
    assert asked.weights["tokenizer"] == query.HOT_WEIGHT
    assert "tokenizer" not in asked.task_text and "tokenizer" in asked.context_text


# --- packing -----------------------------------------------------------------------------------


def doc(doc_id: str, text: str, agent: str = "ada") -> Doc:
    return Doc(doc_id, "cold", agent, f"cold/{agent}.md", text.partition("\n")[0], text)


def piece(d: Doc, text: str, facts: set[str], score: float, tokens: int = 10) -> Piece:
    start = d.text.index(text)
    return Piece(d, Passage(start, start + len(text), frozenset(facts)), text, tokens, score)


def test_packing_takes_new_facts_first_and_never_a_fact_twice() -> None:
    a = doc("c-000000000a", "A\nline one names `x.ts`\nline two names `y.ts`")
    b = doc("c-000000000b", "B\nagain `x.ts` only")
    pieces = [
        piece(a, "line one names `x.ts`", {"x.ts"}, 1.0),
        piece(a, "line two names `y.ts`", {"y.ts"}, 0.9),
        replace(piece(b, "again `x.ts` only", {"x.ts"}, 0.2), topical=False),
    ]
    worth = {"x.ts": 0.5, "y.ts": 0.5}
    labels = {a.id: "A", b.id: "B"}
    groups = packing.pack(pieces, packing.Room(1000, 0), labels, worth).groups
    # b's line brings no new fact and holds no word of the task: not worth its tokens.
    assert [g.doc.id for g in groups] == [a.id]
    assert [p.text for p in groups[0].ordered] == ["line one names `x.ts`", "line two names `y.ts`"]


def test_packing_stays_within_the_room_and_caps() -> None:
    a = doc("c-000000000a", "A\n" + "\n".join(f"line {n} `f{n}.ts`" for n in range(20)))
    pieces = [piece(a, f"line {n} `f{n}.ts`", {f"f{n}.ts"}, 1.0, tokens=10) for n in range(20)]
    worth = {f"f{n}.ts": 0.5 for n in range(20)}
    room = packing.Room(100, 0)
    packed = packing.pack(pieces, room, {a.id: "A"}, worth)
    [group] = packed.groups
    assert group.tokens <= 100 and len(group.pieces) >= 5
    assert packed.full  # passages were left that bore on the task
    [capped] = packing.pack(pieces, room, {a.id: "A"}, worth, caps={a.id: 30}).groups
    assert sum(p.tokens for p in capped.pieces) <= 30


def test_a_passage_whose_sentences_are_all_shown_is_a_repeat() -> None:
    a = doc(
        "c-000000000a", "A\n- We pin the tokenizer. It drifts on code.\n- We pin the tokenizer."
    )
    pieces = [
        piece(a, "- We pin the tokenizer. It drifts on code.", set(), 1.0),
        piece(a, "- We pin the tokenizer.", set(), 1.0),
    ]
    packed = packing.pack(pieces, packing.Room(1000, 0), {a.id: "A"}, {})
    [group] = packed.groups
    assert len(group.pieces) == 1 and not packed.full


def test_an_entry_the_task_names_is_taken_whole_first() -> None:
    named = doc("c-000000000a", "Release checklist\n- tag `v1`\n- push `main`")
    other = doc("c-000000000b", "Other\n- names `z.ts`")
    found = [Candidate(named, 0.5), Candidate(other, 1.0)]
    assert candidates.named(found, ["release", "checklist"]) == [(named.id, None)]
    assert candidates.named(found, ["release", "plans", "dates", "owners"]) == []


def test_a_section_whose_heading_the_task_names_is_named_whole() -> None:
    # A standing entry's section named by the task: "Stage 7 Publishing Architecture".
    text = (
        "Core Context\n### Stack\n- TypeScript and Hono on Node 22.\n"
        "### Stage 7 Publishing Architecture\n- Stage 7 writes the digest to `dist/pub/`.\n"
        "- Published images stay public.\n"
    )
    core = Doc(
        "c-000000000c",
        "cold",
        "ada",
        "cold/ada.md",
        "Core Context",
        text,
        passages=schema.cut_passages(text),
    )
    found = [Candidate(core, 0.3)]
    [(doc_id, lead)] = candidates.named(found, ["stage", "publishing", "analysis"])
    assert doc_id == core.id and lead is not None
    assert text[lead[0] : lead[1]] == "### Stage 7 Publishing Architecture"
    # A name the task gives (a file, an identifier) names the section whose heading holds it.
    other = text.replace("### Stack", "### `hono.ts` and the stack")
    moved = Doc(
        core.id,
        "cold",
        "ada",
        "cold/ada.md",
        "Core Context",
        other,
        passages=schema.cut_passages(other),
    )
    [(_, by_name)] = candidates.named([Candidate(moved, 0.3)], ["review"], {"hono.ts"})
    assert by_name is not None and "hono.ts" in other[by_name[0] : by_name[1]]


def test_a_named_entry_too_long_to_show_whole_gives_its_best_passages() -> None:
    lines = [f"line {n} of the release notes names `f{n}.ts`" for n in range(12)]
    named = doc("c-000000000a", "Release notes\n" + "\n".join(lines))
    pieces = [piece(named, line, {f"f{n}.ts"}, 1.0) for n, line in enumerate(lines)]
    worth = {f"f{n}.ts": (0.9 if n % 3 == 0 else 0.1) for n in range(12)}
    groups = packing.pack(
        pieces, packing.Room(50, 50), {named.id: "N"}, worth, whole=[(named.id, None)]
    ).groups
    [group] = groups
    # 50 tokens hold the label and four passages: the likeliest facts, in the entry's order.
    assert [p.passage.facts for p in group.ordered] == [{f"f{n}.ts"} for n in (0, 3, 6, 9)]


def test_a_list_of_names_is_shown_only_in_an_entry_shown_whole() -> None:
    text = "Files\nFiles: a.ts, b.ts, c.ts\nThe parser in `a.ts` retries three times."
    listed = doc("c-000000000a", text)
    names = piece(listed, "Files: a.ts, b.ts, c.ts", {"a.ts", "b.ts", "c.ts"}, 1.0)
    names = Piece(names.doc, names.passage, names.text, names.tokens, names.score, listed=True)
    said = piece(listed, "The parser in `a.ts` retries three times.", {"a.ts"}, 1.0)
    worth = {"a.ts": 0.5, "b.ts": 0.5, "c.ts": 0.5}
    room = packing.Room(1000, 1000)
    [group] = packing.pack([names, said], room, {listed.id: "F"}, worth).groups
    assert [p.text for p in group.pieces] == [said.text]
    [whole] = packing.pack(
        [names, said], room, {listed.id: "F"}, worth, whole=[(listed.id, None)]
    ).groups
    assert len(whole.pieces) == 2


# --- labels and excerpts -----------------------------------------------------------------------


def test_a_label_is_short_dated_and_names_the_id_and_author() -> None:
    d = Doc(
        "d-0123456789",
        "wiki",
        "bo",
        "wiki/release.md",
        "2026-03-02 session: Release tags are cut from main as vX.Y.Z by the release bot, always",
        "x",
        cls="decision",
        created="2026-03-02T10:00:00Z",
    )
    label = engine.label(d, "ada")
    assert label.startswith("Release tags are cut from main…")
    assert label.endswith("(bo decision, 2026-03-02, d-0123456789)")
    assert engine.label(d, "bo").endswith("(decision, 2026-03-02, d-0123456789)")
    session = Doc(
        "c-0123456789", "cold", "bo", "cold/bo.md", "Retry cap", "x", created="2026-03-02"
    )
    # A session summary or an archived text needs no word for its kind; its owner, when
    # another agent's, and its date it says.
    assert engine.label(session, "ada") == "Retry cap (bo, 2026-03-02, c-0123456789)"


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        (
            "- **Specification compliance:** strict ECMA-48",
            "Specification compliance: strict ECMA-48",
        ),
        ("2026-05-06 session: - 2026-05-12: **Grader Override**", "Grader Override"),
        ("### Retry cap (2026-03-02)", "Retry cap"),
        ("_".join(["SEARCH_ARCHITECTURE_NOTES"] * 4), "_".join(["SEARCH_ARCHITECTURE_NOTES"] * 4)),
        ("Problem", "Problem: The grader lets a teacher…"),
    ],
)
def test_a_label_title_has_no_marks_no_date_and_no_cut_word(title: str, shown: str) -> None:
    text = "T\nThe grader lets a teacher mark an answer right.\n"
    assert engine.short_title(title, text) == shown


def test_a_place_shows_the_rare_matching_line_and_its_neighbours_with_gaps_marked() -> None:
    lines = [f"Caroline: line {n} about the weather and nothing else." for n in range(60)]
    lines[40] = "Caroline: I joined the LGBTQ support group on Tuesday."
    text = "Session\n" + "\n".join(lines)
    d = Doc("a-0123456789-0123456789", "archive", "ada", "a.md", "Session", text, tokens=900)
    query = "When did Caroline go to the LGBTQ support group?"
    weights = excerpts.rarity([text], words.terms(query))
    assert weights["lgbtq"] > weights["caroline"]
    [shown] = [p.excerpt for p in places.best(query, [Hit(d, 1.0)], 1)]
    assert "LGBTQ support group" in shown.text and "line 39 " in shown.text  # the turn before
    assert shown.text.startswith("Session\n") and "\n…\n" in shown.text
    assert shown.tokens <= places.PLACE_TOKENS + 30 < d.tokens
    assert all(text[a:b] in shown.text for a, b in shown.spans)
    [named] = places.best(query, [Hit(d, 1.0)], 1, whole=frozenset({d.id}))
    assert named.excerpt.text == text


def test_a_title_of_marks_alone_is_labelled_untitled() -> None:
    assert engine.short_title("---") == engine.short_title("## ***") == "untitled"
    assert engine.short_title("2026-03-02 session: Retry cap") == "Retry cap"
    # A title that says nothing gives way to the entry's first line, when that says more.
    assert (
        engine.short_title("---", "x\nThe cache key is the path.") == "The cache key is the path."
    )


def test_a_code_block_is_one_passage_shown_whole_or_not_at_all() -> None:
    text = (
        "Provider setup\nWrap the app:\n```tsx\n<I18nProvider locale={l}>\n  <App />\n"
        "</I18nProvider>\n```\n- The provider reads `locale` once."
    )
    cut = passages.cut(text)
    code = [text[p.start : p.end] for p in cut if p.code]
    assert code == ["<I18nProvider locale={l}>\n  <App />\n</I18nProvider>"]
    assert text[cut[0].lead[0] : cut[0].lead[1]] == "Wrap the app:"  # type: ignore[index]


def test_a_sentence_never_ends_inside_a_quoted_span() -> None:
    line = (
        "- " + "A long line about cooldowns and ticks that goes on. " * 4 + "`?? 0` means tick 0."
    )
    text = "T\n" + line
    shown = [text[p.start : p.end] for p in passages.cut(text)]
    assert not any(s.startswith("0`") for s in shown)
    assert any("`?? 0` means tick 0." in s for s in shown)


def test_a_heading_with_nothing_under_it_says_what_it_says() -> None:
    # A hot tier archived: one-line notes are headings with nothing under them.
    text = (
        "# ada: hot memory\n## Task: Fix the pipeline\n"
        "## Note: The registry docs say to rotate the token weekly\n## Learnings\n### Retries\n"
        "The loop caps at 3.\n"
    )
    shown = [text[p.start : p.end] for p in passages.cut(text)]
    assert "Note: The registry docs say to rotate the token weekly" in shown
    assert "## Learnings" not in shown and "Learnings" not in shown  # it introduces "Retries"
    # An entry that is only its title line has that line's words as its passage.
    alone = "## Note: The registry docs say to rotate the token weekly\n"
    assert [alone[p.start : p.end] for p in passages.cut(alone)] == [
        "Note: The registry docs say to rotate the token weekly"
    ]
    # An archived chunk of such notes begins with one: its title line is a passage too, not
    # a label that would show it cut.
    chunk = (
        "## Note: Caroline: Researching adoption agencies, a dream of hers\n"
        "<!-- tiermem id=h-0000000001 slot=note -->\n\n"
        "## Note: Melanie: Wow, that is awesome news for you\n"
    )
    shown = [chunk[p.start : p.end] for p in passages.cut(chunk)]
    assert shown[0] == "Note: Caroline: Researching adoption agencies, a dream of hers"
    # A lead-in that nothing follows is a passage too: an entry of one such line says it.
    said = "# Deploy notes\n0 quokkalanternwharf :\n"
    assert [said[p.start : p.end] for p in passages.cut(said)] == ["0 quokkalanternwharf :"]
    listed = "T\nSteps:\n\n- build the image first\n"
    assert [listed[p.start : p.end] for p in passages.cut(listed)] == ["- build the image first"]
    # A title that introduces what follows stays the label's.
    entry = "## Decision: validate with Zod\n**Why:** one schema for client and server.\n"
    assert not any("Zod" in entry[p.start : p.end] for p in passages.cut(entry))
