"""What an import files where, on a team written as long-lived Squad teams write: decisions
headed by who made them are decisions and Scribe's notices status, wiki pages named by the
decisions' subjects, summaries that keep each bullet's subject, skills kept once, and a
store that costs at most 1.5 times the text it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiermem.bench import import_quality
from tiermem.memory import Memory
from tiermem.squad.importer import squad_import
from tiermem.storage import archive, store
from tiermem.storage.entries import Entry

NOW = "2026-03-30T00:00:00Z"

TEAM_MD = """\
# Broadcast Team

> Scheduled social posts for a small company.

| Name | Role |
|------|------|
| Lead | Lead |
| Writer | Docs |
| Ops | Operations |
"""

# Headings as the team wrote them: who decided first, then what.
DECISIONS = """\
# Decisions

## Lead Decision — Retrospective Digest Issue Chain
**By:** Lead
Retrospective follow-ups start as a digest issue chain: `scripts/digest.ts` opens one
issue per retrospective and links the next one, so nothing said in a retro is lost.

## Lead Review — Issue #117 retrospective tooling
**By:** Lead
Approved #117 with one change: the digest job runs weekly from
`.github/workflows/digest.yml`, not on every merge, to keep the issue list readable.

## Decision: retrospective follow-up should start as a manual digest
**By:** Lead
Until the tooling has run for a month, the follow-up after a retrospective is a manual
digest that the lead writes in `docs/retro/digest.md`.

## Scribe Inbox Merge Notice
**By:** Scribe
Merged 4 decisions from `.squad/decisions/inbox/` into decisions.md; the inbox is empty.

### 2026-03-10: Decision Inbox — TLDR contract for summaries
**By:** Writer
**What:** Every summary opens with a TLDR line of at most 120 characters, which
`src/tldr/contract.ts` checks before the summary reaches the config loader.
**Why:** Readers skim; the config loader in `src/config/load.ts` shows only that line.

### 2026-03-11: Decision Inbox — Hono middleware order
**By:** Ops
**What:** The auth middleware runs after the static handler in `src/server/app.ts`, so static
assets and published images stay public while operator routes need a session.
**Why:** The config for the static handler in `src/config/static.ts` assumed it.

### 2026-03-12: Decision Inbox — Lead Review #118 squad routing
**By:** Lead
**What:** Operator routes move under `/ops/` in `src/server/routes.ts`; the squad of
route handlers is split by owner so each file stays short.
**Why:** Reviews kept touching the same large file.

### 2026-03-13: Publishing gate for npm releases
**By:** Ops
**What:** `npm publish` runs only after the `smoke` job passes in `.github/workflows/publish.yml`.
**Why:** A broken tarball reached the registry once.

### 2026-03-14: Publish tokens rotate monthly
**By:** Ops
**What:** The publish token `NPM_TOKEN` rotates on the first of each month; `scripts/rotate.ts`
writes the new one to the repository secrets.
**Why:** A leaked token stays useful for at most a month.
"""

FILLER = [
    "- Talked through the backlog with the team and agreed to look at it again next week.",
    "- Spent the afternoon reading old notes about the scheduler and nothing new came up.",
    "- Paired with the writer on wording for the release notes; no change to the plan.",
    "- Reviewed the open pull requests and left comments where the naming was unclear.",
]

LEAD_HISTORY = (
    "# Lead\n\n## Core Context\n\nI lead the broadcast service: the scheduler and the "
    "publishing pipeline.\n\n## Learnings\n\n"
    "### 2026-03-23: Tweet publishing outage\n"
    + FILLER[0]
    + "\n- 2026-03-23T05:39:03Z — **Tweet publishing 500 fixed**: The scheduled posts stopped "
    "going out on Monday morning for everyone who used the dashboard. Root cause: missing "
    "service wiring in `startServer()` in `src/server/index.ts`, so `PublishService` was "
    "undefined and every call to `/api/publish` failed with a 500 (#214).\n"
    + "\n".join(FILLER * 6)
    + "\n\n### 2026-03-25: Middleware review\n"
    "Reviewed the Hono middleware on every operator-facing route with Ops. The auth check "
    "now runs after the static handler. Operator routes need a session cookie from "
    "`src/server/session.ts`. The order is tested in `tests/middleware.test.ts`. "
    + "We walked through each route of the dashboard in turn and wrote down who may call it. "
    * 8
    + "Nothing else changed in the routing table this week. The static assets and published "
    "images stay public.\n"
)

SKILL = """\
---
name: publish-flow
description: "How the team ships a release\\n\\nRead before any publish."
---
# Publishing

"""


def _skill_text(n: int) -> str:
    steps = [
        f"{i}. Step {i} of flow {n}: run `npm run check-{n}-{i}` and read its report in "
        f"`reports/flow-{n}/step-{i}.md` before going on to the next step of the release."
        for i in range(1, 25)
    ]
    return SKILL.replace("publish-flow", f"publish-flow-{n}") + "\n".join(steps) + "\n"


def write_team(root: Path, skills: int = 0) -> Path:
    squad = root / ".squad"
    (squad / "agents" / "lead").mkdir(parents=True)
    (squad / "agents" / "lead" / "history.md").write_text(LEAD_HISTORY, encoding="utf-8")
    (squad / "team.md").write_text(TEAM_MD, encoding="utf-8")
    (squad / "decisions.md").write_text(DECISIONS, encoding="utf-8")
    for n in range(skills):
        folder = squad / "skills" / f"publish-flow-{n}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(_skill_text(n), encoding="utf-8")
    return squad


def imported(root: Path) -> tuple[Memory, list[Entry]]:
    mem, _ = Memory.init(root, now=NOW, squad_files=False)
    planned = squad_import.plan(mem.context)
    squad_import.write(mem.context, planned)
    return mem, [item.entry for item in planned.planned]


def tier_entries(mem: Memory, tier: str) -> dict[str, tuple[str, Entry]]:
    found = {}
    for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
        loaded = store.load(mem.layout, tier, path)
        for entry in loaded.entries if loaded else []:
            found[entry.title] = (path.stem, entry)
    return found


@pytest.fixture
def team(tmp_path: Path) -> tuple[Memory, list[Entry]]:
    write_team(tmp_path)
    return imported(tmp_path)


# --- decisions are decisions -----------------------------------------------------------


def test_a_heading_that_names_a_decision_or_review_is_filed_as_a_decision(
    team: tuple[Memory, list[Entry]],
) -> None:
    mem, planned = team
    wiki = tier_entries(mem, "wiki")
    for title in (
        "Lead Decision — Retrospective Digest Issue Chain",
        "Lead Review — Issue #117 retrospective tooling",
        "Decision: retrospective follow-up should start as a manual digest",
    ):
        assert wiki[title][1].cls == "decision", title
    assert import_quality.decisions_as_status(planned) == []
    mem.close()


def test_scribes_own_notice_is_status_never_a_wiki_decision(
    team: tuple[Memory, list[Entry]],
) -> None:
    mem, planned = team
    [notice] = [e for e in planned if e.title == "Scribe Inbox Merge Notice"]
    assert notice.cls == "status"
    assert "Scribe Inbox Merge Notice" not in tier_entries(mem, "wiki")
    mem.close()


def test_wiki_pages_are_named_by_the_decisions_subjects(
    team: tuple[Memory, list[Entry]],
) -> None:
    mem, _ = team
    wiki = tier_entries(mem, "wiki")
    pages = {page for page, _ in wiki.values()}
    assert not pages & {"inbox", "config", "squad"}, pages
    assert import_quality.tool_pages(mem) == []
    # One subject, one page, whatever form each title writes it in.
    publish = {wiki[t][0] for t in wiki if t.startswith(("Publishing gate", "Publish tokens"))}
    assert len(publish) == 1, publish
    assert wiki["Decision Inbox — TLDR contract for summaries"][0] == "tldr"
    mem.close()


def test_a_team_working_on_squad_itself_may_have_a_squad_page(tmp_path: Path) -> None:
    squad = write_team(tmp_path)
    (squad / "team.md").write_text(TEAM_MD.replace("Broadcast Team", "Mission — squad-sdk"))
    mem, _ = imported(tmp_path)
    from tiermem.squad.adapter.agent_folders import subject_words, tool_words

    assert "squad" in subject_words(mem.context)
    assert tool_words(mem.context) == {"inbox", "config", "scribe", "charter", "roster"} | {
        "coordinator",
        "casting",
    }
    mem.close()


# --- summaries keep their subject --------------------------------------------------------


def test_a_summarised_bullet_keeps_its_bold_lead_in(team: tuple[Memory, list[Entry]]) -> None:
    mem, _ = team
    cold = tier_entries(mem, "cold")
    summary = cold["Tweet publishing outage"][1].body
    [line] = [ln for ln in summary.splitlines() if "Root cause" in ln]
    assert line.startswith("- 2026-03-23T05:39:03Z — **Tweet publishing 500 fixed**:"), line
    assert import_quality.headless_bullets(mem)[1] == 0
    mem.close()


def test_a_session_under_2_kb_goes_to_cold_whole(team: tuple[Memory, list[Entry]]) -> None:
    mem, _ = team
    body = tier_entries(mem, "cold")["Middleware review"][1].body
    assert body.endswith("The static assets and published images stay public.")
    assert "Hono middleware on every operator-facing route" in body
    mem.close()


def test_the_figure_finds_a_bullet_that_lost_its_subject(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=NOW)
    source = archive.new_record("lead", NOW, "import", "history.md", "history", LEAD_HISTORY)
    archive.write(mem.layout, source)
    headless = Entry(
        "i-0000000001",
        "learning",
        "Tweet publishing outage",
        "- Root cause: missing service wiring in `startServer()` in `src/server/index.ts`, so "
        "`PublishService` was undefined and every call to `/api/publish` failed with a 500 "
        "(#214).",
        agent="lead",
        created=NOW,
        sources=(source.location,),
    )
    with store.update(
        mem.layout,
        "cold",
        mem.layout.tier_file("cold", "lead"),
        lambda: store.blank("cold", "lead"),
    ) as cold:
        cold.put(headless)
    assert import_quality.headless_bullets(mem)[:2] == (1, 1)
    mem.close()


# --- one copy ------------------------------------------------------------------------------


def test_a_skill_is_kept_once_and_its_wiki_entry_points_at_it(tmp_path: Path) -> None:
    squad = write_team(tmp_path, skills=10)
    mem, _ = imported(tmp_path)
    skill = (squad / "skills" / "publish-flow-0" / "SKILL.md").read_text(encoding="utf-8")
    [(page, entry)] = [v for t, v in tier_entries(mem, "wiki").items() if "publish-flow-0" in t]
    assert page == "publish-flow-0"
    assert "npm run check-0-1" not in entry.body
    assert "`.squad/skills/publish-flow-0/SKILL.md`" in entry.body
    wiki_bytes = (mem.layout.tier_dir("wiki") / "publish-flow-0.md").stat().st_size
    assert wiki_bytes < len(skill) / 5
    hit = mem.search("npm run check-0-7 report", tier="wiki")[0]
    assert hit.id == entry.id and "reports/flow-0/step-7.md" in hit.text
    figures = import_quality.figures(tmp_path, [])
    assert figures["store_ratio"] <= 1.5, figures
    mem.close()


def test_status_reports_over_the_teams_cold_budget_never_enter_cold(tmp_path: Path) -> None:
    squad = write_team(tmp_path)
    reports = "".join(
        f"\n### 2026-03-{day:02d}: Scheduler phase {day} complete\n**By:** Ops\n"
        + f"Phase {day} of the scheduler rewrite landed in `src/scheduler/phase{day}.ts`. " * 12
        + "\n"
        for day in range(1, 29)
    )
    (squad / "decisions.md").write_text(DECISIONS + reports, encoding="utf-8")
    mem, _ = imported(tmp_path)
    kinds = [archive.parse(p.read_bytes(), p).kind for p in archive.records(mem.layout)]
    assert "cold-budget" not in kinds
    budget = mem.context.config.cold.budget_bytes
    assert mem.layout.tier_file("cold", "team").stat().st_size <= budget
    # The newest stay, summarised; the older ones are in the archive's record of the log.
    cold = tier_entries(mem, "cold")
    assert "Scheduler phase 28 complete" in cold
    assert "Scheduler phase 1 complete" not in cold
    assert any("phase1.ts" in h.text for h in mem.search("scheduler phase1.ts", tier="archive"))
    mem.close()


def test_a_dry_run_title_shows_no_escaped_line_breaks(tmp_path: Path) -> None:
    write_team(tmp_path, skills=1)
    Memory.init(tmp_path, now=NOW, squad_files=False)[0].close()
    rows = Memory(tmp_path, now=NOW).import_squad(dry_run=True).sections
    [row] = [r for r in rows if r.file.endswith("SKILL.md")]
    assert "\\n" not in row.section
    assert row.section.startswith("publish-flow-0: How the team ships a release")
