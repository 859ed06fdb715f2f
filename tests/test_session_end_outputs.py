"""`tiermem scribe end-session`: one line per agent stating what its JSON holds (the cold
entry, bytes before and after, structured entries, decisions, blockers carried); a second end
has nothing to end and writes nothing; an agent with no hot is refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import RunCli, copy_of
from reliability import snapshot
from tiermem.memory import Memory

T1 = "2026-03-03T10:00:00Z"
LINE = re.compile(
    r"(?P<agent>\S+): session -> cold (?P<cold>\S+) \((?P<raw>\d+) -> (?P<summary>\d+) bytes\); "
    r"(?P<structured>\d+) structured, (?P<decisions>\d+) decision\(s\); "
    r"(?P<carried>\d+) blocker\(s\) carried"
)


def twin_stores(built_store: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two copies of the shared store, each with a note and a decision in eecom's hot."""
    roots = []
    for name in ("text", "json"):
        (tmp_path / name).mkdir()
        root = copy_of(built_store, tmp_path / name)
        mem = Memory(root, now=T1)
        mem.hot_add("eecom", "note", "ReadBuffer.fill is fixed; the chunk size was off by one.")
        mem.hot_add("eecom", "decision", "Keep the chunk size at 4 KB")
        mem.close()
        roots.append(root)
    return roots[0], roots[1]


def end_all(run_cli: RunCli, root: Path, *options: str) -> str:
    code, out, err = run_cli(
        "scribe", "end-session", "--all", *options, "--root", str(root), "--now", T1
    )
    assert (code, err) == (0, ""), err
    return out


def test_each_agents_line_states_what_its_json_holds(
    built_store: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    text_root, json_root = twin_stores(built_store, tmp_path)
    lines = end_all(run_cli, text_root).splitlines()
    reports = json.loads(end_all(run_cli, json_root, "--format", "json"))
    assert [r["agent"] for r in reports] == ["eecom", "flight"] and len(lines) == 2
    for line, report in zip(lines, reports, strict=True):
        match = LINE.fullmatch(line)
        assert match is not None, line
        said = match.groupdict()
        assert said["agent"] == report["agent"]
        assert [said["cold"]] == report["cold"]
        assert int(said["raw"]) == report["raw_bytes"] > 0
        assert int(said["summary"]) == report["summary_bytes"] > 0
        assert int(said["structured"]) == len(report["knowledge"])
        assert int(said["decisions"]) == len(report["decisions"])
        assert int(said["carried"]) == len(report["carried"])
    eecom, flight = reports
    assert len(eecom["decisions"]) == 1 and eecom["carried"] == []
    assert len(flight["carried"]) == 1  # the open blocker stays in hot


def test_the_carried_blocker_is_all_that_is_left_in_hot(
    built_store: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _, root = twin_stores(built_store, tmp_path)
    [_, flight] = json.loads(end_all(run_cli, root, "--format", "json"))
    mem = Memory(root, now=T1)
    try:
        left = mem.hot_view("flight").entries
    finally:
        mem.close()
    assert [e.id for e in left if e.slot == "blocker"] == flight["carried"]
    assert [e.slot for e in left] == ["blocker"]


def test_a_second_end_has_nothing_to_end_and_writes_nothing(
    built_store: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    root, _ = twin_stores(built_store, tmp_path)
    end_all(run_cli, root)
    before = snapshot(root)
    code, out, err = run_cli("scribe", "end-session", "eecom", "--root", str(root), "--now", T1)
    assert (code, out, err) == (0, "eecom: nothing in hot to end\n", "")
    assert snapshot(root) == before


@pytest.mark.parametrize(
    ("agent", "said"),
    [("ghost", "unknown agent 'ghost'"), ("flite", "did you mean 'flight'?")],
)
def test_ending_the_session_of_an_agent_with_no_hot_is_refused(
    store_copy: Path, run_cli: RunCli, agent: str, said: str
) -> None:
    before = snapshot(store_copy)
    code, out, err = run_cli("scribe", "end-session", agent, "--root", str(store_copy))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(store_copy) == before


def test_end_session_takes_an_agent_or_all_never_both(store_copy: Path, run_cli: RunCli) -> None:
    for args in (("eecom", "--all"), ()):
        code, out, err = run_cli("scribe", "end-session", *args, "--root", str(store_copy))
        assert (code, out) == (2, "") and err.count("\n") == 1
