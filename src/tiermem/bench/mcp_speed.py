"""What an agent waits on through MCP: `tiermem serve` started over stdio by the MCP SDK's
client, as an agent's client starts it, the time to its first answer, and the round trips of
`search` and `spawn` calls made one after another (each once untimed first, as in process).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import StoreError
from .write_speed import percentile

# (tool, its arguments) of one call.
Call = tuple[str, dict[str, Any]]


def latency(
    command: Sequence[str], env: Mapping[str, str], searches: Sequence[Call], spawns: Sequence[Call]
) -> dict[str, float]:
    """The server's first answer and its steady round trips (ms), over one connection."""
    import anyio

    figures: dict[str, float] = anyio.run(_session, list(command), dict(env), searches, spawns)
    return figures


async def _session(
    command: list[str], env: dict[str, str], searches: Sequence[Call], spawns: Sequence[Call]
) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    launched = time.perf_counter()
    async with Client(server) as client:
        await _timed(client, searches[0])
        figures = {"mcp_first_answer_ms": (time.perf_counter() - launched) * 1000}
        for name, calls in (("search", searches), ("spawn", spawns)):
            for call in calls:
                await _timed(client, call)  # first use: the steady state is what is timed
            steady = [await _timed(client, call) for call in calls]
            figures[f"mcp_{name}_p50_ms"] = percentile(steady, 50)
            figures[f"mcp_{name}_p95_ms"] = percentile(steady, 95)
    return figures


async def _timed(client: Any, call: Call) -> float:
    """One round trip of a tool call, in ms; a call the server answers with an error fails."""
    tool, arguments = call
    start = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise StoreError(f"MCP {tool} failed: {result.content}")
    return elapsed
