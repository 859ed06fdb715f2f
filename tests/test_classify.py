"""The classifier: the documented rules, on text shaped like real Squad memory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiermem.squad.reading.heading_dates import parse_date
from tiermem.storage.entries import CLASSES
from tiermem.team.classify import classify, is_structured

# (title, body, class). Titles are given the way the Squad parsers hand them over (date
# removed) unless the case is about the raw heading.
EXAMPLES = [
    # decisions: Squad's dated blocks with By/What/Why fields, and other recorded choices
    (
        "Use Vitest for unit tests",
        "**By:** Bo\n**What:** All unit tests run on Vitest; Jest is removed.\n"
        "**Why:** Jest was slow on ESM.",
        "decision",
    ),
    (
        "Merge driver for append-only files",
        "**By:** Flight\n**What:** `.squad/decisions.md` uses merge=union.\n"
        "**Why:** parallel branches append to it.",
        "decision",
    ),
    (
        "ADR-7 event sourcing for broadcasts",
        "We chose event sourcing for the broadcast log after comparing it with CRUD tables.",
        "decision",
    ),
    (
        "Decision: Release branch naming",
        "Release branches are `release/vX.Y`.",
        "decision",
    ),
    # policies: directives, by title or by an imperative opening
    (
        "User directive",
        "**By:** Brady (via Copilot)\n**What:** Commit messages follow conventional commits.\n"
        "**Why:** User request",
        "policy",
    ),
    ("Release tags", "Always tag releases from main after CI passes.", "policy"),
    ("Secrets in the repo", "Never commit .env files or API keys.", "policy"),
    ("Casting", "Do not rename agents after casting; the names are in team.md.", "policy"),
    ("Publishing", "Must run the smoke test before `npm publish`.", "policy"),
    ("Type safety", "TypeScript strict mode is non-negotiable in every package.", "policy"),
    ("Guardrail: no secrets in logs", "Redact tokens before writing to the log.", "policy"),
    # conventions
    (
        "Pattern: retry wrappers",
        "Wrap flaky network calls in withRetry() from src/net/retry.ts.",
        "convention",
    ),
    ("Gotcha: Windows paths", "path.join uses backslashes; use path.posix for URLs.", "convention"),
    ("Rendering", "Prefer CellSurface over raw arrays for the console buffer.", "convention"),
    # contracts: interfaces other code relies on
    ("Storage API", "StorageProvider exposes read(key) and write(key, value).", "contract"),
    ("Event schema", "Each event has `id`, `kind` and `date` fields.", "contract"),
    (
        "Broadcast queue",
        "**Key files:** src/queue/index.ts, src/queue/types.ts\nThe queue drains every minute.",
        "contract",
    ),
    ("Wire format", "Messages are JSON lines with a type field.", "contract"),
    # status: team updates and session-log chatter
    (
        "Team update",
        "📌 Team update (2026-03-26T10:00:00Z): Hockney merged #412; Fenster is on the CLI.",
        "status",
    ),
    ("Session complete", "All done for today.", "status"),
    ("Session log", "Ada and Bo paired on the publish job.", "status"),
    ("Orchestration", "Spawned Ada for #412.", "status"),
    ("", "Done.", "status"),
    # learnings: what an agent knows of itself and learned (knowledge is personal)
    ("Core Context", "I own the rendering pipeline and the sprite atlas.", "learning"),
    ("My Domain", "Docs site, blog posts and the README.", "learning"),
    ("Project Context", "SadConsole is a terminal game engine for .NET.", "learning"),
    ("Key Learnings", "- The build cache lives in .turbo/ and is cleared on upgrade.", "learning"),
    ("Lessons learned from the 0.8 release", "- Changesets need a summary line.", "learning"),
    (
        "Learnings: retry wrappers",
        "Pattern: wrap flaky network calls in withRetry() from src/net/retry.ts.",
        "learning",
    ),
    # learnings: other technical text
    (
        "Renderer crash on resize",
        "The buffer was not reallocated when the width changed; fixed in "
        "src/render/surface.cs (#233).",
        "learning",
    ),
    (
        "Publish retries",
        "The publish job retries npm publish 5 times because the registry is slow; see #412.",
        "learning",
    ),
    ("Startup time", "Cold start spends 400ms loading fonts from disk; cache them.", "learning"),
]


@pytest.mark.parametrize(("title", "body", "expected"), EXAMPLES)
def test_documented_rules(title: str, body: str, expected: str) -> None:
    assert classify(title, body) == expected


@pytest.mark.parametrize(
    ("heading", "body", "expected"),
    [
        (
            "### 2026-03-10: Use Vitest for unit tests",
            "**By:** Bo\n**What:** Switch the runner to Vitest.\n**Why:** ESM support.",
            "decision",
        ),
        (
            "### 2026-03-11T12:57:00Z: User directive",
            "**By:** Brady\n**What:** Docs are written in British English.\n**Why:** User request",
            "policy",
        ),
        (
            "📌 Team update (2026-03-26T18:11Z)",
            "CLI platform research complete; report in the decisions inbox.",
            "status",
        ),
        ("### Pattern: preflight gate (2026-03-22)", "Scan package.json first.", "convention"),
    ],
)
def test_raw_and_parsed_headings_agree(heading: str, body: str, expected: str) -> None:
    """A heading classifies the same with its date as after the parser took the date off."""
    _, title = parse_date(heading)
    assert classify(heading, body) == expected
    assert classify(title, body) == expected


def test_status_wins_over_the_words_of_its_text() -> None:
    """A team update that mentions a decision is still chatter, not a decision."""
    body = "📌 Team update (2026-03-22T06:44:01Z): Flight decided to own the StorageProvider PRD."
    assert classify("Team update", body) == "status"


def test_long_text_opening_with_always_is_not_a_policy() -> None:
    """The imperative rule only holds for short texts (under 1,200 bytes)."""
    body = "Always check the cache first. " + "The cache misses on cold start. " * 50
    assert len(body.encode()) > 1200
    assert classify("Cache warmup", body) != "policy"
    assert classify("Cache warmup", body[:200]) == "policy"


@pytest.mark.parametrize(
    ("title", "body"),
    [
        pytest.param(
            "Always-on telemetry bug",
            "Telemetry was sent even when disabled; fixed in src/telemetry.ts (#88).",
            id="always-hyphen",
        ),
        pytest.param(
            "Never-ending spinner in the CLI",
            "The spinner never stopped after an error; fixed in src/cli/spin.ts.",
            id="never-hyphen",
        ),
    ],
)
def test_a_hyphenated_adjective_is_not_an_imperative(title: str, body: str) -> None:
    assert classify(title, body) == "learning"


@pytest.mark.parametrize(
    ("title", "body"),
    [
        pytest.param(
            "Removed stale lock files",
            "Deleted the lock files left by crashed runs; the cleanup is in scripts/clean.mjs.",
            id="files",
        ),
        pytest.param(
            "Fixed union types in the parser",
            "The parser returned string | undefined; narrowed it in src/parse.ts (#51).",
            id="types",
        ),
    ],
)
def test_files_and_types_count_only_as_labels(title: str, body: str) -> None:
    assert classify(title, body) == "learning"


def test_structured_classes() -> None:
    assert {c for c in CLASSES if is_structured(c)} == {
        "policy",
        "decision",
        "convention",
        "contract",
    }


def test_deterministic_and_independent_of_order() -> None:
    first = [classify(t, b) for t, b, _ in EXAMPLES]
    again = [classify(t, b) for t, b, _ in reversed(EXAMPLES)]
    assert first == list(reversed(again))
    assert first == [classify(t, b) for t, b, _ in EXAMPLES]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=600))
def test_any_text_gets_one_known_class_every_time(title: str, body: str) -> None:
    cls = classify(title, body)
    assert cls in CLASSES
    assert classify(title, body) == cls


@pytest.mark.parametrize(
    ("title", "body", "expected"),
    [
        # A heading that names what it records decides, whatever its subject says of work
        # done or of a retrospective: who decided first, then what.
        (
            "Lead Decision — Retrospective Digest Issue Chain",
            "Retrospective follow-ups start as a digest issue chain.",
            "decision",
        ),
        (
            "Lead Review — Issue #117 retrospective tooling complete",
            "Approved #117; the digest runs weekly.",
            "decision",
        ),
        (
            "Decision: retrospective follow-up should start as a manual digest",
            "Until the tooling is proven, the lead writes the digest.",
            "decision",
        ),
        ("ADR-012: Event sourcing — landed", "The broadcast log is event sourced.", "decision"),
        ("User Directive: Session Summary format", "Summaries open with a TLDR.", "policy"),
        # Scribe's own notices and logs are status, whatever decisions they mention.
        (
            "Scribe Inbox Merge Notice",
            "Merged 3 decisions from the inbox into decisions.md; we decided nothing new.",
            "status",
        ),
        ("Session Log: decision review", "**What:** reviewed the inbox decisions.", "status"),
    ],
)
def test_a_heading_that_names_what_it_records_decides(title: str, body: str, expected: str) -> None:
    assert classify(title, body) == expected
