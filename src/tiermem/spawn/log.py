"""The spawn log: which entries each spawn loaded, kept in this clone only.

Every spawn through `Memory.spawn` appends one JSON line to `.squad/memory/spawns.jsonl`
(git-ignored: a read never changes what the team commits): the time, the agent, the task,
the situation, the entry ids loaded (with the engine's reason for each) and left out, the
tokens, and the loaded entries that cite repository paths git no longer tracks. `tiermem
log` answers from it which spawns got an entry, and what a spawn got. The log serves
`tiermem log`, not the spawn: a log that cannot be written (a folder or a link in its place,
a full disk) leaves that spawn unlogged and says so in one line, and the spawn goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..context import Context
from ..errors import ParseError, StoreError
from ..results.spawn import SpawnRecord, SpawnResult
from ..storage import files
from ..storage.layout import Layout

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
        why={loaded.id: ctx.redact(loaded.why)[0] for loaded in result.sources if loaded.why},
    )
    try:
        _append(ctx.layout, entry)
    except (StoreError, ParseError) as exc:
        ctx.note(f"this spawn is not logged ({exc})")
    return entry


def _append(layout: Layout, entry: SpawnRecord) -> None:
    """One line, appended under the log's lock (small O_APPEND writes never interleave)."""
    line = json.dumps(entry.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
    path = path_of(layout)
    with files.locked(layout, path):
        files.append(path, line.encode("utf-8"))


def read(layout: Layout) -> list[SpawnRecord]:
    """Every logged spawn, oldest first (a torn, foreign or damaged line is left out)."""
    return read_checked(layout)[0]


def read_checked(layout: Layout) -> tuple[list[SpawnRecord], list[str]]:
    """Every logged spawn, oldest first, and each line left out as `LINE: why`.

    The log is this clone's own file, but anything may have been written to it: a line is
    taken only when it is a spawn as tiermem writes one, its counts whole numbers a prompt
    can hold (not 10**400, not infinity).
    """
    data = files.read_bytes(path_of(layout))
    if data is None:
        return [], []
    found, left_out = [], []
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        entry, why = _parse(raw)
        if entry is not None:
            found.append(entry)
        else:
            left_out.append(f"{number}: {why}")
    return found, left_out


MAX_COUNT = 10**12  # more tokens than any prompt holds: such a count is not one tiermem wrote


def _parse(raw: str) -> tuple[SpawnRecord | None, str]:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # JSONDecodeError, or a number of 5,000 digits
        return None, "not a JSON line (torn by a crash, or not tiermem's)"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    try:
        tokens = {str(k): _count(v) for k, v in dict(data.get("tokens", {})).items()}
        return SpawnRecord(
            time=str(data["time"]),
            agent=str(data["agent"]),
            task=str(data.get("task", "")),
            situation=str(data.get("situation", "")),
            entries=[str(i) for i in data.get("entries", [])],
            left_out=[str(i) for i in data.get("left_out", [])],
            tokens=tokens,
            stale={str(k): [str(p) for p in v] for k, v in dict(data.get("stale", {})).items()},
            why={str(k): str(v) for k, v in dict(data.get("why", {})).items()},
        ), ""
    except KeyError as exc:
        return None, f"no {exc.args[0]!r}"
    except (TypeError, ValueError, OverflowError) as exc:
        return None, str(exc)[:120]


def _count(value: object) -> int:
    """A token count as the log holds it, or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_COUNT:
        shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:20] + "..."
        raise ValueError(f"token count {shown} is not a count of tokens")
    return value


def spawns(
    ctx: Context, agent: str | None, entry: str | None, limit: int
) -> tuple[list[SpawnRecord], list[str]]:
    """Logged spawns, newest first: of one agent, and/or that loaded one entry (or its parts);
    and the log's lines left out, as `FILE:LINE: why`."""
    wanted: set[str] = set()
    if entry:
        ctx.sync()
        with ctx.index.uncounted():  # ids alone
            wanted = {entry, *(d.id for d in ctx.index.parts(entry))}
    logged, left_out = read_checked(ctx.layout)
    found = []
    for item in reversed(logged):
        if agent and item.agent != agent:
            continue
        if wanted and not wanted.intersection(item.entries):
            continue
        found.append(item)
        if len(found) == limit:
            break
    where = ctx.layout.relative(path_of(ctx.layout))
    return found, [f"{where}:{line}" for line in left_out]
