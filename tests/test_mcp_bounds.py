"""MCP answers are bounded by default, say what they left out, and page on; read_entry reads
any id a search gives; the team's agents and every tier file are listed.

Over the real MCP SDK client, on a real team's `.squad/` imported into a scratch store (from
../shared/corpora, where it is) and on a small store made here.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

import corpora
from tiermem.cli.main import main
from tiermem.memory import Memory
from tiermem.server.mcp_server import build_server
from tiermem.storage import archive, store
from tiermem.storage.entries import Entry, split_entry

NOW = "2026-04-01T00:00:00Z"
CORPORA = corpora.CORPORA
TEAM = CORPORA / "bradygaster__squad"  # the one with the longest history (387 KB)
# What a default answer may reach: 8,000 characters of text and the JSON around it.
BOUND = 16_000
_MARKER = re.compile(r"\n\n\[truncated: (\d+) more characters; read on with offset=(\d+)\]$")

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERMEM_NOW", NOW)


@asynccontextmanager
async def connect(root: Path) -> AsyncIterator[Client]:
    async with Client(build_server(Memory(root)), mode="legacy") as client:
        yield client


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def answer(client: Client, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(tool, arguments)
    return text_of(result), result.structured_content or {}


@pytest.fixture(scope="module")
def real_team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpora.require(TEAM / ".squad")
    root = tmp_path_factory.mktemp("team")
    shutil.copytree(TEAM / ".squad", root / ".squad")
    for path in [root / ".squad", *(root / ".squad").rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIERMEM_NOW", NOW)
        assert main(["--root", str(root), "import", "squad"]) in (0, 1)
        # The team's wiki holds only its decisions (its histories stay the agents'): one
        # page longer than an answer's bound, asked for explicitly.
        steps = "".join(f"{n}. Run the release check `check-{n}` on main.\n" for n in range(400))
        Memory(root).wiki_write("release", f"# Release checklist\n{steps}", by="flight")
    return root


def longest_record(root: Path) -> archive.Record:
    records = [archive.parse(p.read_bytes(), p) for p in archive.records(Memory(root).layout)]
    return max(records, key=lambda r: len(r.text))


async def test_every_default_answer_on_a_real_team_is_bounded(real_team: Path) -> None:
    mem = Memory(real_team)
    topic = max(mem.wiki_pages(), key=lambda p: p.bytes).topic
    agent = max(
        mem.agents(), key=lambda a: len(mem.tier_text("cold", a)) if _has_cold(mem, a) else 0
    )
    record = longest_record(real_team)
    assert len(record.text) > 100_000  # what the answers used to carry whole
    calls: list[tuple[str, dict[str, Any]]] = [
        ("hot_show", {"agent": agent}),
        ("search", {"query": "release decision test"}),
        ("search", {"query": "the", "limit": 50}),
        ("read_entry", {"id": record.id}),
        ("read_tier", {"tier": "cold", "name": agent}),
        ("read_tier", {"tier": "wiki", "name": topic}),
        ("wiki_list", {}),
        ("wiki_read", {"topic": topic}),
        ("agents", {}),
        ("spawn", {"agent": agent, "task": "Fix the release pipeline decision", "auto": True}),
    ]
    async with connect(real_team) as client:
        for tool, arguments in calls:
            text, _ = await answer(client, tool, **arguments)
            assert len(text) <= BOUND, f"{tool} {arguments}: {len(text)} characters"


def _has_cold(mem: Memory, agent: str) -> bool:
    return mem.layout.tier_file("cold", agent).exists()


async def test_a_long_record_pages_back_to_its_exact_text(real_team: Path) -> None:
    record = longest_record(real_team)
    pages, offset, total = [], 0, None
    async with connect(real_team) as client:
        while offset is not None:
            _, data = await answer(client, "read_entry", id=record.id, offset=offset)
            total = data["total_chars"]
            text = data["text"]
            if data["next_offset"] is not None:
                marker = _MARKER.search(text)
                assert marker, text[-200:]
                left, at = int(marker.group(1)), int(marker.group(2))
                assert at == data["next_offset"] and left == total - at
                text = text[: marker.start()]
            pages.append(text)
            offset = data["next_offset"]
    assert total == len(record.text)
    assert "".join(pages) == record.text
    assert len(pages) == -(-len(record.text) // 8000)


async def test_read_tier_and_wiki_read_say_what_is_left(real_team: Path) -> None:
    mem = Memory(real_team)
    topic = max(mem.wiki_pages(), key=lambda p: p.bytes).topic
    whole = mem.wiki_read(topic)
    async with connect(real_team) as client:
        first, _ = await answer(client, "wiki_read", topic=topic)
        second, _ = await answer(client, "read_tier", tier="wiki", name=topic, offset=8000)
        small, _ = await answer(client, "wiki_read", topic=topic, max_chars=len(whole))
    marker = _MARKER.search(first)
    assert marker and int(marker.group(1)) == len(whole) - 8000
    assert first[: marker.start()] == whole[:8000]
    assert second.startswith(whole[8000:16000])
    assert small == whole


async def test_search_results_are_cut_and_paged(real_team: Path) -> None:
    async with connect(real_team) as client:
        _, first = await answer(client, "search", query="release", limit=5)
        _, second = await answer(client, "search", query="release", limit=5, offset=5)
        _, both = await answer(client, "search", query="release", limit=10)
        cut = [h for h in both["results"] if "[truncated: " in h["text"]]
        assert cut, "a real team's search returns long sections"
        whole, _ = await answer(client, "read_entry", id=cut[0]["id"], max_chars=1_000_000)
    ids = [h["id"] for h in first["results"] + second["results"]]
    assert ids == [h["id"] for h in both["results"]]
    assert first["next_offset"] == 5 and second["next_offset"] == 10
    assert f"read_entry id={cut[0]['id']} reads it whole" in cut[0]["text"]
    # What a cut result shows is lines of the entry (`…` where it leaves text out), the last
    # one perhaps cut short.
    read = json.loads(whole)["text"]
    *lines, last = cut[0]["text"].split("\n\n[truncated: ")[0].splitlines()
    assert all(line in read for line in lines if line != "…") and last[:20] in read


async def test_read_entry_reads_every_id_a_search_gives(real_team: Path) -> None:
    async with connect(real_team) as client:
        seen: dict[str, str] = {}
        for query in ("release", "decision", "test coverage", "casting"):
            _, found = await answer(client, "search", query=query, limit=20, max_chars=1_000_000)
            for hit in found["results"]:
                _, read = await answer(client, "read_entry", id=hit["id"], max_chars=1_000_000)
                assert (read["id"], read["tier"]) == (hit["id"], hit["tier"])
                if hit["spans"]:  # a long one: search shows passages of the whole
                    for start, end in hit["spans"]:
                        assert read["text"][start:end].strip() in hit["text"]
                elif archive.RECORD_ID.fullmatch(hit["id"]):
                    # A record's own id reads the whole record; search shows its first section.
                    assert read["text"].startswith(hit["text"])
                else:
                    assert read["text"] == hit["text"]
                seen[hit["tier"]] = hit["id"]
    assert {"archive", "cold", "wiki"} <= set(seen), seen
    assert any("#" in i for i in seen.values() if i.startswith("a-")) or "archive" in seen


async def test_part_ids_and_the_whole_entry_id_read(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now="2026-03-02T10:00:00Z")
    body = "\n\n".join(f"### Step {n}\n" + f"stage_{n} rule " * 60 for n in range(6))
    whole_entry = Entry("d-00000000aa", "decision", "Pipeline contract", body, agent="team")
    path = mem.layout.tier_file("cold", "team")
    with store.update(mem.layout, "cold", path, lambda: store.blank("cold", "team")) as cold:
        for part in split_entry(whole_entry):
            cold.put(part)
    hit = mem.search("stage_3", tier="cold")[0]
    parts = mem.context.index.parts(hit.id)
    assert hit.id == "d-00000000aa" and len(parts) > 1  # search shows the whole entry
    async with connect(tmp_path) as client:
        _, whole = await answer(client, "read_entry", id=hit.id, max_chars=100_000)
        _, part = await answer(client, "read_entry", id=parts[1].id, max_chars=100_000)
        bad = await client.call_tool("read_entry", {"id": "c-0000000000"})
        strange = await client.call_tool("read_entry", {"id": "rm -rf /"})
    assert whole["tier"] == "cold" and hit.spans  # search shows passages, read_entry all
    assert all(f"stage_{n} rule" in whole["text"] for n in range(6))
    assert all(whole["text"][a:b].strip() in hit.text for a, b in hit.spans)
    assert part["id"] == hit.id  # a part reads as its whole entry
    assert bad.is_error and "no entry c-0000000000" in bad.content[0].text  # type: ignore[union-attr]
    assert strange.is_error and "is not an entry id" in strange.content[0].text  # type: ignore[union-attr]


async def test_agents_tool_resource_and_every_tier_file_listed(real_team: Path) -> None:
    mem = Memory(real_team)
    files = {
        f"memory://{tier}/{p.stem}"
        for tier in ("hot", "cold", "wiki")
        for p in mem.layout.tier_dir(tier).glob("*.md")
    }
    async with connect(real_team) as client:
        _, listed = await answer(client, "agents", limit=3)
        _, rest = await answer(client, "agents", offset=3, limit=1000)
        resources = (await client.list_resources()).resources
        agents = await client.read_resource("memory://agents")
        some = sorted(files)[0]
        content = await client.read_resource(some)
    names = [a["name"] for a in listed["agents"] + rest["agents"]]
    assert names == [a.name for a in mem.team()] and listed["next_offset"] == 3
    assert all(a["squad"] for a in listed["agents"])  # a Squad team: every agent has a folder
    uris = {str(r.uri) for r in resources}
    assert files and files <= uris and "memory://agents" in uris
    assert json.loads(agents.contents[0].text) == [a.to_json() for a in mem.team()]  # type: ignore[union-attr]
    tier, name = some.removeprefix("memory://").split("/")
    assert content.contents[0].text == mem.tier_text(tier, name)  # type: ignore[union-attr]


async def test_wiki_list_pages(real_team: Path) -> None:
    async with connect(real_team) as client:
        _, first = await answer(client, "wiki_list", limit=2)
        _, every = await answer(client, "wiki_list", limit=1000)
    assert [p["topic"] for p in first["pages"]] == [p["topic"] for p in every["pages"][:2]]
    assert first["next_offset"] == 2 and every["next_offset"] is None
