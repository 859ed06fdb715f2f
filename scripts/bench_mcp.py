"""Measure the MCP server over stdio: start-up to the first answer, and call round trips.

Starts `python -m tiermem serve --root ROOT` through the MCP SDK's stdio client, as an
agent's client would, and prints:
- the time from launching the process to the answer of the first tool call,
- the median round trip of `search` and of `hot_add` calls (50 each by default).

Without --root the store is a scratch folder seeded with past sessions (from a real team's
history in ../shared/corpora when it is there), so search runs over a non-trivial index.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from tiermem.memory import Memory
from tiermem.scribe import end_session

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
QUERIES = ("release tag", "login token refresh", "test coverage", "ci workflow", "decision")
FALLBACK_SECTIONS = [
    f"Session {i}: worked on the {topic}; decided to keep the {topic} small and tested."
    for i, topic in enumerate(("release", "ci workflow", "login flow", "docs", "cache") * 8)
]


def history_sections(limit: int) -> list[str]:
    """`### ` sections of real agent histories, or stand-ins when no corpus is there."""
    sections: list[str] = []
    for path in sorted(CORPORA.glob("*/.squad/agents/*/history.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        sections += [s.strip() for s in re.split(r"^### ", text, flags=re.M)[1:] if s.strip()]
        if len(sections) >= limit:
            return sections[:limit]
    return sections or FALLBACK_SECTIONS


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def seed(root: Path, sessions: int) -> None:
    """Past sessions of one agent, each ended by Scribe into cold."""
    mem, _ = Memory.init(root)
    try:
        for notes in list(chunks(history_sections(sessions * 4), 4))[:sessions]:
            mem.hot_set("flight", notes[0].splitlines()[0][:200])
            for note in notes[1:]:
                mem.hot_add("flight", "note", note[:800])
            end_session(mem, "flight")
        mem.hot_set("flight", "Fix the login token refresh", why="users are locked out")
    finally:
        mem.close()


async def round_trips(client: Client, tool: str, calls: list[dict[str, object]]) -> list[float]:
    """Seconds per call, one call after another."""
    times = []
    for arguments in calls:
        start = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        times.append(time.perf_counter() - start)
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.content}")
    return times


async def measure(root: Path, calls: int) -> dict[str, float]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tiermem", "serve", "--root", str(root)]
    )
    launched = time.perf_counter()
    async with Client(params) as client:
        connected = time.perf_counter()
        await client.call_tool("hot_show", {"agent": "flight"})
        first = time.perf_counter()
        queries: list[dict[str, object]] = [
            {"query": QUERIES[i % len(QUERIES)]} for i in range(calls)
        ]
        steps: list[dict[str, object]] = [
            {"agent": "flight", "kind": "action", "text": f"Step {i} done"} for i in range(calls)
        ]
        searches = await round_trips(client, "search", queries)
        adds = await round_trips(client, "hot_add", steps)
        closing = time.perf_counter()
    return {
        "handshake": connected - launched,
        "first answer": first - launched,
        "search median": statistics.median(searches),
        "hot_add median": statistics.median(adds),
        "close": time.perf_counter() - closing,
    }


def direct_calls(root: Path, calls: int) -> dict[str, float]:
    """The same calls on the Memory API in this process: what the store itself costs."""
    mem = Memory(root)
    searches, adds = [], []
    try:
        for i in range(calls):
            start = time.perf_counter()
            mem.search(QUERIES[i % len(QUERIES)])
            searches.append(time.perf_counter() - start)
        for i in range(calls):
            start = time.perf_counter()
            mem.hot_add("flight", "action", f"Direct step {i} done")
            adds.append(time.perf_counter() - start)
    finally:
        mem.close()
    return {
        "search median (API only)": statistics.median(searches),
        "hot_add median (API only)": statistics.median(adds),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        help="an existing store; its agent 'flight' gets the hot_add actions "
        "(default: a seeded scratch store)",
    )
    parser.add_argument("--calls", type=int, default=50, help="calls of each tool (default 50)")
    parser.add_argument("--sessions", type=int, default=40, help="past sessions to seed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.root or Path(scratch)
        if args.root is None:
            seed(root, args.sessions)
        figures = anyio.run(measure, root, args.calls) | direct_calls(root, args.calls)
    for name, seconds in figures.items():
        print(f"{name:<26} {seconds * 1000:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
