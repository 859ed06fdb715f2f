"""`tiermem decision add`: a decision reaches the team's cold tier and Squad's decisions.md
once, dated, redacted in both; a name that looks like a typo, or a decisions.md tiermem must
not write through, stops it before anything is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot

T1 = "2026-03-03T10:00:00Z"
BLOCKS = (
    "### 2026-03-01: Tag releases\n**What:** tag from main\n**Why:** reproducible builds\n\n"
    "### 2026-03-02: Pin node\n**What:** node 22, deploy password=hunter2hunter2x\n"
)


def decide(run_cli: RunCli, repo: Path, *args: str, stdin: bytes | None = None) -> list[str]:
    """The ids a successful `decision add` says it recorded."""
    code, out, err = run_cli(
        "decision", "add", *args, "--root", str(repo), "--now", T1, stdin=stdin
    )
    assert (code, err) == (0, ""), err
    match = re.fullmatch(
        r"decision recorded: (.+) \(cold/team\.md and \.squad/decisions\.md\)\n", out
    )
    assert match is not None, out
    return match.group(1).split(", ")


def decisions_md(repo: Path) -> str:
    return (repo / ".squad" / "decisions.md").read_text(encoding="utf-8")


def team_ids(repo: Path) -> list[str]:
    cold = repo / ".squad" / "memory" / "cold" / "team.md"
    return re.findall(r"<!-- tiermem id=(\S+)", cold.read_text(encoding="utf-8"))


def test_a_decision_is_dated_in_decisions_md_and_an_entry_of_the_team(
    store_copy: Path, run_cli: RunCli
) -> None:
    [decision] = decide(run_cli, store_copy, "--by", "flight", "Use pnpm for installs")
    assert decision.startswith("d-") and decision in team_ids(store_copy)
    assert "### 2026-03-03: Use pnpm for installs" in decisions_md(store_copy).splitlines()
    trail = (store_copy / ".squad" / "memory" / "tiermem-audit.jsonl").read_text("utf-8")
    lines = [json.loads(x) for x in trail.splitlines()]
    [line] = [x for x in lines if x["action"] == "decision" and decision in x["ids"]]
    assert line["ids"] == [decision] and line["by"] == "flight"
    assert line["tiers"] == ["archive", "cold"]


def test_the_same_decision_twice_is_recorded_once(store_copy: Path, run_cli: RunCli) -> None:
    first = decide(run_cli, store_copy, "--by", "flight", "Use pnpm for installs")
    log_once = decisions_md(store_copy)
    again = decide(run_cli, store_copy, "--by", "flight", "Use pnpm for installs")
    assert again == first
    assert decisions_md(store_copy) == log_once
    assert team_ids(store_copy).count(first[0]) == 1


def test_decision_blocks_from_stdin_are_one_entry_each_with_their_own_dates(
    store_copy: Path, run_cli: RunCli
) -> None:
    ids = decide(run_cli, store_copy, "--by", "flight", "-", stdin=BLOCKS.encode())
    assert len(ids) == 2 and set(ids) <= set(team_ids(store_copy))
    log = decisions_md(store_copy).splitlines()
    assert "### 2026-03-01: Tag releases" in log and "### 2026-03-02: Pin node" in log
    assert "**What:** tag from main" in log


def test_a_secret_in_a_decision_is_redacted_everywhere_it_goes(
    store_copy: Path, run_cli: RunCli
) -> None:
    decide(run_cli, store_copy, "--by", "flight", "-", stdin=BLOCKS.encode())
    squad = store_copy / ".squad"
    holding = [p for p in squad.rglob("*") if p.is_file() and b"hunter2hunter2x" in p.read_bytes()]
    assert holding == []
    assert "**What:** node 22, deploy password=[REDACTED:password]" in decisions_md(store_copy)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--by", "flite", "Use tags"), "unknown agent 'flite'; did you mean 'flight'?"),
        (("--by", "Bad Name", "Use tags"), "agent name"),
        (("--by", "flight", "   "), "decision"),
        (("Use tags",), "--by"),
    ],
    ids=["typo", "bad name", "blank", "no author"],
)
def test_a_decision_refused_writes_nothing(
    store_copy: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    before = snapshot(store_copy)
    code, out, err = run_cli("decision", "add", *args, "--root", str(store_copy), "--now", T1)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(store_copy) == before


def test_a_new_agent_said_to_be_new_may_decide(store_copy: Path, run_cli: RunCli) -> None:
    [decision] = decide(run_cli, store_copy, "--by", "newbie", "--new-agent", "Adopt ruff")
    assert decision in team_ids(store_copy)
    assert "### 2026-03-03: Adopt ruff" in decisions_md(store_copy)


@pytest.mark.parametrize("shape", ["link", "folder"])
def test_a_decisions_md_tiermem_must_not_write_through_stops_it_first(
    store_copy: Path, run_cli: RunCli, shape: str
) -> None:
    log = store_copy / ".squad" / "decisions.md"
    log.unlink(missing_ok=True)
    outside = store_copy.parent / "elsewhere.md"
    outside.write_text("# Someone else's file\n", encoding="utf-8")
    if shape == "link":
        log.symlink_to(outside)
    else:
        log.mkdir()
    before = snapshot(store_copy)
    code, out, err = run_cli(
        "decision", "add", "--by", "flight", "Use tags", "--root", str(store_copy)
    )
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "decisions.md" in err
    assert snapshot(store_copy) == before
    assert outside.read_text(encoding="utf-8") == "# Someone else's file\n"
