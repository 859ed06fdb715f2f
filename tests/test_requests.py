"""A request travels whole, and its answer comes back whole.

The request a front builds (the CLI's, the MCP tool's, a program's) is the object the step
receives, checked against its declaration on the way; search answers with its page, where
the next page starts and what became of the entries a query of ids names, and a page marks
used only the entries it shows.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tiermem.cli.main import main
from tiermem.context import Context
from tiermem.errors import TiermemError, UsageError
from tiermem.index.protocol import Doc
from tiermem.memory import Memory
from tiermem.options import SearchRequest, options_of
from tiermem.server.mcp_server import build_server

NOW = "2026-04-01T00:00:00Z"
NOTES = [f"Release step {n}: tag the build and publish package {n}" for n in range(6)]


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    made, _ = Memory.init(tmp_path, now=NOW)
    for note in NOTES:
        made.hot_add("ada", "note", note)
    return made


def _received(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The requests search's step receives, from now on."""
    from tiermem.search import hits

    got: list[object] = []
    real = hits.search

    def step(ctx: Context, request: SearchRequest) -> object:
        got.append(request)
        return real(ctx, request)

    monkeypatch.setattr(hits, "search", step)
    return got


def _marked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the entries a search marks used, from now on."""
    from tiermem.team import use

    got: list[str] = []
    real = use.mark_used

    def mark(ctx: Context, docs: Sequence[Doc]) -> None:
        got.extend(d.parent or d.id for d in docs)
        real(ctx, docs)

    monkeypatch.setattr(use, "mark_used", mark)
    return got


# --- requests travel whole ------------------------------------------------------------------


def test_a_request_reaches_the_step_as_it_was_built(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = _received(monkeypatch)
    asked = SearchRequest("release", agent="ada", limit=3)
    mem.answer("search", asked)
    mem.search("release", agent="ada", limit=3)
    assert got[0] is asked  # the very object: checked, not taken apart and built again
    assert got[1] == asked


def test_the_cli_and_the_mcp_tool_hand_the_step_the_request_they_built(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _received(monkeypatch)
    root = ("--root", str(mem.root), "--now", NOW)
    assert main([*root, "search", "release", "--agent", "ada", "--limit", "2"]) == 0
    capsys.readouterr()

    async def ask() -> None:
        async with Client(build_server(Memory(mem.root, now=NOW))) as client:
            arguments = {"query": "release", "agent": "ada", "limit": 2}
            assert not (await client.call_tool("search", arguments)).is_error

    asyncio.run(ask())
    assert got == [SearchRequest("release", "ada", None, 2, 0)] * 2


def test_a_request_is_checked_against_its_declaration() -> None:
    """Choices, names, texts and bounds come from each field's `Option`: a value the
    declaration refuses is one line, a name is lower-cased as stored, a valid request is the
    request itself."""
    from tiermem.options import checked

    asked = SearchRequest("release", agent="ada")
    assert checked(asked) is asked
    assert checked(SearchRequest("release", agent="Ada")).agent == "ada"
    refusals = {
        "tier": (SearchRequest("x", tier="lukewarm"), "unknown tier 'lukewarm'"),
        "limit": (SearchRequest("x", limit=0), "limit must be between 1 and 10000"),
        "offset": (SearchRequest("x", offset=-1), "offset must be zero or more"),
        "query": (SearchRequest(" "), "query is empty"),
        "agent": (SearchRequest("x", agent="../ada"), "must not contain path separators"),
    }
    for request, said in refusals.values():
        with pytest.raises(UsageError, match=said):
            checked(request)
    declared = {n: (i.choices, i.shape, i.least, i.most) for n, i, _ in options_of(SearchRequest)}
    assert all(declared[name] != (None, "", None, None) for name in refusals)


def test_one_name_asks_whether_an_agent_may_be_new(mem: Memory) -> None:
    """`new_agent` for a program and for the fronts alike: a program's default takes a new
    agent, the fronts' refuses a name the team does not know."""
    from tiermem.options import HotAddRequest

    with pytest.raises(TiermemError, match="unknown agent 'adda'"):
        mem.hot_add("adda", "note", "a typo", new_agent=False)
    mem.hot_add("bo", "note", "a new agent")

    fronts = {n: d for n, _, d in options_of(HotAddRequest)}
    program = {f.name: f.default for f in dataclasses.fields(HotAddRequest)}
    assert fronts["new_agent"] is False and program["new_agent"] is True


# --- answers come back whole ----------------------------------------------------------------


def test_search_pages_on_with_the_next_offset(mem: Memory) -> None:
    every = mem.search("release", limit=6)
    first = mem.search("release", limit=2)
    second = mem.search("release", limit=2, offset=first.next_offset or 0)
    assert first.next_offset == 2 and second.next_offset == 4
    assert [h.id for h in [*first, *second]] == [h.id for h in every[:4]]
    assert mem.search("release", limit=2, offset=4).next_offset is None
    assert every.next_offset is None and len(every) == 6


def test_a_page_over_mcp_marks_used_only_the_entries_it_shows(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page one result long (`max_chars` holds one) from offset 2: the earlier pages'
    entries, and the one after it, are not marked used again."""
    marked = _marked(monkeypatch)

    async def ask() -> dict[str, Any]:
        async with Client(build_server(Memory(mem.root, now=NOW))) as client:
            arguments = {"query": "release", "offset": 2, "max_chars": 600}
            found = await client.call_tool("search", arguments)
            assert not found.is_error and isinstance(found.structured_content, dict)
            return found.structured_content

    page = asyncio.run(ask())
    shown = [r["id"] for r in page["results"]]
    assert len(shown) == 1 and page["next_offset"] == 3
    assert marked == shown
    assert shown[0] == mem.search("release", limit=6)[2].id


def test_search_says_what_was_forgotten_and_which_results_are_whole(mem: Memory) -> None:
    """A query of ids reads its entries whole and says what became of those no result holds:
    a front asks nothing more of the store, nor reads the query again."""
    found = mem.search("release", limit=3)
    assert found and not any(h.whole for h in found) and found.forgotten == []
    kept, gone = found[0].id, found[1].id
    mem.forget(gone, reason="stale")
    read = mem.search(f"{kept} {gone}")
    assert [h.id for h in read] == [kept] and read[0].whole
    [said] = read.forgotten
    assert said.startswith(f"{gone} was forgotten on 2026-04-01 (stale)")
    assert read.to_json()["forgotten"] == [said]


def test_the_cli_pages_with_the_declared_offset(
    mem: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ("--root", str(mem.root), "--now", NOW)
    assert (
        main([*root, "search", "release", "--limit", "1", "--offset", "1", "--format", "json"]) == 0
    )
    import json

    [hit] = json.loads(capsys.readouterr().out)
    assert hit["id"] == mem.search("release", limit=2)[1].id


def test_found_is_gone_for_the_place() -> None:
    """What a search shows is a `relevance.places.Place`, spelled once."""
    from tiermem.search import hits

    assert not hasattr(hits, "Found")
