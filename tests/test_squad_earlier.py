"""`tiermem squad install` on a team an earlier Squad made, and after the real `squad upgrade`.

Long-lived teams started before Squad 0.10 keep the spawn template inside the coordinator's
prompt (`.github/agents/squad.agent.md`), copies of Squad's templates in `.squad/` itself,
and no `.squad/templates/spawn-reference.md`. The npm registry serves squad-cli 0.8.18, whose
CLI does not start on Node 22 but whose package holds those templates and the manifest of
where its `squad upgrade` writes them: `.ci/install-squad` unpacks it beside Node 22 and
squad-cli 0.10.0, and the team here is built from it as that manifest says. Without it these
tests skip, saying why, except under CI, where they fail.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from test_squad_real import (
    PREFIX,
    env,
    git_status,
    installed_or_left,
    run,
    snapshot,
    squad,
    tiermem,
    whole_reads,
)

__all__ = ["env"]  # the real Squad's environment, a fixture of test_squad_real

EARLIER = PREFIX / "squad-cli-0.8.18"
pytestmark = pytest.mark.ci_installs("Node 22, squad-cli 0.10.0 and squad-cli 0.8.18's templates")
JSONC = (
    '{\n  // VS Code\'s own servers for this workspace\n  "servers": {\n'
    '    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}, // hosted\n'
    "  },\n}\n"
)
TEAM = (
    "# Team\n\n## Members\n\n| Name | Role | Charter | Status |\n|---|---|---|---|\n"
    "| Keaton | Lead | `.squad/agents/keaton/charter.md` | ✅ Active |\n"
    "| Scribe | Session Logger | `.squad/agents/scribe/charter.md` | 📋 Silent |\n"
    "| @copilot | Coding Agent | — | 🤖 Coding Agent |\n"
)


def _manifest() -> list[tuple[str, str]]:
    """(template, where its `squad upgrade` writes it, from `.squad/`), as 0.8.18 lists them."""
    source = (EARLIER / "dist/cli/core/templates.js").read_text("utf-8")
    return re.findall(r"source: '([^']+)',\s*destination: '([^']+)'", source)


def _stamped(text: str) -> str:
    """The coordinator's prompt as 0.8.18's upgrade stamps its version into it."""
    text = re.sub(r"<!-- version: [^>]+ -->", "<!-- version: 0.8.18 -->", text, count=1)
    return re.sub(
        r"- \*\*Version:\*\* [0-9.]+(?:-[a-z]+(?:\.\d+)?)?", "- **Version:** 0.8.18", text
    )


def earlier_team(tmp_path: Path, env: dict[str, str]) -> Path:
    """A committed team as squad-cli 0.8.18 lays it out: its coordinator, its templates where
    its manifest puts them, the @copilot member's instructions, a lead and Scribe."""
    templates = EARLIER / "templates"
    if not (EARLIER / "package.json").exists():
        pytest.skip(f"{EARLIER} is missing: run .ci/install-squad (or set TIERMEM_SQUAD_PREFIX)")
    repo = tmp_path / "team"
    squad_dir = repo / ".squad"
    for source, destination in _manifest():
        target = (squad_dir / destination).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(templates / source, target)
    coordinator = repo / ".github/agents/squad.agent.md"
    coordinator.parent.mkdir(parents=True, exist_ok=True)
    coordinator.write_text(_stamped((templates / "squad.agent.md").read_text("utf-8")), "utf-8")
    shutil.copyfile(templates / "copilot-instructions.md", repo / ".github/copilot-instructions.md")
    charter = (templates / "charter.md").read_text("utf-8")
    agents = {
        "keaton": charter.replace("{Name}", "Keaton").replace("{Role}", "Lead"),
        "scribe": (templates / "scribe-charter.md").read_text("utf-8"),
    }
    for name, text in agents.items():
        (squad_dir / "agents" / name).mkdir(parents=True)
        (squad_dir / "agents" / name / "charter.md").write_text(text, "utf-8")
        shutil.copyfile(templates / "history.md", squad_dir / "agents" / name / "history.md")
    (squad_dir / "team.md").write_text(TEAM, "utf-8")
    (squad_dir / "decisions.md").write_text("# Decisions\n", "utf-8")
    (squad_dir / "decisions/inbox").mkdir(parents=True)
    (squad_dir / "decisions/inbox/.gitkeep").write_text("", "utf-8")
    (squad_dir / "config.json").write_text('{"version":1,"teamRoot":"."}\n', "utf-8")
    (repo / ".vscode").mkdir()
    (repo / ".vscode/mcp.json").write_text(JSONC, "utf-8")
    run(["git", "init", "-q"], repo, env)
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "an earlier Squad's team"], repo, env)
    return repo


def check_steps(repo: Path, env: dict[str, str], expect: int) -> dict[str, dict[str, str]]:
    out = tiermem(repo, env, "squad", "install", "--check", "--format", "json", expect=expect)
    return {f"{s['path']}:{s.get('line', '')}": s for s in json.loads(out)["steps"]}


def test_install_on_an_earlier_squads_team_and_back(tmp_path: Path, env: dict[str, str]) -> None:
    repo = earlier_team(tmp_path, env)
    before = whole_reads(repo)
    # The coordinator's 8 (its two spawn lines among them), the @copilot instructions and its
    # copy in .squad/, the charter template's copy in .squad/, and Keaton's charter.
    assert len(before) == 12, before
    out = tiermem(repo, env, "squad", "install", "--coordinator")
    assert "added     .github/agents/squad.agent.md: spawn step" in out
    assert whole_reads(repo) == []
    assert installed_or_left(check_steps(repo, env, 0))
    vscode = (repo / ".vscode/mcp.json").read_text("utf-8")
    assert "// VS Code's own servers" in vscode and "// hosted" in vscode
    assert '"tiermem": {' in vscode
    tiermem(repo, env, "squad", "install", "--uninstall")
    assert git_status(repo, env) == ""
    assert whole_reads(repo) == before


def test_squad_upgrade_after_the_install(tmp_path: Path, env: dict[str, str]) -> None:
    """The real `squad upgrade` (0.10.0) moves the spawn template to `spawn-reference.md` and
    writes the coordinator again: --check names what it undid, an install puts it back, and
    the uninstall then leaves the team as the upgrade made it."""
    repo = earlier_team(tmp_path, env)
    tiermem(repo, env, "squad", "install", "--coordinator")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "tiermem"], repo, env)
    squad(repo, env, "upgrade")
    upgraded = snapshot(repo)
    steps = check_steps(repo, env, 1)
    assert steps[".squad/templates/spawn-reference.md:"]["state"] == "missing"
    undone = [s for s in steps.values() if s["state"] == "undone"]
    assert undone and all("`squad upgrade` rewrites" in s["note"] for s in undone)
    tiermem(repo, env, "squad", "install")
    assert installed_or_left(check_steps(repo, env, 0))
    assert whole_reads(repo) == []
    tiermem(repo, env, "squad", "install", "--uninstall")
    # What the upgrade wrote stays as it wrote it; what it left alone is back as the earlier
    # Squad had it; nothing of tiermem's is left.
    for rel, data in snapshot(repo).items():
        if data is None or rel == ".mcp.json":
            continue
        assert b"tiermem" not in data, rel
        was = upgraded.get(rel)
        if was is not None and b"tiermem" not in was:
            assert data == was, rel
        else:
            assert data == run(["git", "show", f"HEAD~1:{rel}"], repo, env).encode(), rel
    mcp = json.loads((repo / ".mcp.json").read_text("utf-8"))
    assert list(mcp["mcpServers"]) == ["squad_state"]
