"""tiermem: tiered memory for AI agent teams.

`Memory(root)` is the whole API: the CLI and the MCP server are thin layers over it.
"""

from typing import TYPE_CHECKING, Any

from .errors import NotFoundError, ParseError, StoreError, TiermemError, UsageError

if TYPE_CHECKING:
    from .memory import Memory

__all__ = ["Memory", "NotFoundError", "ParseError", "StoreError", "TiermemError", "UsageError"]


def __getattr__(name: str) -> Any:
    # `Memory` is imported on first use, so `tiermem --help` starts without the store code.
    if name == "Memory":
        from .memory import Memory

        return Memory
    raise AttributeError(f"module 'tiermem' has no attribute {name!r}")
