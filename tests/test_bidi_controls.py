"""The bidirectional controls in memory are shown, never obeyed: U+202E (right-to-left
override) and the other marks, embeddings and isolates (U+202A-202E, U+2066-2069, U+200E,
U+200F, U+061C) reorder what a reader sees, so a note from a tool could show `txt.exe` as
`exe.txt` in a prompt or a terminal. Every place memory is shown writes them as escapes
(`\\u202e`): the command line in text and JSON, a spawn prompt, the MCP answers and the report
page; the archive keeps the bytes.
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
from tiermem.text.shown import as_json, control, inline

NOW = "2026-03-02T10:00:00Z"
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
MARKS = "".join(chr(c) for c in BIDI)
# A file name turned around by an override, then every other control once.
NOTE = f"Attach report\u202egpj.exe from the tool zorblax {MARKS} ends here"
TITLE = "Release \u2067zorblax\u2069 \u202eevil"
RAW = re.compile("[" + "".join(re.escape(chr(c)) for c in BIDI) + "]")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.hot_set("flight", "Ship the zorblax release", why="users wait")
    mem.hot_add("flight", "note", NOTE, source="tool")
    mem.hot_add("flight", "decision", TITLE + "\nKeep the zorblax flag off")
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
    ("spawn", "flight", "--task", "zorblax", "--include-archive", "--include-cold"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_standard_output_holds_no_raw_bidirectional_control(
    root: Path, run_cli: Any, args: tuple[str, ...]
) -> None:
    out = _out(run_cli, root, *args)
    assert not RAW.search(out), repr(RAW.findall(out))
    assert "\\u202e" in out  # shown as its escape, not dropped


def test_after_the_session_search_and_whole_reads_show_the_escapes(
    root: Path, run_cli: Any
) -> None:
    _out(run_cli, root, "scribe", "end-session", "flight")
    hits = json.loads(_out(run_cli, root, "search", "zorblax", "--format", "json"))
    assert hits
    for hit in hits:
        for args in ((hit["id"],), (hit["id"], "--format", "json")):
            out = _out(run_cli, root, "search", *args)
            assert not RAW.search(out), out[:300]


def test_the_archive_keeps_the_bytes(root: Path, run_cli: Any) -> None:
    _out(run_cli, root, "scribe", "end-session", "flight")
    records = (root / ".squad/memory/archive/flight").glob("*.md")
    assert any(NOTE.encode("utf-8") in p.read_bytes() for p in records)


def test_a_prompt_holds_no_raw_bidirectional_control(root: Path) -> None:
    mem = Memory(root, now=NOW)
    mem.end_session("flight")
    prompt = mem.spawn(
        "flight", "Ship the zorblax release", include_archive=True, include_cold=True
    ).prompt
    mem.close()
    assert not RAW.search(prompt)
    assert "gpj.exe" in prompt and "\\u202egpj.exe" in prompt


def test_mcp_answers_hold_no_raw_bidirectional_control(root: Path) -> None:
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
        assert "u202e" in text


def test_the_report_page_holds_no_raw_bidirectional_control(
    root: Path, run_cli: Any, tmp_path: Path
) -> None:
    out = tmp_path / "page"
    _out(run_cli, root, "report", "--out", str(out))
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "zorblax" in page
    assert not RAW.search(page)


def test_json_escapes_them_and_parses_back() -> None:
    value = {"text": NOTE, "title": TITLE}
    text = as_json(value)
    assert not RAW.search(text)
    assert json.loads(text) == value


def test_metadata_and_text_show_each_as_its_escape() -> None:
    assert control("a\u202eb") == "a\\u202eb"
    assert inline("x\u2066y\u200ez\u061c") == "x\\u2066y\\u200ez\\u061c"
    assert not RAW.search(control(MARKS)) and not RAW.search(inline(MARKS))
