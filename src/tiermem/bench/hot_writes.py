"""Six one-line writes to hot, in a team's own words, and what hot keeps of them.

The six lines are the last lines of the team's history that read as one sentence of 60 to
200 characters (list marks and emphasis aside); they are written as a session's task, two
actions, a decision, a blocker and a note. The figures are their bytes, what the hot budget
counts of them (`bytes`, the text a spawn loads), what `hot show` prints, and the hot
file's own bytes (its metadata beside the text): `shown_ratio` and `file_ratio` over the
bytes written.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..memory import Memory
from .corpus import Event

if TYPE_CHECKING:
    from ..vocabulary import HotKind

_LINE = re.compile(r"^\s*(?:[-*+]|\d+\.)?\s*(?P<text>[A-Z`*][^\n]{58,198}[.!?)`])\s*$")
_KINDS: tuple[HotKind | Literal["task"], ...] = (
    "task",
    "action",
    "decision",
    "action",
    "blocker",
    "note",
)
AGENT = "bench"


def six_lines(events: Sequence[Event]) -> list[str]:
    """The last six one-line sentences of the team's history, oldest first."""
    found: list[str] = []
    for event in reversed(events):
        if event.kind != "history":
            continue
        for line in reversed(event.text.splitlines()):
            match = _LINE.match(line)
            if match and match.group("text") not in found:
                found.append(match.group("text").replace("**", ""))
            if len(found) == len(_KINDS):
                return found[::-1]
    return found[::-1]


def hot_figures(events: Sequence[Event], now: str) -> dict[str, Any]:
    """Write the six lines to a fresh store's hot tier; what it keeps of them."""
    lines = six_lines(events)
    with tempfile.TemporaryDirectory(prefix="tiermem-hot-") as folder:
        mem, _ = Memory.init(folder, now=now)
        try:
            for kind, line in zip(_KINDS, lines, strict=False):
                if kind == "task":
                    mem.hot_set(AGENT, line)
                else:
                    mem.hot_add(AGENT, kind, line)
            view = mem.hot_view(AGENT)
            file_bytes = mem.layout.tier_file("hot", AGENT).stat().st_size
        finally:
            mem.close()
    written = sum(len(line.encode("utf-8")) for line in lines)
    shown = len((view.markdown + "\n").encode("utf-8"))
    return {
        "writes": len(lines),
        "written_bytes": written,
        "budget_bytes": view.bytes,
        "shown_bytes": shown,
        "file_bytes": file_bytes,
        "shown_ratio": round(shown / written, 3) if written else 0.0,
        "budget_ratio": round(view.bytes / written, 3) if written else 0.0,
        "file_ratio": round(file_bytes / written, 3) if written else 0.0,
    }
