"""`tiermem log --limit`: the newest spawns first, as many as asked, within the bounds every
limit of the command line keeps; a bad limit or entry id is one line and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.memory import Memory

TIMES = ["2026-03-03T09:00:00Z", "2026-03-03T10:00:00Z", "2026-03-03T11:00:00Z"]


@pytest.fixture
def logged(store_copy: Path) -> Path:
    """Three spawns of flight, an hour apart, each on its own task."""
    for n, when in enumerate(TIMES):
        mem = Memory(store_copy, now=when)
        mem.spawn("flight", f"task number {n}")
        mem.close()
    return store_copy


def tasks(run_cli: RunCli, root: Path, *args: str) -> list[str]:
    code, out, err = run_cli("log", *args, "--format", "json", "--root", str(root))
    assert (code, err) == (0, ""), err
    return [s["task"] for s in json.loads(out)["spawns"]]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("1", ["task number 2"]),
        ("2", ["task number 2", "task number 1"]),
        ("3", ["task number 2", "task number 1", "task number 0"]),
        ("10000", ["task number 2", "task number 1", "task number 0"]),
    ],
)
def test_the_newest_spawns_come_first_as_many_as_asked(
    logged: Path, run_cli: RunCli, limit: str, expected: list[str]
) -> None:
    assert tasks(run_cli, logged, "--limit", limit) == expected


def test_the_text_log_shows_the_same_spawns_in_the_same_order(
    logged: Path, run_cli: RunCli
) -> None:
    code, out, err = run_cli("log", "--limit", "2", "--root", str(logged))
    assert (code, err) == (0, "")
    heads = [line for line in out.splitlines() if line[:1].isdigit()]
    assert [h.split("  ")[0] for h in heads] == [TIMES[2], TIMES[1]]
    assert [h.rsplit("  ", 1)[1] for h in heads] == ["'task number 2'", "'task number 1'"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--limit", "0"), "limit must be between 1 and 10000"),
        (("--limit", "-1"), "limit must be between 1 and 10000"),
        (("--limit", "10001"), "limit must be between 1 and 10000"),
        (("--limit", "ten"), "--limit"),
        (("--entry", "nope"), "'nope' is not an entry id"),
        (("--agent", "Bad Name"), "agent name"),
    ],
    ids=["zero", "negative", "too many", "not a number", "bad entry", "bad agent"],
)
def test_a_bad_filter_is_refused_in_one_line(
    logged: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    before = snapshot(logged)
    code, out, err = run_cli("log", *args, "--root", str(logged))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(logged) == before
