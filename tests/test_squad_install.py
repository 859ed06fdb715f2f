"""`tiermem squad install` on a hand-made Squad team: idempotence, check, uninstall, refusals."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.squad.install import install_texts, installer

RunCli = Callable[..., tuple[int, str, str]]

SPAWN_LINES = (
    "  Read `agents/{name}/history.md` with `squad_state_read` when state tools are available;"
    " otherwise fall back to `.squad/agents/{name}/history.md`.\n"
    "  Read `decisions.md` with `squad_state_read` when state tools are available;"
    " otherwise fall back to `.squad/decisions.md`.\n"
)
SPAWN_TEMPLATE = (
    "# Spawn Reference\n\n**Template for any agent:**\n\n```\nprompt: |\n"
    "  You are {Name}, the {Role} on this project.\n\n"
    f"{SPAWN_LINES}"
    "  If .squad/identity/wisdom.md exists, read it before starting work.\n```\n"
)
SQUAD_SKILL = (
    "---\nname: tiered-memory\nconfidence: design (runtime not yet implemented)\n"
    "source: design proposal\n---\n\n# Skill: Tiered Agent Memory\n\nDesign only.\n\n"
)
SQUAD_MCP = {
    "mcpServers": {
        "squad_state": {
            "command": "npx",
            "args": ["-y", "@bradygaster/squad-cli@0.10.0", "state-mcp"],
            "env": {},
            "tools": ["*"],
        }
    }
}


def squad_json(data: object) -> str:
    """JSON as Squad writes it: JSON.stringify(data, null, 2) + a newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def make_team(root: Path, vscode: bool = False) -> Path:
    """A folder shaped like what `squad init` leaves (the parts the install touches)."""
    files = {
        ".squad/config.json": '{\n  "version": 1\n}',
        ".squad/team.md": "# Squad Team\n",
        ".squad/decisions.md": "# Squad Decisions\n\n## Active Decisions\n",
        ".squad/agents/scribe/charter.md": "# Scribe\n\n> The team's memory.\n",
        ".squad/agents/scribe/history.md": "# Project Context\n",
        ".squad/agents/ralph/charter.md": "# Ralph — Ralph\n\nPersistent memory agent.\n",
        # Squad keeps the casting's capitals; this one also lacks a final newline.
        ".squad/agents/Rai/charter.md": "# Rai\n\n> The team's shield.",
        ".squad/templates/spawn-reference.md": SPAWN_TEMPLATE,
        ".squad/templates/skills/tiered-memory/SKILL.md": SQUAD_SKILL,
        ".github/skills/tiered-memory/SKILL.md": SQUAD_SKILL,
        ".github/skills/squad/SKILL.md": "---\nname: squad\n---\n",
        ".mcp.json": squad_json(SQUAD_MCP),
        ".squad/memory/config.json": '{\n  "version": 1\n}\n',
        ".squad/memory/index.json": "[]\n",
        ".squad/memory/audit.jsonl": "",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for folder in ("decisions/inbox", "memory/local", "memory/tombstones", "log"):
        (root / ".squad" / folder).mkdir(parents=True, exist_ok=True)
    if vscode:
        (root / ".vscode").mkdir()
    return root


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under the root, links not followed."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[Path(folder, name).relative_to(root).as_posix()] = None
        for name in files:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Squad team in a folder of its own, with `tiermem` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tiermem"
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return make_team(tmp_path / "repo", vscode=True)


def states(out: str) -> dict[str, str]:
    """path -> state from the report's step lines."""
    found = {}
    for line in out.splitlines():
        state, _, rest = line.partition(" ")
        if ": " in rest:
            found[rest.strip().split(": ", 1)[0]] = state
    return found


def one_line_error(code: int, out: str, err: str) -> bool:
    return code == 2 and out == "" and err.count("\n") == 1 and err.startswith("tiermem: error:")


# --- install, again, check, uninstall -------------------------------------------------------


def test_install_then_uninstall_gives_back_squads_bytes(team: Path, run_cli: RunCli) -> None:
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, "")
    assert set(states(out).values()) == {"added"}
    assert out.splitlines()[-1] == "installed: 10 change(s)"
    code, out, err = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert (code, err) == (0, "")
    assert states(out)[".github/skills/tiered-memory/SKILL.md"] == "restored"
    assert states(out)[".squad/memory/"] == "removed"
    assert snapshot(team) == before


def test_an_unused_store_goes_with_its_local_files(team: Path, run_cli: RunCli) -> None:
    before = snapshot(team)
    assert run_cli("squad", "install", "--root", str(team))[0] == 0
    code, _, _ = run_cli("spawn", "ralph", "--task", "look around", "--root", str(team))
    assert code == 0 and (team / ".squad" / "memory" / "spawns.jsonl").is_file()
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert code == 0 and states(out)[".squad/memory/"] == "removed"
    assert snapshot(team) == before


def test_a_second_install_changes_nothing(team: Path, run_cli: RunCli) -> None:
    assert run_cli("squad", "install", "--coordinator", "--root", str(team))[0] == 0
    installed = snapshot(team)
    # Without --coordinator too: the spawn step, once installed, stays.
    for args in (("--coordinator",), ()):
        code, out, _ = run_cli("squad", "install", *args, "--root", str(team))
        assert code == 0
        assert set(states(out).values()) == {"unchanged"}
        assert out.splitlines()[-1] == "installed: nothing to change"
        assert snapshot(team) == installed


def test_check_reports_and_writes_nothing(team: Path, run_cli: RunCli) -> None:
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--check", "--root", str(team))
    assert (code, err) == (1, "")
    assert set(states(out).values()) == {"missing"}
    assert snapshot(team) == before
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    code, out, _ = run_cli("squad", "install", "--check", "--root", str(team))
    assert code == 0
    assert set(states(out).values()) == {"installed"}
    assert ".squad/templates/spawn-reference.md" in states(out)
    assert out.splitlines()[-1] == "all installed"


def test_check_names_what_an_upgrade_undid(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    # `squad upgrade` copies its templates over .squad/templates/.
    (team / ".squad/templates/spawn-reference.md").write_text(SPAWN_TEMPLATE, encoding="utf-8")
    code, out, _ = run_cli("squad", "install", "--check", "--format", "json", "--root", str(team))
    assert code == 1
    steps = json.loads(out)["steps"]
    assert [s for s in steps if s["state"] != "installed"] == [
        {
            "path": ".squad/templates/spawn-reference.md",
            "what": "spawn step",
            "state": "undone",
            "note": "`squad upgrade` rewrites .squad/templates/",
        }
    ]
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert states(out)[".squad/templates/spawn-reference.md"] == "restored"
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0


def test_the_files_say_what_agents_do(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    rai = (team / ".squad/agents/Rai/charter.md").read_text(encoding="utf-8")
    no_eol = install_texts.begin_marker(
        "memory", install_texts.agent_memory_body("rai", False), install_texts.NO_EOL
    )
    assert rai.startswith("# Rai\n\n> The team's shield.\n\n" + no_eol + "\n")
    assert "`tiermem hot show rai`" in rai and "`search` with agent `rai`" in rai
    scribe = (team / ".squad/agents/scribe/charter.md").read_text(encoding="utf-8")
    assert "tiermem scribe end-session --all" in scribe and "tiermem scribe run" in scribe
    assert "\n\n" + install_texts.agent_memory_block("scribe", True) in scribe
    spawn = (team / ".squad/templates/spawn-reference.md").read_text(encoding="utf-8")
    assert SPAWN_LINES not in spawn
    assert install_texts.spawn_block("  ") in spawn
    assert "<!-- tiermem:begin spawn squad-state " in spawn
    for rel in installer.SKILLS[:2]:
        assert (team / rel).read_text(encoding="utf-8") == install_texts.SKILL
    mcp = json.loads((team / ".mcp.json").read_text(encoding="utf-8"))
    assert list(mcp["mcpServers"]) == ["tiermem", "squad_state"]
    assert mcp["mcpServers"]["tiermem"] == {
        "command": "tiermem",
        "args": ["serve"],
        "env": {},
        "tools": ["*"],
    }
    vscode = json.loads((team / ".vscode/mcp.json").read_text(encoding="utf-8"))
    assert vscode["servers"]["tiermem"]["args"] == ["serve", "--root", "${workspaceFolder}"]
    assert (team / ".squad/memory/hot").is_dir() and (team / ".squad/memory/config.toml").exists()


def test_without_tiermem_on_path_the_server_runs_as_this_pythons_module(
    team: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    run_cli("squad", "install", "--root", str(team))
    entry = json.loads((team / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["tiermem"]
    assert (entry["command"], entry["args"]) == (sys.executable, ["-m", "tiermem", "serve"])


def test_uninstall_keeps_what_others_added_and_the_teams_memory(
    team: Path, run_cli: RunCli
) -> None:
    run_cli("squad", "install", "--root", str(team))
    mcp = json.loads((team / ".mcp.json").read_text(encoding="utf-8"))
    mcp["mcpServers"]["github"] = {"command": "gh-mcp"}  # added after the install
    (team / ".mcp.json").write_text(squad_json(mcp), encoding="utf-8")
    assert run_cli("hot", "note", "ralph", "Keep this", "--root", str(team))[0] == 0
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert code == 0
    assert states(out)[".squad/memory/"] == "kept"
    assert "holds the team's memory" in out
    left = json.loads((team / ".mcp.json").read_text(encoding="utf-8"))
    assert list(left["mcpServers"]) == ["squad_state", "github"]
    assert "Keep this" in (team / ".squad/memory/hot/ralph.md").read_text(encoding="utf-8")
    assert not (team / installer.MANIFEST).exists()


def test_uninstall_without_the_record_changes_nothing(team: Path, run_cli: RunCli) -> None:
    """Seals anyone can compute: without the record that lists them, tiermem's sections,
    lines, skill and entry are not known to be the install's, and all stay."""
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    (team / installer.MANIFEST).unlink()
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "uninstalled: nothing to change"
    assert "no install record of this repository lists it: left as it is" in out
    assert snapshot(team) == before


def test_an_install_after_the_record_was_lost_lets_uninstall_take_it_out(
    team: Path, run_cli: RunCli
) -> None:
    """The way back when the record is gone: an install records what it finds of its own,
    and the uninstall after it gives back Squad's bytes."""
    (team / ".vscode").rmdir()
    before = snapshot(team)
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    (team / installer.MANIFEST).unlink()
    code, out, _ = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert code == 0 and "added     .squad/memory/tiermem-install.json" in out
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    after = snapshot(team)
    # The store and .squad/skills/ are not known to be the install's: they stay.
    left = {k for k in after if k not in before}
    assert all(k.startswith((".squad/memory/", ".squad/skills")) for k in left)
    assert {k: v for k, v in after.items() if k not in left} == before


def test_a_made_mcp_json_goes_away_again(team: Path, run_cli: RunCli) -> None:
    (team / ".mcp.json").unlink()
    before = snapshot(team)
    run_cli("squad", "install", "--root", str(team))
    assert json.loads((team / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert snapshot(team) == before


def test_a_folder_name_tiermem_cannot_use_is_skipped(team: Path, run_cli: RunCli) -> None:
    odd = team / ".squad/agents/B'Elanna/charter.md"
    odd.parent.mkdir()
    odd.write_text("# B'Elanna\n", encoding="utf-8")
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert code == 0
    assert states(out)[".squad/agents/B'Elanna/charter.md"] == "skipped"
    assert odd.read_text(encoding="utf-8") == "# B'Elanna\n"
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0


def test_a_linked_vscode_folder_is_left_alone(team: Path, run_cli: RunCli, tmp_path: Path) -> None:
    shared = tmp_path / "shared-vscode"
    shared.mkdir()
    (team / ".vscode").rmdir()
    (team / ".vscode").symlink_to(shared, target_is_directory=True)
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert code == 0
    assert states(out)[".vscode/mcp.json"] == "skipped"
    assert ".vscode is a symbolic link" in out
    assert run_cli("squad", "install", "--uninstall", "--root", str(team))[0] == 0
    assert list(shared.iterdir()) == []


def test_memory_sections_round_trip() -> None:
    for charter in ("# Ada\n", "# Ada", "", "# Ada\n\n\n", "# Ada\r\n"):
        with_block = installer.with_memory_block(charter, "ada", False)
        assert installer.with_memory_block(with_block, "ada", False) == with_block
        assert installer.without_memory_block(with_block, "ada", False) == charter


# --- refusals: one line, exit status 2, nothing written -------------------------------------


def outside_file(tmp_path: Path) -> Path:
    target = tmp_path / "outside.md"
    target.write_text("not the repository's\n", encoding="utf-8")
    return target


@pytest.mark.parametrize(
    "link",
    [
        ".squad/agents/ralph/charter.md",
        ".github/skills/tiered-memory/SKILL.md",
        ".mcp.json",
        ".squad/templates/spawn-reference.md",
        ".squad/memory/hot",
    ],
)
def test_a_link_anywhere_it_would_read_or_write_is_refused(
    team: Path, run_cli: RunCli, tmp_path: Path, link: str
) -> None:
    target = outside_file(tmp_path)
    (team / link).unlink(missing_ok=True)
    (team / link).symlink_to(target)
    before = snapshot(team)
    for args in (("--coordinator",), ("--check", "--coordinator")):
        code, out, err = run_cli("squad", "install", *args, "--root", str(team))
        assert one_line_error(code, out, err), err
        assert "symbolic link" in err and link in err
    assert snapshot(team) == before
    assert target.read_text(encoding="utf-8") == "not the repository's\n"


def test_a_linked_agent_folder_or_skills_folder_is_refused(
    team: Path, run_cli: RunCli, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "agent").mkdir(parents=True)
    (elsewhere / "agent" / "charter.md").write_text("# Elsewhere\n", encoding="utf-8")
    (team / ".squad/agents/linked").symlink_to(elsewhere / "agent", target_is_directory=True)
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--root", str(team))
    assert one_line_error(code, out, err)
    assert ".squad/agents/linked" in err
    (team / ".squad/agents/linked").unlink()
    (team / ".squad/skills").symlink_to(elsewhere, target_is_directory=True)
    code, out, err = run_cli("squad", "install", "--root", str(team))
    assert one_line_error(code, out, err)
    assert ".squad/skills" in err
    del before[".squad/agents/linked"]
    assert {k: v for k, v in snapshot(team).items() if k != ".squad/skills"} == before
    assert sorted(p.name for p in elsewhere.iterdir()) == ["agent"]


def test_uninstall_refuses_links_too(team: Path, run_cli: RunCli, tmp_path: Path) -> None:
    run_cli("squad", "install", "--root", str(team))
    charter = team / ".squad/agents/ralph/charter.md"
    target = outside_file(tmp_path)
    target.write_text(charter.read_text(encoding="utf-8"), encoding="utf-8")
    charter.unlink()
    charter.symlink_to(target)
    before = target.read_bytes()
    assert one_line_error(*run_cli("squad", "install", "--uninstall", "--root", str(team)))
    assert target.read_bytes() == before


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"version": 1, "stateBackend": "orphan"}, "state backend 'orphan'"),
        ({"version": 1, "stateBackend": "two-layer"}, "state backend 'two-layer'"),
        ({"version": 1, "stateBackend": "git-notes"}, "state backend 'git-notes'"),
        ({"version": 1, "teamRoot": "../team"}, "teamRoot"),
        ({"version": 1, "stateLocation": "external", "projectKey": "x"}, "stateLocation"),
    ],
)
def test_state_kept_off_the_working_tree_is_refused(
    team: Path, run_cli: RunCli, config: dict[str, object], words: str
) -> None:
    (team / ".squad/config.json").write_text(json.dumps(config), encoding="utf-8")
    before = snapshot(team)
    for args in ((), ("--check",)):
        code, out, err = run_cli("squad", "install", *args, "--root", str(team))
        assert one_line_error(code, out, err)
        assert words in err
    assert snapshot(team) == before


def test_uninstall_works_after_a_move_to_another_backend(team: Path, run_cli: RunCli) -> None:
    before = snapshot(team)
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    config = team / ".squad/config.json"
    config.write_text('{"version": 1, "stateBackend": "orphan"}', encoding="utf-8")
    assert run_cli("squad", "install", "--uninstall", "--root", str(team))[0] == 0
    config.write_bytes(before[".squad/config.json"] or b"")
    assert snapshot(team) == before


@pytest.mark.parametrize("team_root", [".", "./", "", None])
def test_a_team_root_that_is_this_repository_is_fine(
    team: Path, run_cli: RunCli, team_root: str | None
) -> None:
    # `"teamRoot": "."` is what Squad writes for "no separate team root".
    config = {"version": 1, "teamRoot": team_root}
    (team / ".squad/config.json").write_text(json.dumps(config), encoding="utf-8")
    before = snapshot(team)
    for args in (("--coordinator",), ("--check",), ("--uninstall",)):
        code, out, err = run_cli("squad", "install", *args, "--root", str(team))
        assert (code, err) == (0, ""), out
    assert snapshot(team) == before


@pytest.mark.parametrize("backend", ["local", "worktree"])
def test_the_local_backend_by_any_name_is_fine(team: Path, run_cli: RunCli, backend: str) -> None:
    config = {"version": 1, "stateBackend": backend}
    (team / ".squad/config.json").write_text(json.dumps(config), encoding="utf-8")
    assert run_cli("squad", "install", "--root", str(team))[0] == 0


@pytest.mark.parametrize(
    ("rel", "text", "words"),
    [
        (".squad/config.json", "{", ".squad/config.json is not valid JSON"),
        (".squad/agents/ralph/charter.md", "\udcff", "not valid UTF-8"),
        (".squad/templates/spawn-reference.md", "# Spawn\n", "has no `Read agents/{name}"),
    ],
)
def test_bad_files_are_refused_before_anything_is_written(
    team: Path, run_cli: RunCli, rel: str, text: str, words: str
) -> None:
    (team / rel).write_bytes(text.encode("utf-8", "surrogateescape"))
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert one_line_error(code, out, err)
    assert words in err
    assert snapshot(team) == before


@pytest.mark.parametrize(
    "args",
    [
        ("--uninstall", "--coordinator"),
        ("--check", "--uninstall"),
        ("--format", "yaml"),
    ],
)
def test_bad_arguments_are_one_line(team: Path, run_cli: RunCli, args: tuple[str, ...]) -> None:
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", *args, "--root", str(team))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert snapshot(team) == before


def test_a_folder_without_a_squad_team_is_refused(tmp_path: Path, run_cli: RunCli) -> None:
    code, out, err = run_cli("squad", "install", "--root", str(tmp_path))
    assert one_line_error(code, out, err)
    assert "no Squad team" in err
    assert list(tmp_path.iterdir()) == []


# --- Squad's instructions that load whole histories, line by line ---------------------------

COORDINATOR = (
    "---\nname: Squad\n---\n\n- **Inputs:** User request, repository state, `.squad/decisions.md`\n"
    "\n**decisions.md** — Agents do NOT write directly to `decisions.md`. Instead:\n"
    "- All agents READ from `.squad/decisions.md` at spawn time (last-merged snapshot)\r\n"
    "  - All agents READ from `.squad/decisions.md` at spawn time (last-merged snapshot)\n"
    "  0b. PRE-CHECK: Read `decisions.md` and list `decisions/inbox` with state tools.\n"
)
# A charter as Squad wrote them before 0.10 (jjgnet-broadcast's), with no final newline.
OLD_CHARTER = "# Cypher\n\n## How I Work\n\n- Read decisions.md before starting\n- Ship it"


def with_instructions(team: Path) -> Path:
    files = {
        ".github/agents/squad.agent.md": COORDINATOR,
        ".squad/templates/charter.md": "## Collaboration\n\nBefore starting work, read "
        "`.squad/decisions.md` for team decisions that affect me.\n",
        ".squad/agents/cypher/charter.md": OLD_CHARTER,
    }
    for rel, text in files.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_bytes(text.encode("utf-8"))
    return team


def test_each_instruction_is_replaced_in_place_and_given_back_byte_for_byte(
    team: Path, run_cli: RunCli
) -> None:
    with_instructions(team)
    before = snapshot(team)
    code, out, _ = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert code == 0
    assert [ln for ln in out.splitlines() if re.match(r"added +\S+:\d+: ", ln)] == [
        "added     .github/agents/squad.agent.md:5: the coordinator's inputs: decisions.md",
        "added     .github/agents/squad.agent.md:8: agents read decisions.md at spawn time",
        "added     .github/agents/squad.agent.md:9: agents read decisions.md at spawn time",
        "added     .squad/templates/charter.md:3: read decisions.md before starting work",
        "added     .squad/agents/cypher/charter.md:5: read decisions.md before starting",
    ]
    coordinator = (team / ".github/agents/squad.agent.md").read_bytes().decode("utf-8")
    assert "READ from `.squad/decisions.md`" not in coordinator
    # CRLF kept
    assert len(re.findall(r"<!-- tiermem:line spawn-time-read \w{10} -->\r\n", coordinator)) == 1
    assert "\n  - All agents get the decisions" in coordinator  # its indentation kept
    assert "PRE-CHECK: Read `decisions.md`" in coordinator  # Scribe's own step stays
    cypher = (team / ".squad/agents/cypher/charter.md").read_text("utf-8")
    assert "- Read decisions.md before starting" not in cypher
    assert "- Ship it\n\n<!-- tiermem:begin memory no-eol " in cypher
    code, out, _ = run_cli("squad", "install", "--check", "--root", str(team))
    assert code == 0 and "installed .squad/agents/cypher/charter.md:5: " in out
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert "restored  .squad/agents/cypher/charter.md:5: read decisions.md before starting" in out
    assert snapshot(team) == before


def test_check_names_each_instruction_an_upgrade_put_back(team: Path, run_cli: RunCli) -> None:
    with_instructions(team)
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    # `squad upgrade` writes its coordinator and templates again.
    (team / ".github/agents/squad.agent.md").write_text(COORDINATOR, encoding="utf-8")
    code, out, _ = run_cli("squad", "install", "--check", "--format", "json", "--root", str(team))
    assert code == 1
    undone = [s for s in json.loads(out)["steps"] if s["state"] == "undone"]
    assert [(s["path"], s["line"]) for s in undone] == [
        (".github/agents/squad.agent.md", 5),
        (".github/agents/squad.agent.md", 8),
        (".github/agents/squad.agent.md", 9),
    ]
    assert {s["note"] for s in undone} == {"`squad upgrade` rewrites .github/agents/squad.agent.md"}
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert out.count("restored  .github/agents/squad.agent.md:") == 3
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0


def test_without_coordinator_no_instruction_line_changes(team: Path, run_cli: RunCli) -> None:
    with_instructions(team)
    run_cli("squad", "install", "--root", str(team))
    assert (team / ".github/agents/squad.agent.md").read_bytes() == COORDINATOR.encode()
    assert "- Read decisions.md before starting" in (
        team / ".squad/agents/cypher/charter.md"
    ).read_text("utf-8")


def test_a_line_of_tiermem_someone_edited_is_left_as_it_is(team: Path, run_cli: RunCli) -> None:
    with_instructions(team)
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    path = team / ".squad/templates/charter.md"
    installed = path.read_text("utf-8")
    edited = installed.replace("from the memory in my spawn prompt", "from my notes")
    assert edited != installed
    path.write_text(edited, "utf-8")
    code, out, _ = run_cli("squad", "install", "--check", "--root", str(team))
    assert code == 0 and "edited    .squad/templates/charter.md:3: " in out
    assert "(edited by hand, or not tiermem's): left as it is" in out
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert "nothing to change" in out.splitlines()[-1]
    assert path.read_text("utf-8") == edited
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert "kept      .squad/templates/charter.md:3: " in out
    assert path.read_text("utf-8") == edited


def test_a_line_of_an_older_tiermem_is_brought_up_to_date(team: Path, run_cli: RunCli) -> None:
    with_instructions(team)
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    path = team / ".squad/templates/charter.md"
    # A line an earlier tiermem wrote (other words, sealed as it sealed them), and one from
    # before lines were sealed.
    old_words = "Before starting work, I search the decisions that affect me."
    mark = install_texts.line_mark("charter-decisions", old_words + " ")
    path.write_text(f"## Collaboration\n\n{old_words} {mark}\n", "utf-8")
    code, out, _ = run_cli("squad", "install", "--check", "--root", str(team))
    assert code == 1 and "outdated  .squad/templates/charter.md:3: " in out
    run_cli("squad", "install", "--root", str(team))
    assert install_texts.LINE_KEYS["charter-decisions"].marked() in path.read_text("utf-8")
    legacy = install_texts.LINE_KEYS["charter-decisions"].legacy()
    path.write_text(f"## Collaboration\n\n{legacy}\n", "utf-8")
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert path.read_text("utf-8") == (
        "## Collaboration\n\nBefore starting work, read `.squad/decisions.md` for team "
        "decisions that affect me.\n"
    )
