"""What a sync reads of a tier file before it takes the index lock: the file parsed, with
the stat that tells the same file later, in this process or, for a whole store, in worker
processes that parse ahead of the writer."""

from __future__ import annotations

import collections
import contextlib
import operator
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ParseError, TiermemError
from ..record import field, record
from ..storage import files
from .protocol import Doc
from .schema import STORED, parsed_docs
from .schema import sha as _sha

# A store of at least this many files is parsed, when built whole, by worker processes
# (`Parsing`): archive records in runs of `JOB_FILES`, other tier files one by one.
PARALLEL_FILES = 400
JOB_FILES = 200
JOB_WAIT_SECONDS = 120.0  # a job takes milliseconds: one this late lost its worker
# As many workers as cores (a single core parses in the writing process): on 2 quiet cores
# one worker left the writer waiting 2.5 s of a 6 s build for what it parsed, two 0.9 s.
WORKERS = min(_CORES, 4) if (_CORES := os.cpu_count() or 1) > 1 else 0


@record(frozen=True)
class Parsed:
    """A file read and parsed before the index lock was taken, with the stat that tells the
    same file later: device, inode, size, mtime and change time. Any write changes the change
    time, which no program can set; one within two seconds of the read could leave it as it
    was (the clock's tick), so such a file is read again and its bytes' hash compared."""

    ident: tuple[int, int, int, int, int]
    sha: str
    docs: list[Doc]
    conflicts: list[str]
    error: ParseError | None = None
    texts: list[str] = field(default_factory=list)  # the hash of each document's text
    digest: str = ""  # what the rows hold (`rows_digest`)

    def holds(self, st: os.stat_result, settled_ns: int) -> bool:
        """Whether the file with this stat is still the one parsed, without reading it."""
        return self.ident == ident(st) and self.ident[4] <= settled_ns


def ident(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def parse_file(
    path: Path,
    rel: str,
    tier: str,
    got: tuple[bytes, os.stat_result],
    sha: str = "",
    hashed: Callable[[bytes | str], str] = _sha,
) -> Parsed:
    """What a file holds, from its bytes read once (a second read could differ), and their
    hash (made here when not given)."""
    data, st = got
    sha = sha or hashed(data)
    try:
        docs, conflicts = parsed_docs(path, rel, tier, data)
    except ParseError as exc:
        return Parsed(ident(st), sha, [], [], exc)
    texts = [hashed(d.text) for d in docs]
    return Parsed(ident(st), sha, docs, conflicts, None, texts, rows_digest(docs, hashed))


def _bulk_sha(data: bytes | str) -> str:
    """The SHA-256 of text or bytes in hex, as `_sha` gives it, by OpenSSL: a worker
    process hashes a whole store, where loading it pays (see `storage.digest`)."""
    import hashlib

    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def _parse_files(
    folder: str, rel_dir: str, tier: str, names: list[str]
) -> list[tuple[str, Parsed]]:
    """Files of one folder read and parsed (in a worker process), by path: what cannot be
    read is left out, for the sync to read and say."""
    found: list[tuple[str, Parsed]] = []
    with contextlib.suppress(TiermemError), files.Folder(Path(folder)) as reader:
        for name in names:
            try:
                got = reader.read(name)
            except TiermemError:
                continue
            if got is not None:
                rel = f"{rel_dir}/{name}"
                found.append(
                    (rel, parse_file(reader.path / name, rel, tier, got, hashed=_bulk_sha))
                )
    return found


class Parsing:
    """Files parsed in worker processes, handed over in the order a sync visits them: the
    workers parse a few jobs ahead of the writer, so that parsing and writing overlap, in
    memory bounded by those jobs. Forked: nothing is imported again."""

    def __init__(self, jobs: list[tuple[str, str, str, list[str]]]) -> None:
        import multiprocessing

        self._pool = multiprocessing.get_context("fork").Pool(WORKERS)
        self._jobs = iter(jobs)
        self._running: collections.deque[Any] = collections.deque()
        self._job_of = {f"{job[1]}/{name}": n for n, job in enumerate(jobs) for name in job[3]}
        self._taken = 0  # jobs handed over so far
        self._fill()

    def _fill(self) -> None:
        while len(self._running) < WORKERS * 4:
            job = next(self._jobs, None)
            if job is None:
                return
            self._running.append(self._pool.apply_async(_parse_files, job))

    def until(self, rel: str, into: dict[str, Parsed]) -> None:
        """Hand over every job up to the one that holds `rel` (none when no job does). A job
        that never comes back (its worker killed) stops the handing over: the sync reads
        and parses the rest itself."""
        import multiprocessing

        last = self._job_of.get(rel, -1)
        while self._taken <= last and self._running:
            try:
                into.update(self._running.popleft().get(timeout=JOB_WAIT_SECONDS))
            except multiprocessing.TimeoutError:
                self._running.clear()
                self._jobs = iter(())
                return
            self._taken += 1
            self._fill()

    def close(self) -> None:
        """Stop the workers (they hold copies of this process's descriptors, locks too)."""
        self._pool.terminate()
        self._pool.join()


def jobs(
    rel_dir: str, folder: Path, tier: str, names: list[str]
) -> list[tuple[str, str, str, list[str]]]:
    """A folder's files in runs of about `JOB_FILES`, as `_parse_files` takes them."""
    step = 1 if tier != "archive" else JOB_FILES
    return [(str(folder), rel_dir, tier, names[n : n + step]) for n in range(0, len(names), step)]


# What a file's rows hold of their own (token counts and passages are derived from the text).
_DIGESTED = operator.attrgetter(*STORED)


def rows_digest(docs: Sequence[Doc], hashed: Callable[[bytes | str], str] = _sha) -> str:
    """What the rows of one file hold (all but what is derived from their text)."""
    return hashed(repr([_DIGESTED(d) for d in docs]))
