"""The audit trail: one JSON line per Scribe or write action, never the content."""

from __future__ import annotations

import json
from collections.abc import Iterable

from . import files
from .layout import Layout


def append(
    layout: Layout,
    time: str,
    action: str,
    ids: Iterable[str] = (),
    tiers: Iterable[str] = (),
    reason: str = "",
    **details: object,
) -> None:
    """Append one audit line; small O_APPEND writes under the file lock never interleave.

    The line is not fsynced: the audit trail describes memory, it is not memory, and an
    fsync per line would double the cost of every write path.
    """
    line: dict[str, object] = {"time": time, "action": action, "ids": sorted(set(ids))}
    line["tiers"] = sorted(set(tiers))
    if reason:
        line["reason"] = reason
    line.update({k: v for k, v in details.items() if v not in (None, "", [], ())})
    data = (json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    with files.locked(layout, layout.audit):
        files.append(layout.audit, data)


def read(layout: Layout) -> list[dict[str, object]]:
    """All audit lines (a torn last line from a crash is skipped)."""
    data = files.read_bytes(layout.audit)
    if data is None:
        return []
    text = data.decode("utf-8", "replace")
    lines = []
    for raw in text.splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return lines
