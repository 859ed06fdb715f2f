"""No credential of a user's file reaches any other file `tiermem squad install` writes: not
the install record (committed with the team), not a skill, a charter or a template.

A team keeps `.mcp.json` or `.vscode/mcp.json` out of git because an `env` holds a token; the
install reads those files, and every other file it reads may hold one too, ignored by git or
not. Each case puts a credential of a shape the redaction suite knows into every file the
install reads, a different one in each, and counts the credentials found afterwards in a file
that did not hold them before (the target is 0).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from redact_samples import credential_samples
from test_squad_install import make_team, snapshot, team
from tiermem.squad.install import installer

__all__ = ["team"]  # the hand-made Squad team, a fixture of test_squad_install

RunCli = Callable[..., tuple[int, str, str]]
GIT = shutil.which("git") or "git"  # found now: the `team` fixture narrows PATH
# Files of the hand-made team the install reads (with --coordinator), besides the MCP files.
READ = (
    ".squad/config.json",
    ".squad/team.md",
    ".squad/decisions.md",
    ".squad/agents/scribe/charter.md",
    ".squad/agents/scribe/history.md",
    ".squad/agents/ralph/charter.md",
    ".squad/agents/Rai/charter.md",
    ".squad/templates/spawn-reference.md",
    ".squad/templates/charter.md",
    ".github/agents/squad.agent.md",
    ".github/copilot-instructions.md",
    ".github/skills/squad/SKILL.md",
)
SKILL_AND_COPY = (installer.SKILLS[1], installer.SQUAD_SKILL_COPY)


def secrets() -> list[str]:
    """Credentials of distinct shapes, each one a JSON string needs no escape for."""
    found: dict[str, str] = {}
    for sample in credential_samples():
        if re.fullmatch(r"[A-Za-z0-9_\-.+/=:@]{16,200}", sample.secret):
            found.setdefault(sample.family, sample.secret)
    return list(found.values())


SECRETS = secrets()


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _mcp_with(key: str, token: str) -> str:
    servers = {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": token}}}
    return json.dumps({key: servers}, indent=2) + "\n"


def test_an_ignored_mcp_files_token_never_reaches_what_git_stages(
    team: Path, run_cli: RunCli
) -> None:
    mcp, vscode = SECRETS[0], SECRETS[1]
    (team / ".mcp.json").write_text(_mcp_with("mcpServers", mcp), "utf-8")
    (team / ".vscode/mcp.json").write_text(
        "// the team's own, kept out of git\n" + _mcp_with("servers", vscode), "utf-8"
    )
    (team / ".gitignore").write_text(".mcp.json\n.vscode/mcp.json\n", "utf-8")
    git(team, "init", "-q")
    git(team, "add", "-A")
    git(team, "commit", "-qm", "a Squad team")
    code, out, err = run_cli("squad", "install", "--coordinator", "--root", str(team))
    assert (code, err) == (0, "")
    assert "added     .mcp.json" in out and "added     .vscode/mcp.json" in out
    git(team, "add", "-A")
    staged = git(team, "diff", "--cached", "--name-only").split()
    assert installer.MANIFEST in staged
    shown = git(team, "diff", "--cached")
    assert mcp not in shown and vscode not in shown
    record = (team / installer.MANIFEST).read_text("utf-8")
    assert mcp not in record and vscode not in record
    code, _, err = run_cli("squad", "install", "--uninstall", "--root", str(team))
    assert (code, err) == (0, "")
    git(team, "reset", "-q")
    assert git(team, "status", "--porcelain") == ""
    assert (team / ".mcp.json").read_text("utf-8") == _mcp_with("mcpServers", mcp)


def _plant(root: Path) -> dict[str, str]:
    """A credential in every file the install reads; which file holds which."""
    planted: dict[str, str] = {}
    tokens = iter(SECRETS)
    for rel in READ:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text("utf-8") if path.exists() else ""
        token = next(tokens)
        if rel.endswith(".json"):
            data = json.loads(text or "{}")
            data["apiToken"] = token
            path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
        else:
            path.write_text(text + f"\napi_key = {token}\n", "utf-8")
        planted[rel] = token
    for rel, key in ((installer.MCP_JSON, "mcpServers"), (installer.VSCODE_MCP, "servers")):
        data = json.loads((root / rel).read_text("utf-8")) if (root / rel).exists() else {}
        planted[rel] = next(tokens)
        data.setdefault(key, {})["gh"] = {"command": "gh", "env": {"GH_TOKEN": planted[rel]}}
        (root / rel).write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    # Squad's skill as its templates keep it, both copies holding the same credential.
    skill = (root / SKILL_AND_COPY[1]).read_text("utf-8") + f"\ntoken: {next(tokens)}\n"
    for rel in SKILL_AND_COPY:
        (root / rel).write_text(skill, "utf-8")
        planted[rel] = skill.rsplit("token: ", 1)[1].strip()
    return planted


def moved(root: Path, planted: dict[str, str]) -> list[str]:
    """Each credential found in a file that was not planted with it."""
    found = []
    for rel, data in snapshot(root).items():
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        tokens = set(planted.values()) - {planted.get(rel)}
        found += [f"{token[:8]}... in {rel}" for token in sorted(tokens) if token in text]
    return found


@pytest.mark.parametrize("coordinator", [True, False])
def test_no_credential_moves_into_any_file_tiermem_writes(
    tmp_path: Path, team: Path, run_cli: RunCli, coordinator: bool
) -> None:
    root = make_team(tmp_path / "planted", vscode=True)
    (root / ".github/agents").mkdir(parents=True)
    (root / ".github/agents/squad.agent.md").write_text(
        "# Squad\n\n- **Inputs:** User request, repository state, `.squad/decisions.md`\n", "utf-8"
    )
    (root / ".github/copilot-instructions.md").write_text(
        "- Follow any project conventions in `.squad/decisions.md`\n", "utf-8"
    )
    planted = _plant(root)
    assert len(set(planted.values())) == len(planted) - 1  # the skill and its copy share one
    flags = ("--coordinator",) if coordinator else ()
    code, out, err = run_cli("squad", "install", *flags, "--root", str(root))
    assert (code, err) == (0, ""), out
    assert "added     .github/skills/tiered-memory/SKILL.md" in out
    assert moved(root, planted) == []
    code, out, err = run_cli("squad", "install", "--uninstall", "--root", str(root))
    assert (code, err) == (0, ""), out
    assert moved(root, planted) == []
    assert "token: " in (root / installer.SKILLS[1]).read_text("utf-8")  # Squad's skill is back


def test_the_record_keeps_no_text_the_redaction_rules_would_change(team: Path) -> None:
    from tiermem.squad.install.install_record import Record

    record = Record(installed=[".mcp.json"], originals={installer.SKILLS[0]: f"k = {SECRETS[0]}"})
    rendered = record.render().decode("utf-8")
    assert SECRETS[0] not in rendered
    assert json.loads(rendered)["installed"] == [".mcp.json"]
