"""Retiring passages of archived text at once and from clones: the store they are retired
from, the retirements themselves (real processes, real MCP servers, real git) and what must
hold after: every retirement said "retired", and no retired passage is served again.

tests/test_retirements.py runs each a few times; tests/stress.py (`retire`) runs the trials
at full count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from reliability import ROOT, child_env
from tiermem.memory import Memory
from tiermem.storage import archive

T0 = "2026-03-02T10:00:00Z"
SECTIONS = 10


def word(k: int) -> str:
    """The word only section k of the record holds."""
    return f"passage{k}tag"


def record_text(sections: int = SECTIONS) -> str:
    """A history of short sections, each its own passage (`a-...#k` is section k)."""
    return "".join(
        f"### Section {k}: widget retries\nWidget {word(k)} broke under load; the fix was "
        f"a backoff in module m{k}.\n\n"
        for k in range(sections)
    )


def record_store(root: Path, trust: str = "") -> str:
    """A store whose archive holds the record of `record_text` (its index built); its id."""
    root.mkdir(parents=True, exist_ok=True)
    mem, _ = Memory.init(root, now=T0)
    record = archive.new_record(
        "flight", T0, "hot", "hot/flight.md", "sections", record_text(), trust=trust
    )
    archive.write(mem.layout, record)
    assert len(archive.chunks(record.text)) == SECTIONS
    mem.search("widget")  # the index built, as a store in use has it
    mem.close()
    return record.id


def served(root: Path, chunks: list[int]) -> list[int]:
    """The chunks among these whose words a search or a spawn with the archive still shows."""
    mem = Memory(root, now=T0)
    try:
        found = set()
        for k in chunks:
            if any(word(k) in hit.text for hit in mem.search(word(k), limit=20)):
                found.add(k)
        task = "widget retries " + " ".join(word(k) for k in chunks)
        prompt = mem.spawn("flight", task, include_archive=True, budget=8000).prompt
        memory = prompt.partition("## Memory Context")[2]  # the task names every word
        found |= {k for k in chunks if word(k) in memory}
        return sorted(found)
    finally:
        mem.close()


# Waits for the start file, then retires one passage through the command line.
RETIRER = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path.insert(0, sys.argv[4])
    from reliability import cli
    root, start, target = sys.argv[1], sys.argv[2], sys.argv[3]
    while not os.path.exists(start):
        time.sleep(0.001)
    code, out, err = cli(["--root", root, "--now", "2026-03-03T10:00:00Z", "forget", target])
    print(json.dumps({"target": target, "code": code, "out": out, "err": err[-400:]}))
    """
)


def retire_at_once(root: Path, record: str, chunks: list[int]) -> list[dict[str, Any]]:
    """One `tiermem forget RECORD#k` process per chunk, all let go at the same moment."""
    start = root.parent / f"{root.name}-go"
    start.unlink(missing_ok=True)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RETIRER,
                str(root),
                str(start),
                f"{record}#{k}",
                str(ROOT / "tests"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        for k in chunks
    ]
    time.sleep(0.5)  # every process has imported tiermem and waits
    start.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        lines = [x for x in out.decode().splitlines() if x.startswith("{")]
        results.append(
            json.loads(lines[-1])
            if lines
            else {"code": proc.returncode, "out": "", "err": err.decode()[-400:]}
        )
    start.unlink(missing_ok=True)
    return results


def said_retired(results: list[dict[str, Any]]) -> int:
    """How many retirements exited 0 and said "retired"."""
    return sum(r["code"] == 0 and str(r["out"]).startswith("retired ") for r in results)


def retire_over_servers(root: Path, record: str, chunks: list[int]) -> list[str]:
    """Retire the chunks through two real MCP servers (`tiermem serve` over stdio), half
    through each, every call at once; the first line of each answer."""

    async def through(params: StdioServerParameters, mine: list[int], said: list[str]) -> None:
        async with Client(params) as client:
            await client.list_tools()

            async def one(k: int) -> None:
                result = await client.call_tool("forget", {"id": f"{record}#{k}"})
                content = result.structured_content
                messages = content.get("messages", []) if isinstance(content, dict) else []
                said.append("error" if result.is_error else (messages or [""])[0])

            async with anyio.create_task_group() as group:
                for k in mine:
                    group.start_soon(one, k)

    async def run() -> list[str]:
        env = {k: v for k, v in child_env().items() if k in ("PYTHONPATH", "PATH", "HOME")}
        command = [sys.executable, "-m", "tiermem", "serve", "--root", str(root)]
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        said: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(through, params, chunks[0::2], said)
            group.start_soon(through, params, chunks[1::2], said)
        return said

    return anyio.run(run)


def retired_lines(root: Path) -> list[str]:
    """The lines of the ledger of retired passages."""
    path = root / ".squad/memory/retired.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
