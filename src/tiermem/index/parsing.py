"""What a sync reads of the store: its folders and their memory files, and what a file
holds, parsed before the index lock is taken, with the stat that tells the same file later,
in this process or, for a whole store, in worker processes that parse ahead of the writer."""

from __future__ import annotations

import collections
import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ParseError, TiermemError, UnsafePathError
from ..storage import files, governed, retired, safepath
from ..storage.layout import Layout
from ..vocabulary import FILE_TIERS, TIERS
from .protocol import SyncReport
from .schema import TEXT_AT, Stored, parsed_docs, stored
from .schema import sha as _sha

# The tier a sync reads Squad's governed memory folders as (their entries are the wiki's).
GOVERNED = governed.TAG
# A store of at least this many files is parsed, when built whole, by worker processes
# (`Parsing`): archive records in runs of `JOB_FILES`, other tier files one by one.
PARALLEL_FILES = 400
JOB_FILES = 200
JOB_WAIT_SECONDS = 120.0  # a job takes milliseconds: one this late lost its worker
# As many workers as cores (a single core parses in the writing process): on 2 quiet cores
# one worker left the writer waiting 2.5 s of a 6 s build for what it parsed, two 0.9 s.
WORKERS = min(_CORES, 4) if (_CORES := os.cpu_count() or 1) > 1 else 0


@dataclass(frozen=True, slots=True)
class Parsed:
    """A file read and parsed before the index lock was taken, with the stat that tells the
    same file later: device, inode, size, mtime and change time. Any write changes the change
    time, which no program can set; one within two seconds of the read could leave it as it
    was (the clock's tick), so such a file is read again and its bytes' hash compared."""

    ident: tuple[int, int, int, int, int]
    sha: str
    rows: list[Stored]  # each document's stored fields (`schema.stored`), in file order
    conflicts: list[str]
    error: ParseError | None = None
    texts: list[str] = field(default_factory=list)  # the hash of each document's text
    digest: str = ""  # what the rows hold (`rows_digest`)
    read_ns: int = 0  # the clock just before its bytes were read (see `Sync._stamp`)

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
    read_ns: int = 0,
) -> Parsed:
    """What a file holds, from its bytes read once (a second read could differ) at `read_ns`,
    and their hash (made here when not given)."""
    data, st = got
    sha = sha or hashed(data)
    try:
        docs, conflicts = parsed_docs(path, rel, tier, data)
    except ParseError as exc:
        return Parsed(ident(st), sha, [], [], exc, read_ns=read_ns)
    rows = [stored(d) for d in docs]
    texts = [hashed(d.text) for d in docs]
    digest = rows_digest(rows, texts, hashed)
    return Parsed(ident(st), sha, rows, conflicts, None, texts, digest, read_ns)


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
            read_ns = time.time_ns()
            try:
                got = reader.read(name)
            except TiermemError:
                continue
            if got is not None:
                rel = f"{rel_dir}/{name}"
                parsed = parse_file(reader.path / name, rel, tier, got, "", _bulk_sha, read_ns)
                found.append((rel, parsed))
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


def rows_digest(
    rows: Sequence[Stored], texts: Sequence[str], hashed: Callable[[bytes | str], str] = _sha
) -> str:
    """What the rows of one file hold (their stored fields: all but what is derived from
    their text), each text by its hash (`texts`): the texts themselves, a whole store's, are
    not written out again to be hashed."""
    kept = [(r[:TEXT_AT] + r[TEXT_AT + 1 :], t) for r, t in zip(rows, texts, strict=True)]
    return hashed(repr(kept))


# --- the folders a sync reads --------------------------------------------------------------

GONE = object()  # a file that vanished between the listing and the read
# A sync reads and parses what changed before it takes the index lock, up to this many bytes
# of files (about 2.5 times as much memory): the rest is read under the lock.
AHEAD_BYTES = 32_000_000


def folders(layout: Layout, report: SyncReport) -> list[tuple[Path, str]]:
    """(folder, tier) of every tier folder, every agent's archive folder and each folder of
    Squad's governed memory (tier `GOVERNED`); a link in place of an agent's archive folder
    or of Squad's folder is skipped, and said."""
    found: list[tuple[Path, str]] = [(layout.tier_dir(t), t) for t in FILE_TIERS]
    found += _governed_folders(layout, report)
    try:
        items = files.listing(layout.tier_dir("archive"))
    except ParseError as exc:
        report.errors.append(exc)
        return found
    for item in items:
        if item.kind == "folder":
            found.append((item.path, "archive"))
        elif item.kind == "link":
            report.errors.append(UnsafePathError(item.path, safepath.LINK_REASON))
    return found


def _governed_folders(layout: Layout, report: SyncReport) -> list[tuple[Path, str]]:
    """Squad's governed memory folders that are there (read as the wiki: `governed`)."""
    found = []
    for folder in governed.folders(layout):
        kind = safepath.kind(folder)
        if kind == "folder" and files.is_folder(folder):
            found.append((folder, GOVERNED))
        elif kind == "link":
            report.errors.append(UnsafePathError(folder, safepath.LINK_REASON))
    return found


def folder_mtime(folder: Path) -> int:
    """A folder's mtime (0 when it vanished), links not followed."""
    try:
        return os.lstat(folder).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        return 0


def readable(items: list[files.Item], report: SyncReport) -> Iterator[str]:
    """The names of a folder's memory files; a link or a folder in place of one is said."""
    for item in items:
        if not item.name.endswith(".md") or item.name.startswith(files.TEMP_PREFIX):
            continue
        if item.kind == "link":
            report.errors.append(UnsafePathError(item.path, safepath.LINK_REASON))
        elif item.kind != "file":
            what = "Is a directory" if item.kind == "folder" else "not a regular file"
            report.errors.append(ParseError(item.path, 1, f"cannot be read ({what})"))
        else:
            yield item.name


def moved(
    reader: files.Folder,
    name: str,
    row: Sequence[Any] | None,
    prior: Parsed | None = None,
    settled_ns: int = 0,
) -> tuple[bytes, os.stat_result] | Parsed | object | None:
    """A file's bytes and stat when its size or mtime moved from its row in `files` (or it
    has none): None when they did not, `GONE` when it vanished since the listing, `prior`
    (what was parsed of it before) when it is provably the same file still. A file that
    cannot be read raises ParseError."""
    try:
        if row is not None or prior is not None:
            st = reader.lstat(name)
            if row is not None and (row[0], row[1]) == (st.st_size, st.st_mtime_ns):
                return None
            if prior is not None and prior.holds(st, settled_ns):
                return prior
        got = reader.read(name)
    except (FileNotFoundError, NotADirectoryError):
        return GONE
    return GONE if got is None else got


def ahead(
    layout: Layout, known: dict[str, tuple[int, int, str]], dirs: dict[str, int]
) -> dict[str, Parsed]:
    """The files a sync is about to write, read and parsed before the index lock is taken:
    those whose content is not the one indexed (`known`: size, mtime and hash by path; every
    file, when it is empty), up to `AHEAD_BYTES` (the rest is read under the lock). What
    cannot be read here is left to the sync under the lock, which says it."""
    parsed: dict[str, Parsed] = {}
    size = 0
    for folder, tier in folders(layout, SyncReport()):
        rel_dir = layout.relative(folder)
        if tier == "archive" and rel_dir in dirs and dirs[rel_dir] == folder_mtime(folder):
            continue  # create-only: the same records
        with contextlib.suppress(TiermemError):
            size = _ahead_in(folder, rel_dir, tier, known, size, parsed)
        if size > AHEAD_BYTES:
            break
    return parsed


def _ahead_in(
    folder: Path,
    rel_dir: str,
    tier: str,
    known: dict[str, tuple[int, int, str]],
    size: int,
    parsed: dict[str, Parsed],
) -> int:
    """Parse ahead the changed files of one folder; the bytes read so far, after them."""
    items = files.listing(folder)
    with files.Folder(folder) as reader:
        for name in readable(items, SyncReport()):
            rel = f"{rel_dir}/{name}"
            row = known.get(rel)
            read_ns = time.time_ns()
            try:
                got = moved(reader, name, row)
            except ParseError:
                continue
            if not isinstance(got, tuple):
                continue
            sha = _sha(got[0])
            if row is None or row[2] != sha:
                parsed[rel] = parse_file(reader.path / name, rel, tier, got, sha, read_ns=read_ns)
                size += len(got[0])
                if size > AHEAD_BYTES:
                    break
    return size


def workers(layout: Layout) -> Parsing | None:
    """Worker processes to parse a whole store's files, when they are many and this system
    forks (else the sync parses them itself)."""
    import multiprocessing

    if WORKERS < 1 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    found = []
    for folder, tier in folders(layout, SyncReport()):
        with contextlib.suppress(TiermemError):
            names = list(readable(files.listing(folder), SyncReport()))
            found += jobs(layout.relative(folder), folder, tier, names)
    if sum(len(job[3]) for job in found) < PARALLEL_FILES:
        return None
    return Parsing(found)


def _tier_file(name: str, kind: str) -> bool:
    """Whether a fingerprint stamps a tier folder's entry: its markdown files (a link in
    place of one too, by the link's own stamp: a link to nothing must not fail every read)."""
    return name.endswith(".md") and not name.startswith(files.TEMP_PREFIX)


def _record_folder(name: str, kind: str) -> bool:
    """Whether a fingerprint stamps an archive entry: an agent's folder of records (or a
    link in its place)."""
    return kind in ("folder", "link")


def fingerprint(layout: Layout) -> str:
    """Every tier file's size and mtime, every archive folder's mtime, every file of
    Squad's governed memory and the ledger of retired passages' stamp, as one digest.

    Every read runs it, so it stamps what `os.scandir` lists (names and types come with
    the listing) relative to the open folder, instead of building and testing paths.
    """
    parts: list[str] = []
    for tier in TIERS:
        wanted = _record_folder if tier == "archive" else _tier_file
        try:
            found = files.stamps(layout.tier_dir(tier), wanted)
        except ParseError:
            parts.append(f"{tier}/: unreadable")
            continue
        if tier == "archive":
            parts.extend(f"{name}/:{stamp}" for name, stamp in found)
        else:
            parts.extend(f"{tier}/{name}:{stamp}" for name, stamp in found)
    for folder in governed.folders(layout):
        rel = layout.relative(folder)
        try:
            found = files.stamps(folder, _tier_file) if safepath.kind(folder) != "missing" else []
        except (ParseError, UnsafePathError):
            parts.append(f"{rel}/: unreadable")
            continue
        parts.extend(f"{rel}/{name}:{stamp}" for name, stamp in found)
    parts.append(f"{retired.NAME}:{retired.stamp(layout)}")
    return _sha("\n".join(sorted(parts)))
