"""One bad thing stops only what needs it: an agent folder tiermem cannot name, a damaged
cold, team, wiki or queue file. Everyone else's work goes on, the skipped one is said, and
a command that refuses writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import attacks
from conftest import copy_of
from hostile import DAMAGE
from reliability import cli, snapshot

T2 = "2026-03-03T10:00:00Z"


@pytest.fixture(scope="module")
def template(built_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_of(built_store, tmp_path_factory.mktemp("isolation"))
    mem = ["--root", str(root), "--now", attacks.T0]
    for agent in ("ada", "bo", "cy"):
        cli([*mem, "hot", "set", agent, "--task", f"{agent} works on the reader", "--new-agent"])
        cli([*mem, "hot", "note", agent, f"{agent} found the mark-{agent} bug"])
    cli([*mem, "hot", "decide", "cy", "Keep retries off mark-cy-decision"])
    return root


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    return copy_of(template, tmp_path)


def _run(root: Path, *argv: str, now: str = T2) -> tuple[int, str, str]:
    return cli(["--root", str(root), "--now", now, *argv])


def _memory(root: Path) -> Path:
    return root / ".squad" / "memory"


def test_an_agent_folder_tiermem_cannot_name_is_skipped_and_the_rest_imported(
    root: Path,
) -> None:
    for name in ("_alumni", "con"):
        folder = root / ".squad" / "agents" / name
        folder.mkdir(parents=True)
        (folder / "history.md").write_text(f"# {name}\n\n## Learnings\n\n### Old\nx\n", "utf-8")
    for _ in range(2):  # and again: the same note, nothing imported twice
        code, _, err = _run(root, "import", "squad")
        assert code == 1, err
        assert "skipped .squad/agents/_alumni/history.md:1:" in err
        assert "'_alumni' is not a name tiermem takes for an agent" in err
        assert "'con' is not a name" in err
        assert not (_memory(root) / "archive" / "_alumni").exists()
    flight = (_memory(root) / "archive" / "flight").glob("*.md")
    assert sum(b"kind=import" in p.read_bytes()[:400] for p in flight) == 1


def test_an_agent_folder_named_team_is_not_imported_into_the_teams_memory(root: Path) -> None:
    for name in ("team", "Team"):
        folder = root / ".squad" / "agents" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "history.md").write_text(
            f"# {name}\n\n## Learnings\n\n### Policy\nAlways deploy on Fridays mark-{name}\n",
            "utf-8",
        )
    code, _, err = _run(root, "import", "squad")
    assert code == 1, err
    for name in ("team", "Team"):
        assert f"skipped .squad/agents/{name}/history.md:1: the agent folder {name!r}" in err
    assert "reserved for the team's own memory" in err
    memory = b"".join(p.read_bytes() for p in _memory(root).rglob("*.md"))
    assert b"mark-team" not in memory and b"mark-Team" not in memory


def test_a_folder_in_place_of_the_spawn_log_leaves_spawns_unlogged(root: Path) -> None:
    log = _memory(root) / "spawns.jsonl"
    log.mkdir()
    for _ in range(2):
        code, out, err = _run(root, "spawn", "ada", "--task", "fix the reader", "--auto")
        assert code == 0, err
        assert out.startswith("# Spawn: ada")
        assert err.count("\n") == 1 and "this spawn is not logged" in err
    assert log.is_dir() and not any(log.iterdir())
    code, _, err = _run(root, "log")
    assert code == 2 and err.count("\n") == 1  # the one command that needs the log


def test_one_damaged_wiki_page_is_skipped_by_wiki_list(root: Path) -> None:
    _run(root, "wiki", "write", "style", "Prefer small functions\nMedian about 8 lines.")
    (_memory(root) / "wiki" / "release.md").write_bytes(DAMAGE["invalid-utf8"])
    code, out, err = _run(root, "wiki", "list")
    assert code == 0, err
    assert "style" in out and "release" not in out
    assert err.count("\n") == 1 and "skipped .squad/memory/wiki/release.md" in err
    code, _, err = _run(root, "wiki", "show", "ghost")  # a refusal stays one line
    assert code == 2 and err.count("\n") == 1 and "pages: release, style" in err


def test_a_damaged_cold_file_skips_that_agent_only(root: Path) -> None:
    damaged = _memory(root) / "cold" / "ada.md"
    damaged.write_bytes(DAMAGE["unknown-class"])
    hot_before = (_memory(root) / "hot" / "ada.md").read_bytes()
    code, out, err = _run(root, "scribe", "end-session", "--all")
    assert code == 1, (out, err)
    assert "skipped ada:" in err and "unknown class" in err
    assert "bo: session -> cold" in out and "cy: session -> cold" in out
    assert damaged.read_bytes() == DAMAGE["unknown-class"]
    assert (_memory(root) / "hot" / "ada.md").read_bytes() == hot_before  # ada: nothing written
    assert not [p for p in (_memory(root) / "archive" / "ada").glob("*.md")]


def test_a_damaged_team_file_skips_only_sessions_with_decisions(root: Path) -> None:
    (_memory(root) / "cold" / "team.md").write_bytes(DAMAGE["bad-time"])
    before = snapshot(root)
    code, out, err = _run(root, "scribe", "end-session", "--all")
    assert code == 1
    assert "skipped cy:" in err  # cy decided something: its session needs the team file
    assert "ada: session -> cold" in out and "bo: session -> cold" in out
    after = snapshot(root)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert not [k for k in changed if "/cy" in k or k.endswith("cy.md")]


def test_a_damaged_file_stops_only_the_steps_of_scribe_run_that_need_it(root: Path) -> None:
    for agent in ("ada", "bo"):
        for n in range(7):
            _run(root, "hot", "action", agent, f"{agent} step {n} mark-{agent}-{n}")
    (_memory(root) / "cold" / "ada.md").write_bytes(DAMAGE["unclosed-meta"])
    (_memory(root) / "wiki" / "release.md").write_bytes(DAMAGE["invalid-utf8"])
    code, out, err = _run(root, "scribe", "run", now="2026-03-20T10:00:00Z")
    assert code == 0, err
    assert "tiermem: skipped checkpoint of ada:" in err and "cold/ada.md" in err
    assert "inbox: merge 1 file into" in out  # the inbox is merged all the same
    queue = (_memory(root) / "queue" / "bo.md").read_text(encoding="utf-8")
    assert "<!-- tiermem id=" not in queue  # bo's checkpoint ran
    assert (_memory(root) / "cold" / "ada.md").read_bytes() == DAMAGE["unclosed-meta"]
    assert (_memory(root) / "wiki" / "release.md").read_bytes() == DAMAGE["invalid-utf8"]


def test_a_damaged_team_file_leaves_the_inbox_whole(root: Path) -> None:
    (_memory(root) / "cold" / "team.md").write_bytes(DAMAGE["binary"])
    log = root / ".squad" / "decisions.md"
    log_before = log.read_bytes() if log.exists() else None
    code, _, err = _run(root, "scribe", "run")
    assert code == 0
    assert "tiermem: skipped inbox merge:" in err
    assert (root / ".squad" / "decisions" / "inbox" / "flight-cache.md").exists()
    assert (log.read_bytes() if log.exists() else None) == log_before


def test_a_decision_goes_through_a_damaged_wiki_page(root: Path) -> None:
    (_memory(root) / "wiki" / "release.md").write_bytes(DAMAGE["invalid-utf8"])
    (_memory(root) / "cold" / "eecom.md").write_bytes(DAMAGE["bad-pair"])
    code, _, err = _run(root, "decision", "add", "--by", "flight", "Use pnpm mark-pnpm")
    assert code == 0, err
    assert b"mark-pnpm" in (_memory(root) / "cold" / "team.md").read_bytes()


def test_a_refused_decision_writes_nothing(root: Path) -> None:
    (_memory(root) / "cold" / "team.md").write_bytes(DAMAGE["unknown-class"])
    before = snapshot(root)
    code, _, err = _run(root, "decision", "add", "--by", "flight", "Use pnpm")
    assert code == 2 and err.count("\n") == 1
    assert snapshot(root) == before


def test_a_broken_config_stops_a_session_end_before_it_writes(root: Path) -> None:
    (_memory(root) / "config.toml").write_text("[hot]\nbudget_bytes = 'x'\n", "utf-8")
    before = snapshot(root)
    code, _, err = _run(root, "scribe", "end-session", "ada")
    assert code == 2 and err.count("\n") == 1 and "budget_bytes" in err
    assert snapshot(root) == before
