"""MCP tools' arguments: every bound, choice and list a schema declares is said in words a
caller can act on, in one line, and nothing is written; resources name what is missing apart
from what is malformed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from reliability import snapshot
from tiermem.memory import Memory
from tiermem.server.mcp_server import build_server

NOW = "2026-03-02T10:00:00Z"
INVALID_PARAMS = -32602  # the JSON-RPC code for a resource that does not exist

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TIERMEM_NOW", NOW)
    mem, _ = Memory.init(tmp_path)
    mem.hot_set("flight", "Fix the login bug", why="users are locked out")
    mem.wiki_write("release", "# Tag releases\nEvery release gets a semver tag.", by="flight")
    mem.close()
    return tmp_path


@asynccontextmanager
async def session(root: Path) -> AsyncIterator[Client]:
    async with Client(build_server(Memory(root)), mode="legacy") as client:
        yield client


async def refusal(root: Path, tool: str, arguments: dict[str, Any]) -> str:
    """The one line a refused call answers with; the store is checked unchanged."""
    before = snapshot(root)
    async with session(root) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent) and "\n" not in block.text
    assert snapshot(root) == before
    return block.text


# Each bound the schemas declare, said with both ends, one end, or a choice.
SCHEMA_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("wiki_list", {"limit": 0}, "argument 'limit' must be a whole number from 1 to 1000, not 0"),
    ("agents", {"limit": 5000}, "argument 'limit' must be a whole number from 1 to 1000, not 5000"),
    ("read_entry", {"id": "c-1", "offset": -5}, "'offset' must be a whole number of at least 0"),
    ("hot_show", {"agent": "flight", "max_chars": 10}, "from 200 to 1000000, not 10"),
    ("read_tier", {"tier": "cold", "name": "flight", "max_chars": 2_000_000}, "not 2000000"),
    (
        "search",
        {"query": "x", "tier": "lukewarm"},
        "'tier' must be one of 'hot', 'cold', 'wiki', 'archive' (or null), not text \"lukewarm\"",
    ),
    (
        "read_tier",
        {"tier": "archive", "name": "flight"},
        "'tier' must be one of 'hot', 'cold', 'wiki', not text \"archive\"",
    ),
    (
        "hot_add",
        {"agent": "flight", "kind": "note", "text": "x", "source": "mail"},
        "'source' must be one of 'agent', 'user', 'tool', 'web' (or null), not text \"mail\"",
    ),
    (
        "spawn",
        {"agent": "flight", "task": "x", "include_wiki": "release"},
        "'include_wiki' must be a list, each text (or null), not text \"release\"",
    ),
    ("hot_unblock", {"agent": "flight"}, "argument 'text' is missing"),
    ("search", {}, "argument 'query' is missing"),
]


@pytest.mark.parametrize(("tool", "arguments", "said"), SCHEMA_REFUSALS)
async def test_a_schema_refusal_names_the_argument_and_what_it_must_be(
    root: Path, tool: str, arguments: dict[str, Any], said: str
) -> None:
    text = await refusal(root, tool, arguments)
    assert text.startswith(f"{tool}: ") and said in text
    assert "validation" not in text and "pydantic" not in text


# Values the schema lets through and the store refuses: the store's own words.
STORE_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": "x", "limit": 0}, "limit must be between 1 and 10000"),
    ("search", {"query": "x", "offset": -1}, "offset must be zero or more"),
    ("spawn", {"agent": "flight", "task": "t", "budget": -1}, "budget must be zero or more"),
    ("hot_add", {"agent": "nobody", "kind": "note", "text": "x"}, "unknown agent 'nobody'"),
    ("hot_unblock", {"agent": "flight", "text": "no such blocker"}, "no blocker of flight matches"),
    ("wiki_read", {"topic": "nothing-here"}, "nothing-here"),
    ("read_tier", {"tier": "cold", "name": "../hot/flight"}, "name"),
]


@pytest.mark.parametrize(("tool", "arguments", "said"), STORE_REFUSALS)
async def test_a_value_the_store_refuses_is_one_line_and_writes_nothing(
    root: Path, tool: str, arguments: dict[str, Any], said: str
) -> None:
    text = await refusal(root, tool, arguments)
    assert said in text and "Traceback" not in text


async def test_an_unknown_tool_is_an_error_result(root: Path) -> None:
    text = await refusal(root, "delete_everything", {})
    assert text == "Unknown tool: delete_everything"


async def test_paging_past_the_end_is_an_empty_page_not_an_error(root: Path) -> None:
    async with session(root) as client:
        pages = await client.call_tool("wiki_list", {"limit": 2, "offset": 9})
        agents = await client.call_tool("agents", {"offset": 50})
    assert pages.structured_content == {"pages": [], "next_offset": None}
    assert not agents.is_error and agents.structured_content is not None
    assert agents.structured_content["next_offset"] is None


async def test_a_first_page_of_one_says_where_the_next_starts(root: Path) -> None:
    mem = Memory(root)
    mem.wiki_write("testing", "# Run the suite\nRun it before every merge.", by="flight")
    mem.close()
    async with session(root) as client:
        first = await client.call_tool("wiki_list", {"limit": 1})
        second = await client.call_tool("wiki_list", {"limit": 1, "offset": 1})
    assert first.structured_content is not None and second.structured_content is not None
    assert first.structured_content["next_offset"] == 1
    assert second.structured_content["next_offset"] is None
    pages = first.structured_content["pages"] + second.structured_content["pages"]
    topics = [p["topic"] for p in pages]
    assert sorted(topics) == ["release", "testing"]


@pytest.mark.parametrize(
    ("uri", "code", "said"),
    [
        ("memory://cold/nobody", INVALID_PARAMS, "no cold file for 'nobody'"),
        ("memory://wiki/none", INVALID_PARAMS, "no wiki file for 'none'"),
        ("memory://hot/Bad%20Name", None, "did you mean 'bad-name'?"),
    ],
)
async def test_a_resource_that_is_missing_is_told_apart_from_a_bad_name(
    root: Path, uri: str, code: int | None, said: str
) -> None:
    async with session(root) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert said in caught.value.message and "\n" not in caught.value.message
    if code is None:
        assert caught.value.code != INVALID_PARAMS  # malformed, not missing
    else:
        assert caught.value.code == code


async def test_a_resource_reads_the_tier_file_as_it_is_on_disk(root: Path) -> None:
    async with session(root) as client:
        hot = await client.read_resource("memory://hot/flight")
        wiki = await client.read_resource("memory://wiki/release")
    on_disk = root / ".squad" / "memory"
    [hot_text] = [getattr(c, "text", None) for c in hot.contents]
    assert hot_text == (on_disk / "hot" / "flight.md").read_text(encoding="utf-8")
    assert "Every release gets a semver tag." in getattr(wiki.contents[0], "text", "")


# Text that reads as JSON is text: a note may well be JSON, and a `why` a list.
JSON_TEXTS = ['{"retries": 3, "backoff": "exp"}', "[1, 2, 3]", "null", "true", '{"a": {"b": []}}']


@pytest.mark.parametrize("text", JSON_TEXTS)
async def test_every_text_argument_takes_text_that_looks_like_json(root: Path, text: str) -> None:
    async with session(root) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("hot_set", {"agent": "flight", "task": text, "why": text, "talking_to": text}),
            ("hot_add", {"agent": "flight", "kind": "blocker", "text": text}),
            ("hot_unblock", {"agent": "flight", "text": text}),
            ("search", {"query": text}),
            ("wiki_write", {"topic": "release", "text": f"# Settings\n{text}", "by": "flight"}),
            ("spawn", {"agent": "flight", "task": text, "why": text, "criteria": [text]}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result.content)
        answer = await client.call_tool("forget", {"id": "c-0000000000", "reason": text})
    block = answer.content[0]
    assert isinstance(block, TextContent) and "no entry c-0000000000" in block.text
    mem = Memory(root)
    view = mem.hot_view("flight")
    mem.close()
    kept = {e.slot: e for e in view.entries}
    assert {kept[s].title.partition(": ")[2] for s in ("task", "why", "talking-to")} == {text}
    assert text in view.markdown and "blocker" not in kept  # unblocked by its JSON text
