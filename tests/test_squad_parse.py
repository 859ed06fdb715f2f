"""Tests of the Squad markdown parsers, decision folding and the inbox merge."""

import itertools
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import corpora
from tiermem.bench.speed import decisions_text
from tiermem.squad.reading.heading_dates import parse_date
from tiermem.squad.reading.squad_markdown import (
    Section,
    decision_key,
    merge_inbox,
    parse_decisions,
    parse_history,
    parse_inbox,
    parse_log,
    render_decision,
)

CORPORA = corpora.CORPORA


def assert_tiles(text: str, sections: list[Section], heading_first: bool = True) -> None:
    """Sections rebuild the text exactly, with consistent byte offsets and line numbers."""
    # A log section starts at the top of the file but names the line of its heading.
    assert "".join(section.text for section in sections) == text
    data = text.encode("utf-8")
    offset = 0
    for section in sections:
        assert section.text, "no empty sections"
        assert section.start == offset
        assert data[section.start : section.end].decode("utf-8") == section.text
        if heading_first:
            assert section.line == data[: section.start].count(b"\n") + 1
        offset = section.end
    assert offset == len(data)


def summary(sections: list[Section]) -> list[tuple[str, str, str | None, int]]:
    """The (kind, title, date, level) of each section, for compact assertions."""
    return [(s.kind, s.title, s.date, s.level) for s in sections]


# --- dates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("### 2026-03-10: Cache keys", ("2026-03-10", "Cache keys")),
        ("### Retry budget (2026-03-22)", ("2026-03-22", "Retry budget")),
        ("### 2025-07: Spawn template fix", ("2025-07", "Spawn template fix")),
        ("### 2026-02-22T035939Z: Timestamped", ("2026-02-22", "Timestamped")),
        ("## 2026-03-11T12:57:00Z: Directive", ("2026-03-11", "Directive")),
        ("### 2026-04-14T00-30-00Z — Audit", ("2026-04-14", "Audit")),
        ("## Regression — 2026-05-19", ("2026-05-19", "Regression")),
        ("### Session 2026-03-20: Triage", ("2026-03-20", "Session: Triage")),
        ("### Kickoff (2026-03-12) — Review", ("2026-03-12", "Kickoff — Review")),
        ("### Rules (2026-03-23 v0.9 Incident)", ("2026-03-23", "Rules (v0.9 Incident)")),
        ("### Answers (Jo — 2026-05-26)", ("2026-05-26", "Answers (Jo)")),
        ("### Confirmed — 2026-05-26T08:59:04.287-07:00", ("2026-05-26", "Confirmed")),
        ("## 2026-05-XX — Mock update", ("2026-05", "Mock update")),
        ("### Hardening — March 20, 2026", ("2026-03-20", "Hardening")),
        ("### Batch review — July 2026", ("2026-07", "Batch review")),
        ("# Findings (2026-05-05 to 2026-05-14)", ("2026-05-05", "Findings")),
        ("### 2025-XX-XX — Unknown day", (None, "2025-XX-XX — Unknown day")),
        ("### v0.9.0 → v0.9.1 Retro", (None, "v0.9.0 → v0.9.1 Retro")),
        ("### Issue #1000 (2026-04-17)", ("2026-04-17", "Issue #1000")),
        ("## # Stray hash ##", (None, "Stray hash")),
        ("Team update (2026-03-24T06-release)", ("2026-03-24", "Team update (release)")),
        ("###", (None, "")),
    ],
)
def test_parse_date(heading: str, expected: tuple[str | None, str]) -> None:
    assert parse_date(heading) == expected


# --- history.md -------------------------------------------------------------------------

HISTORY = """# Nova — History

## Core Context

- Owns the cache layer. Stack: TypeScript.

### My Domain

Cache keys and eviction.

## Learnings

<!-- Append new learnings below. -->

### 2026-03-10: Cache keys need a version prefix

Old keys survived a deploy.

📌 **Team update (2026-03-26T06:41:00Z — Release Wave):** Wave one shipped.

### Retry budget (2026-03-22)

Three retries, then fail loudly.

```bash
# not a heading, just a shell comment
## still code
```

### 2025-07: Spawn template fix

Name parameter added.

### Undated pattern

Prefer small functions.

---

## Phase 2 Complete (2026-02-25T21:50:00Z)

Status summary.

### Overview

Part of the phase note.

### Follow-up (2026-02-27)

A separate dated entry.
"""


def test_history_sections_and_kinds() -> None:
    sections = parse_history(HISTORY)
    assert_tiles(HISTORY, sections)
    assert summary(sections) == [
        ("title", "Nova — History", None, 1),
        ("core-context", "Core Context", None, 2),
        ("core-context", "My Domain", None, 3),
        ("learning", "Learnings", None, 2),
        ("learning", "Cache keys need a version prefix", "2026-03-10", 3),
        ("team-update", "Team update (Release Wave)", "2026-03-26", 0),
        ("learning", "Retry budget", "2026-03-22", 3),
        ("learning", "Spawn template fix", "2025-07", 3),
        ("learning", "Undated pattern", None, 3),
        ("learning", "Phase 2 Complete", "2026-02-25", 2),
        ("learning", "Follow-up", "2026-02-27", 3),
    ]


def test_history_parents_and_lines() -> None:
    sections = {s.title: s for s in parse_history(HISTORY)}
    assert sections["My Domain"].parent == "Core Context"
    assert sections["Retry budget"].parent == "Learnings"
    assert sections["Follow-up"].parent == "Phase 2 Complete"
    assert sections["Core Context"].parent is None
    assert sections["Retry budget"].line == 21
    assert "## still code" in sections["Retry budget"].text
    assert "### Overview" in sections["Phase 2 Complete"].text


def test_history_trailing_rule_and_blank_lines_stay_with_their_section() -> None:
    undated = next(s for s in parse_history(HISTORY) if s.title == "Undated pattern")
    assert undated.text.endswith("Prefer small functions.\n\n---\n\n")


TEAM_UPDATES = """# Vox

## Learnings

### Review batch (2026-03-10)

First finding.

📌 Team update (2026-03-14T22-01-14Z): Mesh integrated — decided by Flight
Second line of the same paragraph.

Second finding, continuing the review.
📌 **Team update:** **2026-02-22:** Old style.
### Next entry
📌 Team initialized on 2026-03-15
"""


def test_team_updates_are_their_own_sections() -> None:
    sections = parse_history(TEAM_UPDATES)
    assert_tiles(TEAM_UPDATES, sections)
    assert summary(sections)[2:] == [
        ("learning", "Review batch", "2026-03-10", 3),
        ("team-update", "Team update", "2026-03-14", 0),
        ("text", "Review batch", "2026-03-10", 0),
        ("team-update", "Team update", "2026-02-22", 0),
        ("learning", "Next entry", None, 3),
        ("team-update", "Team initialized on", "2026-03-15", 0),
    ]
    update = sections[3]
    assert update.text.endswith("Second line of the same paragraph.\n\n")
    assert update.parent == "Learnings"


UNION_MERGED = """# Fido

## Learnings

### Quality gate review (2026-03-10T14:13:00Z)

NO-GO.

### Quality gate review (2026-03-10T14:13:00Z)

NO-GO.

# Fido — History

## Learnings

### Test sync
Keep counts in sync.
"""


def test_union_merge_duplicates_stay_separate_and_share_a_key() -> None:
    sections = parse_history(UNION_MERGED)
    assert_tiles(UNION_MERGED, sections)
    reviews = [s for s in sections if s.title == "Quality gate review"]
    assert len(reviews) == 2
    assert decision_key(reviews[0]) == decision_key(reviews[1])
    assert [s.kind for s in sections].count("title") == 2
    assert sections[-1].parent == "Learnings"


def test_history_without_headings_is_one_preamble() -> None:
    text = "just notes\nno headings\n"
    assert summary(parse_history(text)) == [("preamble", "", None, 0)]
    assert parse_history("") == []


def test_project_context_and_status_sections_are_context() -> None:
    text = "# Project Context\n\n- Owner: x\n\n## Current Status\n\nGreen.\n\n## Learnings\n"
    assert [s.kind for s in parse_history(text)] == ["context", "context", "learning"]


# --- decisions.md -----------------------------------------------------------------------

DECISIONS = """# Decisions

> Team decisions that all agents must respect.

---

## Standing Directives

### Strict types
**By:** Ada (Lead)
**What:** strict mode on.
**Why:** Types are contracts.

### Hook-based governance
**By:** Rex
**What:** Guards live in hooks.

### 2026-03-10: Use sendAndWait for streaming
**By:** Kit (SDK)
**What:** One call.

#### Details

Nested subheading that belongs to the decision.

### 2026-02-22T035939Z: Timestamped decision
**By:** Lee

---

# Decision: Overlap resolution

**Date:** 2026-03-25
**Author:** Fido (Quality)

## Problem

Two PRs overlap.

## Decision: keep the newer PR

Labelled subheading, still part of the block.

### 2026-03-26: Appended by Scribe
**By:** Booster
**What:** A later canonical entry after a '#' block.
"""


def test_decision_blocks() -> None:
    sections = parse_decisions(DECISIONS)
    assert_tiles(DECISIONS, sections)
    assert summary(sections) == [
        ("title", "Decisions", None, 1),
        ("group", "Standing Directives", None, 2),
        ("decision", "Strict types", None, 3),
        ("decision", "Hook-based governance", None, 3),
        ("decision", "Use sendAndWait for streaming", "2026-03-10", 3),
        ("decision", "Timestamped decision", "2026-02-22", 3),
        ("decision", "Decision: Overlap resolution", "2026-03-25", 1),
        ("decision", "Appended by Scribe", "2026-03-26", 3),
    ]


def test_decision_authors_parents_and_nesting() -> None:
    sections = {s.title: s for s in parse_decisions(DECISIONS)}
    assert sections["Strict types"].author == "Ada (Lead)"
    assert sections["Strict types"].parent == "Standing Directives"
    assert sections["Decision: Overlap resolution"].author == "Fido (Quality)"
    assert sections["Decision: Overlap resolution"].parent is None
    assert "#### Details" in sections["Use sendAndWait for streaming"].text
    assert "## Decision: keep the newer PR" in sections["Decision: Overlap resolution"].text
    assert sections["Appended by Scribe"].parent is None


SAME_LEVEL_SUBSECTIONS = """# Team Decisions

## 2026-03-06 — Writer phases done

**Author:** Roy (Core Dev) | **Date:** 2026-03-06 | **Status:** Complete

Implemented three phases.

## State changes
- New flags.

## Build & Test
- 614/614 pass.

---

## 2026-03-07 — Next decision

**Author:** Rachael
"""


def test_undated_same_level_headings_continue_a_dated_decision() -> None:
    sections = parse_decisions(SAME_LEVEL_SUBSECTIONS)
    assert_tiles(SAME_LEVEL_SUBSECTIONS, sections)
    assert summary(sections)[1:] == [
        ("decision", "Writer phases done", "2026-03-06", 2),
        ("decision", "Next decision", "2026-03-07", 2),
    ]
    assert sections[1].author == "Roy (Core Dev)"
    assert "## Build & Test" in sections[1].text


SHALLOWER_SUBSECTIONS = """### 2026-03-01: Remote control review
**By:** Fen

## Context

An outside PR.

## Recommendation

Defer.

### Undated follow-up
**By:** Ada
"""


def test_shallower_generic_sections_stay_with_the_decision() -> None:
    sections = parse_decisions(SHALLOWER_SUBSECTIONS)
    assert_tiles(SHALLOWER_SUBSECTIONS, sections)
    assert summary(sections) == [
        ("decision", "Remote control review", "2026-03-01", 3),
        ("decision", "Undated follow-up", None, 3),
    ]


UNDATED_AND_SECTION_FIELDS = """# Decision: Size cap removal

## Date
2026-03-21

## Author
Oracle (Security)

## Context

Inserts failed.

# Archived notes

Loose text about nothing in particular.

# Decision: Another undated one

Body.
"""


def test_date_and_author_from_subsections_and_undated_entries() -> None:
    sections = parse_decisions(UNDATED_AND_SECTION_FIELDS)
    assert_tiles(UNDATED_AND_SECTION_FIELDS, sections)
    assert [(s.title, s.date, s.author) for s in sections] == [
        ("Decision: Size cap removal", "2026-03-21", "Oracle (Security)"),
        ("Archived notes", None, None),
        ("Decision: Another undated one", None, None),
    ]


def test_decision_heading_at_level_two_under_a_file_title() -> None:
    text = "# Team Decisions\n\n## Decision: Cache per user\n\n### Summary\n\nYes.\n"
    assert summary(parse_decisions(text)) == [
        ("title", "Team Decisions", None, 1),
        ("decision", "Decision: Cache per user", None, 2),
    ]


STRAY_FENCE = """## 2026-03-10: Handoff

Text.
OTHER=$(git log | head)
```

Rationale.

## 2026-03-11: Launch

**By:** Ops

```
code that closes nothing
```

## 2026-03-12: Third
"""


def test_stray_fence_left_by_a_merge_does_not_swallow_entries() -> None:
    sections = parse_decisions(STRAY_FENCE)
    assert_tiles(STRAY_FENCE, sections)
    assert [s.title for s in sections] == ["Handoff", "Launch", "Third"]


def test_headings_inside_a_real_code_example_are_ignored() -> None:
    text = (
        "### 2026-03-10: Canonical form\n\nWrite entries like:\n\n"
        "```markdown\n### 2026-01-01: Example\n**By:** Someone\n```\n"
    )
    assert [s.title for s in parse_decisions(text)] == ["Canonical form"]


def test_crlf_and_multibyte_text_tile_with_byte_offsets() -> None:
    text = (
        "# Décisions\r\n\r\n### 2026-03-10: Café ☕\r\n**By:** Zoë\r\n\r\n"
        "### 2026-03-11: 📌 Next\r\n"
    )
    sections = parse_decisions(text)
    assert_tiles(text, sections)
    assert [(s.title, s.author) for s in sections[1:]] == [
        ("Café ☕", "Zoë"),
        ("📌 Next", None),
    ]
    assert sections[1].start == len("# Décisions\r\n\r\n".encode())


# --- folding and rendering -------------------------------------------------------------


def only_decision(text: str) -> Section:
    """The single decision section parsed from text."""
    (section,) = [s for s in parse_decisions(text) if s.kind == "decision"]
    return section


def test_decision_key_folds_format_differences_only() -> None:
    inbox = only_decision("# Decision: Cache per user\n\n**By:** Ada\n\n## Why\n\nSpeed.\n")
    merged = only_decision(
        "### 2026-03-10: Cache per user\n\n**By:** Ada  \n\n#### Why\nSpeed.\n\n---\n"
    )
    other = only_decision("### 2026-03-10: Cache per user\n\n**By:** Ada\n\nSize.\n")
    assert decision_key(inbox) == decision_key(merged)
    assert decision_key(inbox) != decision_key(other)


def test_render_decision_canonical_form() -> None:
    body = "\n**By:** Ada\n\n## Context\n\n```md\n## not demoted\n```\n\n### Detail\n"
    assert render_decision("2026-03-10", "Cache  per user", body) == (
        "### 2026-03-10: Cache per user\n\n**By:** Ada\n\n#### Context\n\n"
        "```md\n## not demoted\n```\n\n##### Detail\n"
    )
    assert render_decision("2026-03-10", "Empty", "\n\n") == "### 2026-03-10: Empty\n"
    assert render_decision("2026-03-10", "Open", "```py\nx = 1\n") == (
        "### 2026-03-10: Open\n\n```py\nx = 1\n```\n"
    )


# --- inbox and merge -------------------------------------------------------------------

EXISTING = """# Decisions

### 2026-03-01: Keep strict types
**By:** Ada
**What:** strict mode.
"""

INBOX_HASH_FORM = """# Decision: Versioning policy

**By:** Flight (Lead)
**Date:** 2026-03-29

## Decision

No prerelease versions on main.
"""

INBOX_CANONICAL = """### 2026-03-26: CI deletion guard
**By:** Booster
**What:** Fail PRs that delete more than 50 files.
"""


def test_merge_appends_in_canonical_form_and_keeps_existing_bytes() -> None:
    inbox = [("flight-versioning.md", INBOX_HASH_FORM), ("booster-guard.md", INBOX_CANONICAL)]
    merged, names = merge_inbox(EXISTING, inbox)
    assert merged.startswith(EXISTING)
    assert names == ["flight-versioning.md", "booster-guard.md"]
    assert merged[len(EXISTING) :] == (
        "\n### 2026-03-29: Versioning policy\n\n**By:** Flight (Lead)\n**Date:** 2026-03-29\n\n"
        "#### Decision\n\nNo prerelease versions on main.\n"
        "\n### 2026-03-26: CI deletion guard\n\n**By:** Booster\n"
        "**What:** Fail PRs that delete more than 50 files.\n"
    )
    assert_tiles(merged, parse_decisions(merged))


def test_merge_folds_present_and_repeated_decisions() -> None:
    already = EXISTING + "\n" + INBOX_CANONICAL
    inbox = [("a.md", INBOX_CANONICAL), ("b.md", INBOX_HASH_FORM), ("c.md", INBOX_HASH_FORM)]
    merged, names = merge_inbox(already, inbox)
    assert names == ["a.md", "b.md", "c.md"]
    assert merged.count("Versioning policy") == 1
    assert merged.count("CI deletion guard") == 1


def test_merge_is_idempotent() -> None:
    inbox = [("flight-versioning.md", INBOX_HASH_FORM), ("booster-guard.md", INBOX_CANONICAL)]
    once, _ = merge_inbox(EXISTING, inbox)
    assert merge_inbox(once, inbox) == (once, ["flight-versioning.md", "booster-guard.md"])


def test_merge_dates_from_filename_default_or_error() -> None:
    undated = "# Decision: Branch split\n\nSplit the branch.\n"
    merged, _ = merge_inbox("", [("2026-04-21T14-45-00Z-branch-split.md", undated)])
    assert merged.startswith("### 2026-04-21: Branch split\n\nSplit the branch.\n")
    merged, _ = merge_inbox("", [("link-split.md", undated)], default_date="2026-05-01")
    assert merged.startswith("### 2026-05-01: Branch split\n")
    with pytest.raises(ValueError, match=r"link-split\.md"):
        merge_inbox(EXISTING, [("link-split.md", undated)])
    with pytest.raises(ValueError, match="default_date"):
        merge_inbox(EXISTING, [], default_date="May 1st")


def test_headingless_inbox_and_front_matter() -> None:
    headingless = "**By:** Retro\n**Date:** 2026-03-26\n**What:** Git safety rules.\n"
    (section,) = parse_inbox(headingless, "retro-git-safety.md")
    assert (section.kind, section.title, section.date, section.author, section.level) == (
        "decision",
        "Retro git safety",
        "2026-03-26",
        "Retro",
        0,
    )
    front = "---\ndate: 2026-04-21T14:45:00Z\nauthor: Link\n---\n\n# Recovery notes\n\nBody.\n"
    sections = parse_inbox(front, "notes.md")
    assert_tiles(front, sections)
    assert [(s.kind, s.date, s.author) for s in sections] == [
        ("preamble", None, None),
        ("decision", "2026-04-21", "Link"),
    ]
    merged, _ = merge_inbox("", [("notes.md", front)])
    assert merged == "### 2026-04-21: Recovery notes\n\nBody.\n"


def test_merge_onto_text_without_newline_or_with_an_open_fence() -> None:
    merged, _ = merge_inbox("# Decisions", [("a.md", INBOX_CANONICAL)])
    assert merged.startswith("# Decisions\n\n### 2026-03-26: CI deletion guard\n")
    open_fence = EXISTING + "\n```bash\necho unterminated\n"
    merged, _ = merge_inbox(open_fence, [("a.md", INBOX_CANONICAL)])
    assert merged.startswith(open_fence + "```\n\n### 2026-03-26")
    titles = [s.title for s in parse_decisions(merged) if s.kind == "decision"]
    assert titles == ["Keep strict types", "CI deletion guard"]


def test_inbox_with_several_decisions_and_an_intro() -> None:
    text = (
        "# Decisions\n\nIntro worth keeping.\n\n"
        "### 2026-03-01: First\nOne.\n\n### 2026-03-02: Second\nTwo.\n"
    )
    merged, names = merge_inbox("", [("sprint.md", text)])
    assert names == ["sprint.md"]
    assert merged == (
        "### 2026-03-01: First\n\nIntro worth keeping.\n\nOne.\n\n### 2026-03-02: Second\n\nTwo.\n"
    )


# --- logs ---------------------------------------------------------------------------------


def test_parse_log() -> None:
    text = "\n# Session Log: Font docs\n\n**Agent:** Deckard (Lead)\n\nDone.\n"
    (section,) = parse_log(text, "2026-03-02T17-45-34Z-font-docs.md")
    assert (section.kind, section.title, section.date, section.author, section.line) == (
        "log",
        "Session Log: Font docs",
        "2026-03-02",
        "Deckard (Lead)",
        2,
    )
    assert section.text == text
    assert parse_log("", "x.md") == []


# --- properties ---------------------------------------------------------------------------

FRAGMENTS = [
    "\n",
    "\n\n",
    "\r\n",
    "# ",
    "## ",
    "### ",
    "#### ",
    "####### ",
    "   ## ",
    "#x",
    "```",
    "```py",
    "~~~",
    "    ```",
    "📌 ",
    "📌 **Team update (2026-03-26T06:41:00Z):** ",
    "**By:** ",
    "**Date:** ",
    "**Author:** Ada | **Date:** 2026-01-02",
    "date: 2026-02-03",
    "2026-03-10: ",
    "2025-07",
    " (2026-03-22)",
    "March 20, 2026",
    "Decision: ",
    "Core Context",
    "Learnings",
    "Project Context",
    "Decisions",
    "---",
    "***",
    "<!-- c -->",
    "é",
    "—",
    "☕",
    "\t",
    ":",
    " ",
    "text",
    "Context",
    "XX",
    "-",
]
markdownish = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=60).map(
    "".join
)
PARSERS: list[Callable[[str], list[Section]]] = [
    parse_history,
    parse_decisions,
    lambda text: parse_inbox(text, "2026-03-01-inbox.md"),
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish)
def test_every_parser_tiles_random_markdown(text: str) -> None:
    for parse in PARSERS:
        assert_tiles(text, parse(text))
    assert_tiles(text, parse_log(text, "log.md"), heading_first=False)
    for line in text.split("\n"):
        parse_date(line)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish, markdownish)
def test_merge_keeps_existing_text_and_is_idempotent(existing: str, inbox_text: str) -> None:
    inbox = [("inbox.md", inbox_text)]
    merged, names = merge_inbox(existing, inbox, default_date="2026-03-01")
    assert merged.startswith(existing)
    assert names == ["inbox.md"]
    assert merge_inbox(merged, inbox, default_date="2026-03-01")[0] == merged


# --- speed ----------------------------------------------------------------------------------


def calls(run: Callable[[], object]) -> int:
    """How many functions a run calls, Python's and C's: a count, not a time, so the same
    input always gives the same figure, however busy the machine."""
    count = 0

    def counted(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(counted)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


def grows_linearly(parse: Callable[[str], object], text: str) -> bool:
    """Whether parsing twice the text takes at most a little over twice the calls (a step
    repeated per line over the lines before it would take four times as many). Its speed
    is a figure of `tiermem bench speed`, not a timed test."""
    once, twice = calls(lambda: parse(text)), calls(lambda: parse(text + "\n" + text))
    return twice <= 2.2 * once


def test_a_large_decisions_file_parses_in_linear_time() -> None:
    text = decisions_text(3700)
    assert len(text.encode()) > 1_600_000
    assert len(parse_decisions(text)) == 3701
    assert grows_linearly(parse_decisions, text)


# --- real teams ---------------------------------------------------------------------------

needs_corpora = corpora.needs()


def team_dirs() -> list[Path]:
    """The .squad folders of the real teams."""
    return sorted(path for path in CORPORA.glob("*/.squad") if path.is_dir())


def decision_files(squad: Path) -> list[Path]:
    """decisions*.md, archives and loose decision records (not the inbox)."""
    found = {*squad.glob("decisions*.md"), *squad.glob("decisions/*.md")}
    found |= set(squad.glob("decisions/archive/*.md"))
    return sorted(found)


ParsedFiles = dict[str, list[list[Section]]]


def parse_team(squad: Path) -> ParsedFiles:
    """Parse every memory file of one team by group, checking the tiling of each file."""
    groups: ParsedFiles = {"history": [], "decisions": [], "inbox": [], "log": []}
    jobs: list[tuple[str, list[Path], Callable[[str, Path], list[Section]]]] = [
        ("history", sorted(squad.glob("agents/*/history*.md")), lambda t, p: parse_history(t)),
        ("decisions", decision_files(squad), lambda t, p: parse_decisions(t)),
        ("inbox", sorted(squad.glob("decisions/inbox/*.md")), lambda t, p: parse_inbox(t, p.name)),
        ("log", sorted(squad.glob("*log/*.md")), lambda t, p: parse_log(t, p.name)),
    ]
    for group, paths, parse in jobs:
        for path in paths:
            text = path.read_text(encoding="utf-8")
            sections = parse(text, path)
            assert_tiles(text, sections, heading_first=group != "log")
            groups[group].append(sections)
    return groups


def read_inbox(squad: Path) -> list[tuple[str, str]]:
    """The (filename, text) pairs of a team's decision inbox."""
    paths = sorted(squad.glob("decisions/inbox/*.md"))
    return [(path.name, path.read_text(encoding="utf-8")) for path in paths]


def repeated(keys: list[str]) -> int:
    """How many distinct keys occur more than once."""
    return sum(1 for count in Counter(keys).values() if count > 1)


def duplicate_report(files: list[list[Section]], kind: str) -> str:
    """Repeated keys of one kind: inside one file (union merges), overall, and by title."""
    chosen = [[s for s in sections if s.kind == kind] for sections in files]
    within = sum(repeated([decision_key(s) for s in sections]) for sections in chosen)
    flat = [s for sections in chosen for s in sections]
    overall = repeated([decision_key(s) for s in flat])
    titles = repeated([f"{s.date}|{s.title.casefold()}" for s in flat])
    return f"{within} inside one file, {overall} over all files, {titles} by date+title only"


def dating_report(files: list[list[Section]], kinds: tuple[str, ...]) -> str:
    """Dated/undated counts for each of the given kinds."""
    flat = [s for sections in files for s in sections]
    parts = []
    for kind in kinds:
        dated = sum(1 for s in flat if s.kind == kind and s.date)
        undated = sum(1 for s in flat if s.kind == kind and not s.date)
        parts.append(f"{kind} {dated}/{undated}")
    return ", ".join(parts)


def team_report(name: str, groups: ParsedFiles) -> str:
    """Per-team statistics: files, kinds, dating and duplicates."""
    every = [sections for files in groups.values() for sections in files]
    kinds = Counter(s.kind for sections in every for s in sections)
    counts = ", ".join(f"{len(files)} {group}" for group, files in groups.items())
    note_kinds = ("learning", "core-context", "team-update")
    notes = [s for sections in every for s in sections if s.kind in note_kinds]
    return (
        f"\n{name} ({counts} files)\n  kinds: {dict(sorted(kinds.items()))}"
        f"\n  dated/undated: {dating_report(groups['decisions'], ('decision',))}"
        f", inbox {dating_report(groups['inbox'], ('decision',))}"
        f", {dating_report([notes], note_kinds)}"
        f"\n  duplicate decision keys: {duplicate_report(groups['decisions'], 'decision')}"
        f"\n  duplicate learning keys: {duplicate_report(groups['history'], 'learning')}"
    )


@needs_corpora
def test_real_teams_parse_and_tile() -> None:
    for squad in team_dirs():
        groups = parse_team(squad)
        print(team_report(squad.parent.name, groups))
        kinds = Counter(s.kind for files in groups.values() for sections in files for s in sections)
        assert kinds["decision"] > 10
        assert kinds["learning"] > 10


@needs_corpora
def test_real_inbox_already_merged_is_recognised() -> None:
    squad = CORPORA / "jguadagno__jjgnet-broadcast" / ".squad"
    decisions = (squad / "decisions" / "decisions.md").read_text(encoding="utf-8")
    inbox = read_inbox(squad)
    merged, names = merge_inbox(decisions, inbox)
    assert merged == decisions
    assert names == [name for name, _ in inbox]


@needs_corpora
def test_real_inboxes_merge_idempotently() -> None:
    for squad in team_dirs():
        inbox = read_inbox(squad)
        decisions = (squad / "decisions.md").read_text(encoding="utf-8")
        merged, names = merge_inbox(decisions, inbox, default_date="2026-06-30")
        assert merged.startswith(decisions)
        assert names == [name for name, _ in inbox]
        assert merge_inbox(merged, inbox, default_date="2026-06-30")[0] == merged


@needs_corpora
def test_the_largest_real_decisions_file_parses_in_linear_time() -> None:
    largest = max(
        (path for squad in team_dirs() for path in decision_files(squad)),
        key=lambda path: path.stat().st_size,
    )
    text = largest.read_text(encoding="utf-8")
    assert grows_linearly(parse_decisions, text)


# --- Squad 0.10 governed decisions (front matter, no heading) -----------------------------

GOVERNED = (
    "---\n"
    "id: f69086b3-1b7c-486b-a7e1-f6b0680255dc\n"
    "class: DECISION\n"
    "loadGuidance: [ALWAYS]\n"
    'title: "Use Postgres for the event store"\n'
    'author: "flight"\n'
    "createdAt: 2026-12-01T06:51:24.850Z\n"
    "metadata: {}\n"
    "---\n\n"
    "We use Postgres 16 for the event store. Why: JSONB and logical replication.\n"
)


def test_a_governed_inbox_file_is_one_decision_with_its_front_matters_fields() -> None:
    sections = parse_inbox(GOVERNED, "flight-use-postgres-for-the-event-store-f69086b3.md")
    assert "".join(s.text for s in sections) == GOVERNED
    [decision] = [s for s in sections if s.kind == "decision"]
    assert (decision.title, decision.author, decision.date) == (
        "Use Postgres for the event store",
        "flight",
        "2026-12-01",
    )
    assert decision.text.strip() == GOVERNED.split("---\n\n", 1)[1].strip()


def test_a_governed_decision_appended_by_nap_is_the_same_decision() -> None:
    inbox = parse_inbox(GOVERNED, "flight-use-postgres.md")
    log = "# Decisions\n\n### 2026-11-30: Earlier\n**By:** hal\n\nKeep it.\n\n" + GOVERNED
    sections = parse_decisions(log)
    assert "".join(s.text for s in sections) == log
    decisions = [s for s in sections if s.kind == "decision"]
    assert [s.title for s in decisions] == ["Earlier", "Use Postgres for the event store"]
    keys = {decision_key(s) for s in inbox if s.kind == "decision"}
    assert decision_key(decisions[-1]) in keys
    assert "Postgres" not in decisions[0].text


# --- pieces: a large file read in parts ------------------------------------------------------


def test_pieces_tile_the_file_and_start_where_a_section_starts() -> None:
    from tiermem.squad.importer.file_pieces import cuts

    code = "```python\n" + "# a comment, not a heading\n" * 40 + "```\n"
    entry = "### 2026-03-{day:02d}: Entry {n}\nText of entry {n}.\n\n"
    text = "# Ada\n\n## Learnings\n\n" + "".join(
        entry.format(day=1 + n % 28, n=n) + (code if n % 7 == 0 else "") for n in range(300)
    )
    data = text.encode()
    spans = cuts(data, 2000)
    assert spans[0][0] == 0 and spans[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert len(spans) > 5
    for start, _ in spans[1:]:
        assert data[start:].startswith(b"### 2026-03-")  # never inside the code blocks


def test_a_line_longer_than_a_piece_is_never_cut() -> None:
    from tiermem.squad.importer.file_pieces import cuts

    data = b"short\n" + b"x" * 5000 + b"\nshort again\n"
    spans = cuts(data, 1000)
    assert all(data[e - 1 : e] == b"\n" for _, e in spans)
    assert any(e - s > 5000 for s, e in spans)


def test_a_history_read_piece_by_piece_is_the_history_read_whole() -> None:
    from tiermem.squad.importer.file_pieces import cuts
    from tiermem.squad.reading.squad_markdown import HistoryReader, parse_history

    text = HISTORY * 3 + "📌 Team update (2026-04-02): the last one.\n\nLoose text after it.\n"
    data = text.encode()
    reader = HistoryReader()
    pieced = [s for a, b in cuts(data, 300) for s in reader.read(data[a:b].decode())]
    assert pieced == parse_history(text)
