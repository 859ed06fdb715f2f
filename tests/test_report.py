"""`tiermem report`: one self-contained page, escaped, with what a person looks for."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reliability import is_index
from tiermem.errors import UsageError
from tiermem.memory import Memory
from tiermem.render import charts
from tiermem.report.html_page import collect
from tiermem.storage import store
from tiermem.storage.entries import Entry, TierFile

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"
HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"></script>'


def build_team(mem: Memory) -> None:
    """Two agents' sessions, a team decision, wiki pages, a superseded decision."""
    for n, (agent, task, note) in enumerate(
        [
            ("ada", "Fix the flaky release workflow", "Retries live in src/release/retry.ts."),
            ("bo", "Speed up the parser", "The parser cache lives in src/parse/cache.ts now."),
            ("ada", "Release 1.4.2", "Published with `npm publish --tag next` from main."),
        ]
    ):
        later = Memory(mem.root, now=f"2026-03-0{2 + n}T10:00:00Z")
        later.hot_set(agent, task)
        later.hot_add(agent, "note", note + " " + "Details of the session. " * 30)
        later.end_session(agent)
        later.close()
    mem.decide(
        "### 2026-03-02: Release branches\n**What:** cut on Mondays\n**Why:** calm", by="ada"
    )
    mem.wiki_write("release", "# Tag from main\nAlways tag releases from main.", by="ada")
    mem.wiki_write("testing", f"# Hostile title {HOSTILE}\nBody {HOSTILE}", by="bo")


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Memory]:
    repo = tmp_path / "repo"
    repo.mkdir()
    mem, _ = Memory.init(repo, now=T0)
    build_team(mem)
    yield mem
    mem.close()


class _Tags(HTMLParser):
    """Every start tag and its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def write(mem: Memory, tmp_path: Path, **options: str) -> str:
    result = mem.report(tmp_path / "out", **options)  # type: ignore[arg-type]
    return Path(result.path).read_text(encoding="utf-8")


def test_the_page_is_one_self_contained_file(team: Memory, tmp_path: Path) -> None:
    result = team.report(tmp_path / "out")
    assert Path(result.path) == tmp_path / "out" / "report.html"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html"]
    html = Path(result.path).read_text(encoding="utf-8")
    for tag, attrs in tags(html):
        assert tag not in ("link", "iframe", "object", "embed", "base"), tag
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"(?i)\s*(https?:|//|file:)", value), (tag, name, value)
    scripts = [a for t, a in tags(html) if t == "script"]
    assert scripts == [{"type": "application/json", "id": "entries-data"}, {}]
    assert result.bytes == len(html.encode("utf-8")) and result.agents == 2 + 1  # ada, bo, team


def test_memory_text_is_escaped(team: Memory, tmp_path: Path) -> None:
    html = write(team, tmp_path)
    assert "window.__xss" in html  # it is on the page, as text
    assert "<script>window.__xss" not in html and "<img src=x" not in html
    assert html.count("<script") == 2 and html.count("</script>") == 2
    data = re.search(
        r'<script type="application/json" id="entries-data">(.*?)</script>', html, re.S
    )
    assert data is not None
    entries = json.loads(data.group(1))
    hostile = next(e for e in entries if e["h"].startswith("Hostile title"))
    assert HOSTILE in hostile["h"] and HOSTILE in hostile["x"]  # the data holds it as it was
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html  # the wiki list escapes it


def test_the_page_shows_agents_budgets_wiki_and_history(team: Memory, tmp_path: Path) -> None:
    html = write(team, tmp_path)
    for text in (
        "Agents and budgets",
        "no session open",
        "/ 12,288 bytes",
        "Squad today",
        "sessions compressed into cold",
        "compression ratio of each session",
        "Wiki by topic",
        "release",
        "Tag from main",
        "Needs a look",
        "All entries",
    ):
        assert text in html, text
    page = collect(team.context)
    assert page.history[0].title == "sessions compressed into cold"
    assert sum(1 for s in page.history[0].shapes if s.height > 0) == 3  # three days, one each
    assert page.history[-1].kind == "dots" and len(page.history[-1].shapes) == 3
    assert {t.name for t in page.topics} >= {"release", "testing"}


def test_the_wiki_reads_as_a_table_of_contents(team: Memory, tmp_path: Path) -> None:
    # The release topic outgrows its page: one topic, on two pages, under its name in words.
    for n in range(24):
        team.wiki_write("release", f"# Release step {n}\n" + f"Step {n} of the CLI release. " * 80)
    page = collect(team.context)
    [release] = [t for t in page.topics if t.name == "release"]
    assert (release.title, release.pages) == ("Release", ["release", "release-2"])
    assert len(release.entries) == 25 and release.active == 25
    assert [t.name for t in page.topics] == sorted(t.name for t in page.topics)
    html = write(team, tmp_path)
    assert '<li><a href="#topic-release">Release</a>' in html
    assert '<details id="topic-release">' in html and "release, release-2" in html


def test_superseded_and_stale_entries_are_listed(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    repo = tmp_path / "repo"
    (repo / "src" / "parse").mkdir(parents=True)
    (repo / "src" / "parse" / "index.ts").write_text("x")
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True, env=env)
    mem, _ = Memory.init(repo, now=T0)
    try:
        cold = [
            Entry("c-000000000a", "learning", "Parser cache", "In src/parse/cache.ts.", agent="bo"),
            Entry("c-000000000b", "learning", "Parser entry", "In src/parse/index.ts.", agent="bo"),
            Entry(
                "d-000000000c",
                "decision",
                "Old release rule",
                "x",
                agent="bo",
                status="superseded",
                superseded_by="d-000000000d",
            ),
        ]
        path = mem.layout.tier_file("cold", "bo")
        store.save(mem.layout, path, TierFile("bo: cold memory", {"tier": "cold"}, entries=cold))
        page = collect(mem.context)
        assert [(e.id, e.stale) for e in page.stale] == [("c-000000000a", ["src/parse/cache.ts"])]
        assert [(e.id, e.superseded_by) for e in page.superseded] == [
            ("d-000000000c", "d-000000000d")
        ]
        html = write(mem, tmp_path)
        assert "src/parse/cache.ts" in html and 'href="#entry-d-000000000d"' in html
    finally:
        mem.close()


def test_outside_git_nothing_is_judged_stale(team: Memory, tmp_path: Path) -> None:
    assert "not in a git repository: nothing is judged stale" in write(team, tmp_path)


def test_a_spawn_preview_says_what_was_loaded_and_why(team: Memory, tmp_path: Path) -> None:
    html = write(team, tmp_path, agent="ada", task="fix the flaky release workflow retries")
    page = collect(team.context, agent="ada", task="fix the flaky release workflow retries")
    preview = page.preview
    assert preview is not None and preview.result.situation
    assert {r.verdict for r in preview.rows} <= {"loaded", "left out", "not loaded"}
    loaded = [r for r in preview.rows if r.verdict == "loaded"]
    assert [r.id for r in loaded] == [s.id for s in preview.result.sources]
    assert all(r.why for r in preview.rows)
    # A loaded entry's reason is the relevance engine's, as the spawn gave it.
    reasons = {s.id: s.why for s in preview.result.sources}
    assert [r.why for r in loaded] == [reasons[r.id] for r in loaded]
    assert "Spawn preview: ada" in html and "The prompt (" in html
    assert "Spawn preview" not in write(team, tmp_path)  # only when asked


def test_logged_spawns_are_counted_per_entry(team: Memory, tmp_path: Path) -> None:
    result = team.spawn("ada", "flaky release workflow", include_cold=True)
    assert result.sources
    page = collect(team.context)
    loaded = {s.id for s in result.sources}
    counted = {e.id: e.spawns for e in [*page.stale, *page.superseded]} | {
        e["i"]: e["n"] for e in json.loads("".join(page.browser))
    }
    assert all(counted.get(i, 0) == 1 for i in loaded if i in counted)
    assert page.recent[0].task == "flaky release workflow"
    assert page.agents[0].spawns == 1 and page.agents[0].spawn_median == result.tokens["total"]


def test_a_report_changes_no_file_of_the_store(team: Memory, tmp_path: Path) -> None:
    def files() -> dict[str, bytes]:
        squad = team.root / ".squad"
        return {
            p.relative_to(squad).as_posix(): p.read_bytes()
            for p in squad.rglob("*")
            if p.is_file() and ".locks" not in p.parts and not is_index(p)
        }

    before = files()
    write(team, tmp_path)
    assert files() == before


def test_bad_arguments_are_refused(team: Memory, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="both a task and an agent"):
        team.report(tmp_path, task="x")
    with pytest.raises(UsageError, match="both a task and an agent"):
        team.report(tmp_path, agent="ada")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is not a folder"):
        team.report(tmp_path / "file")


def test_cli_report(
    team: Memory, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    out = tmp_path / "cli-out"
    root = ("--root", str(team.root))
    code, stdout, err = run_cli("report", "--out", str(out), "--format", "json", *root)
    assert (code, err) == (0, "")
    data = json.loads(stdout)
    assert data["path"] == str(out / "report.html") and data["entries"] > 0
    code, stdout, _ = run_cli(
        "report", "--out", str(out), "--agent", "ada", "--task", "release", "--open", *root
    )
    assert (
        code == 0 and stdout.startswith("report: ") and opened == [(out / "report.html").as_uri()]
    )
    code, _, err = run_cli("report", "--task", "release", *root)
    assert code == 2 and "both a task and an agent" in err


def test_chart_geometry_stays_in_its_box() -> None:
    made = charts.bars("b", [("2026-03-01", 3), ("2026-03-02", 0), ("2026-03-03", 7)])
    assert len(made.shapes) == 3 and charts.nice_max(7) == 10
    for shape in made.shapes:
        assert shape.x >= 0 and shape.x + shape.width <= made.width
        assert shape.y >= 0 and shape.y + shape.height <= made.height
    assert charts.bars("empty", []).empty and charts.bars("zeros", [("a", 0)]).empty
    assert charts.dots("d", [("a", 5.0), ("b", 12.0)]).caption == "median 12"
    paired = charts.hbars("h", [("ada", 10_000, 2_000)], ("Squad", "tiermem"))
    assert [t.text for t in paired.ticks] == ["ada", "10,000", "2,000"]


def test_a_damaged_tier_file_is_skipped_not_fatal(team: Memory, tmp_path: Path) -> None:
    broken = team.layout.tier_file("cold", "zed")
    broken.write_text("# zed\n## t\n<!-- tiermem id=c-1 class=nope -->\nx\n", encoding="utf-8")
    warnings: list[str] = []
    team.context.warn = warnings.append
    html = write(team, tmp_path)
    assert "Tag from main" in html
    assert any("cold/zed.md" in w and "unknown class" in w for w in warnings)


def test_a_large_archive_is_listed_record_by_record_as_whole(
    store_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiermem.report import html_page as report

    mem = Memory(store_copy, now="2026-03-03T10:00:00Z")
    mem.sync()
    whole = list(report._records(mem.context))
    asked: list[str | None] = []
    docs = type(mem.context.index).docs

    def counted(index: object, **where: str | None) -> object:
        asked.append(where.get("path"))
        return docs(index, **where)

    monkeypatch.setattr(type(mem.context.index), "docs", counted)
    monkeypatch.setattr(report, "_OWNER_AT_ONCE_BYTES", 0)  # every owner's archive is large
    assert list(report._records(mem.context)) == whole != []
    assert asked and None not in asked  # each record's chunks asked for alone
    mem.close()
