"""Provenance: every search hit says which session and sources it came from, and in words."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.storage import store
from tiermem.storage.entries import Entry, TierFile

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    yield made
    made.close()


def one(mem: Memory, query: str, **scope: str) -> dict[str, object]:
    hits = mem.search(query, limit=1, **scope)  # type: ignore[arg-type]
    assert hits, query
    return hits[0].to_json()


def test_a_hot_entry_names_its_session(mem: Memory) -> None:
    mem.hot_set("ada", "Tune the zebrafish parser")
    hit = one(mem, "zebrafish", tier="hot")
    assert re.fullmatch(r"s\d{14}", str(hit["session"]))
    assert hit["sources"] == []
    assert hit["origin"] == f"ada's current session {hit['session']}"


def test_a_session_summary_names_its_session_and_the_archived_raw_text(mem: Memory) -> None:
    mem.hot_set("ada", "Tune the zebrafish parser")
    mem.hot_add("ada", "note", "The zebrafish parser drops trailing tabs in src/parse.ts.")
    session = mem.hot_view("ada").session
    mem.end_session("ada")
    hit = one(mem, "zebrafish", tier="cold")
    assert hit["session"] == session
    sources = hit["sources"]
    assert isinstance(sources, list) and sources
    assert all(re.fullmatch(r"archive/ada/a-[0-9a-f]{10}-[0-9a-f]{10}\.md", s) for s in sources)
    assert str(hit["origin"]).startswith("ada's session, archived when it ended on 2026-03-02")
    assert str(hit["origin"]).endswith(f"; session {session}")


def test_decisions_and_wiki_requests_say_who_recorded_them(mem: Memory) -> None:
    mem.decide("### 2026-03-02: Pin the okapi SDK\n**What:** exact versions", by="flight")
    mem.wiki_write("release", "# Okapi release train\nAlways tag from main.", by="fido")
    assert one(mem, "okapi sdk", tier="cold")["origin"] == (
        "decision recorded by flight on 2026-03-02"
    )
    assert one(mem, "okapi release train", tier="wiki")["origin"] == (
        "wiki request by fido on 2026-03-02"
    )


def test_an_imported_entry_names_the_squad_file_and_line(tmp_path: Path) -> None:
    history = tmp_path / ".squad" / "agents" / "eecom" / "history.md"
    history.parent.mkdir(parents=True)
    history.write_text(
        "# EECOM\n\n## Learnings\n\n### 2026-02-28: Quokka retries\n"
        "Capped quokka publish retries at 3 in `scripts/publish.mjs`.\n",
        encoding="utf-8",
    )
    mem, _ = Memory.init(tmp_path, now=T0, squad_files=False)
    try:
        mem.import_squad()
        hit = one(mem, "quokka retries", tier="cold")
        # Not in git: no commit dates the file, and the import's own day dates nothing.
        assert hit["origin"] == "imported from .squad/agents/eecom/history.md, line 5"
        raw = one(mem, "quokka retries", tier="archive")
        assert raw["origin"] == "raw text: imported from .squad/agents/eecom/history.md"
        by_id = mem.search(str(hit["id"]))[0].to_json()
        assert by_id["origin"] == hit["origin"] and by_id["sources"] == hit["sources"]
    finally:
        mem.close()


def test_entries_without_usable_sources_say_so(mem: Memory) -> None:
    entries = [
        Entry("c-000000000a", "learning", "Hand written wombat", "no sources", agent="ada"),
        Entry(
            "c-000000000b",
            "learning",
            "Lost wombat",
            "gone",
            agent="ada",
            sources=("archive/ada/a-00000000ff.md",),
        ),
        Entry("c-000000000c", "learning", "Odd wombat", "x", agent="ada", sources=("notes.md",)),
    ]
    path = mem.layout.tier_file("cold", "ada")
    store.save(mem.layout, path, TierFile("ada: cold memory", {"tier": "cold"}, entries=entries))
    origins = {h.id: h.origin for h in mem.search("wombat")}
    assert origins == {
        "c-000000000a": "no source recorded (written by hand, or before sources were kept)",
        "c-000000000b": "archive record archive/ada/a-00000000ff.md (not found)",
        "c-000000000c": "cited as notes.md",
    }


def test_cli_search_shows_where_each_hit_came_from(mem: Memory, run_cli: RunCli) -> None:
    mem.decide("### 2026-03-02: Pin the okapi SDK\n**What:** exact versions", by="flight")
    code, out, _ = run_cli("search", "okapi", "--tier", "cold", "--root", str(mem.root))
    assert code == 0 and "from: decision recorded by flight on 2026-03-02" in out
    code, out, _ = run_cli("search", "okapi", "--format", "json", "--root", str(mem.root))
    assert {"session", "sources", "origin"} <= set(json.loads(out)[0])
