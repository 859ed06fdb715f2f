"""Write figures of `tiermem bench speed`: hot notes on an empty and on a full hot tier, a
fresh clone's first search, and LoCoMo conversations written note by note.

A note on a full hot tier pushes older text out, which is archived and checkpointed into
cold at once: the write whose cost would grow with the store if it read the cold tier. Each
note is timed in process, with the fsyncs it made and the bytes it wrote beside its time
(those two do not depend on how busy the disk is).
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..storage import files
from ..storage.files import INDEX_SIDES
from ..storage.layout import Layout
from .generated import AGENTS, NOW, prose_for

# The agent whose hot tier is written: its cold tier is as large as any in the store.
WRITER = AGENTS[0]
FILL_LIMIT = 200  # notes written, at most, to fill a hot tier to its budget
TURNS_PER_NOTE = (1, 5)


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _written_bytes() -> int:
    """Bytes this process has handed to write calls so far (0 where the system does not say)."""
    try:
        with open("/proc/self/io", encoding="ascii") as io:
            for line in io:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@contextlib.contextmanager
def _fsyncs() -> Iterator[Counter[str]]:
    """Count the fsyncs made meanwhile (os.fsync is wrapped for as long as it runs)."""
    counts: Counter[str] = Counter()
    real = os.fsync

    def counted(fd: Any) -> None:  # what os.fsync takes: a descriptor or a file
        counts["fsync"] += 1
        real(fd)

    os.fsync = counted
    try:
        yield counts
    finally:
        os.fsync = real


def disk_write_ms(folder: Path, size: int = 600) -> float:
    """Milliseconds of the least durable write a hot note makes: a small file written,
    fsynced and renamed in the tier's folder (then removed, untimed). What the disk alone
    costs a note, measured beside each one: on a shared machine it moves with the load."""
    path = folder / f"{files.TEMP_PREFIX}disk-{os.getpid()}"
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, b"x" * size)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(path, f"{path}.done")
    took = (time.perf_counter() - start) * 1000
    os.unlink(f"{path}.done")
    return took


class NoteTimer:
    """Times hot notes one at a time: wall and CPU time, fsyncs and bytes written, and the
    disk's own durable write just before each (see `disk_write_ms`)."""

    def __init__(self) -> None:
        self.disk: list[float] = []
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.fsyncs = 0
        self.bytes = 0
        self.checkpoints = 0

    def note(self, mem: Memory, text: str) -> None:
        """One timed note, after a timed bare write of the disk."""
        self.disk.append(disk_write_ms(mem.layout.tier_dir("hot")))
        written = _written_bytes()
        with _fsyncs() as counts:
            cpu, start = time.process_time(), time.perf_counter()
            report = mem.hot_add(WRITER, "note", text)
            self.wall.append((time.perf_counter() - start) * 1000)
            self.cpu.append((time.process_time() - cpu) * 1000)
        self.fsyncs += counts["fsync"]
        self.bytes += _written_bytes() - written
        self.checkpoints += bool(report.cold)

    def figures(self, name: str) -> dict[str, float]:
        """p50 and p95 of the times, and the means per note of the rest."""
        n = len(self.wall)
        return {
            f"{name}_p50_ms": percentile(self.wall, 50),
            f"{name}_p95_ms": percentile(self.wall, 95),
            f"{name}_cpu_p50_ms": percentile(self.cpu, 50),
            f"{name}_fsyncs": self.fsyncs / n,
            f"{name}_kb": self.bytes / n / 1000,
            f"{name}_checkpointed": self.checkpoints / n,
            f"{name}_disk_p50_ms": percentile(self.disk, 50),
            f"{name}_disk_p95_ms": percentile(self.disk, 95),
        }


# Notes in a row on a full tier: a checkpoint frees half the tier's budget, so only every
# so many notes checkpoints; this many hold several checkpoints.
FULL_NOTES = 60


def hot_notes(root: Path, entries: int, runs: int) -> dict[str, float]:
    """Notes on an empty hot tier (cleared, untimed, before each), then notes in a row on a
    full one (those that overflow it checkpoint what they push out into cold)."""
    prose = prose_for(entries)
    texts = iter(
        f"{' '.join(prose.findings(prose.topic(), 2, 3))} (note {n})" for n in range(10**9)
    )
    mem = Memory(root, now=NOW)
    try:
        empty, full = NoteTimer(), NoteTimer()
        for _ in range(runs):
            mem.hot_clear(WRITER)
            empty.note(mem, next(texts))
        for _ in range(FILL_LIMIT):  # until a note overflows: the tier is full from then on
            if mem.hot_add(WRITER, "note", next(texts)).cold:
                break
        for _ in range(max(runs, FULL_NOTES)):
            full.note(mem, next(texts))
    finally:
        mem.close()
    return empty.figures("note_empty") | full.figures("note_full")


def drop_index(root: Path) -> None:
    """Delete the index and its log, as a fresh clone has none."""
    index = Layout(root).index
    for side in INDEX_SIDES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{index}{side}")


def first_search(
    run: Callable[[], float], root: Path, runs: int, after: Callable[[], float]
) -> dict[str, float]:
    """A whole `tiermem search` in a clone without an index (it builds the index first), and
    the search `after` it."""
    times, next_times = [], []
    for _ in range(runs):
        drop_index(root)
        os.sync()  # the writes before it are on disk, not flushed under the timed run
        times.append(run())
        next_times.append(after())
    return {
        "search_fresh_ms": statistics.median(times),
        "search_next_ms": statistics.median(next_times),
    }


def locomo_ingest(path: Path, say: Callable[[str], None]) -> dict[str, float]:
    """Seconds to write each LoCoMo conversation into a new store, note by note, at each
    number of turns per note (as `tiermem bench locomo` writes them)."""
    from . import locomo_data
    from .locomo import Design, ingest

    conversations = locomo_data.load(path)
    figures: dict[str, float] = {"locomo_conversations": len(conversations)}
    for turns in TURNS_PER_NOTE:
        seconds = []
        with tempfile.TemporaryDirectory(prefix="tiermem-speed-locomo-") as folder:
            for conversation in conversations:
                os.sync()
                out = Path(folder) / f"{conversation.folder}-{turns}"
                seconds.append(ingest(conversation, out, Design(turns_per_note=turns)))
        figures[f"locomo_{turns}_median_s"] = statistics.median(seconds)
        figures[f"locomo_{turns}_max_s"] = max(seconds)
        say(f"[locomo] {turns} turn(s) per note: {', '.join(f'{s:.2f}' for s in seconds)} s")
    return figures
