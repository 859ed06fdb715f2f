"""The index file (`.squad/memory/index.sqlite`): opened only when this clone sealed it, and
otherwise built whole in a temp file and put in place.

The database is a cache that many processes open at once, so it is never deleted or replaced
under one of them: each connection holds a shared lock (`.locks/index.users`) for as long as
it is open, and a new database (a first open, another schema, a damaged file) is built in a
temp file and renamed into place only by the one process that holds the index lock and,
exclusively, that users lock.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import urllib.parse
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from ..errors import LockTimeout, StoreError
from ..storage import clone, files, safepath
from ..storage.digest import same as same_digest
from ..storage.layout import Layout
from . import schema
from .protocol import SyncReport

UNTRUSTED = "not sealed by this clone"  # built elsewhere, or changed since: built again
BUILDING = f"{files.TEMP_PREFIX}index-"  # the temp files a build writes, then renames
TURNS = "index.sqlite.sync"  # the lock syncs take turns by (the index lock is for writes)
# How long a process that must build the index waits for another one building it (a fresh
# clone's first reads at once): a large store's build takes seconds, and nothing it needs is
# there until it ends.
BUILD_WAIT_SECONDS = 1.0
BUILDING_ELSEWHERE = (
    "the search index is being built (or brought up to date) by another process; "
    "run the command again in a few seconds"
)
_SIDES = ("-wal", "-shm", "-journal")  # what SQLite writes beside a database
_FILL_CACHE_KB = 16_384  # the page cache of a build (SQLite's default is 2 MB)
# FTS5 keeps the terms it is handed in memory up to this much before it writes them out as a
# segment, which it then merges with the others: 1 MB unless told. A build of 57 million
# characters made some sixty segments and merged them again and again; with 16 MB, a few.
# Its tokenizing and writing took 2.8 s of CPU, 1.2 s with it (the index is the same).
_FILL_HASH_BYTES = 16 << 20
_HASH_BYTES = 1 << 20

_Method = TypeVar("_Method", bound=Callable[..., Any])


def one_line(method: _Method) -> _Method:
    """SQLite's failures (a damaged file, a full disk, a lock held too long) as one line."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc) from None

    return wrapper  # type: ignore[return-value]


def store_error(exc: sqlite3.Error) -> StoreError:
    """A failure of SQLite, as the user reads it."""
    if "locked" in str(exc) or "busy" in str(exc):
        return StoreError("the search index is locked by another process; try again")
    return StoreError(f"the search index failed ({exc}); `tiermem reindex` rebuilds it")


def _let_go(db: sqlite3.Connection, users: int) -> None:
    """Close a connection, then release the users lock it was opened under."""
    with contextlib.suppress(sqlite3.Error):
        db.close()
    os.close(users)


def _identity(path: str | Path) -> tuple[int, int] | None:
    """Which file a path names now (device and inode), None when there is none."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st.st_dev, st.st_ino


def _terms_held(db: sqlite3.Connection, size: int) -> None:
    """How much FTS5 holds in memory before it writes a segment (an SQLite too old to be
    told builds as it always did)."""
    with contextlib.suppress(sqlite3.Error):
        db.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES('hashsize', ?)", (size,))


_IN_PROCESS: weakref.WeakSet[Database] = weakref.WeakSet()  # every open of this process


class Database:
    """The connection to the index file, and the file's life: trusted, built, replaced.

    `fill` writes a new index's documents (`Sync.fill`), in a file no other process sees.
    """

    def __init__(
        self, layout: Layout, wanted: str, fill: Callable[[sqlite3.Connection], SyncReport]
    ) -> None:
        self.layout = layout
        self.wanted = wanted  # the schema an index must have to be read (`fts.wanted`)
        self._fill_rows = fill
        self._db: sqlite3.Connection | None = None
        # Closes the connection, then the descriptor of the users lock (also when the object is
        # collected unclosed): a connection left open after its lock would keep a log beside
        # an index that another open takes for one no process wrote (`_left_behind`).
        self._users: weakref.finalize[[sqlite3.Connection, int], Database] | None = None
        self._built: SyncReport | None = None  # what the build on opening read, not said yet
        self._opened: tuple[tuple[int, int] | None, ...] = ()
        self._paths = (str(layout.index), f"{layout.index}-wal")  # stat on every read
        self.writes = 0  # documents this object wrote or dropped (see `Queries`' caches)
        _IN_PROCESS.add(self)

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (opened, or built, on first use)."""
        return self._db if self._db is not None else self.opened_now(whole=True)

    @property
    def is_open(self) -> bool:
        """Whether a connection is open (else the next use opens, or builds, the index)."""
        return self._db is not None

    def opened_now(self, whole: bool) -> sqlite3.Connection:
        """The connection, opened now: an index that must be built is built whole from the
        files, or (not `whole`) empty."""
        try:
            self._db = self._open(whole)
        except sqlite3.Error as exc:
            raise store_error(exc) from None
        return self._db

    def ready(self) -> None:
        """Open (or build) the index before its lock is taken: a build takes the turns of
        syncs first (`_replace`), and every process takes the two in that order."""
        if self._db is None:
            _ = self.db

    def take_built(self) -> SyncReport | None:
        """What the build on opening read (once: then it has been said)."""
        built, self._built = self._built, None
        return built

    def replaced(self) -> bool:
        """Whether the index or its log was replaced under this open connection (a checkout
        or a copy of one tiermem did not write): then nothing in it is trusted."""
        return self._db is not None and self._identities() != self._opened

    def state(self) -> tuple[int, int]:
        """Which state of the index this connection reads: it changes when another process
        commits (this one's own writes are counted in `writes`)."""
        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        return id(self.db), int(version)

    @contextlib.contextmanager
    def using(self, db: sqlite3.Connection) -> Iterator[None]:
        """Work on another connection for a while: a new index being filled."""
        saved, self._db = self._db, db
        try:
            yield
        finally:
            self._db = saved

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction, rolled back when what runs in it fails."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _open(self, whole: bool) -> sqlite3.Connection:
        files.check_store(self.layout)  # no link in place of the index or its side files
        users = files.open_lock(self.layout, schema.USERS_LOCK)
        try:
            db = self._current(users) or self._replace(users, force=False, whole=whole)
        except BaseException:
            os.close(users)
            raise
        self._users = weakref.finalize(self, _let_go, db, users)
        return db

    def _connect(self, path: Path, create: bool = False) -> sqlite3.Connection:
        """A connection to an index file (never creating one, unless asked)."""
        mode = "rwc" if create else "rw"
        uri = f"file:{urllib.parse.quote(str(path))}?mode={mode}"
        timeout = schema.SQLITE_TIMEOUT_SECONDS
        db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _current(self, users: int) -> sqlite3.Connection | None:
        """A connection to the index if it is there with this schema and this clone's seal
        (the users lock is then held shared); None, and no lock, otherwise."""
        files.acquire(users, "the search index", shared=True)
        db = None if self._left_behind(users) else self._trusted()
        if db is None:
            files.release(users)
        return db

    def _left_behind(self, users: int) -> bool:
        """Whether a log or journal lies beside an index that no process has open (see
        `SIDE_LOGS`): SQLite would apply it on opening, so the index is built again."""
        if not files.try_lock(users):  # exclusive: only while no other process has it open
            return False
        try:
            return schema.logs_beside(self.layout)
        finally:
            files.acquire(users, "the search index", shared=True)

    def _trusted(self) -> sqlite3.Connection | None:
        """A connection to the index file if it may be read: this version's, sealed by this
        clone over the objects it holds, and not replaced while it was looked at."""
        before = _identity(self.layout.index)
        try:
            db = self._connect(self.layout.index)
        except sqlite3.Error:
            return None  # none there yet
        try:
            why = self._distrust(db)
        except sqlite3.Error:
            why = "damaged"  # not a database, or a damaged one: built again
        if not why and _identity(self.layout.index) == before:
            self._opened = self._identities()
            return db
        db.close()
        return None

    def _distrust(self, db: sqlite3.Connection) -> str:
        """Why an index may not be read ("" when it may): another schema (silently built
        again, as after an upgrade), or no seal of this clone over what it holds."""
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'seal')"))
        if meta.get("schema") != self.wanted:
            return "another schema"
        mark = clone.peek(self.layout)  # none yet: no index was built on this clone
        expected = clone.seal(mark, self._sealed(db)) if mark is not None else ""
        sealed = bool(expected) and same_digest(str(meta.get("seal", "")), expected)
        return "" if sealed else UNTRUSTED

    def _sealed(self, db: sqlite3.Connection) -> str:
        """What a seal covers: the schema version and every object the database holds."""
        return f"{self.wanted}\n{schema.objects(db)}"

    def _identities(self) -> tuple[tuple[int, int] | None, ...]:
        """Which files the index and its log are (a read checks they are still the same)."""
        return _identity(self._paths[0]), _identity(self._paths[1])

    def _replace(self, users: int, force: bool, whole: bool = True) -> sqlite3.Connection:
        """Build a new index of the files and put it in place; the users lock is held shared
        after.

        The index is built whole in a temp file no other process sees (see `_fill`), holding
        no lock but the turns of syncs, so that processes opening a fresh clone at once build
        it once: one that finds another building waits up to BUILD_WAIT_SECONDS for it, then
        says so in one line (`BUILDING_ELSEWHERE`) rather than wait out a large store's build
        or build it a second time. It is put in place under the index lock, and only when no
        other process has the old file open (the users lock, exclusive): SQLite keeps the
        write-ahead log beside the database by name, and a database swapped under an open
        connection would later be paired with that connection's log.
        """
        with contextlib.ExitStack() as turns:
            wait = None if force else BUILD_WAIT_SECONDS
            turn = files.locked(self.layout, self.layout.memory / TURNS, timeout=wait)
            try:
                turns.enter_context(turn)
            except LockTimeout:
                if force:
                    raise
                raise StoreError(BUILDING_ELSEWHERE) from None
            if not force:
                db = self._current(users)  # another process built it while we waited
                if db is not None:
                    return db
            self._drop_killed_builds()
            tmp = self.layout.memory / f"{BUILDING}{os.getpid()}-{os.urandom(6).hex()}"
            try:
                built = self._fill(tmp, whole)
                with files.locked(self.layout, self.layout.index):
                    self._close_others()
                    files.acquire(users, "the search index (open in another process)")
                    self._put_in_place(tmp)
                    files.acquire(users, "the search index", shared=True)  # we hold the lock
                    db = self._connect(self.layout.index)
                    db.execute("SELECT 1 FROM meta LIMIT 1")  # opens the log, its file recorded
                    self._opened = self._identities()
            finally:
                for leftover in (tmp, *(Path(f"{tmp}{side}") for side in _SIDES)):
                    with contextlib.suppress(OSError):
                        os.unlink(leftover)
        self._built = built
        return db

    def _drop_killed_builds(self) -> None:
        """Remove what builds killed midway left (up to a whole index each): every build runs
        holding the turns, so a temp index found by the one holding them is no other's."""
        for item in files.listing(self.layout.memory):
            if item.kind == "file" and item.name.startswith(BUILDING):
                with contextlib.suppress(OSError):
                    os.unlink(item.path)

    def _fill(self, tmp: Path, whole: bool) -> SyncReport:
        """A whole index of the files (or, not `whole`, an empty one), with this schema and
        this clone's seal, built in a new file: as fast as SQLite writes, since nobody reads
        it yet (no journal, the documents' own indexes made after their rows, a large page
        cache), with the files parsed in worker processes meanwhile. A file changed while it
        is built is found by the next sync: the fingerprint it keeps is from before it read
        the files."""
        clone_mark = clone.mark(self.layout)
        try:
            db = self._connect(safepath.check(tmp), create=True)
            try:
                for pragma in (
                    "journal_mode=OFF",
                    "synchronous=OFF",
                    f"cache_size=-{_FILL_CACHE_KB}",
                ):
                    db.execute(f"PRAGMA {pragma}")
                db.executescript(schema.TABLES)
                db.execute("INSERT INTO meta VALUES('schema', ?)", (self.wanted,))
                _terms_held(db, _FILL_HASH_BYTES)
                report = self._fill_rows(db) if whole else SyncReport()
                _terms_held(db, _HASH_BYTES)  # later syncs hold what they always held
                db.executescript(schema.DOC_INDEXES)
                db.execute("PRAGMA journal_mode=WAL")
                seal = clone.seal(clone_mark, self._sealed(db))
                db.execute("INSERT INTO meta VALUES('seal', ?)", (seal,))
            finally:
                db.close()
        except OSError as exc:
            raise StoreError(f"cannot build the search index: {exc.strerror}") from None
        return report

    def _put_in_place(self, tmp: Path) -> None:
        """Rename a new index over whatever was in its place (no one has the old open)."""
        try:
            for side in files.index_files(self.layout)[1:]:  # the old log: no one has it open
                files.unlink(self.layout.memory / side)
            if safepath.kind(self.layout.index) == "folder":
                raise StoreError(
                    f"{self.layout.index} is a folder, not the search index; move it away "
                    "(`tiermem doctor --repair` does)"
                )
            os.replace(tmp, self.layout.index)
        except OSError as exc:
            raise StoreError(f"cannot build the search index: {exc.strerror}") from None

    def _close_others(self) -> None:
        """Close this process's other connections to the same index (they open it again
        when next used), so that only other processes can keep it from being replaced."""
        for other in list(_IN_PROCESS):
            if other is not self and other.layout.index == self.layout.index:
                other.close()

    def close(self) -> None:
        """Close the connection, and let other processes replace the index again."""
        if self._db is not None:
            self._db.close()
            self._db = None
        self._opened = ()
        if self._users is not None:
            self._users()  # closes the descriptor, releasing the lock
            self._users = None

    def start_over(self) -> None:
        """Replace a damaged index by a new, empty one (this process's connection first)."""
        self.close()
        users = files.open_lock(self.layout, schema.USERS_LOCK)
        try:
            self._db = self._replace(users, force=True)
        except BaseException:
            os.close(users)
            raise
        self._users = weakref.finalize(self, _let_go, self._db, users)
