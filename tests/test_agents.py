"""Typos caught: unknown agents are refused with the nearest names; new agents are said so.

An agent is known when Squad has a folder for it (`.squad/agents/Rai/`, any case) or it has
memory. `spawn`, `hot show` and `search --agent` of an unknown agent fail in one line with
exit status 2; a write to one needs `--new-agent`; and `init` in a subfolder finds the
`.squad/` above it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reliability import is_index
from tiermem.memory import Memory

RunCli = Callable[..., tuple[int, str, str]]
NOW = "2026-03-02T10:00:00Z"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".locks" not in p.parts and not is_index(p)
    }


@pytest.fixture
def team(tmp_path: Path, run_cli: RunCli) -> Path:
    """A Squad team (Hockney, Rai as Squad spells them) with memory for one more agent."""
    for name in ("Hockney", "Rai", "scribe"):
        (tmp_path / ".squad" / "agents" / name).mkdir(parents=True)
    (tmp_path / ".squad" / "agents" / "Rai" / "charter.md").write_text(
        "# Rai\nTests everything.\n", encoding="utf-8"
    )
    code, _, err = run_cli("--root", str(tmp_path), "init")
    assert code == 0, err
    code, _, err = run_cli(
        "--root", str(tmp_path), "hot", "set", "flight", "--task", "Fix login", "--new-agent"
    )
    assert code == 0, err
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ("spawn", "hockny", "--task", "Fix the build"),
        ("hot", "show", "hockny"),
        ("search", "build", "--agent", "hockny"),
        ("hot", "note", "hockny", "a note"),
        ("hot", "set", "hockny", "--task", "Fix the build"),
        ("scribe", "end-session", "hockny"),
    ],
    ids=["spawn", "hot-show", "search", "hot-note", "hot-set", "end-session"],
)
def test_a_typo_fails_in_one_line_naming_the_agent_meant(
    team: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    before = snapshot(team)
    code, out, err = run_cli("--root", str(team), "--now", NOW, *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "unknown agent 'hockny'; did you mean 'hockney'?" in err
    assert "agents: flight, hockney, rai, scribe" in err
    assert snapshot(team) == before


def test_writes_to_squad_agents_and_agents_with_memory_just_work(
    team: Path, run_cli: RunCli
) -> None:
    for agent in ("Rai", "rai", "hockney", "flight"):
        code, _, err = run_cli("--root", str(team), "hot", "note", agent, f"note for {agent}")
        assert code == 0, err
    code, out, _ = run_cli("--root", str(team), "spawn", "RAI", "--task", "test it", "--charter")
    assert code == 0 and "Tests everything." in out  # the charter of agents/Rai/


def test_a_new_agent_is_written_when_said_to_be_new(team: Path, run_cli: RunCli) -> None:
    code, _, err = run_cli("--root", str(team), "hot", "set", "eecom", "--task", "Reader")
    assert code == 2 and "if it is a new agent, say so: --new-agent" in err
    code, _, err = run_cli(
        "--root", str(team), "hot", "set", "eecom", "--task", "Reader", "--new-agent"
    )
    assert code == 0, err
    code, out, _ = run_cli("--root", str(team), "spawn", "eecom", "--task", "Reader")
    assert code == 0 and "Reader" in out
    code, out, _ = run_cli("hot", "set", "--help")
    assert "--new-agent" in out


def test_the_first_write_of_an_empty_store_starts_the_team(store: Memory, run_cli: RunCli) -> None:
    root = ("--root", str(store.root))
    assert run_cli(*root, "hot", "set", "flight", "--task", "Fix login")[0] == 0
    code, _, err = run_cli(*root, "hot", "set", "fligth", "--task", "Fix login")
    assert code == 2 and "did you mean 'flight'?" in err


def test_the_python_api_checks_when_asked(store: Memory) -> None:
    from tiermem.errors import NotFoundError

    store.hot_set("flight", "Fix login")
    store.hot_set("eecom", "Reader")  # a program names its agents: no check unless asked
    with pytest.raises(NotFoundError, match="did you mean 'eecom'"):
        store.hot_add("eecmo", "note", "typo", new_agent=False)
    with pytest.raises(NotFoundError, match="did you mean 'flight'"):
        store.spawn("flihgt", "Fix login")
    assert [a.name for a in store.team()] == ["eecom", "flight"]
    assert store.team()[0].to_json() == {"name": "eecom", "squad": False, "memory": ["hot"]}


def test_init_in_a_subfolder_finds_the_squad_folder_above(
    team: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = team / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    code, out, _ = run_cli("init")
    assert code == 0 and str(team) in out
    assert not (sub / ".squad").exists()
    code, out, _ = run_cli("--root", str(sub), "init")
    assert code == 0 and (sub / ".squad" / "memory").is_dir()
    os.chdir(team)
