"""Prose an agent can read (METRICS.md, "Carried in prose"): plain words, fact lists, lead-ins,
titles, and the measure the benchmarks count facts by."""

from __future__ import annotations

import pytest

from tiermem.bench import carried_in_prose as measure
from tiermem.text import prose


def test_plain_words_are_what_a_line_says_besides_its_names() -> None:
    line = "The layout reads `Preferences.Get` on start to skip onboarding (MainLayout.razor)."
    assert prose.plain_words(line) == {"layout", "reads", "start", "skip", "onboarding"}
    # Names, stop words, short words and labels that say nothing are not plain words.
    assert prose.plain_words("Refs: MainLayout.razor Preferences.Get #12 v1.2") == set()


@pytest.mark.parametrize(
    ("line", "listed"),
    [
        ("Refs: MainLayout.razor Preferences.Get `onboarding`", True),
        ("Files: a.ts, b.ts, c.ts", True),
        ("The layout reads Preferences.Get on start; see MainLayout.razor and #12.", False),
        ("- Added `src/parse/backoff.ts`.", False),
    ],
)
def test_a_fact_list_names_three_things_and_says_nothing_of_them(line: str, listed: bool) -> None:
    assert prose.is_fact_list(line) is listed


@pytest.mark.parametrize(
    "line", ["### Owners", "**Key files:**", "- **Learnings**", "The steps were:"]
)
def test_lines_that_only_introduce_others(line: str) -> None:
    assert prose.introduces(line)


def test_a_line_with_its_own_words_after_a_bold_lead_introduces_nothing() -> None:
    assert not prose.introduces("**Status:** all 87 tests pass on net8.0")


def test_a_heading_shown_as_a_lead_is_bold_text() -> None:
    assert prose.as_lead("### State.cs changes") == "**State.cs changes**"
    assert prose.as_lead("**Key files:**") == "**Key files:**"


@pytest.mark.parametrize(
    ("title", "clean"),
    [
        ("- **Bug:** CUF at right margin", "Bug: CUF at right margin"),
        ("2026-03-06 session: 2026-03-05 — Encoding-aware glyphs", "Encoding-aware glyphs"),
        ("### Retry cap (2026-03-02)", "Retry cap"),
        ("Keep `snake_case` names _as written_", "Keep `snake_case` names as written"),
        ("📌 2026-03-05T00:30:00Z: Readiness assessment", "Readiness assessment"),
        ("| 2026-03-21 | Issue #528 — token cache |", "Issue #528 — token cache"),
        ("📌 Pinned note", "📌 Pinned note"),
    ],
)
def test_a_clean_title_has_no_marks_and_no_date(title: str, clean: str) -> None:
    assert prose.clean_title(title) == clean


def test_a_title_is_cut_at_a_word_never_inside_one() -> None:
    title = "Search architecture notes: " + "SEARCH_ARCHITECTURE_AND_RANKING " * 4
    cut = prose.clean_title(title, 40)
    assert cut.endswith(prose.ELLIPSIS)
    assert title.startswith(cut.removesuffix(prose.ELLIPSIS))
    assert not title[len(cut.removesuffix(prose.ELLIPSIS))].isalnum()
    assert prose.cut_at_word("ONE_VERY_LONG_IDENTIFIER_NAME", 10) == "ONE_VERY_LONG_IDENTIFIER_NAME"


# --- the measure ---------------------------------------------------------------------------------

SOURCE = (
    "### Onboarding\n"
    "The layout reads `Preferences.Get` on start to skip onboarding: see MainLayout.razor.\n"
)


def test_a_fact_is_carried_in_prose_only_with_words_said_of_it() -> None:
    source = measure.Source()
    source.add(SOURCE)
    said = "- The layout reads `Preferences.Get` at start, to skip onboarding."
    named = "Refs: `Preferences.Get` MainLayout.razor"
    assert measure.carried({"preferences.get"}, said, source) == {"preferences.get"}
    assert measure.carried({"preferences.get"}, named, source) == set()


def test_a_source_sentence_of_bare_names_asks_for_no_words() -> None:
    source = measure.Source()
    source.add("Refs: MainLayout.razor\n")
    assert measure.carried({"mainlayout.razor"}, "MainLayout.razor", source) == {"mainlayout.razor"}


PROMPT = """\
<memory tier="cold" agent="ada">
#### Release (session, 2026-03-02, c-0123456789)
**Key files:**
- `scripts/publish.mjs` retries the upload.
…
**Owners:**
</memory>
<memory tier="wiki" scope="team">
#### Pins (decision, 2026-03-01, d-0123456789)
Refs: a.ts b.ts c.ts
### Nothing under it
</memory>
"""


def test_readability_counts_fact_lists_and_lead_ins_left_alone() -> None:
    found = measure.readability(PROMPT)
    assert found.lines == 7  # memory lines, less the fence tags and the gap
    assert found.fact_lists == 1
    assert found.fragments == 2  # "**Owners:**" at the end; the heading with nothing under it


def test_title_defects_are_marks_dates_and_cut_words() -> None:
    assert measure.title_defects("- **Bug**", "- **Bug**", "") == ["list mark", "emphasis"]
    assert measure.title_defects("2026-03-02 Retry", "2026-03-02 Retry", "2026-03-02T10:00Z") == [
        "repeated date"
    ]
    assert measure.title_defects("SEARCH_AR…", "SEARCH_ARCHITECTURE", "") == ["cut word"]
    assert measure.title_defects("Search…", "Search architecture", "") == []
