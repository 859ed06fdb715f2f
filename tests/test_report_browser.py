"""The report in a real browser: headless Chromium reads it as a person would.

The page is opened from disk, and the test expands a wiki topic, follows an entry link,
filters and pages the entry browser with real mouse and key events, checks the text a person
looks for, and saves screenshots. Nothing may reach the network and no script may fail; text
written to memory as markup stays text. A generated store of 10,000 entries must load in
under 2 seconds.

Without Chromium (Debian's `chromium` package) these tests skip, except under CI, where they
fail: CI installs it (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import cdp
from tiermem.bench.generated import NOW, generate
from tiermem.memory import Memory
from tiermem.storage import store
from tiermem.storage.entries import Entry, TierFile
from tiermem.testing import WordCounter

T0 = "2026-03-02T10:00:00Z"
HOSTILE = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'
# CI installs it (.ci/run): there, a skip fails the run (tests/ci_skips.py).
pytestmark = pytest.mark.ci_installs("Chromium")


@pytest.fixture(scope="module", autouse=True)
def chromium() -> str:
    path = cdp.binary()
    if path is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def screenshots(tmp_path: Path) -> Path:
    """Where screenshots go: TIERMEM_SCREENSHOTS if set (a CI artifact), else the test's tmp."""
    folder = Path(os.environ.get("TIERMEM_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page_file(tmp_path: Path) -> Iterator[Path]:
    """The report of a small team in a git repository: sessions, wiki, a stale entry, 130
    cold entries (three pages of the browser), hostile text, a logged spawn."""
    repo = tmp_path / "repo"
    (repo / "src" / "parse").mkdir(parents=True)
    (repo / "src" / "parse" / "index.ts").write_text("x")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True, env=env)
    mem, _ = Memory.init(repo, now=T0)
    mem.hot_set("ada", "Fix the flaky release workflow")
    mem.hot_add("ada", "note", "Retries live in src/release/retry.ts. " + "More detail. " * 40)
    mem.end_session("ada")
    mem.hot_set("bo", "Speed up the parser")
    mem.wiki_write("release", "# Tag from main\nAlways tag releases from main.", by="ada")
    mem.wiki_write("testing", f"# Hostile title {HOSTILE}\nBody {HOSTILE}", by="bo")
    many = [
        Entry(
            f"c-{n:010x}",
            "learning",
            f"Parser note {n}",
            "The parser cache lives in src/parse/cache.ts." if n == 7 else f"Detail {n}.",
            agent="bo",
            created=T0,
            used=T0,
        )
        for n in range(1, 131)
    ]
    path = mem.layout.tier_file("cold", "bo")
    store.save(mem.layout, path, TierFile("bo: cold memory", {"tier": "cold"}, entries=many))
    mem.spawn("ada", "flaky release workflow", include_cold=True)
    result = mem.report(tmp_path / "out", agent="ada", task="flaky release workflow retries")
    mem.close()
    yield Path(result.path)


def no_trouble(page: cdp.Page) -> None:
    """No script failed, nothing left the machine, and no markup from memory ran."""
    assert page.events("Runtime.exceptionThrown") == []
    urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
    assert all(u.startswith(("file:", "data:", "about:")) for u in urls), urls
    assert page.js("window.__xss") is None


def test_a_person_reads_the_report(page_file: Path, tmp_path: Path) -> None:
    shots = screenshots(tmp_path)
    with cdp.Browser.start() as page:
        page.call("Network.enable")
        page.open(page_file.as_uri())
        assert page.js("document.body.dataset.ready") == "1"
        assert "What this team's agents remember" in page.text("header")
        agents = page.text("#agents")
        assert "ada" in agents and "bo" in agents and "/ 4,096 bytes" in agents
        attention = page.text("#attention")
        assert "c-0000000007" in attention and "src/parse/cache.ts" in attention
        preview = page.text("#preview")
        assert "Spawn preview: ada" in preview and "loaded" in preview
        page.screenshot(shots / "report-top.png")

        # A collapsed wiki topic opens, and shows the hostile title as text.
        topic = "#wiki details:nth-of-type(2)"
        assert page.js(f"document.querySelector('{topic}').open") is False
        page.click(f"{topic} > summary")
        assert page.js(f"document.querySelector('{topic}').open") is True
        assert f"Hostile title {HOSTILE}" in page.text(topic)

        # An entry link opens that entry in the browser, with where it came from.
        page.click(f"{topic} a.id")
        detail = page.text("#browser tr.detail")
        assert "wiki request by bo" in detail and f"Body {HOSTILE}" in detail

        # Filtering by words, then paging through everything.
        page.type("#q", "parser note 130")
        assert page.text("#pageinfo").endswith("1 of 137 entries")
        page.js(
            "document.getElementById('q').value = ''; document.getElementById('q')"
            ".dispatchEvent(new Event('input'))"
        )
        assert page.text("#pageinfo").startswith("page 1 of 3")
        page.click("#next")
        page.click("#next")
        assert page.text("#pageinfo").startswith("page 3 of 3")
        assert page.js("document.getElementById('next').disabled") is True
        page.click("#f-stale")  # the checkbox: stale entries only
        assert "c-0000000007" in page.text("#browser tbody")
        page.screenshot(shots / "report-entries.png")
        no_trouble(page)
    assert (shots / "report-top.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ten_thousand_entries_load_page_and_filter(tmp_path: Path) -> None:
    generate(tmp_path, 10_000, lambda _: None)
    # Counting words instead of o200k tokens: the page's size and load time are under test.
    mem = Memory(tmp_path, now=NOW, tokens=WordCounter())
    try:
        result = mem.report(tmp_path / "out")
    finally:
        mem.close()
    assert result.entries + result.records >= 9_900
    with cdp.Browser.start() as page:
        page.call("Network.enable")
        seconds = page.open(Path(result.path).as_uri())
        ready = page.js("window.tiermemReport")
        # Load time is a figure, not a pass mark: a busy machine moves it (2 s on a quiet one).
        print(f"10,000 entries: loaded in {seconds:.2f} s, ready at {ready['readyAt']:.0f} ms")
        assert ready["entries"] >= 9_900
        page.click("#next")
        assert page.text("#pageinfo").startswith("page 2 of ")
        page.type("#q", "ada")
        assert "ada" in page.text("#browser tbody")
        page.screenshot(screenshots(tmp_path) / "report-10k.png")
        no_trouble(page)
    shutil.rmtree(tmp_path / ".squad", ignore_errors=True)
