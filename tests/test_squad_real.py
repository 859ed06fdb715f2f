"""`tiermem squad install` against the real Squad: squad-cli 0.10.0 and squad-sdk 0.13.1 on Node 22.

`.ci/install-squad` puts Node 22 and those packages in `.ci-node/` (or TIERMEM_SQUAD_PREFIX);
without them these tests skip, saying why, except under CI, where they fail. No model is
involved: every Squad command used here (init, doctor, nap, upgrade, memory write) works on
files alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from tiermem.memory import Memory
from tiermem.squad.install import install_texts, installer
from tiermem.storage import store

REPO = Path(__file__).resolve().parents[1]
PREFIX = Path(os.environ.get("TIERMEM_SQUAD_PREFIX") or REPO / ".ci-node")
BIN = PREFIX / "node_modules" / ".bin"
PACKAGES = PREFIX / "node_modules" / "@bradygaster"
VERSIONS = {"node": "v22.", "squad-cli": "0.10.0", "squad-sdk": "0.13.1"}
TOOLS = {
    "agents",
    "hot_show",
    "hot_set",
    "hot_add",
    "hot_unblock",
    "search",
    "read_entry",
    "read_tier",
    "wiki_list",
    "wiki_read",
    "wiki_write",
    "spawn",
    "end_session",
    "forget",
}
# CI installs them (.ci/install-squad): there, a skip fails the run (tests/ci_skips.py).
pytestmark = pytest.mark.ci_installs("Node 22 and squad-cli 0.10.0")
DECISION = {
    "title": "Use Postgres for the event store",
    "author": "flight",
    "content": "We use Postgres 16 for the event store. Why: JSONB and logical replication.",
}


def _missing() -> str:
    """Why the real Squad cannot run here ('' when it can)."""
    for tool in ("node", "squad"):
        if not (BIN / tool).exists():
            return f"{BIN / tool} is missing: run .ci/install-squad (or set TIERMEM_SQUAD_PREFIX)"
    return ""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment Squad and tiermem run in: Node 22 and this Python's scripts first."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("home")
    scripts = Path(sys.executable).parent
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TIERMEM_")}
    environment.update(
        PATH=os.pathsep.join([str(BIN), str(scripts), os.environ.get("PATH", "")]),
        HOME=str(home),
        NO_COLOR="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    found = {
        "node": run(["node", "--version"], home, environment).strip(),
        "squad-cli": _package_version("squad-cli"),
        "squad-sdk": _package_version("squad-sdk"),
    }
    assert run(["squad", "--version"], home, environment).strip() == VERSIONS["squad-cli"]
    assert all(found[k].startswith(v) for k, v in VERSIONS.items()), found
    return environment


def _package_version(name: str) -> str:
    data = json.loads((PACKAGES / name / "package.json").read_text(encoding="utf-8"))
    return str(data["version"])


def run(args: list[str], cwd: Path, env: dict[str, str], expect: int = 0) -> str:
    """Run a command; return its stdout, failing with its output on another exit status."""
    command = [shutil.which(args[0], path=env["PATH"]) or args[0], *args[1:]]
    done = subprocess.run(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == expect, f"{args}: exit {done.returncode}\n{out}\n{err}"
    return out


def squad(repo: Path, env: dict[str, str], *args: str) -> str:
    return run(["squad", *args], repo, env)


def tiermem(repo: Path, env: dict[str, str], *args: str, expect: int = 0) -> str:
    return run([sys.executable, "-m", "tiermem", *args], repo, env, expect)


def squad_team(tmp_path: Path, env: dict[str, str], *init: str) -> Path:
    """A git repository where `squad init` has just run."""
    repo = tmp_path / "team"
    repo.mkdir(parents=True)
    run(["git", "init", "-q"], repo, env)
    run(["git", "commit", "-q", "--allow-empty", "-m", "start"], repo, env)
    squad(repo, env, "init", *init)
    return repo


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) outside .git, links not followed."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (Path(folder) == root and d == ".git")]
        for name in dirs:
            found[Path(folder, name).relative_to(root).as_posix()] = None
        for name in files:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def doctor_summary(repo: Path, env: dict[str, str]) -> str:
    """`squad doctor`'s Summary line (the command exits 0 whatever it finds)."""
    lines = [ln for ln in squad(repo, env, "doctor").splitlines() if ln.startswith("Summary:")]
    assert len(lines) == 1
    return lines[0]


def check(repo: Path, env: dict[str, str], expect: int) -> dict[str, dict[str, str]]:
    return {step["path"]: step for step in check_steps(repo, env, expect)}


def check_steps(repo: Path, env: dict[str, str], expect: int) -> list[dict[str, Any]]:
    out = tiermem(repo, env, "squad", "install", "--check", "--format", "json", expect=expect)
    return list(json.loads(out)["steps"])


def installed_or_left(steps: dict[str, dict[str, str]]) -> bool:
    """Every step of a check is installed, but for skills left on purpose, each said why."""
    left = [s for s in steps.values() if s["state"] == "left"]
    assert all(s["path"].endswith("/SKILL.md") and "left as it is" in s["note"] for s in left)
    return {s["state"] for s in steps.values()} - {"left"} == {"installed"}


def replaced_before(repo: Path) -> set[tuple[str, str]]:
    """(file, instruction) of each line the install record says it replaced, in the files
    `squad upgrade` rewrites."""
    record = json.loads((repo / installer.MANIFEST).read_text("utf-8"))
    found = {tuple(item.split("#", 1)) for item in record["installed"] if "#" in item}
    return {
        (rel, key)
        for rel, key in found
        if rel.startswith(".squad/templates/") or rel == ".github/agents/squad.agent.md"
    }


# --- what tells an agent to read its whole history or the whole decision log ---------------

# A line that names an agent's history or the decision log, and reading, loading or holding it
# (or taking it as an input).
_NAMES = re.compile(
    r"(?i)history\.md|decisions\.md|history read|decisions read|history/decisions"
    r"|team decisions|history and decisions"
)
_READS = re.compile(r"(?i)\b(read|reads|load|loads|inline|in context|at spawn|inputs|follow any)\b")
# Lines of Squad 0.10 that name the files and reading but send no agent to read them whole
# at or before a spawn, and why each is left as it is.
_NOT_INSTRUCTIONS = {
    "MUST NOT touch `.squad/decisions.md`": "a prohibition on writing them by hand",
    "PRE-CHECK: Read `decisions.md`": "Scribe's own maintenance (the archive gate)",
    "Re-read `decisions.md`, `log/": "Scribe's own maintenance (its checks after merging)",
    "who writes / who reads / authoritative vs derived": "a pointer to a skill's table",
    "the shared decision log all agents read": "Scribe's list of the files it keeps",
    "# Shared brain — all agents read this": "a tree of the files, in Scribe's charter",
    "the coordinator reads at decision time": "on where rules must live to be enforced",
    "buried in a large file that the coordinator reads": "on where rules must live",
    "The coordinator reads it for context but": "on where rules must live",
    "graveyard of good intentions that the coordinator reads": "on where rules must live",
    "no charter, no history read": "a spawn that reads neither",
    "skip charter, history, and decisions reads": "a spawn that reads neither",
}


def whole_reads(repo: Path) -> list[str]:
    """`FILE:LINE: text` of every line of the coordinator's prompt, Squad's templates and the
    charters that sends an agent to its whole history or decision log, tiermem's own
    sections (which say the opposite) left out."""
    found = []
    names = [
        *(
            rel
            for rel in (".github/agents/squad.agent.md", ".github/copilot-instructions.md")
            if (repo / rel).exists()
        ),
        *sorted(
            p.relative_to(repo).as_posix()
            for p in (
                *repo.glob(".squad/*.md"),
                *repo.glob(".squad/templates/*.md"),
                *repo.glob(".squad/templates/*.md.template"),
                *repo.glob(".squad/agents/*/charter.md"),
            )
            if p.name not in ("decisions.md", "decisions-archive.md")
        ),
    ]
    for rel in names:
        inside = False  # within one of tiermem's marked sections
        for number, line in enumerate((repo / rel).read_text("utf-8").splitlines(), 1):
            if re.search(r"<!-- tiermem:begin", line):
                inside = True
            if re.search(r"<!-- tiermem:end", line):
                inside = False
                continue
            if inside or "<!-- tiermem:line" in line:
                continue
            said = _NAMES.search(line) and _READS.search(line)
            if said and not any(words in line for words in _NOT_INSTRUCTIONS):
                found.append(f"{rel}:{number}: {line.strip()[:100]}")
    return found


def git_status(repo: Path, env: dict[str, str]) -> str:
    return run(["git", "status", "--porcelain", "--untracked-files=all"], repo, env)


# --- install, doctor, second install, uninstall ---------------------------------------------


def test_install_on_a_fresh_squad_team_and_back(tmp_path: Path, env: dict[str, str]) -> None:
    repo = squad_team(tmp_path, env)
    (repo / ".vscode").mkdir()
    squads = snapshot(repo)
    out = tiermem(repo, env, "squad", "install", "--coordinator")
    assert out.splitlines()[-1] == "installed: 25 change(s)"  # APPEND step, .copilot MCP
    installed = snapshot(repo)
    assert ", 0 failed," in doctor_summary(repo, env)
    assert tiermem(repo, env, "squad", "install").splitlines()[-1].endswith("nothing to change")
    assert snapshot(repo) == installed
    assert installed_or_left(check(repo, env, 0))

    spawn = (repo / installer.SPAWN_TEMPLATE).read_text(encoding="utf-8")
    assert install_texts.spawn_block("  ") in spawn
    assert "Read `agents/{name}/history.md` with `squad_state_read`" not in spawn
    charters = sorted(repo.glob(".squad/agents/*/charter.md"))
    assert [c.parent.name for c in charters] == ["Rai", "ralph", "scribe"]
    for charter in charters:
        text = charter.read_text(encoding="utf-8")
        assert text.count("<!-- tiermem:begin memory ") == 1
        assert text.endswith(install_texts.MEMORY_END + "\n")
    assert "`tiermem hot show rai`" in charters[0].read_text(encoding="utf-8")
    assert "tiermem scribe end-session --all" in charters[2].read_text(encoding="utf-8")
    for rel in installer.SKILLS[:2]:
        assert (repo / rel).read_text(encoding="utf-8") == install_texts.SKILL

    tiermem(repo, env, "squad", "install", "--uninstall")
    assert snapshot(repo) == squads
    assert ", 0 failed," in doctor_summary(repo, env)


def test_no_instruction_is_left_that_loads_a_whole_history(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = squad_team(tmp_path, env)
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "squad init"], repo, env)
    before = whole_reads(repo)
    # What `squad init` writes: the coordinator's 4, the charter template's, the spawn
    # template's 3 (its two prompt lines and "still reads"), the wiring guide's, Ralph's, the
    # copilot instructions template's, and the coordinator's 4 again in its `.template` copy.
    assert len(before) == 15, before
    out = tiermem(repo, env, "squad", "install", "--coordinator")
    assert whole_reads(repo) == []
    replaced = [ln for ln in out.splitlines() if re.match(r"added +\S+:\d+: ", ln)]
    # The spawn template's two lines are one step; its APPEND to history.md is one more.
    assert len(replaced) == len(before) - 2 + 1
    assert sum("agents append their learnings" in ln for ln in replaced) == 1
    assert ", 0 failed," in doctor_summary(repo, env)
    assert installed_or_left(check(repo, env, 0))
    tiermem(repo, env, "squad", "install", "--uninstall")
    assert git_status(repo, env) == ""  # as `squad init` left it
    assert whole_reads(repo) == before


VSCODE_JSONC = (
    '{\n  // VS Code\'s own servers for this workspace\n  "servers": {\n'
    '    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}, // hosted\n'
    "  },\n}\n"
)


def test_a_long_lived_teams_layout_installs_and_comes_back(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The layout a long-lived team has: `"teamRoot": "."` (what Squad writes for "no separate
    team root"), VS Code's JSONC `.vscode/mcp.json`, and the @copilot member, whose
    instructions send it to `decisions.md`."""
    repo = squad_team(tmp_path, env)
    squad(repo, env, "copilot")
    (repo / ".squad/config.json").write_text('{"version":1,"teamRoot":"."}\n', "utf-8")
    (repo / ".vscode").mkdir()
    (repo / ".vscode/mcp.json").write_text(VSCODE_JSONC, "utf-8")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "a long-lived team"], repo, env)
    before = whole_reads(repo)
    assert any(line.startswith(".github/copilot-instructions.md:") for line in before), before
    tiermem(repo, env, "squad", "install", "--coordinator")
    assert whole_reads(repo) == []
    assert installed_or_left(check(repo, env, 0))
    vscode = (repo / ".vscode/mcp.json").read_text("utf-8")
    assert "// VS Code's own servers" in vscode and '"tiermem": {' in vscode
    assert ", 0 failed," in doctor_summary(repo, env)
    tiermem(repo, env, "squad", "install", "--uninstall")
    assert git_status(repo, env) == ""
    assert whole_reads(repo) == before


def test_a_day_of_spawns_changes_one_tracked_file_and_a_second_run_none(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = squad_team(tmp_path, env)
    tiermem(repo, env, "squad", "install", "--coordinator")
    day1, day2 = later(env, 0), later(env, 1)
    for agent, work in (("rai", "Threat model for the login flow"), ("ralph", "Backlog sweep")):
        tiermem(repo, day1, "hot", "set", agent, "--task", work)
        tiermem(repo, day1, "hot", "note", agent, f"{work}: findings written to docs/{agent}.md")
        tiermem(repo, day1, "hot", "decide", agent, f"{work} goes first in the next sprint")
    tiermem(repo, day1, "scribe", "end-session", "--all")
    tiermem(repo, day1, "scribe", "run")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "day one"], repo, env)
    # The next day: the coordinator's spawns and the agents' searches.
    for agent, task in (("rai", "Resume the login threat model"), ("ralph", "Backlog sweep")):
        tiermem(repo, day2, "spawn", agent, "--task", task, "--auto")
        tiermem(repo, day2, "spawn", agent, "--task", task, "--include-cold")
        tiermem(repo, day2, "search", "findings", "--agent", agent)
    assert git_status(repo, env) == ""  # reads change no tracked file
    out = tiermem(repo, day2, "scribe", "run")
    assert out.splitlines()[0] == "inbox: merge 0 files into .squad/decisions.md"
    assert git_status(repo, env) == "?? .squad/memory/last-use.txt\n"
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "day two"], repo, env)
    tiermem(repo, day2, "scribe", "run")
    assert git_status(repo, env) == ""


# --- the registered server ------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _serve(entry: dict[str, Any], cwd: Path, env: dict[str, str]) -> set[str]:
    """Start the server as a client would from its config entry; list tools, write hot."""
    command = shutil.which(str(entry["command"]), path=env["PATH"])
    assert command is not None
    args = [str(a).replace("${workspaceFolder}", str(cwd)) for a in entry["args"]]
    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "hot_add", {"agent": "scribe", "kind": "note", "text": "served from the team"}
        )
        block = result.content[0]
        assert not result.is_error, block.text if isinstance(block, TextContent) else block
    return names


@pytest.mark.anyio
async def test_the_registered_server_serves_this_team(tmp_path: Path, env: dict[str, str]) -> None:
    repo = squad_team(tmp_path, env)
    (repo / ".vscode").mkdir()
    tiermem(repo, env, "squad", "install")
    mcp = json.loads((repo / ".mcp.json").read_text(encoding="utf-8"))
    assert list(mcp["mcpServers"]) == ["tiermem", "squad_state"]
    vscode = json.loads((repo / ".vscode/mcp.json").read_text(encoding="utf-8"))
    # Copilot CLI starts servers in the folder it runs in: the team's, or one below it.
    below = repo / "src" / "deep"
    below.mkdir(parents=True)
    assert await _serve(mcp["mcpServers"]["tiermem"], below, env) == TOOLS
    assert await _serve(vscode["servers"]["tiermem"], repo, env) == TOOLS
    hot = (repo / ".squad/memory/hot/scribe.md").read_text(encoding="utf-8")
    assert hot.count("served from the team") == 2


# --- squad nap, squad upgrade, and what --check sees ------------------------------------------


def test_check_reports_what_squad_upgrade_undid(tmp_path: Path, env: dict[str, str]) -> None:
    repo = squad_team(tmp_path, env)
    squads = snapshot(repo)
    tiermem(repo, env, "squad", "install", "--coordinator")
    write_decision(repo, env)
    squad(repo, env, "nap")  # merges the inbox into decisions.md; touches nothing installed
    assert not list((repo / ".squad/decisions/inbox").iterdir())
    assert installed_or_left(check(repo, env, 0))

    squad(repo, env, "upgrade")
    upgraded = snapshot(repo)
    steps = check_steps(repo, env, 1)
    assert upgraded == snapshot(repo)  # a check writes nothing
    undone = [s for s in steps if s["state"] == "undone"]
    # Each line the upgrade undid is named where it now stands, with Squad's text there.
    for step in undone:
        assert "`squad upgrade` rewrites" in step["note"], step
        if "line" in step:
            text = (repo / step["path"]).read_text("utf-8").splitlines()[step["line"] - 1]
            assert install_texts.SQUAD_LINES[text.strip()].what == step["what"], step
    lines_undone = {(s["path"], s["what"]) for s in undone if "line" in s}
    assert lines_undone == {
        (rel, install_texts.LINE_KEYS[key].what) for rel, key in replaced_before(repo)
    }
    assert {s["path"] for s in undone if "line" not in s} == {installer.SPAWN_TEMPLATE}
    assert {s["state"] for s in steps} <= {"installed", "undone", "missing", "outdated", "left"}
    out = tiermem(repo, env, "squad", "install")
    assert f"restored  {installer.SPAWN_TEMPLATE}: spawn step" in out
    assert whole_reads(repo) == []  # the upgraded coordinator's new lines included
    assert ", 0 failed," in doctor_summary(repo, env)

    tiermem(repo, env, "squad", "install", "--uninstall")
    after = snapshot(repo)
    # What the install touched is back as Squad wrote it: upgrade's own spawn template,
    # init's charters, skill and .mcp.json; nothing of tiermem is left.
    cli_template = PACKAGES / "squad-cli" / "templates" / "spawn-reference.md"
    assert after[installer.SPAWN_TEMPLATE] == cli_template.read_bytes()
    for rel in (".mcp.json", installer.COPILOT_MCP, installer.SKILLS[1], *_charters(squads)):
        assert after[rel] == squads[rel], rel
    assert {p for p in after if p.startswith((".squad/skills", ".squad/memory/hot"))} == set()
    assert installer.MANIFEST not in after
    # Everything else is exactly what nap and upgrade made of the team.
    kept = set(upgraded) - _installed_only(upgraded)
    assert set(after) == kept
    others = kept - _touched(squads)
    assert {p: after[p] for p in others} == {p: upgraded[p] for p in others}


def _installed_only(tree: dict[str, bytes | None]) -> set[str]:
    """Paths that exist only because of the install (the store, the record, the skill)."""
    store_parts = tuple(
        f".squad/memory/{n}" for n in (*installer.STORE_DIRS, *installer.STORE_FILES)
    )
    return {p for p in tree if p.startswith((*store_parts, installer.MANIFEST, ".squad/skills"))}


def _charters(tree: dict[str, bytes | None]) -> set[str]:
    return {p for p in tree if p.startswith(".squad/agents/") and p.endswith("/charter.md")}


def _touched(squads: dict[str, bytes | None]) -> set[str]:
    touched = {".mcp.json", installer.SPAWN_TEMPLATE, *installer.SKILLS, *_charters(squads)}
    return touched | {installer.COPILOT_MCP}


# --- a governed decision --------------------------------------------------------------------


def write_decision(repo: Path, env: dict[str, str]) -> str:
    """`squad memory write --class DECISION`: the inbox file it made (front matter + body)."""
    out = squad(
        repo,
        env,
        "memory",
        "write",
        "--class",
        "DECISION",
        "--title",
        DECISION["title"],
        "--author",
        DECISION["author"],
        "--content",
        DECISION["content"],
    )
    written = json.loads(out)
    assert written["stored"] and written["classification"]["destination"] == "decision-inbox"
    return str(written["path"])


def decision_entries(repo: Path) -> list[tuple[str, str, str, str]]:
    """(title, by, created date, body) of each tiermem entry holding the decision's text."""
    mem = Memory(repo)
    found = []
    for tier in ("cold", "wiki"):
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            tier_file = store.load(mem.layout, tier, path)
            for entry in tier_file.entries if tier_file else []:
                if "Postgres 16" in entry.body:
                    by = dict(entry.extra).get("by", "")
                    found.append((entry.title, by, entry.created[:10], entry.body.strip()))
    return found


def later(env: dict[str, str], days: int) -> dict[str, str]:
    """tiermem's clock some days after Squad's, so that a date says whose clock it came from."""
    when = datetime.now(UTC) + timedelta(days=days)
    return {**env, "TIERMEM_NOW": when.strftime("%Y-%m-%dT%H:%M:%SZ")}


def test_a_governed_decision_arrives_in_tiermem_once(tmp_path: Path, env: dict[str, str]) -> None:
    repo = squad_team(tmp_path, env)
    tiermem(repo, env, "squad", "install")
    write_decision(repo, env)
    assert "inbox: merge 1 file into" in tiermem(repo, env, "scribe", "run")
    assert not list((repo / ".squad/decisions/inbox").iterdir())
    decisions = (repo / ".squad/decisions.md").read_text(encoding="utf-8")
    assert decisions.count(DECISION["content"]) == 1
    assert len(decision_entries(repo)) == 1
    # An import afterwards reads decisions.md, where the decision now is, and folds it.
    tiermem(repo, env, "import", "squad")
    assert len(decision_entries(repo)) == 1


def test_a_governed_decision_keeps_squads_title_author_and_date(
    tmp_path: Path, env: dict[str, str]
) -> None:
    arrived: dict[str, list[tuple[str, str, str, str]]] = {}
    created = ""
    for path, steps in {
        "tiermem scribe run": [("tiermem", "scribe", "run")],
        "squad nap, then tiermem import squad": [("squad", "nap"), ("tiermem", "import", "squad")],
    }.items():
        repo = squad_team(tmp_path / path.split(",")[0].replace(" ", "-"), env)
        tiermem(repo, env, "squad", "install")
        inbox_file = (repo / write_decision(repo, env)).read_text(encoding="utf-8")
        created = inbox_file.split("createdAt: ", 1)[1][:10]
        for step in steps:
            if step[0] == "squad":
                squad(repo, env, *step[1:])
            else:
                tiermem(repo, later(env, days=3), *step[1:])
        arrived[path] = decision_entries(repo)
    wanted = [(DECISION["title"], DECISION["author"], created, DECISION["content"])]
    assert arrived == {path: wanted for path in arrived}


# --- state kept off the working tree ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["orphan", "two-layer"])
def test_a_team_on_a_git_state_backend_is_refused(
    tmp_path: Path, env: dict[str, str], backend: str
) -> None:
    repo = squad_team(tmp_path, env, "--state-backend", backend)
    before = snapshot(repo)
    for args in ((), ("--check",)):
        done = subprocess.run(
            [sys.executable, "-m", "tiermem", "squad", "install", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.count("\n") == 1
        assert f"Squad state backend '{backend}'" in done.stderr
    assert snapshot(repo) == before


# --- Squad's governed memory beside tiermem's store -------------------------------------------


def memory_write(repo: Path, env: dict[str, str], cls: str, title: str, content: str) -> str:
    """`squad memory write`: the path of the file Squad wrote."""
    out = squad(
        repo,
        env,
        "memory",
        "write",
        "--class",
        cls,
        "--title",
        title,
        "--author",
        "eecom",
        "--content",
        content,
    )
    written = json.loads(out)
    assert written["stored"], written
    return str(written["path"])


def governed_files(repo: Path) -> dict[str, bytes]:
    """Every file of Squad's governed memory in `.squad/memory/` (not tiermem's)."""
    memory = repo / ".squad" / "memory"
    found = {}
    for name in ("local", "policy-inbox", "semantic-inbox", "tombstones"):
        for path in sorted((memory / name).rglob("*")) if (memory / name).is_dir() else []:
            if path.is_file():
                found[path.relative_to(repo).as_posix()] = path.read_bytes()
    for name in ("config.json", "index.json", "audit.jsonl"):
        found[f".squad/memory/{name}"] = (memory / name).read_bytes()
    return found


def tiermems_ignore_rules(repo: Path, env: dict[str, str], paths: list[str]) -> list[str]:
    """The rules of tiermem's (`.squad/memory/.gitignore` and below) that make git ignore any
    of these paths."""
    done = subprocess.run(
        ["git", "check-ignore", "-v", "--no-index", *paths],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return [ln for ln in done.stdout.splitlines() if ln.startswith(".squad/memory/")]


def test_squads_governed_memory_and_tiermem_share_the_folder(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = squad_team(tmp_path, env)
    first = memory_write(
        repo,
        env,
        "LOCAL",
        "Staging database",
        "The staging database listens on port 5433; run migrations with make migrate.",
    )
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "squad init, a memory"], repo, env)
    tiermem(repo, env, "squad", "install")
    second = memory_write(
        repo,
        env,
        "LOCAL",
        "Release checklist",
        "The release checklist lives in docs/release.md; tag once the publish job is green.",
    )
    squads = governed_files(repo)
    assert first in squads and second in squads
    assert tiermems_ignore_rules(repo, env, list(squads)) == []
    status = git_status(repo, env)
    assert f"?? {second}" in status and first not in status  # tracked, unchanged; new, seen
    assert tiermem(repo, env, "doctor").splitlines()[-1] == "doctor: no problems left"
    hits = json.loads(tiermem(repo, env, "search", "staging database port", "--format", "json"))
    assert hits[0]["path"] == first
    hits = json.loads(tiermem(repo, env, "search", "release checklist", "--format", "json"))
    assert hits[0]["path"] == second
    prompt = tiermem(
        repo, env, "spawn", "rai", "--task", "Run the staging database migrations", "--auto"
    )
    assert "port 5433" in prompt
    prompt = tiermem(
        repo, env, "spawn", "rai", "--task", "Tag the release from the checklist", "--auto"
    )
    assert "docs/release.md" in prompt
    for args in (("scribe", "run"), ("doctor", "--repair"), ("reindex",)):
        tiermem(repo, env, *args)
    assert governed_files(repo) == squads
    tiermem(repo, env, "hot", "note", "rai", "the store now holds memory: it stays")
    tiermem(repo, env, "squad", "install", "--uninstall")
    assert (repo / ".squad/memory/.gitignore").is_file()
    assert governed_files(repo) == squads
    assert tiermems_ignore_rules(repo, env, list(squads)) == []


def test_a_policy_is_pinned_and_a_decision_keeps_its_author_and_id(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = squad_team(tmp_path, env)
    tiermem(repo, env, "squad", "install")
    memory_write(repo, env, "POLICY", "Lint before push", "Always run the linter before a push.")
    path = write_decision(repo, env)
    header = (repo / path).read_text(encoding="utf-8").split("\n---\n", 1)[0]
    ident = header.split("id: ", 1)[1].split("\n", 1)[0]
    prompt = tiermem(repo, env, "spawn", "rai", "--task", "Write the changelog for v2")
    pinned = prompt.split('<memory tier="policy" pinned="true">', 1)[1].split("</memory>")[0]
    assert "Always run the linter before a push." in pinned
    tiermem(repo, env, "scribe", "run")
    log = (repo / ".squad/decisions.md").read_text(encoding="utf-8")
    assert header in log and f"id: {ident}" in log and 'author: "flight"' in log


def test_a_scrub_squad_makes_reaches_every_copy_tiermem_keeps(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = squad_team(tmp_path, env)
    history = repo / ".squad/agents/ralph/history.md"
    address = "jane.doe@contoso.example.org"
    history.write_text(
        history.read_text(encoding="utf-8")
        + "\n## Learnings\n\n### 2026-03-20: Release approvals\n"
        f"- Release approvals go to Jane ({address}) before any tag.\n"
        f"- Page {address} when the publish job fails twice.\n",
        encoding="utf-8",
    )
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "history"], repo, env)
    tiermem(repo, env, "squad", "install")
    tiermem(repo, env, "import", "squad")
    assert address in served(repo, env, "release approvals Jane")
    squad(repo, env, "scrub-emails", ".squad")
    assert address not in history.read_text(encoding="utf-8")
    tiermem(repo, env, "scribe", "run")
    for query in (address, "contoso", "release approvals Jane", "publish job fails"):
        assert address not in served(repo, env, query)
    for task in ("Ask Jane to approve the release", "Page on-call when the publish job fails"):
        assert address not in tiermem(repo, env, "spawn", "ralph", "--task", task, "--auto")
    assert "Release approvals go to Jane before any tag" in served(repo, env, "approvals")


def served(repo: Path, env: dict[str, str], query: str) -> str:
    """Every text search serves for a query (fifty results)."""
    hits = json.loads(tiermem(repo, env, "search", query, "--limit", "50", "--format", "json"))
    return "\n".join(str(hit["text"]) for hit in hits)


@pytest.mark.parametrize("backend", ["orphan", "two-layer"])
def test_every_writing_command_refuses_a_team_moved_to_a_git_backend(
    tmp_path: Path, env: dict[str, str], backend: str
) -> None:
    repo = squad_team(tmp_path, env)
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "squad init"], repo, env)
    tiermem(repo, env, "squad", "install")
    tiermem(repo, env, "hot", "set", "rai", "--task", "ship it")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-qm", "tiermem"], repo, env)
    squad(repo, env, "upgrade", "--state-backend", backend)
    before = snapshot(repo)
    for args in (
        ("init",),
        ("hot", "note", "rai", "a note"),
        ("hot", "set", "rai", "--task", "another"),
        ("scribe", "end-session", "rai"),
        ("scribe", "run"),
        ("decision", "add", "--by", "rai", "Use Postgres"),
        ("wiki", "write", "release", "Tags are signed by CI."),
        ("import", "squad"),
        ("doctor", "--repair"),
        ("squad", "install"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "tiermem", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout) == (2, ""), (args, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and backend in done.stderr, (args, done.stderr)
    assert snapshot(repo) == before
