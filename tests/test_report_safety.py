"""`tiermem report` in a real repository: where the page goes, links committed in its way,
any value in the audit trail and the spawn log, and one set of figures with `stats`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.report.html_page import collect

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"
LONG = "\n\n".join(
    f"Step {n}: the release job retries the upload {n} times." * 3 for n in range(40)
)


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x.invalid")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x.invalid")
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a store of two agents: archived sessions (searched in chunks),
    a wiki page, a long decision (stored in parts), a logged spawn; everything committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    mem, _ = Memory.init(root, now=T0)
    mem.hot_set("ada", "Fix the release job", why="uploads fail")
    mem.hot_add("ada", "note", LONG[:3000])
    mem.end_session("ada")
    mem.hot_set("bo", "Speed up the parser")
    mem.wiki_write("release", f"# How the release job retries\n{LONG[:2000]}", by="ada")
    mem.decide(f"### 2026-03-02: Retry uploads\n**What:** {LONG}", by="ada")
    mem.spawn("ada", "release job retries", auto=True)
    mem.close()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "team memory")
    return root


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under a folder and its bytes, links not followed."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


# --- where the page goes ----------------------------------------------------------------------


def test_the_page_goes_where_git_ignores_it_and_the_command_says_where(
    repo: Path, run_cli: RunCli
) -> None:
    code, out, err = run_cli("report", "--root", str(repo))
    assert (code, err) == (0, "")
    page = repo / ".squad" / "memory" / "tiermem-local" / "report" / "report.html"
    said = re.fullmatch(r"report: (\S+) \(([\d,]+) bytes; [\d,]+ entries; (.*)\)\n", out)
    assert said and said.group(1) == str(page)
    assert said.group(2) == f"{page.stat().st_size:,}"
    assert said.group(3) == "local to this clone, git-ignored"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    code, out, _ = run_cli("report", "--format", "json", "--root", str(repo))
    assert code == 0 and json.loads(out)["local"] is True


def test_the_page_ignores_itself_in_a_store_that_does_not_ignore_local(
    repo: Path, run_cli: RunCli
) -> None:
    ignore = repo / ".squad" / "memory" / ".gitignore"
    ignore.write_text(ignore.read_text("utf-8").replace("tiermem-local/\n", ""), encoding="utf-8")
    git(repo, "commit", "-qam", "an older store's ignore file")
    assert run_cli("report", "--root", str(repo))[0] == 0
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize("out", [None, "tiermem-report", "pages/tiermem-report"])
def test_a_committed_link_never_carries_the_page_out(
    repo: Path, run_cli: RunCli, tmp_path: Path, out: str | None
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # The link is committed where the page would go: the default folder, or the one named.
    where = repo / (out or ".squad/memory/tiermem-local/report")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(outside)
    if out == "pages/tiermem-report":  # a link higher up: the folder above it
        where.unlink()
        (repo / "pages").rmdir()
        (repo / "pages").symlink_to(outside)
    before = tree(repo)
    args = ("--out", str(repo / out)) if out else ()
    code, stdout, err = run_cli("report", *args, "--root", str(repo))
    assert (code, stdout) == (2, "")
    assert err.count("\n") == 1 and "symbolic link" in err
    assert list(outside.iterdir()) == []
    assert tree(repo) == before


@pytest.mark.parametrize("name", ["report.html", ".gitignore"])
def test_a_link_in_place_of_the_page_is_refused(
    repo: Path, run_cli: RunCli, tmp_path: Path, name: str
) -> None:
    folder = repo / ".squad" / "memory" / "tiermem-local" / "report"
    folder.mkdir(parents=True)
    target = tmp_path / "elsewhere.html"
    target.write_text("mine", encoding="utf-8")
    (folder / name).symlink_to(target)
    code, _, err = run_cli("report", "--root", str(repo))
    assert code == 2 and err.count("\n") == 1 and "symbolic link" in err
    assert target.read_text("utf-8") == "mine"


def test_an_out_folder_given_by_the_user_is_used_as_given(
    repo: Path, run_cli: RunCli, tmp_path: Path
) -> None:
    code, out, _ = run_cli("report", "--out", str(tmp_path / "pages"), "--root", str(repo))
    assert code == 0 and out.startswith(f"report: {tmp_path / 'pages' / 'report.html'} (")
    assert "git-ignored" not in out
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == ["report.html"]


# --- any value in the audit trail and the spawn log -------------------------------------------

BAD_AUDIT = [
    {"time": "9999-12-31T00:00:00Z", "action": "end-session", "ids": ["c-1"], "tiers": ["cold"]},
    {"time": "9999-12-31", "action": "promote", "ids": ["c-2"], "tiers": ["cold", "wiki"]},
    {"time": "last Tuesday", "action": "expire", "ids": ["c-3"], "tiers": ["cold"]},
    {"time": 20260302, "action": "expire", "ids": [], "tiers": ["cold"]},
    {"time": "0001-01-01T00:00:00Z", "action": "expire", "ids": [], "tiers": ["cold"]},
    {
        "time": T0,
        "action": "end-session",
        "ids": ["c-4"],
        "tiers": ["cold"],
        "raw_bytes": 10**400,
        "summary_bytes": 1,
    },
]


def append_lines(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")


def test_the_report_survives_any_audit_time_and_names_the_lines_it_left_out(
    repo: Path, run_cli: RunCli
) -> None:
    trail = repo / ".squad" / "memory" / "tiermem-audit.jsonl"
    good = trail.read_text("utf-8").count("\n")
    append_lines(trail, [json.dumps(line) for line in BAD_AUDIT])
    code, out, err = run_cli("report", "--root", str(repo), "--now", T0)
    assert (code, err) == (0, "")
    html = Path(out.split()[1]).read_text("utf-8")
    assert f"{len(BAD_AUDIT)} lines of the audit trail left out of this page" in html
    for said in (
        "&#39;9999-12-31T00:00:00Z&#39; is more than a year after",
        "&#39;last Tuesday&#39; is not an ISO 8601 time",
        "20260302 is not a time",
        "is before 1970",
        "raw_bytes 1000000000",
    ):
        assert said in html, said
    page = collect(Memory(repo, now=T0).context)
    assert sum(page.history_totals.values()) == good  # every good line is still drawn


@pytest.mark.parametrize(
    "tokens", ["1" + "0" * 400, "1e400", "-5", '"many"', "true", "1" + "0" * 5000]
)
def test_the_report_and_the_log_survive_any_token_count(
    repo: Path, run_cli: RunCli, tokens: str
) -> None:
    log = repo / ".squad" / "memory" / "spawns.jsonl"
    line = (
        '{"agent": "ada", "entries": [], "situation": "new", "task": "x", '
        f'"time": "{T0}", "tokens": {{"total": {tokens}}}}}'
    )
    append_lines(log, [line])
    code, out, err = run_cli("report", "--root", str(repo), "--now", T0)
    assert (code, err) == (0, "")
    html = Path(out.split()[1]).read_text("utf-8")
    assert "1 line of the spawn log left out of this page" in html
    assert "spawns.jsonl:2:" in html
    code, out, err = run_cli("log", "--root", str(repo))
    assert code == 0 and "release job retries" in out
    assert err.startswith("tiermem: skipped .squad/memory/spawns.jsonl:2: ")
    assert err.count("\n") == 1


# --- one set of figures -----------------------------------------------------------------------


def test_stats_and_the_report_show_the_same_figures(repo: Path, run_cli: RunCli) -> None:
    code, out, _ = run_cli("stats", "--format", "json", "--root", str(repo))
    assert code == 0
    stats = json.loads(out)
    page = collect(Memory(repo, now=T0).context)
    # The store holds a long entry stored in parts and records searched in chunks: the
    # figures count each once, in both.
    docs = Memory(repo).context.index.docs()
    parts = [d for d in docs if d.tier == "cold" and d.parent]
    assert len(parts) > 1 and len({d.parent for d in parts}) == 1
    chunks = [d for d in docs if d.tier == "archive"]
    assert len(chunks) > len({d.path for d in chunks})
    for tier, totals in stats["totals"].items():
        shown = page.totals[tier]
        assert (shown.entries, shown.bytes, shown.tokens) == (
            totals["entries"],
            totals["bytes"],
            totals["tokens"],
        ), tier
    cells = {(r.agent, t): c for r in page.agents for t, c in r.cells.items() if c.entries}
    rows = {(r["agent"], r["tier"]): r for r in stats["tiers"]}
    assert set(cells) == set(rows)
    for key, cell in cells.items():
        assert (cell.entries, cell.bytes, cell.tokens) == (
            rows[key]["entries"],
            rows[key]["bytes"],
            rows[key]["tokens"],
        ), key


def test_the_report_says_each_figure_the_stats_table_prints(repo: Path, run_cli: RunCli) -> None:
    _, out, _ = run_cli("report", "--root", str(repo))
    html = Path(out.split()[1]).read_text("utf-8")
    stats = json.loads(run_cli("stats", "--format", "json", "--root", str(repo))[1])
    overview = html.split('id="overview"')[1].split("</section>")[0]
    for tier, totals in stats["totals"].items():
        card = re.search(
            rf'tier-{tier}">\s*<span class="small">{tier}</span>\s*<b>([\d,]+)</b>', overview
        )
        assert card and card.group(1) == f"{totals['entries']:,}", tier
        assert f"{totals['bytes']:,} bytes, {totals['tokens']:,} tokens" in overview
