"""`tiermem squad install` on the layouts Squad itself accepts, beyond a fresh `squad init`:
an earlier Squad's coordinator that holds the spawn template, the @copilot member's
instructions, template copies left in `.squad/` and `.template` copies, and Squad's skills
(reported, left as they are). Hand-made teams; tests/test_squad_real.py and
tests/test_squad_earlier.py run the same on teams the real Squad made.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_squad_install import snapshot, team
from tiermem.squad.install import install_texts, installer

__all__ = ["team"]  # the hand-made Squad team, a fixture of test_squad_install

RunCli = Callable[..., tuple[int, str, str]]

# The spawn template of a Squad before 0.10, inside the coordinator's prompt.
EARLIER_COORDINATOR = (
    "---\nname: Squad\n---\n\n- **Inputs:** User request, repository state, `.squad/decisions.md`\n"
    "\n### How to Spawn an Agent\n\n```\nprompt: |\n  You are {Name}, the {Role} on this project.\n"
    "  \n  Read .squad/agents/{name}/history.md (your project knowledge).\n"
    "  Read .squad/decisions.md (team decisions to respect).\n"
    "  If .squad/identity/wisdom.md exists, read it before starting work.\n```\n"
)
COPILOT = (
    "# Copilot Coding Agent — Squad Instructions\n\n## Before Starting Work\n\n"
    "- Follow any project conventions in `.squad/decisions.md`\n- Write tests first\n"
)
CHARTER_TEMPLATE = (
    "## Collaboration\n\nBefore starting work, read `.squad/decisions.md` for team decisions that "
    "affect me.\n"
)
SKILL_THAT_READS = (
    "---\nname: agent-collaboration\n---\n\nThe coordinator's spawn prompt already instructs "
    "agents to read decisions.md and their history.md.\n"
)


def earlier_layout(team: Path) -> Path:
    """A team as an earlier Squad left it: the spawn template in the coordinator, template
    copies in `.squad/` itself, no `.squad/templates/spawn-reference.md`."""
    (team / installer.SPAWN_TEMPLATE).unlink()
    for rel, text in {
        ".github/agents/squad.agent.md": EARLIER_COORDINATOR,
        ".github/copilot-instructions.md": COPILOT,
        ".squad/charter.md": CHARTER_TEMPLATE,
        ".squad/copilot-instructions.md": COPILOT,
        ".squad/config.json": '{"version": 1, "teamRoot": "."}\n',
    }.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_text(text, encoding="utf-8")
    return team


def test_an_earlier_coordinator_gets_the_spawn_step_in_place(team: Path, run_cli: RunCli) -> None:
    earlier_layout(team)
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, ""), out
    coordinator = (team / ".github/agents/squad.agent.md").read_text("utf-8")
    assert install_texts.spawn_block("  ", install_texts.FILE_LINES) in coordinator
    assert "Read .squad/agents/{name}/history.md" not in coordinator
    assert "<!-- tiermem:begin spawn squad-files " in coordinator
    assert "added     .github/copilot-instructions.md:5: @copilot follows the conventions" in out
    assert "added     .squad/charter.md:3: read decisions.md before starting work" in out
    assert "Follow any project conventions in `.squad/decisions.md`" not in (
        team / ".github/copilot-instructions.md"
    ).read_text("utf-8")
    assert "read `.squad/decisions.md` for team" not in (team / ".squad/charter.md").read_text(
        "utf-8"
    )
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    assert run_cli("squad", "install", "--root", str(team))[1].endswith("nothing to change\n")
    code, out, _ = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert f"restored  {installer.COORDINATOR}: spawn step" in out
    assert snapshot(team) == before


def test_no_spawn_template_anywhere_is_refused_naming_squad_upgrade(
    team: Path, run_cli: RunCli
) -> None:
    earlier_layout(team)
    coordinator = team / ".github/agents/squad.agent.md"
    coordinator.write_text(EARLIER_COORDINATOR.replace("  Read .squad/decisions.md", "  Hi"))
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "`squad upgrade`" in err and "rewrites .github/agents/squad.agent.md" in err
    assert snapshot(team) == before
    # Without --coordinator nothing needs the spawn template.
    assert run_cli("squad", "install", "--root", str(team))[0] == 0


def test_template_copies_are_handled_too(team: Path, run_cli: RunCli) -> None:
    copy = team / ".squad/templates/squad.agent.md.template"
    copy.write_text(
        "- **Inputs:** User request, repository state, `.squad/decisions.md`\n", "utf-8"
    )
    before = copy.read_bytes()
    out = run_cli("squad", "install", "--coordinator", "--root", str(team))[1]
    assert "added     .squad/templates/squad.agent.md.template:1: " in out
    assert "<!-- tiermem:line coordinator-inputs " in copy.read_text("utf-8")
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert copy.read_bytes() == before


def test_skills_that_read_the_whole_log_are_listed_with_why(team: Path, run_cli: RunCli) -> None:
    for folder in (".github/skills", ".squad/templates/skills", ".squad/skills"):
        path = team / folder / "agent-collaboration/SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SKILL_THAT_READS, "utf-8")
    before = snapshot(team)
    out = run_cli(
        "squad", "install", "--check", "--coordinator", "--format", "json", "--root", str(team)
    )[1]
    left = {s["path"]: s for s in json.loads(out)["steps"] if s["state"] == "left"}
    assert set(left) == {
        ".github/skills/agent-collaboration/SKILL.md",
        ".squad/templates/skills/agent-collaboration/SKILL.md",
        ".squad/skills/agent-collaboration/SKILL.md",
    }
    assert left[".github/skills/agent-collaboration/SKILL.md"]["line"] == 5
    assert "Squad's wording" in left[".github/skills/agent-collaboration/SKILL.md"]["note"]
    assert "the team's own skill" in left[".squad/skills/agent-collaboration/SKILL.md"]["note"]
    assert snapshot(team) == before
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    for rel in left:
        assert (team / rel).read_text("utf-8") == SKILL_THAT_READS


# --- layouts of long-lived teams: a teamRoot from another machine, Copilot CLI's MCP file,
# --- a line of the team's own -------------------------------------------------------------

COPILOT_MCP = (
    '{\n  "mcpServers": {\n    "EXAMPLE-github": {\n      "command": "npx",\n      "args": [\n'
    '        "-y",\n        "@anthropic/github-mcp-server"\n      ],\n      "env": {\n'
    '        "GITHUB_TOKEN": "${GITHUB_TOKEN}"\n      }\n    }\n  }\n}\n'
)


def test_copilot_clis_mcp_file_gets_the_server_where_the_team_keeps_one(
    team: Path, run_cli: RunCli
) -> None:
    (team / ".copilot").mkdir()
    (team / ".copilot/mcp-config.json").write_text(COPILOT_MCP, encoding="utf-8")
    before = snapshot(team)
    code, out, _ = run_cli("squad", "install", "--root", str(team))
    assert code == 0 and "added     .copilot/mcp-config.json: tiermem MCP server" in out
    servers = json.loads((team / ".copilot/mcp-config.json").read_text("utf-8"))["mcpServers"]
    assert sorted(servers) == ["EXAMPLE-github", "tiermem"]  # spliced in, the example kept
    assert servers["tiermem"]["type"] == "local" and servers["tiermem"]["args"] == ["serve"]
    assert servers["tiermem"]["tools"] == ["*"]
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    assert run_cli("squad", "install", "--uninstall", "--root", str(team))[0] == 0
    assert snapshot(team) == before


def test_no_copilot_folder_gets_none(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--root", str(team))
    assert not (team / ".copilot").exists()


def test_a_team_root_from_another_machine_installs_and_comes_back(
    team: Path, run_cli: RunCli
) -> None:
    config = {"version": 1, "teamRoot": f"C:\\\\src\\\\{team.name}"}
    (team / ".squad/config.json").write_text(json.dumps(config) + "\n", encoding="utf-8")
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert code == 0, err
    assert any(ln.startswith("left") and "teamRoot" in ln for ln in out.splitlines())
    assert run_cli("squad", "install", "--uninstall", "--root", str(team))[0] == 0
    assert snapshot(team) == before


OWN_LINE = "- Always read `.squad/decisions.md` before you start on a task."


def test_check_names_a_line_of_the_teams_own_that_reads_the_whole_log_and_leaves_it(
    team: Path, run_cli: RunCli
) -> None:
    copilot = team / ".github/copilot-instructions.md"
    copilot.write_text(COPILOT + OWN_LINE + "\n", encoding="utf-8")
    before = snapshot(team)
    code, out, _ = run_cli("squad", "install", "--coordinator", "--check", "--root", str(team))
    assert code == 1  # the rest is not installed yet
    [named] = [ln for ln in out.splitlines() if "the team's own" in ln]
    assert named.startswith("left      .github/copilot-instructions.md:7: ")
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert OWN_LINE in copilot.read_text(encoding="utf-8").splitlines()
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert snapshot(team) == before
