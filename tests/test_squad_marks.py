"""`tiermem squad install` changes only what it wrote: look-alike marks, edited sections and
lines, an uninstall with no install, CRLF files and JSONC editor files.

Each case writes a user's text into a Squad team, runs the install steps, and counts the
user's lines that are gone or changed (the target is 0): a user line is kept when the file
still holds it, in order, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from test_squad_install import SPAWN_LINES, snapshot, states, team
from tiermem.squad.install import install_texts, installer

__all__ = ["team"]  # the hand-made Squad team, a fixture of test_squad_install

RunCli = Callable[..., tuple[int, str, str]]
CHARTER = ".squad/agents/ralph/charter.md"


def lines_lost(expected: str, now: str) -> int:
    """How many of the user's lines `now` no longer holds, in their order."""
    lost, at = 0, 0
    have = now.splitlines(keepends=True)
    for line in expected.splitlines(keepends=True):
        try:
            at = have.index(line, at) + 1
        except ValueError:
            lost += 1
    return lost


def install_steps(run_cli: RunCli, team: Path, *actions: str) -> dict[str, str]:
    """Run each action (`install`, `check`, `uninstall`); the last one's states by path."""
    found: dict[str, str] = {}
    for action in actions:
        flag = {"install": ("--coordinator",), "check": ("--check",)}.get(action, ("--uninstall",))
        code, out, err = run_cli("squad", "install", *flag, "--root", str(team))
        assert code in (0, 1) and err == "", err
        found = states(out)
    return found


LOOK_ALIKE_BLOCK = (
    "\n<!-- tiermem:begin memory -->\nMy own notes about memory, kept between these marks.\n"
    "<!-- tiermem:end memory -->\n"
)
LOOK_ALIKE_LINE = "- Read my notes first <!-- tiermem:line charter-decisions -->\n"
HALF_BLOCK = "\n<!-- tiermem:begin memory -->\nA marker quoted in the docs, with no end.\n"

USER_TEXTS = {
    "a look-alike memory section": LOOK_ALIKE_BLOCK,
    "a user's line with a tiermem mark": LOOK_ALIKE_LINE,
    "a begin marker without its end": HALF_BLOCK,
    "a look-alike sealed with a made-up seal": LOOK_ALIKE_BLOCK.replace(
        "memory -->", "memory 0123456789 -->"
    ),
}


@pytest.mark.parametrize("case", list(USER_TEXTS))
@pytest.mark.parametrize(
    "actions",
    [("uninstall",), ("install",), ("install", "uninstall"), ("install", "install", "uninstall")],
)
def test_a_users_text_with_tiermem_marks_is_never_changed(
    team: Path, run_cli: RunCli, case: str, actions: tuple[str, ...]
) -> None:
    charter = team / CHARTER
    users = charter.read_text("utf-8") + USER_TEXTS[case]
    charter.write_text(users, "utf-8")
    install_steps(run_cli, team, *actions)
    now = charter.read_text("utf-8")
    assert lines_lost(users, now) == 0
    if actions[-1] == "uninstall":
        assert now == users


def test_a_look_alike_section_is_reported_and_left_where_it_is(team: Path, run_cli: RunCli) -> None:
    charter = team / CHARTER
    users = charter.read_text("utf-8") + LOOK_ALIKE_BLOCK
    charter.write_text(users, "utf-8")
    found = install_steps(run_cli, team, "check")
    assert found[CHARTER] == "edited"
    out = run_cli("squad", "install", "--check", "--root", str(team))[1]
    assert "not as tiermem wrote it (edited by hand, or not tiermem's): left as it is" in out
    assert install_steps(run_cli, team, "install")[CHARTER] == "edited"
    assert charter.read_text("utf-8") == users


def test_an_edited_memory_section_is_kept_with_a_note(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--root", str(team))
    charter = team / CHARTER
    mine = "- Also: ask Rai before touching the release scripts.\n"
    edited = charter.read_text("utf-8").replace(
        install_texts.MEMORY_END, mine + install_texts.MEMORY_END
    )
    charter.write_text(edited, "utf-8")
    assert install_steps(run_cli, team, "check")[CHARTER] == "edited"
    assert install_steps(run_cli, team, "install")[CHARTER] == "edited"
    found = install_steps(run_cli, team, "uninstall")
    assert found[CHARTER] == "kept"
    assert charter.read_text("utf-8") == edited
    # The other charters' sections, which nobody edited, are gone.
    assert "tiermem" not in (team / ".squad/agents/scribe/charter.md").read_text("utf-8")


def test_lines_added_inside_the_spawn_step_are_kept(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--coordinator", "--root", str(team))
    template = team / installer.SPAWN_TEMPLATE
    mine = "  Also read .squad/identity/now.md.\n"
    edited = template.read_text("utf-8").replace(
        "  " + install_texts.SPAWN_END, mine + "  " + install_texts.SPAWN_END
    )
    template.write_text(edited, "utf-8")
    assert install_steps(run_cli, team, "check")[installer.SPAWN_TEMPLATE] == "edited"
    assert install_steps(run_cli, team, "uninstall")[installer.SPAWN_TEMPLATE] == "kept"
    assert template.read_text("utf-8") == edited


def test_an_older_unsealed_section_that_is_tiermems_is_refreshed(
    team: Path, run_cli: RunCli
) -> None:
    """A section written before sections were sealed is tiermem's when its text is exactly
    what tiermem writes: an install seals it, an uninstall takes it out."""
    charter = team / CHARTER
    before = charter.read_text("utf-8")
    body = install_texts.agent_memory_body("ralph", False)
    old = f"\n<!-- tiermem:begin memory -->\n{body}{install_texts.MEMORY_END}\n"
    charter.write_text(before + old, "utf-8")
    assert install_steps(run_cli, team, "check")[CHARTER] == "outdated"
    install_steps(run_cli, team, "install")
    assert charter.read_text("utf-8") == before + "\n" + install_texts.agent_memory_block(
        "ralph", False
    )
    charter.write_text(before + old, "utf-8")
    install_steps(run_cli, team, "uninstall")
    assert charter.read_text("utf-8") == before


def test_a_tiermem_entry_the_team_wrote_is_left_alone(team: Path, run_cli: RunCli) -> None:
    mcp = json.loads((team / ".mcp.json").read_text("utf-8"))
    mcp["mcpServers"]["tiermem"] = {"command": "/opt/tm/bin/tiermem", "args": ["serve", "-v"]}
    (team / ".mcp.json").write_text(json.dumps(mcp, indent=2) + "\n", "utf-8")
    before = (team / ".mcp.json").read_bytes()
    for actions in (("uninstall",), ("install",), ("uninstall",)):
        found = install_steps(run_cli, team, *actions)
        assert found[".mcp.json"] in ("edited", "kept")
        assert (team / ".mcp.json").read_bytes() == before


def test_an_edited_skill_is_kept(team: Path, run_cli: RunCli) -> None:
    run_cli("squad", "install", "--root", str(team))
    skill = team / installer.SKILLS[1]
    edited = skill.read_text("utf-8") + "\n## Our own rule\n\nSearch before asking.\n"
    skill.write_text(edited, "utf-8")
    assert install_steps(run_cli, team, "check")[installer.SKILLS[1]] == "edited"
    assert install_steps(run_cli, team, "install")[installer.SKILLS[1]] == "edited"
    assert install_steps(run_cli, team, "uninstall")[installer.SKILLS[1]] == "kept"
    assert skill.read_text("utf-8") == edited


# --- a Windows checkout: CRLF ---------------------------------------------------------------


def test_crlf_templates_and_charters_install_and_come_back(team: Path, run_cli: RunCli) -> None:
    for rel in (installer.SPAWN_TEMPLATE, CHARTER, ".squad/agents/scribe/charter.md"):
        path = team / rel
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    (team / CHARTER).write_bytes(
        (team / CHARTER).read_bytes() + b"- Read decisions.md before starting\r\n"
    )
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, ""), out
    template = (team / installer.SPAWN_TEMPLATE).read_bytes()
    assert SPAWN_LINES.encode() not in template.replace(b"\r\n", b"\n")
    assert install_texts.spawn_block("  ").replace("\n", "\r\n").encode() in template
    for rel in (installer.SPAWN_TEMPLATE, CHARTER):
        data = (team / rel).read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n")  # every line still ends in CRLF
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert snapshot(team) == before


# --- editor files with comments (JSONC) -----------------------------------------------------

VSCODE_JSONC = """\
{
  // Servers for this workspace (VS Code writes JSONC).
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/", // the hosted one
    },
  },
  /* inputs come later */
}
"""


def test_a_jsonc_editor_file_keeps_its_comments(team: Path, run_cli: RunCli) -> None:
    path = team / ".vscode/mcp.json"
    path.write_text(VSCODE_JSONC, "utf-8")
    before = snapshot(team)
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, "")
    assert states(out)[".vscode/mcp.json"] == "added"
    text = path.read_text("utf-8")
    for comment in ("// Servers for this workspace", "// the hosted one", "/* inputs come"):
        assert comment in text
    assert re.search(r'"tiermem": \{\n +"type": "stdio"', text)
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    assert run_cli("squad", "install", "--root", str(team))[1].endswith("nothing to change\n")
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert snapshot(team) == before


def test_without_the_record_the_entry_stays(team: Path, run_cli: RunCli) -> None:
    path = team / ".vscode/mcp.json"
    path.write_text(VSCODE_JSONC, "utf-8")
    run_cli("squad", "install", "--root", str(team))
    installed = path.read_text("utf-8")
    (team / installer.MANIFEST).unlink()
    found = install_steps(run_cli, team, "uninstall")
    assert found[".vscode/mcp.json"] == "kept"
    assert path.read_text("utf-8") == installed


@pytest.mark.parametrize(
    ("rel", "text", "words"),
    [
        (".mcp.json", '{"mcpServers": {', "not JSON"),
        (".mcp.json", '["not", "an object"]', 'not a JSON object with a "mcpServers" object'),
        (".vscode/mcp.json", '{"servers": []}', 'not a JSON object with a "servers" object'),
    ],
)
def test_an_mcp_file_it_cannot_read_is_left_alone_and_the_rest_installs(
    team: Path, run_cli: RunCli, rel: str, text: str, words: str
) -> None:
    (team / rel).write_text(text, "utf-8")
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, "")
    assert states(out)[rel] == "skipped" and words in out and "docs/mcp.md" in out
    assert (team / rel).read_text("utf-8") == text
    assert states(out)[installer.SPAWN_TEMPLATE] == "added"
    assert run_cli("squad", "install", "--check", "--root", str(team))[0] == 0
    run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert (team / rel).read_text("utf-8") == text


# --- seals anyone can compute: only what the install record lists is tiermem's ------------------


def _sealed_everywhere(team: Path) -> None:
    """Text in every place the install writes that carries tiermem's seal as tiermem computes
    it, written by hand: a memory section, a replaced line, a spawn step, the skill and an
    MCP entry as the install writes them."""
    charter = team / CHARTER
    line = install_texts.LINE_KEYS["charter-short"].marked()
    charter.write_text(
        charter.read_text("utf-8")
        + line
        + "\n\n"
        + install_texts.agent_memory_block("ralph", False),
        "utf-8",
    )
    template = team / installer.SPAWN_TEMPLATE
    template.write_text(
        template.read_text("utf-8").replace(SPAWN_LINES, install_texts.spawn_block("  ")), "utf-8"
    )
    (team / installer.SKILLS[1]).write_text(install_texts.SKILL, "utf-8")
    mcp = json.loads((team / ".mcp.json").read_text("utf-8"))
    mcp["mcpServers"]["tiermem"] = {
        "command": "tiermem",
        "args": ["serve"],
        "env": {},
        "tools": ["*"],
    }
    (team / ".mcp.json").write_text(json.dumps(mcp, indent=2) + "\n", "utf-8")


def test_an_uninstall_with_no_install_ever_made_deletes_nothing(
    team: Path, run_cli: RunCli
) -> None:
    _sealed_everywhere(team)
    before = snapshot(team)
    found = install_steps(run_cli, team, "uninstall")
    assert {found[rel] for rel in (CHARTER, installer.SPAWN_TEMPLATE, installer.SKILLS[1])} == {
        "kept"
    }
    assert found[".mcp.json"] == "kept"
    assert snapshot(team) == before


def test_a_sealed_section_in_a_charter_the_record_does_not_list_stays(
    team: Path, run_cli: RunCli
) -> None:
    """An agent hired after the install, whose charter someone copied with tiermem's section
    in it: the record lists the charters the install wrote, not this one."""
    install_steps(run_cli, team, "install")
    hired = team / ".squad/agents/nova/charter.md"
    hired.parent.mkdir()
    text = "# Nova\n\n" + install_texts.agent_memory_block("nova", False)
    hired.write_text(text, "utf-8")
    found = install_steps(run_cli, team, "uninstall")
    assert found[".squad/agents/nova/charter.md"] == "kept"
    assert found[CHARTER] == "removed"
    assert hired.read_text("utf-8") == text
