"""Retired passages of archived text: one ledger beside the archive, never the records.

`forget a-...#3` retires a passage (its section's chunks) from search and spawns, and the
record keeps every byte: a retirement is a line of `.squad/memory/retired.txt`,
`RECORD#CHUNK DAY`, appended under the ledger's lock in one write. So retirements made at
once by many processes are all kept, and two clones' retirements of one record merge by
union (`.gitattributes`), where rewriting the record's header made git conflict. A record's
own `retired=` header, which tiermem wrote before the ledger, still counts.

The index leaves retired chunks out when it reads a record (`chunks_of`), and reads again
the records whose retirements changed since it read them (`index.sync`); the ledger is
read once per process and again only when its size or time changes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import TiermemError
from . import files
from .layout import Layout

NAME = "retired.txt"
_LINE = re.compile(r"(a-[0-9a-f]{10}(?:-[0-9a-f]{10})?)#(\d{1,6})(?:\s.*)?")

Retired = Mapping[str, frozenset[int]]  # record id -> its retired chunks

# Per ledger path: (its stamp, what it holds), kept while the stamp holds.
_LOADED: dict[str, tuple[str, dict[str, frozenset[int]]]] = {}


def path_of(layout: Layout) -> Path:
    """The ledger of retired passages (tracked, merged by union)."""
    return layout.memory / NAME


def stamp(layout: Layout) -> str:
    """The ledger's size and time ("" when there is none): what the index's fingerprint
    takes of it."""
    try:
        st = os.lstat(path_of(layout))
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def load(layout: Layout) -> Retired:
    """Record id -> its retired chunks, as the ledger says (a torn or foreign line, and a
    ledger that cannot be read, retire nothing)."""
    key = str(path_of(layout))
    now = stamp(layout)
    held = _LOADED.get(key)
    if held is not None and held[0] == now:
        return held[1]
    found = parse(_read(layout)) if now else {}
    _LOADED[key] = (now, found)
    return found


def parse(lines: Iterable[str]) -> dict[str, frozenset[int]]:
    """The retired chunks of each record named by the lines of a ledger."""
    found: dict[str, set[int]] = {}
    for line in lines:
        if m := _LINE.fullmatch(line.strip()):
            found.setdefault(m.group(1), set()).add(int(m.group(2)))
    return {record: frozenset(chunks) for record, chunks in found.items()}


def _read(layout: Layout) -> list[str]:
    try:
        data = files.read_bytes(path_of(layout))
    except (OSError, TiermemError):
        return []
    return data.decode("utf-8", "replace").splitlines() if data is not None else []


def chunks_of(record_path: Path, record_id: str) -> frozenset[int]:
    """The chunks of a record (at `record_path`, in its store's archive) that the ledger
    retires."""
    parents = record_path.parents
    if len(parents) < 5 or parents[3].name != ".squad":
        return frozenset()
    return load(Layout(parents[4])).get(record_id, frozenset())


def add(layout: Layout, record_id: str, chunks: Iterable[int], day: str) -> None:
    """Retire chunks of a record: a line each, appended in one write under the ledger's lock
    (a store made before the ledger learns to merge it by union)."""
    from .bootstrap import learn_git_settings

    path = path_of(layout)
    lines = "".join(f"{record_id}#{n} {day}\n" for n in sorted(set(chunks)))
    with files.locked(layout, path):
        current = files.read_bytes(path)
        if current is None:
            files.atomic_write(path, lines)
        else:
            torn = bool(current) and not current.endswith(b"\n")  # a line a kill cut short
            files.append_synced(path, (b"\n" if torn else b"") + lines.encode("utf-8"))
    learn_git_settings(layout)


def as_text(retired: Retired) -> str:
    """What the ledger retires, one `RECORD#CHUNK` a line, sorted: as the index keeps it."""
    return "".join(f"{record}#{n}\n" for record in sorted(retired) for n in sorted(retired[record]))


def changed(before: Retired, after: Retired) -> set[str]:
    """The records whose retired chunks differ between two readings of the ledger."""
    return {r for r in {*before, *after} if before.get(r, frozenset()) != after.get(r, frozenset())}
