"""tiermem: tiered memory for AI agent teams.

`Memory(root)` is the whole API: the CLI and the MCP server are thin layers over it. The
result types its methods return are exported here too, and the protocols of the parts it
can be handed (`Index`, `Summarizer`, `Ranker`, `TokenCounter`; fakes in `tiermem.testing`).
"""

from __future__ import annotations

from .errors import NotFoundError, ParseError, StoreError, TiermemError, UsageError

TYPE_CHECKING = False  # typing is not imported at start-up: `tiermem hot show` never needs it
if TYPE_CHECKING:
    from typing import Any

    from .host import Summarizer
    from .index.protocol import Index, IndexFactory
    from .index.tokens import TokenCounter
    from .memory import Memory
    from .options import SpawnRequest
    from .relevance.ranking import Ranker
    from .results import (
        AgentInfo,
        DoctorReport,
        EntryText,
        Finding,
        ForgetReport,
        HotEntry,
        HotView,
        ImportReport,
        Loaded,
        Page,
        ReportResult,
        RunReport,
        SearchHit,
        SectionPlacement,
        SessionReport,
        SpawnLog,
        SpawnRecord,
        SpawnResult,
        SquadLoad,
        Stats,
        TierRow,
        Totals,
        WikiEntry,
        WriteReport,
    )
    from .storage.archive import Record

__all__ = [
    "AgentInfo",
    "DoctorReport",
    "EntryText",
    "Finding",
    "ForgetReport",
    "HotEntry",
    "HotView",
    "ImportReport",
    "Index",
    "IndexFactory",
    "Loaded",
    "Memory",
    "NotFoundError",
    "Page",
    "ParseError",
    "Ranker",
    "Record",
    "ReportResult",
    "RunReport",
    "SearchHit",
    "SectionPlacement",
    "SessionReport",
    "SpawnLog",
    "SpawnRecord",
    "SpawnRequest",
    "SpawnResult",
    "SquadLoad",
    "Stats",
    "StoreError",
    "Summarizer",
    "TierRow",
    "TiermemError",
    "TokenCounter",
    "Totals",
    "UsageError",
    "WikiEntry",
    "WriteReport",
]

# Where each lazily exported name lives: `tiermem --help` starts without the store code.
_LAZY = {
    "Memory": "memory",
    "Index": "index.protocol",
    "IndexFactory": "index.protocol",
    "Ranker": "relevance.ranking",
    "Record": "storage.archive",
    "SpawnRequest": "options",
    "Summarizer": "host",
    "TokenCounter": "index.tokens",
}


def __getattr__(name: str) -> Any:
    if name in __all__ and name not in globals():
        from importlib import import_module

        return getattr(import_module(f".{_LAZY.get(name, 'results')}", __name__), name)
    raise AttributeError(f"module 'tiermem' has no attribute {name!r}")
