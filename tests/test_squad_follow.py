"""Following Squad's files: what a team writes after the import comes in section by section.

A long-lived team (`long_lived_team`: the shapes of the corpora's `.squad/` text) is imported,
then does two rounds of its own work, the Squad way: agents append to `## Learnings`, Scribe
appends team updates and merges decisions, agents drop inbox files. The first round comes in
at `scribe run`, the second at `import squad`. A section that grew replaces its earlier
import, an unchanged one is untouched, a new one is added: never two live copies of one
section, every appended line reachable by search, and the cold budget archives nothing to
make room for copies.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from long_lived_team import HISTORIES, work_round, write_team
from tiermem.squad.install import install_texts, sealed_lines
from tiermem.storage import entries, store
from tiermem.storage.layout import Layout

RunCli = Callable[..., tuple[int, str, str]]
IMPORTED = "2026-03-14T09:00:00Z"
ROUND_TIMES = ("2026-04-03T09:00:00Z", "2026-04-10T09:00:00Z")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


def cli(run_cli: RunCli, root: Path, now: str, *args: str) -> str:
    code, out, err = run_cli("--root", str(root), "--now", now, *args)
    assert code == 0, f"tiermem {' '.join(args)} -> {code}: {out}{err}"
    return out


@pytest.fixture
def team(tmp_path: Path) -> Path:
    root = tmp_path / "skyport"
    write_team(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the team as it stands")
    return root


def imported(run_cli: RunCli, root: Path) -> None:
    cli(run_cli, root, IMPORTED, "init")
    cli(run_cli, root, IMPORTED, "import", "squad")


def cold_files(root: Path) -> dict[str, entries.TierFile]:
    layout = Layout(root)
    found = {}
    for path in sorted(layout.tier_dir("cold").glob("*.md")):
        loaded = store.load(layout, "cold", path)
        assert loaded is not None
        found[path.stem] = loaded
    return found


def live_titles_twice(root: Path) -> list[str]:
    """`agent: title` of each heading two live cold entries of one agent share."""
    twice = []
    for agent, cold in cold_files(root).items():
        titles = [e.title for e in cold.entries if e.active]
        twice += [f"{agent}: {t}" for t in sorted(set(titles)) if titles.count(t) > 1]
    return twice


def set_cold_budget(root: Path, budget: int) -> None:
    config = root / ".squad" / "memory" / "config.toml"
    text = re.sub(
        r"(?m)^#?\s*budget_bytes = 12288.*$", f"budget_bytes = {budget}", config.read_text("utf-8")
    )
    if f"budget_bytes = {budget}" not in text:
        text += f"\n[cold]\nbudget_bytes = {budget}\n"
    config.write_text(text, encoding="utf-8")


def audited(root: Path, action: str) -> list[dict[str, object]]:
    trail = root / ".squad" / "memory" / "tiermem-audit.jsonl"
    lines = [json.loads(line) for line in trail.read_text("utf-8").splitlines() if line]
    return [line for line in lines if line.get("action") == action]


def test_two_rounds_of_the_teams_own_work_leave_one_live_copy_of_each_section(
    team: Path, run_cli: RunCli
) -> None:
    imported(run_cli, team)
    assert live_titles_twice(team) == []
    sizes = [(team / ".squad/memory/cold" / f"{a}.md").stat().st_size for a in HISTORIES]
    # Room for what the rounds add, not for a second copy of what grew.
    set_cold_budget(team, max(1024, int(max(sizes) * 1.6)))
    added: list[str] = []
    for n, now in enumerate(ROUND_TIMES):
        added += work_round(team, n)
        git(team, "add", "-A")
        git(team, "commit", "-qm", f"round {n + 1}")
        if n == 0:
            said = cli(run_cli, team, now, "scribe", "run")
            assert re.search(r"follow: import [1-9]\d* Squad files? changed since", said), said
        else:
            cli(run_cli, team, now, "import", "squad")
        assert live_titles_twice(team) == [], f"round {n + 1}"
    code, out, _ = run_cli("--root", str(team), "--now", ROUND_TIMES[-1], "doctor")
    assert code == 0 and "versions of one section" not in out, out
    assert audited(team, "cold-budget") == []
    assert audited(team, "replace"), "the sections that grew replaced their earlier import"
    for line in added:
        named = re.findall(r"`([^`]+)`", line)
        fact = named[0] if named else line.split(":**", 1)[-1].strip(" -*")
        found = json.loads(
            cli(
                run_cli,
                team,
                ROUND_TIMES[-1],
                "search",
                *re.findall(r"\w+", line)[:12],
                "--format",
                "json",
            )
        )
        shown = [" ".join(str(hit["text"]).split()) for hit in found]
        assert any(fact in text for text in shown), (line, [h["title"] for h in found])


def test_an_unchanged_team_changes_nothing_at_the_next_run(team: Path, run_cli: RunCli) -> None:
    imported(run_cli, team)
    cli(run_cli, team, IMPORTED, "scribe", "run")
    memory = team / ".squad" / "memory"
    before = {p: p.read_bytes() for p in memory.rglob("*.md")}
    said = cli(run_cli, team, IMPORTED, "scribe", "run")
    assert "follow: import 0 Squad files changed since the last import" in said
    assert {p: p.read_bytes() for p in memory.rglob("*.md")} == before


def test_a_store_that_never_imported_follows_nothing(team: Path, run_cli: RunCli) -> None:
    cli(run_cli, team, IMPORTED, "init")
    said = cli(run_cli, team, IMPORTED, "scribe", "run")
    assert "follow:" not in said
    # The inbox merged (Scribe's step), no history imported.
    assert [p.name for p in (team / ".squad/memory/cold").glob("*.md")] == ["team.md"]


def test_doctor_names_two_live_versions_of_one_section_and_repair_folds_them(
    team: Path, run_cli: RunCli
) -> None:
    imported(run_cli, team)
    layout = Layout(team)
    path = layout.tier_file("cold", "gaff")
    first = store.load(layout, "cold", path)
    work_round(team, 0)
    cli(run_cli, team, ROUND_TIMES[0], "import", "squad")
    assert live_titles_twice(team) == []
    # Both imports' versions of each section that grew, side by side (what a team had after
    # importing twice before sections were followed).
    with store.update_existing(layout, "cold", path) as cold:
        assert cold is not None and first is not None
        older = [e for e in first.entries if cold.get(e.id) is None and not e.standing]
        assert older, "gaff's `## Learnings` grew"
        cold.entries = older + cold.entries
    code, out, _ = run_cli("--root", str(team), "--now", ROUND_TIMES[0], "doctor")
    assert code == 1 and f"holds 2 live versions of one section ('{older[0].title}')" in out
    assert run_cli("--root", str(team), "--now", ROUND_TIMES[0], "doctor", "--repair")[0] == 0
    assert live_titles_twice(team) == []
    assert run_cli("--root", str(team), "--now", ROUND_TIMES[0], "doctor")[0] == 0


def test_doctor_folds_copies_an_earlier_import_left_without_section_names(
    team: Path, run_cli: RunCli
) -> None:
    imported(run_cli, team)
    layout = Layout(team)
    path = layout.tier_file("cold", "gaff")
    first = store.load(layout, "cold", path)
    work_round(team, 0)
    cli(run_cli, team, ROUND_TIMES[0], "import", "squad")
    plain = [  # as an import made them before entries named their section
        entries.Entry(**{**{f: getattr(e, f) for f in e.__slots__}, "extra": ()})  # type: ignore[arg-type]
        for e in (first.entries if first else [])
        if not e.standing
    ]
    with store.update_existing(layout, "cold", path) as cold:
        assert cold is not None
        fresh = [e for e in plain if cold.get(e.id) is None]
        cold.entries = fresh + [
            entries.Entry(**{**{f: getattr(e, f) for f in e.__slots__}, "extra": ()})  # type: ignore[arg-type]
            for e in cold.entries
        ]
    code, out, _ = run_cli("--root", str(team), "--now", ROUND_TIMES[0], "doctor")
    assert code == 1 and "live versions of one section" in out
    assert run_cli("--root", str(team), "--now", ROUND_TIMES[0], "doctor", "--repair")[0] == 0
    assert live_titles_twice(team) == []


def test_the_coordinators_append_step_says_where_tiermem_wants_the_learnings() -> None:
    squads = (
        "  1. APPEND learnings with `squad_state_append` to `agents/{name}/history.md`.\n"
        "     Include architecture decisions, patterns, user preferences, and key file paths.\n"
        '  1. APPEND to .squad/agents/{name}/history.md under "## Learnings":\r\n'
        "     architecture decisions, patterns, user preferences, key file paths.\r\n"
    )
    installed, found = sealed_lines.replaced(squads)
    assert [f.line.key for f in found] == ["append-learnings", "append-learnings-file"]
    assert installed.count("tiermem hot note {name} TEXT") == 2
    assert "APPEND" not in installed and installed.count("<!-- tiermem:line append-") == 2
    assert install_texts.LINE_KEYS["append-learnings"].what.startswith("agents append")
    listed = {"append-learnings", "append-learnings-file"}  # what the install record lists
    assert sealed_lines.restored(installed, listed.__contains__)[0] == squads


def test_a_section_the_team_left_as_it_was_stays_as_it_was_left(
    team: Path, run_cli: RunCli
) -> None:
    imported(run_cli, team)
    deckard = cold_files(team)["deckard"].entries
    [wrong] = [e for e in deckard if e.title == "Booking client retries"]
    cli(run_cli, team, IMPORTED, "forget", wrong.id, "--reason", "we retry otherwise now")
    work_round(team, 0)  # deckard's history grows beside that section, which stays as it was
    said = cli(run_cli, team, ROUND_TIMES[0], "scribe", "run")
    assert "follow: import" in said
    live = {e.id for cold in cold_files(team).values() for e in cold.entries}
    assert wrong.id not in live  # forgotten, and not brought back by the next import
    assert "Seat map invalidation" in {e.title for e in cold_files(team)["deckard"].entries}
