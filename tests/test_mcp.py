"""The MCP server: every tool and resource in process, and the real stdio server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from reliability import is_index
from tiermem.errors import StoreError
from tiermem.memory import Memory
from tiermem.server.mcp_server import build_server, serve

NOW = "2026-03-02T10:00:00Z"

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
READ_ONLY = {
    *("hot_show", "read_entry", "read_tier", "wiki_list", "wiki_read", "search", "spawn"),
    "agents",
}
TEMPLATES = {"memory://hot/{agent}", "memory://cold/{agent}", "memory://wiki/{topic}"}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERMEM_NOW", NOW)
    monkeypatch.delenv("TIERMEM_ROOT", raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Memory.init(tmp_path)
    return tmp_path


@asynccontextmanager
async def connect(root: Path, mode: str = "legacy") -> AsyncIterator[Client]:
    """A client on a fresh server over the store; "legacy" goes through JSON-RPC streams."""
    async with Client(build_server(Memory(root)), mode=mode) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def call_text(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    return _text(result)


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def store_files(root: Path) -> dict[str, bytes]:
    """Every file under the root and its bytes, but for locks and the index."""
    # Lock files and the index are transient, git-ignored and rebuilt at will.
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".locks" not in p.parts and not is_index(p)
    }


async def seed(client: Client) -> None:
    await call(
        client,
        "hot_set",
        agent="flight",
        task="Fix the login bug",
        why="users are locked out",
        talking_to="lead",
    )
    await call(client, "hot_add", agent="flight", kind="decision", text="Use JWT refresh tokens")
    await call(
        client, "hot_add", agent="flight", kind="blocker", text="Waiting on staging API keys"
    )
    await call(client, "hot_add", agent="flight", kind="action", text="Reproduced the login loop")
    await call(client, "hot_add", agent="flight", kind="note", text="Session cookie is not renewed")
    await call(
        client,
        "wiki_write",
        topic="release",
        text="Always tag releases\nEvery release gets a semver tag and a changelog entry.",
        by="lead",
        new_agent=True,  # as for a hot write: a name the team does not know is refused
    )


# --- the tool list ------------------------------------------------------------------


async def test_every_tool_is_described_and_annotated(root: Path) -> None:
    async with connect(root) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    hints = {}
    for name, tool in tools.items():
        assert tool.description and "\n" not in tool.description.strip()
        assert tool.output_schema is None, name  # the answer's JSON names its fields
        assert tool.annotations is not None
        # A hint left out is the protocol's default: not read-only, destructive, not
        # idempotent, open to the world.
        given = tool.annotations.model_dump()
        hints[name] = {
            "read_only": given["read_only_hint"] or False,
            "destructive": given["destructive_hint"] is not False,
            "idempotent": given["idempotent_hint"] or False,
            "open_world": given["open_world_hint"] is not False,
        }
        assert not hints[name]["open_world"], name
        assert hints[name]["read_only"] is (name in READ_ONLY), name
    assert tools["hot_add"].input_schema["properties"]["kind"]["enum"] == [
        "action",
        "decision",
        "blocker",
        "note",
    ]
    assert hints["hot_set"]["destructive"] and not hints["hot_set"]["idempotent"]
    assert not hints["hot_add"]["destructive"]
    assert hints["hot_unblock"]["destructive"] and hints["hot_unblock"]["idempotent"]
    assert hints["forget"]["destructive"] and not hints["forget"]["idempotent"]


async def test_resource_templates_are_markdown(root: Path) -> None:
    async with connect(root) as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == TEMPLATES
    assert {t.mime_type for t in templates} == {"text/markdown"}


# --- hot ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_hot_tools_round_trip(root: Path, mode: str) -> None:
    async with connect(root, mode) as client:
        await seed(client)
        shown = await call(client, "hot_show", agent="Flight")
        assert shown["agent"] == "flight" and shown["session"]
        assert {e["slot"] for e in shown["entries"]} == {
            "task",
            "why",
            "talking-to",
            "decision",
            "blocker",
            "action",
            "note",
        }
        assert "Use JWT refresh tokens" in shown["markdown"]
        assert shown["entries"][0]["class"] == "status"

        done = await call(client, "hot_unblock", agent="flight", text="staging api")
        assert done["ids"] and done["messages"]
        after = await call(client, "hot_show", agent="flight")
    assert not any(e["slot"] == "blocker" for e in after["entries"])
    assert any("Unblocked: Waiting on staging API keys" in e["title"] for e in after["entries"])
    assert (root / ".squad/memory/hot/flight.md").read_text().count("Fix the login bug") == 1


async def test_hot_set_reports_redactions(root: Path) -> None:
    async with connect(root) as client:
        report = await call(
            client, "hot_set", agent="flight", task="deploy with password=hunter2hunter2 on staging"
        )
    assert report["redactions"]
    assert "hunter2hunter2" not in (root / ".squad/memory/hot/flight.md").read_text()


# --- reading ------------------------------------------------------------------------


async def test_search_returns_hits_with_their_fields(root: Path) -> None:
    async with connect(root) as client:
        await seed(client)
        every = (await call(client, "search", query="login bug"))["results"]
        hot_only = (await call(client, "search", query="release tag", tier="hot"))["results"]
        wiki = (await call(client, "search", query="release tag", tier="wiki", limit=1))["results"]
        other = await client.call_tool("search", {"query": "login", "agent": "nobody"})
    assert every and set(every[0]) == {
        *("id", "tier", "agent", "path", "title", "text", "score"),
        *("class", "created", "tokens", "session", "sources", "origin", "spans", "trust", "whole"),
    }
    assert every[0]["agent"] == "flight" and isinstance(every[0]["score"], float)
    assert all(hit["tier"] == "hot" for hit in hot_only)
    assert len(wiki) == 1 and wiki[0]["tier"] == "wiki" and "semver" in wiki[0]["text"]
    assert other.is_error and "unknown agent 'nobody'" in _text(other)


async def test_a_search_for_a_forgotten_id_says_when_and_why(root: Path) -> None:
    async with connect(root) as client:
        await seed(client)
        [hit, *_] = (await call(client, "search", query="login bug"))["results"]
        await call(client, "forget", id=hit["id"], reason="wrong fix")
        found = await call(client, "search", query=hit["id"])
    assert found["results"] == []
    [said] = found["forgotten"]
    assert said.startswith(f"{hit['id']} was forgotten on {NOW[:10]} (wrong fix)")


async def test_read_tier_and_resources(root: Path) -> None:
    async with connect(root) as client:
        await seed(client)
        hot_file = await call_text(client, "read_tier", tier="hot", name="flight")
        assert hot_file == (root / ".squad/memory/hot/flight.md").read_text()
        wiki_page = await call_text(client, "read_tier", tier="wiki", name="release")
        hot = await client.read_resource("memory://hot/flight")
        wiki = await client.read_resource("memory://wiki/release")
        await call(client, "end_session", agent="flight")
        cold = await client.read_resource("memory://cold/flight")
        with pytest.raises(MCPError, match="no cold file for 'nobody'"):
            await client.read_resource("memory://cold/nobody")
        with pytest.raises(MCPError):
            await client.read_resource("memory://hot/..")
    assert "Fix the login bug" in hot_file
    assert "Always tag releases" in wiki_page
    texts = {}
    for name, result in (("hot", hot), ("wiki", wiki), ("cold", cold)):
        content = result.contents[0]
        assert content.mime_type == "text/markdown"
        texts[name] = getattr(content, "text", "")
    assert "Fix the login bug" in texts["hot"]
    assert texts["wiki"] == wiki_page
    assert texts["cold"] == (root / ".squad/memory/cold/flight.md").read_text()


async def test_wiki_tools(root: Path) -> None:
    async with connect(root) as client:
        entry = await call(
            client,
            "wiki_write",
            topic="Testing",
            text="# Tests run offline\nNo test may reach the network.",
            by="lead",
        )
        pages = (await call(client, "wiki_list"))["pages"]
        page = await call_text(client, "wiki_read", topic="testing")
    assert entry["topic"] == "testing" and entry["path"] == ".squad/memory/wiki/testing.md"
    assert entry["title"] == "Tests run offline" and entry["class"]
    assert [p["topic"] for p in pages] == ["testing"] and pages[0]["active"] == 1
    assert page == (root / ".squad/memory/wiki/testing.md").read_text()
    assert entry["id"] in page


async def test_end_session_and_read_entry(root: Path) -> None:
    async with connect(root) as client:
        await seed(client)
        report = await call(client, "end_session", agent="flight")
        record_id = Path(report["archived"][0]).stem
        record = await call(client, "read_entry", agent="flight", id=record_id)
        hot = await call(client, "hot_show", agent="flight")
    assert report["cold"] and report["carried"] and report["summarizer"]
    assert record["id"] == record_id and record["path"].endswith(report["archived"][0])
    assert (record["tier"], record["source"], record["next_offset"]) == (
        "archive",
        "hot/flight.md",
        None,
    )
    assert "Use JWT refresh tokens" in record["text"]
    # Blockers outlive the session; everything else moved to cold.
    assert [e["slot"] for e in hot["entries"]] == ["blocker"]


async def test_spawn_returns_the_cli_json_shape(root: Path) -> None:
    arguments: dict[str, Any] = {
        "agent": "flight",
        "task": "continue the login bug",
        "why": "users are locked out",
        "criteria": ["login works after token expiry"],
        "include_cold": True,
        "include_wiki": [],
        "budget": 800,
    }
    async with connect(root) as client:
        await seed(client)
        await call(client, "end_session", agent="flight")
        await call(client, "hot_set", agent="flight", task="Retry the token refresh")
        result = await call(client, "spawn", **arguments)
        auto = await call(
            client, "spawn", agent="flight", task="debug the login bug again", auto=True
        )
    request = dict(
        task=arguments["task"],
        why=arguments["why"],
        criteria=tuple(arguments["criteria"]),
        include_cold=True,
        include_wiki=(),
        budget=800,
    )
    mem = Memory(root)
    try:
        expected = mem.spawn("flight", **request).to_json()
    finally:
        mem.close()
    assert result == expected
    assert (
        result["tiers"] == ["hot", "cold", "wiki"] and "Retry the token refresh" in result["prompt"]
    )
    assert "cold" in auto["tiers"] and auto["reason"]


async def test_forget_retires_an_entry_and_keeps_its_text(root: Path) -> None:
    async with connect(root) as client:
        await seed(client)
        wiki = (await call(client, "search", query="semver tag", tier="wiki"))["results"]
        report = await call(client, "forget", id=wiki[0]["id"], reason="we tag differently now")
        after = (await call(client, "search", query="semver tag"))["results"]
    assert report["ids"] == [wiki[0]["id"]] and report["files"] == [".squad/memory/wiki/release.md"]
    assert report["archived"].startswith("archive/lead/") and not report["purged"]
    assert [hit["tier"] for hit in after] == ["archive"]


# --- errors -------------------------------------------------------------------------


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("hot_show", {"agent": "nobody"}, "unknown agent 'nobody'"),
    (
        "hot_add",
        {"agent": "../x", "kind": "note", "text": "hi"},
        "must not contain path separators",
    ),
    ("hot_add", {"agent": "flight", "kind": "note", "text": "  "}, "note is empty"),
    ("hot_set", {"agent": "flight", "task": ""}, "task is empty"),
    ("hot_unblock", {"agent": "nobody", "text": "x"}, "unknown agent 'nobody'"),
    ("spawn", {"agent": "nobody", "task": "x"}, "unknown agent 'nobody' (agents: flight)"),
    ("spawn", {"agent": "fligth", "task": "x"}, "did you mean 'flight'?"),
    ("hot_set", {"agent": "fligth", "task": "x"}, "did you mean 'flight'?"),
    ("hot_add", {"agent": "fligth", "kind": "note", "text": "x"}, "new_agent in MCP"),
    ("hot_unblock", {"agent": "flight", "text": "no such blocker"}, "no blocker of flight"),
    ("search", {"query": " "}, "query is empty"),
    ("search", {"query": "x", "limit": 0}, "limit must be between 1 and"),
    ("search", {"query": "x", "agent": "../x"}, "must not contain"),
    ("search", {"query": "x", "tier": "attic"}, "argument 'tier' must be one of 'hot'"),
    (
        "read_entry",
        {"agent": "flight", "id": "../../hot/flight"},
        "is not an entry id",
    ),
    ("read_entry", {"agent": "flight", "id": "a-0000000000"}, "no archive record"),
    ("read_tier", {"tier": "cold", "name": "nobody"}, "no cold file for 'nobody'"),
    ("wiki_read", {"topic": "nothing"}, "no wiki page 'nothing'"),
    ("wiki_write", {"topic": "release", "text": "x", "by": "../../escaped"}, "must not contain"),
    ("wiki_write", {"topic": "../release", "text": "x"}, "must not contain"),
    ("spawn", {"agent": "flight", "task": "x", "budget": -1}, "budget"),
    ("spawn", {"agent": "flight", "task": "x", "include_wiki": ["../etc"]}, "must not contain"),
    ("end_session", {"agent": "Bad Name"}, "agent name"),
    ("end_session", {"agent": "nobody"}, "unknown agent 'nobody'"),
    ("forget", {"id": "../../hot/flight"}, "not an entry id"),
    ("forget", {"id": "c-0000000000"}, "no entry c-0000000000"),
    ("forget", {"id": "a-0000000000"}, "no archived text a-0000000000"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD_CALLS)
async def test_bad_input_is_an_error_result_and_writes_nothing(
    root: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with connect(root) as client:
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        before = store_files(root)
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = _text(result)
    assert message in text and "Traceback" not in text
    assert "\n" not in text
    assert store_files(root) == before


# Arguments of the wrong type: one line saying what the argument must be, never the
# validator's report (its error count, type names, its web page).
WRONG_TYPES: list[tuple[str, dict[str, Any], str]] = [
    (
        "hot_set",
        {"agent": "flight", "task": {"text": "x"}},
        "argument 'task' must be text, not an object",
    ),
    (
        "hot_add",
        {"agent": "flight", "kind": "note", "text": ["x"]},
        "argument 'text' must be text, not a list",
    ),
    (
        "hot_add",
        {"agent": "flight", "kind": "memo", "text": "x"},
        "argument 'kind' must be one of 'action'",
    ),
    ("wiki_write", {"topic": "release", "text": 12}, "argument 'text' must be text, not 12"),
    ("search", {"query": "x", "limit": "ten"}, "argument 'limit' must be a whole number"),
    ("search", {"query": {"q": "x"}}, "argument 'query' must be text, not an object"),
    ("read_entry", {"id": None}, "argument 'id' must be text, not null"),
    (
        "spawn",
        {"agent": "flight", "task": "x", "criteria": [{"c": 1}]},
        "'criteria'[0] must be text",
    ),
    ("spawn", {"agent": "flight", "task": "x", "max_chars": 5}, "from 200 to 1000000, not 5"),
    (
        "forget",
        {"id": "c-0000000000", "purge": "sometimes"},
        "argument 'purge' must be true or false",
    ),
    ("hot_set", {"agent": "flight"}, "argument 'task' is missing"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), WRONG_TYPES)
async def test_an_argument_of_the_wrong_type_is_refused_in_one_line(
    root: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with connect(root) as client:
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        before = store_files(root)
        result = await client.call_tool(tool, arguments)
    text = _text(result)
    assert result.is_error and text.startswith(f"{tool}: ") and message in text
    assert "\n" not in text and "validation error" not in text and "pydantic" not in text
    assert store_files(root) == before


@pytest.mark.parametrize("argument", ["why", "talking_to"])
async def test_null_for_a_value_hot_set_keeps_is_refused_not_dropped(
    root: Path, argument: str
) -> None:
    async with connect(root) as client:
        await call(client, "hot_set", agent="flight", task="Fix it", why="v0.9.1", talking_to="ops")
        before = store_files(root)
        result = await client.call_tool(
            "hot_set", {"agent": "flight", "task": "Fix it again", argument: None}
        )
        view = await call(client, "hot_show", agent="flight")
    text = _text(result)
    assert result.is_error and "\n" not in text
    assert f"argument '{argument}': null is no value: omit the argument" in text
    assert store_files(root) == before
    assert "Fix it again" not in view["markdown"] and "v0.9.1" in view["markdown"]


async def test_null_for_why_of_a_spawn_means_none_and_says_so(root: Path) -> None:
    async with connect(root) as client:
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await call(client, "spawn", agent="flight", task="ship", why=None)
    assert tools["spawn"].input_schema["properties"]["why"] == {"type": "string"}
    assert "## WHY" not in result["prompt"]  # null is taken all the same, as no why


async def test_a_refused_write_of_a_secret_writes_not_even_its_audit_line(root: Path) -> None:
    arguments = {"agent": "flight", "task": "deploy with password=hunter2hunter2", "why": " "}
    async with connect(root) as client:
        before = store_files(root)
        result = await client.call_tool("hot_set", arguments)
    assert result.is_error
    assert store_files(root) == before


async def test_a_long_first_line_is_cut_into_a_title_not_refused(root: Path) -> None:
    async with connect(root) as client:
        result = await client.call_tool("wiki_write", {"topic": "release", "text": "x" * 600})
    assert not result.is_error
    page = (root / ".squad" / "memory" / "wiki" / "release.md").read_text(encoding="utf-8")
    assert "x" * 600 in page


# --- lifetime -----------------------------------------------------------------------


async def test_shutdown_closes_the_index_and_joins_the_worker(root: Path) -> None:
    mem = Memory(root)
    async with Client(build_server(mem), mode="legacy") as client:
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        await call(client, "search", query="login")
        assert mem.context._index is not None
    assert mem.context._index is None
    assert not [t for t in threading.enumerate() if t.name.startswith("tiermem-mcp")]


def test_serve_refuses_a_folder_without_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="run `tiermem init`"):
        serve(Memory(tmp_path))
    assert list(tmp_path.iterdir()) == []


# --- the real stdio server ----------------------------------------------------------


def _server_command(root: Path) -> list[str]:
    return [sys.executable, "-m", "tiermem", "serve", "--root", str(root)]


def _server_env() -> dict[str, str]:
    return {key: os.environ[key] for key in ("TIERMEM_NOW",)}


def _processes_running(marker: str) -> list[int]:
    """Live processes whose command line mentions `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
async def test_stdio_session_and_no_leaked_process(root: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=_server_command(root)[1:], env=_server_env()
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        hits = (await call(client, "search", query="login", agent="flight"))["results"]
        prompt = await call(client, "spawn", agent="flight", task="continue the login bug")
        assert _processes_running(str(root))
        closing = time.monotonic()
    closed_in = time.monotonic() - closing
    assert names == TOOLS
    assert hits and hits[0]["title"] == "Task: Fix the login bug"
    assert "Fix the login bug" in prompt["prompt"]
    deadline = time.monotonic() + 5
    while _processes_running(str(root)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _processes_running(str(root))
    # The client kills a server that ignores EOF only after a grace period; ours leaves first.
    assert closed_in < 5


class _RawServer:
    """The server process driven by hand, to see exactly how it ends."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            _server_command(root),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **_server_env()},
        )
        self._next_id = 0

    def send(self, method: str, params: dict[str, Any], *, notify: bool = False) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next_id += 1
            message["id"] = self._next_id
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer

    def initialize(self) -> None:
        self.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        assert self.answer()["result"]["serverInfo"]["name"] == "tiermem"
        self.send("notifications/initialized", {}, notify=True)

    def finish(self) -> tuple[int, str]:
        """Close stdin and wait for the exit status and stderr."""
        _, err = self.process.communicate(timeout=15)
        return self.process.returncode, err.decode(errors="replace")


@pytest.fixture
def raw_server(root: Path) -> Iterator[_RawServer]:
    server = _RawServer(root)
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait()


# What an agent that loads the server pays in every session for its tools (o200k tokens).
MOST_TOOL_TOKENS = 2000


def test_the_tool_definitions_a_model_sees_cost_at_most_2000_tokens(
    raw_server: _RawServer,
) -> None:
    """Every tool's name, title, description, input schema and annotations, as the real
    server lists them over stdio: lean, each argument as its type with its default, no
    union with null, no titles, no output schemas (9,352 tokens once, with them)."""
    from tiermem.index.tokens import O200kCounter

    raw_server.initialize()
    raw_server.send("tools/list", {})
    tools = raw_server.answer()["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    assert not [t["name"] for t in tools if "outputSchema" in t]
    schemas = json.dumps([t["inputSchema"] for t in tools])
    assert '"anyOf"' not in schemas and '"title"' not in schemas
    status, _ = raw_server.finish()
    [cost] = O200kCounter().count_many([json.dumps(tools)])
    assert status == 0 and cost <= MOST_TOOL_TOKENS, f"{cost} tokens of tool definitions"


def test_stdin_eof_ends_the_server_with_status_0(raw_server: _RawServer) -> None:
    raw_server.initialize()
    raw_server.send(
        "tools/call",
        {"name": "hot_add", "arguments": {"agent": "flight", "kind": "note", "text": "hi"}},
    )
    answer = raw_server.answer()
    assert answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["ids"]
    status, stderr = raw_server.finish()
    assert status == 0 and "Traceback" not in stderr


def test_a_client_that_vanishes_mid_answer_leaves_no_traceback(raw_server: _RawServer) -> None:
    raw_server.initialize()
    assert raw_server.process.stdout is not None
    raw_server.process.stdout.close()
    for _ in range(3):
        raw_server.send("tools/call", {"name": "wiki_list", "arguments": {}})
    status, stderr = raw_server.finish()
    assert status == 0 and "Traceback" not in stderr


async def test_a_new_agent_is_written_when_said_to_be_new(root: Path) -> None:
    async with connect(root) as client:
        await call(client, "hot_set", agent="flight", task="Fix the login bug")
        refused = await client.call_tool("hot_set", {"agent": "eecom", "task": "Reader"})
        assert refused.is_error and "unknown agent 'eecom'" in _text(refused)
        await call(client, "hot_set", agent="eecom", task="Reader", new_agent=True)
        await call(client, "hot_add", agent="eecom", kind="note", text="known now")
        shown = await call(client, "hot_show", agent="eecom")
    assert "known now" in shown["markdown"]
