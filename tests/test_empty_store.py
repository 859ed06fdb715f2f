"""A store just made by `tiermem init`: every command that reads answers with an empty
result in its own words (or an empty JSON value), exit status 0, and writes nothing; a read of
something that cannot exist yet is one line saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    Memory.init(tmp_path, now=T0)[0].close()
    return tmp_path


def run(run_cli: RunCli, root: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(*args, "--root", str(root), "--now", T0)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("wiki", "list"), "no wiki pages yet\n"),
        (("log",), "no spawns logged\n"),
        (("search", "anything"), "no matches\n"),
        (("reindex", "--check"), "index matches the files\n"),
        (("doctor",), "doctor: checked the store\ndoctor: no problems left\n"),
    ],
    ids=["wiki list", "log", "search", "reindex --check", "doctor"],
)
def test_a_read_of_a_fresh_store_says_there_is_nothing(
    fresh: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    run(run_cli, fresh, "search", "warm")  # the index built, as any first read builds it
    before = snapshot(fresh)
    assert run(run_cli, fresh, *args) == (0, said, "")
    assert snapshot(fresh) == before


@pytest.mark.parametrize(
    ("args", "empty"),
    [
        (("wiki", "list"), []),
        (("search", "anything"), []),
        (("stats",), {"tiers": [], "totals": {}, "squad_spawn": []}),
        (("log",), {"spawns": [], "agent": "", "entry": "", "skipped": []}),
    ],
    ids=["wiki list", "search", "stats", "log"],
)
def test_the_json_of_a_fresh_store_is_an_empty_value_of_its_shape(
    fresh: Path, run_cli: RunCli, args: tuple[str, ...], empty: object
) -> None:
    code, out, err = run(run_cli, fresh, *args, "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == empty


def test_stats_of_a_fresh_store_is_a_table_with_no_rows(fresh: Path, run_cli: RunCli) -> None:
    code, out, err = run(run_cli, fresh, "stats")
    assert (code, err) == (0, "")
    assert "agent" in out and "tokens" in out
    assert not [line for line in out.splitlines() if line.startswith("│")]


def test_a_scribe_run_of_a_fresh_store_does_nothing_and_says_each_step(
    fresh: Path, run_cli: RunCli
) -> None:
    code, out, err = run(run_cli, fresh, "scribe", "run", "--format", "json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["dry_run"] is False
    assert all(not value for key, value in report.items() if key != "dry_run")
    code, out, _ = run(run_cli, fresh, "scribe", "run")
    steps = [line.split(": ", 1)[0] for line in out.splitlines()]
    assert steps == [
        "inbox",
        "checkpoints",
        "supersede",
        "promote",
        "expire",
        "cold budget",
        "use",
    ]
    assert code == 0 and all(" 0 " in line for line in out.splitlines())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("hot", "show", "ada"), "unknown agent 'ada' (the team has no agents yet)"),
        (("wiki", "show", "release"), "no wiki page 'release' (pages: none yet)"),
        (("forget", "c-0000000001"), "no entry c-0000000001 in hot, cold, the wiki or Scribe"),
        (("search", "c-0000000001", "--format", "json"), None),
    ],
    ids=["hot show", "wiki show", "forget", "search an id"],
)
def test_a_read_of_what_cannot_exist_yet_is_one_line(
    fresh: Path, run_cli: RunCli, args: tuple[str, ...], said: str | None
) -> None:
    before = snapshot(fresh)
    code, out, err = run(run_cli, fresh, *args)
    if said is None:  # an id searched for: simply not found
        assert (code, json.loads(out), err) == (0, [], "")
    else:
        assert (code, out) == (2, "") and err.startswith(f"tiermem: error: {said}")
        assert err.count("\n") == 1
    assert snapshot(fresh) == before


def test_a_fresh_store_writes_only_its_report_page(fresh: Path, run_cli: RunCli) -> None:
    before = snapshot(fresh)
    code, out, err = run(run_cli, fresh, "report", "--format", "json")
    assert (code, err) == (0, "")
    page = json.loads(out)
    assert page["entries"] == page["records"] == page["agents"] == 0
    assert page["local"] is True
    after = snapshot(fresh)
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) == {
        ".squad/memory/tiermem-local/report/report.html",
        ".squad/memory/tiermem-local/report/.gitignore",
    }
