"""The spawn log: which entries each spawn loaded, kept in this clone only.

Every spawn through `Memory.spawn` appends one JSON line to `.squad/memory/spawns.jsonl`
(git-ignored: a read never changes what the team commits): the time, the agent, the task,
the situation, the entry ids loaded and left out, the tokens, and the loaded entries that
cite repository paths git no longer tracks. `tiermem log` answers from it which spawns got
an entry, and what a spawn got.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import files
from .context import Context
from .layout import Layout
from .results import SpawnRecord, SpawnResult

LOG_NAME = "spawns.jsonl"


def path_of(layout: Layout) -> Path:
    """Where the log lives."""
    return layout.memory / LOG_NAME


def record(ctx: Context, task: str, result: SpawnResult) -> SpawnRecord:
    """Append one spawn to the log; return what was logged."""
    ids = [loaded.id for loaded in result.sources]
    entry = SpawnRecord(
        time=ctx.stamp(),
        agent=result.agent,
        task=ctx.redact(task)[0],
        situation=result.situation,
        entries=ids,
        left_out=list(result.left_out),
        tokens=dict(result.tokens),
        stale=dict(result.stale),
    )
    _append(ctx.layout, entry)
    return entry


def _append(layout: Layout, entry: SpawnRecord) -> None:
    """One line, appended under the log's lock (small O_APPEND writes never interleave)."""
    line = json.dumps(entry.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
    path = path_of(layout)
    with files.locked(layout, path):
        files.append(path, line.encode("utf-8"))


def read(layout: Layout) -> list[SpawnRecord]:
    """Every logged spawn, oldest first (a torn or foreign line is skipped)."""
    data = files.read_bytes(path_of(layout))
    if data is None:
        return []
    text = data.decode("utf-8", "replace")
    found = []
    for raw in text.splitlines():
        entry = _parse(raw)
        if entry is not None:
            found.append(entry)
    return found


def _parse(raw: str) -> SpawnRecord | None:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        return SpawnRecord(
            time=str(data["time"]),
            agent=str(data["agent"]),
            task=str(data.get("task", "")),
            situation=str(data.get("situation", "")),
            entries=[str(i) for i in data.get("entries", [])],
            left_out=[str(i) for i in data.get("left_out", [])],
            tokens={str(k): int(v) for k, v in dict(data.get("tokens", {})).items()},
            stale={str(k): [str(p) for p in v] for k, v in dict(data.get("stale", {})).items()},
        )
    except (KeyError, TypeError, ValueError):
        return None


def spawns(ctx: Context, agent: str | None, entry: str | None, limit: int) -> list[SpawnRecord]:
    """Logged spawns, newest first: of one agent, and/or that loaded one entry (or its parts)."""
    wanted: set[str] = set()
    if entry:
        ctx.sync()
        wanted = {entry, *(d.id for d in ctx.index.parts(entry))}
    found = []
    for item in reversed(read(ctx.layout)):
        if agent and item.agent != agent:
            continue
        if wanted and not wanted.intersection(item.entries):
            continue
        found.append(item)
        if len(found) == limit:
            break
    return found
