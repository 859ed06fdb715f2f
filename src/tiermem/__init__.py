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
    from .options import SearchRequest, SpawnRequest
    from .relevance.ranking import Ranker
    from .results.figures import SquadLoad, Stats, TierRow, Totals
    from .results.hot import AgentInfo, HotEntry, HotView, WriteReport
    from .results.imports import ImportReport, SectionPlacement
    from .results.reading import EntryText, Page, Searched, SearchHit, WikiEntry
    from .results.report import ReportResult
    from .results.scribe import RunReport, SessionReport
    from .results.spawn import Loaded, SpawnLog, SpawnRecord, SpawnResult
    from .results.upkeep import DoctorReport, Finding, ForgetReport
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
    "SearchRequest",
    "Searched",
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
    "SearchRequest": "options",
    "SpawnRequest": "options",
    "Summarizer": "host",
    "TokenCounter": "index.tokens",
}

# The module of `results/` each result type lives in.
_RESULTS = {
    "SquadLoad": "figures",
    "Stats": "figures",
    "TierRow": "figures",
    "Totals": "figures",
    "AgentInfo": "hot",
    "HotEntry": "hot",
    "HotView": "hot",
    "WriteReport": "hot",
    "ImportReport": "imports",
    "SectionPlacement": "imports",
    "EntryText": "reading",
    "Page": "reading",
    "SearchHit": "reading",
    "Searched": "reading",
    "WikiEntry": "reading",
    "ReportResult": "report",
    "RunReport": "scribe",
    "SessionReport": "scribe",
    "Loaded": "spawn",
    "SpawnLog": "spawn",
    "SpawnRecord": "spawn",
    "SpawnResult": "spawn",
    "DoctorReport": "upkeep",
    "Finding": "upkeep",
    "ForgetReport": "upkeep",
}


def __getattr__(name: str) -> Any:
    if name in __all__ and name not in globals():
        from importlib import import_module

        where = _LAZY.get(name) or f"results.{_RESULTS[name]}"
        return getattr(import_module(f".{where}", __name__), name)
    raise AttributeError(f"module 'tiermem' has no attribute {name!r}")
