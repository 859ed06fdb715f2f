"""The audit trail: one JSON line per Scribe or write action, never the content."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import TiermemError
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


def scrub(layout: Layout, clean: Callable[[str], str]) -> bool:
    """Rewrite the trail with `clean` applied to every reason: a purge's one edit of it (a
    reason can quote the text it takes). Whether anything changed."""
    with files.locked(layout, layout.audit):
        data = files.read_bytes(layout.audit)
        if data is None:
            return False
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        cleaned = [_cleaned(line, clean) for line in lines]
        if cleaned == lines:
            return False
        files.atomic_write(layout.audit, "".join(cleaned))
        return True


def _cleaned(raw: str, clean: Callable[[str], str]) -> str:
    try:
        line = json.loads(raw)
    except json.JSONDecodeError:
        return clean(raw)  # a torn line: cleaned as text
    if not isinstance(line, dict) or not isinstance(line.get("reason"), str):
        return raw
    reason = clean(line["reason"])
    if reason == line["reason"]:
        return raw
    line["reason"] = reason
    return json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"


def read(layout: Layout) -> list[dict[str, object]]:
    """All audit lines (a torn last line from a crash is skipped).

    Stores written before tiermem had a file of its own kept its lines in Squad's
    `audit.jsonl`; those are read too, told from Squad's by their shape.
    """
    try:
        earlier = [line for line in _lines(layout.squad_audit) if _ours(line)]
    except TiermemError:
        earlier = []  # Squad's file, a link or a folder: none of tiermem's lines are there
    return earlier + _lines(layout.audit)


def _lines(path: Path) -> list[dict[str, object]]:
    data = files.read_bytes(path)
    if data is None:
        return []
    lines = []
    for raw in data.decode("utf-8", "replace").splitlines():
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):  # torn, not JSON, a number of 5,000 digits
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def _ours(line: dict[str, object]) -> bool:
    """tiermem's lines carry `time` and `tiers`; Squad's carry `timestamp` and `class`."""
    return "time" in line and "tiers" in line
