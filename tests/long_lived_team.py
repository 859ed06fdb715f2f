"""A long-lived Squad team's `.squad/`, written for these tests in the shapes real teams' files
take (the four teams of `../shared/corpora`): histories with a `# Name — Project History`
title, a `## Core Context` of bold fields and `###` subsections, `## Learnings` as dated
`### 2026-02-25 — Title` entries with bold lead-ins, or as a flat list of dated bullets, a
`## Recent Learnings` group, `📌 Team update (…)` lines Scribe appends between entries;
`decisions.md` with `### 2026-03-01: Title` blocks (`**By:**`, `**What:**`, `**Why:**`) and a
`# Decision:` block; an inbox file an agent dropped. Then the rounds of work the team does
after an import, the Squad way: agents append to their `## Learnings`, Scribe appends a team
update and merges decisions, and each round's new text carries facts no earlier text has.
"""

from __future__ import annotations

from pathlib import Path

HISTORIES = {
    "deckard": """\
# Deckard — Project History

## Core Context

**Project:** SkyPort — a C#/.NET 8 flight-booking service with a Blazor front end
**Stack:** C# / .NET 8; Blazor Server; Cosmos DB; Azure Functions
**Lead developer:** Thraka
**Hired:** 2026-02-24

### Architecture Overview
- `SkyPort.Core/` — domain model, pricing rules, seat maps. No I/O.
- `SkyPort.Functions/` — queue-triggered workers: `PublishWorker`, `FareRefresher`.
- `SkyPort.Web/` — the Blazor front end; reads through `BookingClient`.

## Learnings

### 2026-02-25 — Seat map caching
**Seat maps are cached per aircraft type**: `SeatMapCache` keys on the ICAO code and keeps
the map for 15 minutes; a schedule change evicts it through `ScheduleChanged` events.

### 2026-03-02 — Fare rounding bug
**Fares were off by a cent**: `FareCalculator.Round` used banker's rounding; switched to
`MidpointRounding.AwayFromZero` and added `FareRoundingTests`.

📌 Team update (2026-03-03): Cosmos throughput at 4,000 RU/s for the sale — by Deckard

### 2026-03-10 — Booking client retries
**Booking client retries**: `BookingClient` retries 429s with the `Retry-After` header, at
most three times, then surfaces `BookingThrottledException` to the page.
""",
    "gaff": """\
# Gaff — Project History

## Core Context

**Project:** SkyPort — the flight-booking service
**Owner:** Thraka

### My Domain — The Functions host
All queue workers live in `SkyPort.Functions/`; I keep their bindings and retry policies.

## Learnings

- 2026-03-01: `PublishWorker` writes itineraries to the `itineraries` container; the
  partition key is the booking reference.
- 2026-03-04: Poison messages land in `publish-poison`; `PoisonReplayer` re-queues them by hand.
- 2026-03-08: The Functions host needs `AzureWebJobsStorage` even on the consumption plan.

## Recent Learnings

### 2026-03-12: Fare refresh schedule
**Fare refresh schedule**: `FareRefresher` runs every 20 minutes (`0 */20 * * * *`); it skips
when the sale flag is off.
""",
    "rachael": """\
# Rachael — History

## Project Context

**Project:** SkyPort
**Description:** flight booking; tests live in `tests/SkyPort.Tests/`.

## My Role

I write and keep the tests: unit tests per project, Playwright tests for the booking flow.

## Learnings

### Playwright booking flow (2026-03-05)
The booking flow test logs in as `test-traveller`, books `SKY123` and cancels it; it needs
the `BOOKING_SANDBOX` switch on.

### 2026-03-11: Flaky seat selection test
**Flaky seat selection**: `SeatSelectionTests` raced the seat map cache; they now wait on
`SeatMapLoaded` before clicking.
""",
}

DECISIONS = """\
# Decisions

### 2026-02-26: Cosmos DB for bookings
**By:** Deckard
**What:** Bookings and itineraries live in Cosmos DB, one container each.
**Why:** global distribution for the spring sale, and the partition key fits booking references.

### 2026-03-06: Playwright for end-to-end tests
**By:** Rachael
**What:** End-to-end tests use Playwright, not Selenium.
**Why:** traces and auto-waiting cut the flaky tests in half.

# Decision: Retry policy for queue workers

**By:** Gaff
**Date:** 2026-03-09

Queue workers retry five times with exponential backoff (2s base); after that the message goes
to the poison queue and `PoisonReplayer` handles it.
"""

INBOX = {
    "gaff-poison-alerts.md": """\
### 2026-03-13: Alert on the poison queue
**By:** Gaff
**What:** An alert fires when `publish-poison` holds more than 20 messages.
**Why:** poison messages sat unnoticed for two days in March.
""",
}

# Each round: what agents append to their histories, what Scribe appends to a history, the
# decision Scribe merges into decisions.md, and an inbox file. Every line has a fact of its
# own (a backticked name) that no earlier text holds.
ROUNDS = [
    {
        "append": {
            "gaff": [
                "- 2026-04-01: `ItineraryMailer` sends confirmations from `mail-out`, ten a batch.",
                "- 2026-04-02: The Functions host reads secrets from `SkyPortVault` (managed id).",
            ],
            "deckard": [
                "",
                "### 2026-04-02 — Seat map invalidation",
                "**Seat map invalidation**: `SeatMapCache` listens to `AircraftSwapped` as well;",
                "a swap used to leave the old map for up to 15 minutes.",
            ],
        },
        "scribe": {
            "rachael": "📌 Team update (2026-04-02): `SeatMapCache` hears `AircraftSwapped`",
        },
        "decision": """\
### 2026-04-02: Managed identity for secrets
**By:** Gaff
**What:** Every function app reads secrets from `SkyPortVault` through managed identity.
**Why:** no connection string in app settings, and rotation without a deploy.
""",
        "inbox": (
            "rachael-trace-retention.md",
            """\
### 2026-04-02: Keep Playwright traces for seven days
**By:** Rachael
**What:** CI keeps `playwright-traces` artifacts for seven days.
**Why:** the flaky seat test needed a trace from four days back.
""",
        ),
    },
    {
        "append": {
            "gaff": [
                "- 2026-04-08: `PoisonReplayer` replays at most 50 messages a run, oldest first.",
            ],
            "rachael": [
                "",
                "### 2026-04-09: Contract tests for the booking API",
                "**Booking API contract tests**: `BookingContractTests` pin `GET /bookings/{ref}`;",
                "a renamed field now fails CI instead of the Blazor page.",
            ],
            "deckard": [
                "Also: `AircraftSwapped` events carry the old and new ICAO codes (`FromType`).",
            ],
        },
        "scribe": {
            "gaff": "📌 Team update (2026-04-09): `BookingContractTests` pin the API — Rachael",
        },
        "decision": """\
### 2026-04-09: Contract tests gate the booking API
**By:** Rachael
**What:** `BookingContractTests` run in CI on every pull request to `SkyPort.Web`.
**Why:** the front end broke twice on renamed fields.
""",
        "inbox": (
            "deckard-sale-freeze.md",
            """\
### 2026-04-09: Code freeze before the spring sale
**By:** Deckard
**What:** No deploys to production from 2026-04-20 to the end of the sale.
**Why:** `FareRefresher` and the seat maps carry the sale; a bad deploy costs bookings.
""",
        ),
    },
]


def write_team(root: Path) -> None:
    """The team's `.squad/` as it stands before tiermem comes in."""
    squad = root / ".squad"
    for agent, text in HISTORIES.items():
        folder = squad / "agents" / agent
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "charter.md").write_text(f"# {agent.title()}\n\nA SkyPort engineer.\n", "utf-8")
        (folder / "history.md").write_text(text, encoding="utf-8")
    (squad / "decisions.md").write_text(DECISIONS, encoding="utf-8")
    inbox = squad / "decisions" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for name, text in INBOX.items():
        (inbox / name).write_text(text, encoding="utf-8")


def work_round(root: Path, n: int) -> list[str]:
    """Round `n` of the team's own work (appends, a team update, a decision merged, an inbox
    file dropped); returns every line it added that says something."""
    squad = root / ".squad"
    round_ = ROUNDS[n]
    added: list[str] = []
    for agent, lines in {
        **round_["append"],
        **{a: [t] for a, t in round_["scribe"].items()},
    }.items():
        path = squad / "agents" / agent / "history.md"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
        added += [line for line in lines if line.strip() and not line.startswith("#")]
    log = squad / "decisions.md"
    log.write_text(
        log.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + round_["decision"], "utf-8"
    )
    added += [ln for ln in round_["decision"].splitlines() if ln.startswith("**What:**")]
    name, text = round_["inbox"]
    (squad / "decisions" / "inbox" / name).write_text(text, encoding="utf-8")
    added += [ln for ln in text.splitlines() if ln.startswith("**What:**")]
    return added
