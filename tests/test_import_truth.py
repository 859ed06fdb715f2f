"""`tiermem import squad` says true things: the names a dry run gives are the import's, every
credential it replaced is named (family, file:line), its exit status says whether it wrote,
and every section is dated by its own date, else by its file's last commit, never by the
import day (a date later than that commit is a typo, and decides nothing).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.storage import store
from tiermem.storage.entries import Entry

RunCli = Callable[..., tuple[int, str, str]]
NOW = "2026-04-15T00:00:00Z"
COMMITTED = "2026-04-01T12:00:00Z"
LATER = "2026-04-15T00:01:00Z"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

HISTORY = """\
# Ada

## Core Context

I own the release pipeline: `.github/workflows/publish.yml` and the npm automation token.

## Learnings

### 2026-03-10: Publish retries
The publish job retries `npm publish` 5 times with a 15s sleep; see scripts/publish.mjs.

### Token types for publishing
NPM_TOKEN must be an automation token, or publish fails with EOTP.

### 2027-03-12: Provenance flag
A typo for 2026: added `--provenance` to the publish step (#451).

### 2026-03-20: Registry mirror
Set the registry mirror in .npmrc to the internal proxy. Its password = Sw0rdf1sh!x for now.
"""
DECISIONS = """\
# Decisions

### 2026-03-05: Use Zod for config validation
**By:** Ada
**What:** Every config file is validated with Zod before use.

### Keep release branches short-lived
**By:** Bo
**What:** Release branches live for one release and are deleted after it ships.
"""


def git(root: Path, *args: str, when: str = COMMITTED) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A committed team: Ada's history (dated, undated and a typo date) and the decisions."""
    root = tmp_path / "team"
    for rel, text in {
        ".squad/agents/ada/history.md": HISTORY,
        ".squad/decisions.md": DECISIONS,
        ".squad/skills/release-notes/SKILL.md": "---\nname: release-notes\n---\n\nWrite them.\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "team")
    return root


def cli(run_cli: RunCli, root: Path, *args: str, expect: int = 0) -> str:
    code, out, err = run_cli("--root", str(root), "--now", NOW, *args)
    assert code == expect, out + err
    return out


def entries(root: Path) -> list[Entry]:
    mem = Memory(root)
    found = []
    for tier in ("cold", "wiki"):
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            loaded = store.load(mem.layout, tier, path)
            found += loaded.entries if loaded else []
    return found


def archived(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".squad/memory/archive").rglob("a-*.md"))


# --- names ----------------------------------------------------------------------------------


def test_the_dry_run_names_what_the_import_writes(team: Path, run_cli: RunCli) -> None:
    out = cli(run_cli, team, "import", "squad", "--dry-run", "--format", "json")
    planned = {row["record"] for row in json.loads(out)["sections"]}
    # The import runs a minute later, as a person's would.
    code, out, err = run_cli("--root", str(team), "--now", LATER, "import", "squad")
    assert code == 0, out + err
    assert planned == {f"archive/{p.parent.name}/{p.name}" for p in _records(team)}


def _records(root: Path) -> list[Path]:
    return sorted((root / ".squad/memory/archive").rglob("a-*.md"))


def test_two_imports_of_the_same_text_give_the_same_names(
    team: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    other = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(team), str(other))
    cli(run_cli, team, "import", "squad")
    code, out, err = run_cli(
        "--root", str(other), "--now", "2026-04-20T09:00:00Z", "import", "squad"
    )
    assert code == 0, out + err
    assert archived(team) == archived(other)
    for mine, theirs in zip(_records(team), _records(other), strict=True):
        assert mine.read_bytes() == theirs.read_bytes()


# --- redactions -----------------------------------------------------------------------------


def test_every_redaction_is_named_with_its_family_and_line(team: Path, run_cli: RunCli) -> None:
    data = json.loads(cli(run_cli, team, "import", "squad", "--dry-run", "--format", "json"))
    assert data["redacted"] == [".squad/agents/ada/history.md:19: password"]
    for args in (("--dry-run",), ()):
        out = cli(run_cli, team, "import", "squad", *args)
        assert "  .squad/agents/ada/history.md:19: password" in out.splitlines()
        assert "Sw0rdf1sh" not in out


# --- exit status ----------------------------------------------------------------------------


def test_an_import_that_stops_after_archiving_says_so_with_status_1(
    team: Path, run_cli: RunCli
) -> None:
    Memory.init(team, squad_files=False)[0].close()
    damaged = team / ".squad/memory/cold/team.md"
    damaged.write_text(
        "# team\n<!-- tiermem-file tier=cold agent=team -->\n\n## x\n<!-- tiermem id=\n", "utf-8"
    )
    code, _, err = run_cli("--root", str(team), "--now", NOW, "import", "squad")
    assert code == 1 and err.count("\n") == 1, err
    assert "import squad stopped after archiving 3 records of 3 files" in err
    assert archived(team)  # what it wrote, it said
    empty = team.parent / "empty"
    (empty / ".squad/memory/cold").mkdir(parents=True)
    (empty / ".squad/memory/cold/team.md").write_bytes(damaged.read_bytes())
    code, _, err = run_cli("--root", str(empty), "--now", NOW, "import", "squad")
    assert code == 0 or "stopped after" not in err  # nothing to archive: nothing said written


# --- dates ----------------------------------------------------------------------------------


def by_title(root: Path) -> dict[str, Entry]:
    return {e.title: e for e in entries(root)}


def test_sections_are_dated_by_their_own_date_else_their_files_commit(
    team: Path, run_cli: RunCli
) -> None:
    cli(run_cli, team, "import", "squad")
    found = by_title(team)
    assert found["Registry mirror"].created == "2026-03-20T00:00:00Z"
    undated = found["Token types for publishing"]
    assert undated.created == "" and dict(undated.extra)["committed"] == COMMITTED
    # The typo date (2027, after the file's last commit) dates nothing.
    typo = next(e for t, e in found.items() if t.startswith("Provenance flag"))
    assert typo.created == "" and dict(typo.extra)["committed"] == COMMITTED
    # No entry carries the import's day.
    assert all(not e.created.startswith(NOW[:10]) for e in found.values())
    # The Core Context and a skill say when their file was last committed.
    assert found["Core Context"].created == COMMITTED
    assert found["release-notes"].created == COMMITTED
    # The archive records too: the raw text says its file's commit, never the import's day,
    # and stays undated itself (no passage of it is the newest by the import).
    headers = [p.read_text("utf-8").split("\n", 1)[0] for p in _records(team)]
    assert all(f"committed={COMMITTED}" in h and " created=" not in h for h in headers)


def test_an_undated_entry_is_never_the_newest(team: Path, run_cli: RunCli) -> None:
    # An inbox decision git does not track yet, with no date of its own: undated.
    inbox = team / ".squad/decisions/inbox/bo-cache.md"
    inbox.parent.mkdir(parents=True)
    inbox.write_text("### Cache the registry index\n**What:** Cache it for an hour.\n", "utf-8")
    cli(run_cli, team, "import", "squad")
    mem = Memory(team)
    newest = mem.context.index.newest(["cold", "wiki"], None, 50)
    titles = [d.title for d in newest]
    assert titles.index("Cache the registry index") > titles.index("Registry mirror")
    undated = [not d.created for d in newest]
    assert undated == sorted(undated)  # every dated entry first


def test_a_file_changed_since_its_commit_is_not_dated_by_it(team: Path, run_cli: RunCli) -> None:
    history = team / ".squad/agents/ada/history.md"
    history.write_text(history.read_text("utf-8") + "\n### Later note\nWritten today.\n", "utf-8")
    cli(run_cli, team, "import", "squad")
    later = by_title(team)["Token types for publishing"]
    assert later.created == "" and "committed" not in dict(later.extra)


def test_without_git_an_undated_section_stays_undated(tmp_path: Path, run_cli: RunCli) -> None:
    history = tmp_path / ".squad/agents/ada/history.md"
    history.parent.mkdir(parents=True)
    history.write_text(HISTORY, encoding="utf-8")
    cli(run_cli, tmp_path, "import", "squad")
    found = by_title(tmp_path)
    assert found["Token types for publishing"].created == ""
    # The Core Context is dated by the latest date its file gives (the typo left out).
    assert found["Core Context"].created == "2026-03-20T00:00:00Z"


def test_a_typo_date_does_not_choose_which_sessions_stay_in_cold(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """With room in cold for one session, the newest true session stays, not the typo's."""
    long = " ".join(f"Step {n} writes `out/step{n}.txt` and checks its size." for n in range(40))
    history = tmp_path / ".squad/agents/ada/history.md"
    history.parent.mkdir(parents=True)
    history.write_text(
        f"# Ada\n\n## Learnings\n\n### 2026-03-10: Publish retries\n{long}\n\n"
        f"### 2027-03-12: Provenance flag\n{long}\n\n### 2026-03-20: Registry mirror\n{long}\n",
        encoding="utf-8",
    )
    Memory.init(tmp_path, squad_files=False)[0].close()
    (tmp_path / ".squad/memory/config.toml").write_text("[cold]\nbudget_bytes = 1024\n", "utf-8")
    cli(run_cli, tmp_path, "import", "squad")
    cold = (tmp_path / ".squad/memory/cold/ada.md").read_text("utf-8")
    assert "Registry mirror" in cold and "Provenance flag" not in cold


def test_a_clock_at_the_start_of_the_calendar_imports(tmp_path: Path, run_cli: RunCli) -> None:
    log = tmp_path / ".squad/log/2026-03-01-session.md"
    log.parent.mkdir(parents=True)
    log.write_text("# Session\n\nShipped the parser.\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(tmp_path), "--now", "0001-01-01", "import", "squad")
    assert code == 0, out + err


def test_the_archive_rebuilds_the_latest_import_of_a_changed_file(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Records are dated by their file's commit, not the import: the rebuild takes a file's
    records from the import that archived it last."""
    from tiermem.bench.imported import rebuild_check

    history = tmp_path / ".squad/agents/ada/history.md"
    history.parent.mkdir(parents=True)
    history.write_text(HISTORY, encoding="utf-8")
    cli(run_cli, tmp_path, "import", "squad")
    history.write_text(HISTORY + "\n### 2026-03-25: Later\nA later session.\n", "utf-8")
    cli(run_cli, tmp_path, "import", "squad")
    assert rebuild_check(tmp_path) == {"files": 1, "exact": 0, "redacted": 1, "differ": 0}
