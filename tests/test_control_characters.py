"""Control characters in memory are shown, never sent: a terminal never runs an escape
sequence from memory (a window title, a screen clear), a prompt never holds one raw, and the
archive keeps the text byte for byte.

Every control character but tab and line end (C0, DEL and C1) is written as its escape
(`\\x1b`) on standard output in text, in JSON (as JSON escapes it: `\\u001b`), in a prompt,
in an MCP answer and in the report page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from tiermem.memory import Memory
from tiermem.server.mcp_server import build_server
from tiermem.text.shown import as_json, control

NOW = "2026-03-02T10:00:00Z"
# A window title, a bell, a screen clear, the 8-bit CSI, DEL (NUL is refused as input).
SEQUENCES = "\x1b]0;owned\x07 \x1b[2J\x1b[H \x9b31m \x7f"
NOTE = f"Deploy notes from the tool: {SEQUENCES} zorblax ends here"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.hot_set("flight", "Ship the zorblax release", why="users wait")
    mem.hot_add("flight", "note", NOTE, source="tool")
    mem.close()
    return tmp_path


def _out(run_cli: Any, root: Path, *args: str) -> str:
    code, out, err = run_cli("--root", str(root), "--now", NOW, *args)
    assert code == 0, err
    return str(out)


COMMANDS = [
    ("search", "zorblax"),
    ("search", "zorblax", "--format", "json"),
    ("hot", "show", "flight"),
    ("hot", "show", "flight", "--format", "json"),
    ("spawn", "flight", "--task", "Ship the zorblax release"),
    ("spawn", "flight", "--task", "Ship the zorblax release", "--format", "json"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_standard_output_holds_no_raw_control_character(
    root: Path, run_cli: Any, args: tuple[str, ...]
) -> None:
    out = _out(run_cli, root, *args)
    assert not RAW.search(out), repr(RAW.findall(out))
    assert "owned" in out


def test_an_entry_read_whole_and_after_its_session_shows_the_escapes(
    root: Path, run_cli: Any
) -> None:
    _out(run_cli, root, "scribe", "end-session", "flight")
    hits = json.loads(_out(run_cli, root, "search", "zorblax ends", "--format", "json"))
    for hit in hits:
        out = _out(run_cli, root, "search", hit["id"])
        assert not RAW.search(out)
        assert "\\x1b[2J" in out


def test_the_archive_keeps_the_text_byte_for_byte(root: Path, run_cli: Any) -> None:
    _out(run_cli, root, "scribe", "end-session", "flight")
    records = (root / ".squad/memory/archive/flight").glob("*.md")
    assert any(SEQUENCES.encode("utf-8") in p.read_bytes() for p in records)


def test_a_prompt_holds_no_raw_control_character(root: Path) -> None:
    mem = Memory(root, now=NOW)
    prompt = mem.spawn("flight", "Ship the zorblax release", include_archive=True).prompt
    mem.close()
    assert not RAW.search(prompt)
    assert control(SEQUENCES) in prompt


def test_mcp_answers_hold_no_raw_control_character(root: Path) -> None:
    async def texts() -> list[str]:
        found = []
        async with Client(build_server(Memory(root, now=NOW)), mode="legacy") as client:
            for tool, arguments in (
                ("search", {"query": "zorblax"}),
                ("hot_show", {"agent": "flight"}),
                ("read_tier", {"tier": "hot", "name": "flight"}),
                ("spawn", {"agent": "flight", "task": "Ship the zorblax release"}),
            ):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error
                block = result.content[0]
                assert isinstance(block, TextContent)
                found.append(block.text)
        return found

    for text in anyio.run(texts):
        assert not RAW.search(text), text[:300]


def test_json_text_escapes_every_control_character_and_parses_back() -> None:
    value = {"text": "\x00\x1b\x7f\x85\x9b\u2028 ok\t\n"}
    text = as_json(value)
    assert not RAW.search(text) and "\u2028" not in text
    assert json.loads(text) == value


def test_control_keeps_tabs_and_line_ends() -> None:
    assert control("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert control("\x1b[2J\x85") == "\\x1b[2J\\x85"
