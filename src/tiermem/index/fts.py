"""The search index in SQLite FTS5 (`.squad/memory/index.sqlite`), synced before every read.

The markdown files are the truth; the index is a cache that can be deleted at any time. A
sync compares each file's size and mtime with what was indexed, then its content hash, and
re-reads only files that really changed. Archive folders are
create-only, so an unchanged folder mtime means no record was added there. What changed is
read and parsed before the index lock is taken, which is held only to write (see
`FtsIndex._read_ahead`).

A document's token count and passages are derived from its text. A sync that takes in much
text at once (a fresh clone's first read, an import) writes its documents without them, in a
few statements per folder; the first read that returns such a document derives them and keeps
them (`FtsIndex._keep_derived`), so a fresh clone's first search pays for the documents it
shows, not for the whole store.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import sqlite3
import sys
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import LockTimeout, ParseError, StoreError, TiermemError, UnsafePathError
from ..record import field, record, replace
from ..storage import clone, files, safepath, store
from ..storage.digest import same as same_digest
from ..storage.layout import Layout
from . import parsing, passages, schema
from .protocol import Doc, Hit, Scope, SyncReport
from .schema import (
    BM25,
    DOC_COLUMNS,
    DOC_INDEXES,
    SQLITE_TIMEOUT_SECONDS,
    TABLES,
    USERS_LOCK,
    WIKI_TERM,
    WORDS,
    cut_passages,
    logs_beside,
    objects,
    owner_term,
    parsed_docs,
)
from .schema import sha as _sha
from .tokens import TokenCounter

SCHEMA_VERSION = "17"
_GONE = object()  # a file that vanished between the listing and the read
_RACY_NS = 2_000_000_000  # files changed this recently are read again (see `_stamp`)
UNTRUSTED = "not sealed by this clone"  # built elsewhere, or changed since: built again
_BUSY = (
    "the index was read as it stood: another process held it for the whole wait (the next "
    "read brings it up to date)"
)
_WORD = re.compile(r"\w+", re.UNICODE)


# A spawn's query ranks the documents that hold its rarest words, as many words as hold about
# this many documents together, by those words alone: a document holding only the query's
# common words ("src", "docs", "test") is not among the best few dozen of a store of
# thousands, and BM25 reads the whole row list of every word it weighs, once per query, so
# weighing the common words was most of a spawn's time in a large store. Left out, they
# changed the four shared teams' forward coverage by less than 0.003 each (the passages
# chosen afterwards are still scored by every word). Search ranks every document holding any
# word: a person's query is short, its words chosen.
RARE_ROWS = 5000

# Changed files are written together, up to this much text: a folder of 50 MB of archive
# records is indexed in bounded memory.
_PENDING_CHARS = 4_000_000
# Up to this much text, a sync derives its documents' token counts and passages at once (a
# note, a session end: reads after ordinary writes never write). Above it, reads derive them
# for the documents they return: cutting passages and counting tokens cost about 0.2 s per
# million characters, two thirds of a 100,000-entry store's build.
_EAGER_CHARS = 65_536
# A sync reads and parses what changed before it takes the index lock, up to this many bytes
# of files (about 2.5 times as much memory): the rest is read under the lock.
_AHEAD_BYTES = 32_000_000
_FILL_CACHE_KB = 16_384  # the page cache of a build (SQLite's default is 2 MB)
_OWN_READS = sys.maxsize  # what a build of its own file has parsed is taken as it is read
_BUILDING = f"{files.TEMP_PREFIX}index-"  # the temp files a build writes, then renames
_TURNS = "index.sqlite.sync"  # the lock syncs take turns by (the index lock is for writes)
_KEEP_WAIT_MS = 50  # how long a read waits for the index to keep what it derived
_SLICE = 100  # ranked matches whose scope search_each reads first (then twice as many)
_SLICE_MOST = 3200  # and at most this many at once (SQLite takes some 32,000 arguments)
_FEW = 2000  # a scope of at most this many documents is read whole by search_each


@record(frozen=True)
class _Pending:
    """A changed file's documents, waiting to be written with the folder's others."""

    rel: str
    parsed: parsing.Parsed
    mtime_ns: int  # as recorded (see `_stamp`)
    indexed: bool  # it has rows from before, which go first

    @property
    def docs(self) -> list[Doc]:
        return self.parsed.docs


@record
class _Batch:
    """Changed files of one folder waiting to be written, and the text they hold."""

    files: list[_Pending] = field(default_factory=list)
    chars: int = 0

    def add(self, item: _Pending) -> None:
        self.files.append(item)
        self.chars += sum(len(d.text) for d in item.docs)


def wanted(counter: TokenCounter) -> str:
    """The schema an index must have to be read: this version's, with this counter's counts
    (another counter, a test's fake, gets an index of its own counts). A change to the
    tables' shape (a field of `Doc`, a searched column) is a schema of its own by itself, and
    so is a change to how entries are cut into passages."""
    shape = _sha(schema.SCHEMA)[:12]
    return f"{SCHEMA_VERSION}.{shape}.{passages.CUT_VERSION}/{type(counter).__name__}"


# Words too common to rank by: matching them only makes the query slower.
_STOP_WORDS = frozenset(
    "a an and are as at be but by for from has have in into is it its of on or that the "
    "their then there these this to was were will with".split()
)
# A query asked as a question ("what did we decide about retries?") is about its other words:
# its question words and auxiliaries only favour chatty text that happens to hold them. Not
# so in a query without a question mark: "What was done" is a heading teams write.
_QUESTION_WORDS = frozenset(
    "about been being can could did do does doing had how might should what when "
    "where which who whom whose why would".split()
)


_PHRASE = re.compile(r'"([^"]*)"')  # a quoted run of words


def fts_query(query: str) -> str:
    """Turn any user text into a safe FTS5 query: each word quoted, any word may match; a
    quoted run of words ("retry budget", a path) matches as a phrase."""
    stop = _STOP_WORDS | _QUESTION_WORDS if query.rstrip().endswith("?") else _STOP_WORDS
    phrases = [" ".join(_WORD.findall(p.lower())) for p in _PHRASE.findall(query)]
    loose = _PHRASE.sub(" ", query).lower()
    words: list[str] = [p for p in dict.fromkeys(phrases) if p]
    for word in _WORD.findall(loose):
        if word not in words and word not in stop:
            words.append(word)
    if not words:  # a query of stop words only still means something
        words = list(dict.fromkeys(_WORD.findall(loose)))
    return " OR ".join(f'"{w}"' for w in words)


def _match(words: str, agents: Sequence[str], whole_wiki: bool = False) -> str:
    """The FTS5 query: any of the words, in a title or text, of one of the agents if named
    (or of anyone in the wiki, with `whole_wiki`).

    FTS5 narrows by agent itself, skipping through the agent's short list of rows. Tier and
    status are left to `_scope`: their terms would be in most rows, and BM25 reads the whole
    row list of every term in the query to weigh it.
    """
    match = f"{WORDS}: ({words})"
    if agents:
        owners = [owner_term(a) for a in agents] + ([WIKI_TERM] if whole_wiki else [])
        match += f" AND owner: ({' OR '.join(owners)})"
    return match


def _conditions(
    agents: Sequence[str],
    tiers: Sequence[str],
    active_only: bool,
    paths: Sequence[str],
    whole_wiki: bool = False,
) -> tuple[list[str], list[object]]:
    """Conditions on `docs` rows by tier, file, owner and status, with their arguments."""
    conditions: list[str] = []
    args: list[object] = []
    if active_only:
        conditions.append("status=''")
    for column, values in (("tier", tiers), ("path", paths), ("agent", agents)):
        if values:
            condition = f"{column} IN ({','.join('?' * len(values))})"
            if column == "agent" and whole_wiki:
                condition = f"({condition} OR tier='wiki')"
            conditions.append(condition)
            args.extend(values)
    return conditions, args


def _rowid_filter(conditions: Sequence[str], args: list[object]) -> tuple[str, list[object]]:
    """An FTS5 query's filter to the rows that meet all the conditions.

    The filter is a set of rowids built once per query (the `+` keeps SQLite from looking the
    set up row by row through FTS5), so BM25 scores only the documents in scope.
    """
    if not conditions:
        return "", []
    where = " AND ".join(conditions)
    return f" AND +docs_fts.rowid IN (SELECT rowid FROM docs WHERE {where})", args


def _scope(
    agents: Sequence[str],
    tiers: Sequence[str],
    active_only: bool,
    paths: Sequence[str],
    whole_wiki: bool = False,
) -> tuple[str, list[object]]:
    """The filter of a search by tier, status and file; by agent only along with those
    (alone, the agents are narrowed by FTS5 itself: see `_match`)."""
    narrowed = tiers or paths or active_only
    owners = agents if narrowed else []
    return _rowid_filter(*_conditions(owners, tiers, active_only, paths, whole_wiki))


def _scope_conditions(scope: Scope) -> tuple[list[str], list[object]]:
    conditions, args = _conditions(scope.agents, scope.tiers, scope.active_only, [])
    if scope.status:
        conditions.append("status=?")
        args.append(scope.status)
    return conditions, args


def _scope_condition(scope: Scope) -> tuple[str, list[object]]:
    """The condition on `docs` rows of a scope, with its arguments."""
    conditions, args = _scope_conditions(scope)
    return " AND ".join(conditions) or "1", args


def _scope_filter(scope: Scope) -> tuple[str, list[object]]:
    """An FTS5 query's filter to the documents of a scope, with its arguments."""
    return _rowid_filter(*_scope_conditions(scope))


def _mtime(folder: Path) -> int:
    """A folder's mtime (0 when it vanished), links not followed."""
    try:
        return os.lstat(folder).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        return 0


def _moved(
    reader: files.Folder,
    name: str,
    row: Sequence[Any] | None,
    prior: parsing.Parsed | None = None,
    settled_ns: int = 0,
) -> tuple[bytes, os.stat_result] | parsing.Parsed | object | None:
    """A file's bytes and stat when its size or mtime moved from its row in `files` (or it
    has none): None when they did not, `_GONE` when it vanished since the listing, `prior`
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
        return _GONE
    return _GONE if got is None else got


def _cut(ranking: list[tuple[int, float]], limit: int) -> list[tuple[int, float]] | None:
    """The first `limit` of the best `limit + 1` (rowid, bm25), or None when the cut falls
    between equal scores: which of the tied documents make it depends on their dates."""
    if len(ranking) > limit:
        if ranking[limit][1] == ranking[limit - 1][1]:
            return None
        del ranking[limit:]
    return ranking


def _listing(folder: Path) -> list[files.Item]:
    """What a folder holds, links not followed (nothing when it does not exist)."""
    return files.listing(folder)


def _tier_file(name: str, kind: str) -> bool:
    """Whether a fingerprint stamps a tier folder's entry: its markdown files (a link in
    place of one too, by the link's own stamp: a link to nothing must not fail every read)."""
    return name.endswith(".md") and not name.startswith(files.TEMP_PREFIX)


def _record_folder(name: str, kind: str) -> bool:
    """Whether a fingerprint stamps an archive entry: an agent's folder of records (or a
    link in its place)."""
    return kind in ("folder", "link")


def _unsaid(line: str) -> None:
    """Where notes go when nobody listens."""


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


def _terms_of(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The search terms FTS5 holds for these rows, column by column."""
    found: dict[int, tuple[str, ...]] = {}
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        query = f"SELECT rowid, {schema.TERM_COLUMNS} FROM docs_fts WHERE rowid IN ({marks})"
        found.update((r[0], tuple(r[1:])) for r in db.execute(query, part))
    return found


def _tracked(layout: Layout) -> list[str]:
    """The index and the rest of this clone's own files, where git tracks them: a committed
    index is how a poisoned one reaches a clone."""
    from ..storage import bootstrap

    tracked = bootstrap.tracked_locals(layout)
    return [f"git: {rel} {bootstrap.tracked_local(rel)}" for rel in tracked]


def _readable(items: list[files.Item], report: SyncReport) -> Iterator[str]:
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


_Method = TypeVar("_Method", bound=Callable[..., Any])
_V = TypeVar("_V")  # what a slice of rows is read for


def _one_line(method: _Method) -> _Method:
    """SQLite's failures (a damaged file, a full disk, a lock held too long) as one line."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            raise _store_error(exc) from None

    return wrapper  # type: ignore[return-value]


def _snapshot(method: _Method) -> _Method:
    """A query that sees one state of the index: its statements run in one read
    transaction, so a sync another process commits between them cannot mix two states."""

    @functools.wraps(method)
    def wrapper(self: FtsIndex, *args: Any, **kwargs: Any) -> Any:
        if self.db.in_transaction:
            return method(self, *args, **kwargs)
        self.db.execute("BEGIN")
        try:
            return method(self, *args, **kwargs)
        finally:
            self.db.execute("COMMIT")
            self._keep_derived()
            if self._suspect:
                with contextlib.suppress(TiermemError, sqlite3.Error):
                    self._read_again()  # else the next sync does

    return _one_line(wrapper)  # type: ignore[return-value]


def _store_error(exc: sqlite3.Error) -> StoreError:
    if "locked" in str(exc) or "busy" in str(exc):
        return StoreError("the search index is locked by another process; try again")
    return StoreError(f"the search index failed ({exc}); `tiermem reindex` rebuilds it")


_IN_PROCESS: weakref.WeakSet[FtsIndex] = weakref.WeakSet()  # every index object of this process


class FtsIndex:
    """The index in SQLite FTS5: synced from the files, and searched.

    The database is a cache that many processes open at once, so it is never deleted or
    replaced under one of them: each connection holds a shared lock (`.locks/index.users`)
    for as long as it is open, and a new database (a first open, another schema, a damaged
    file) is built in a temp file and renamed into place only by the one process that holds
    the index lock and, exclusively, that users lock.
    """

    def __init__(
        self, layout: Layout, counter: TokenCounter, note: Callable[[str], None] | None = None
    ) -> None:
        self.layout = layout
        self.counter = counter
        self._db: sqlite3.Connection | None = None
        # Closes the connection, then the descriptor of the users lock (also when the object is
        # collected unclosed): a connection left open after its lock would keep a log beside
        # an index that another open takes for one no process wrote (`_left_behind`).
        self._users: weakref.finalize[[sqlite3.Connection, int], FtsIndex] | None = None
        self._seen = ""  # the files' fingerprint, as a sync began
        # Files changed before this are taken as parsed when their stat is the same (see
        # `parsing.Parsed.holds`); the time a sync began, less the clock's tick.
        self._settled = 0
        self._parsing: parsing.Parsing | None = None  # worker processes parsing for a build
        self._built: SyncReport | None = None  # what the build on opening read, not said yet
        self._ahead: dict[str, parsing.Parsed] = {}  # files parsed before the lock (`_read_ahead`)
        self._wanted = wanted(counter)
        self._racy_after = 0
        self._racy = False
        self._opened: tuple[tuple[int, int] | None, ...] = ()
        self._paths = (str(layout.index), f"{layout.index}-wal")  # stat on every read
        self._note = note or _unsaid  # what the user should hear (an index built again, why)
        self._suspect: set[str] = set()  # files whose rows were damaged: read again
        # What reads derived for rows indexed without it: rowid -> (text hash, tokens,
        # passages), either left None when not derived; kept after the read.
        self._made: dict[int, tuple[str, int | None, str | None]] = {}
        # How many documents hold each word asked (see `_rarest`), as of one state of the
        # index (its connection, the commits of other processes) and this object's writes.
        self._writes = 0  # documents written or dropped
        self._held: tuple[tuple[int, int], int, dict[str, int]] = ((0, 0), 0, {})
        # The members of small scopes (see `_small_scopes`), as of one state and this one's
        # writes.
        self._scopes: tuple[tuple[int, int, int], dict[Scope, set[int] | None]] = ((0, 0, -1), {})
        _IN_PROCESS.add(self)

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (opened, or built, on first use)."""
        return self._db if self._db is not None else self._opened_now(whole=True)

    def _opened_now(self, whole: bool) -> sqlite3.Connection:
        """The connection, opened now: an index that must be built is built whole from the
        files, or (not `whole`) empty."""
        try:
            self._db = self._open(whole)
        except sqlite3.Error as exc:
            raise _store_error(exc) from None
        return self._db

    def _open(self, whole: bool) -> sqlite3.Connection:
        files.check_store(self.layout)  # no link in place of the index or its side files
        users = files.open_lock(self.layout, USERS_LOCK)
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
        db = sqlite3.connect(uri, uri=True, timeout=SQLITE_TIMEOUT_SECONDS, isolation_level=None)
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
            return logs_beside(self.layout)
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
        if meta.get("schema") != self._wanted:
            return "another schema"
        mark = clone.peek(self.layout)  # none yet: no index was built on this clone
        expected = clone.seal(mark, self._sealed(db)) if mark is not None else ""
        sealed = bool(expected) and same_digest(str(meta.get("seal", "")), expected)
        return "" if sealed else UNTRUSTED

    def _sealed(self, db: sqlite3.Connection) -> str:
        """What a seal covers: the schema version and every object the database holds."""
        return f"{self._wanted}\n{objects(db)}"

    def _identities(self) -> tuple[tuple[int, int] | None, ...]:
        """Which files the index and its log are (a read checks they are still the same)."""
        return _identity(self._paths[0]), _identity(self._paths[1])

    def _replace(self, users: int, force: bool, whole: bool = True) -> sqlite3.Connection:
        """Build a new index of the files and put it in place; the users lock is held shared
        after.

        The index is built whole in a temp file no other process sees (see `_fill`), holding
        no lock but the turns of syncs, so that processes opening a fresh clone at once build
        it once. It is put in place under the index lock, and only when no other process has
        the old file open (the users lock, exclusive): SQLite keeps the write-ahead log
        beside the database by name, and a database swapped under an open connection would
        later be paired with that connection's log.
        """
        with files.locked(self.layout, self.layout.memory / _TURNS):
            if not force:
                db = self._current(users)  # another process built it while we waited
                if db is not None:
                    return db
            self._drop_killed_builds()
            tmp = self.layout.memory / f"{_BUILDING}{os.getpid()}-{os.urandom(6).hex()}"
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
                for leftover in (
                    tmp,
                    Path(f"{tmp}-wal"),
                    Path(f"{tmp}-shm"),
                    Path(f"{tmp}-journal"),
                ):
                    with contextlib.suppress(OSError):
                        os.unlink(leftover)
        self._built = built
        return db

    def _drop_killed_builds(self) -> None:
        """Remove what builds killed midway left (up to a whole index each): every build runs
        holding the turns, so a temp index found by the one holding them is no other's."""
        for item in _listing(self.layout.memory):
            if item.kind == "file" and item.name.startswith(_BUILDING):
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
                db.executescript(TABLES)
                db.execute("INSERT INTO meta VALUES('schema', ?)", (self._wanted,))
                report = self._sync_into(db) if whole else SyncReport()
                db.executescript(DOC_INDEXES)
                db.execute("PRAGMA journal_mode=WAL")
                seal = clone.seal(clone_mark, self._sealed(db))
                db.execute("INSERT INTO meta VALUES('seal', ?)", (seal,))
            finally:
                db.close()
        except OSError as exc:
            raise StoreError(f"cannot build the search index: {exc.strerror}") from None
        return report

    def _sync_into(self, db: sqlite3.Connection) -> SyncReport:
        """Sync the files into a new index of this process's own (see `_fill`): what it
        reads is what it writes, no other process writing between."""
        saved, self._db = self._db, db
        self._racy_after = time.time_ns() - _RACY_NS
        self._settled = _OWN_READS
        self._parsing = self._workers()
        try:
            return self._sync_all(self._fingerprint())
        finally:
            self._db, self._ahead = saved, {}
            if self._parsing is not None:
                self._parsing.close()
                self._parsing = None

    def _workers(self) -> parsing.Parsing | None:
        """Worker processes to parse the store's files, when they are many and this system
        forks (else the sync parses them itself)."""
        import multiprocessing

        if parsing.WORKERS < 1 or "fork" not in multiprocessing.get_all_start_methods():
            return None
        jobs = []
        for folder, tier in self._folders(SyncReport()):
            with contextlib.suppress(TiermemError):
                names = list(_readable(_listing(folder), SyncReport()))
                jobs += parsing.jobs(self.layout.relative(folder), folder, tier, names)
        if sum(len(job[3]) for job in jobs) < parsing.PARALLEL_FILES:
            return None
        return parsing.Parsing(jobs)

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

    def _ready(self) -> None:
        """Open (or build) the index before its lock is taken: a build takes the turns of
        syncs first (`_replace`), and every process takes the two in that order."""
        if self._db is None:
            _ = self.db

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

    def _start_over(self) -> None:
        """Replace a damaged index by a new, empty one (this process's connection first)."""
        self.close()
        users = files.open_lock(self.layout, USERS_LOCK)
        try:
            self._db = self._replace(users, force=True)
        except BaseException:
            os.close(users)
            raise
        self._users = weakref.finalize(self, _let_go, self._db, users)

    # --- sync -------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Bring the index up to date with the files; re-read only what changed.

        A fingerprint of every tier file's size and mtime (and every archive folder's mtime)
        is compared first, without the lock: an unchanged store costs a few stat calls. A
        damaged index is built again, once.
        """
        try:
            return self._sync()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise _store_error(exc) from None
        try:
            self._start_over()
            return self._sync()
        except sqlite3.Error as exc:
            raise _store_error(exc) from None

    def _sync(self) -> SyncReport:
        report = self._synced()
        built, self._built = self._built, None
        if built is not None:  # the index was built on opening: what that read is said here
            report.scanned += built.scanned
            said = {str(e) for e in report.errors}
            report.errors[:0] = [e for e in built.errors if str(e) not in said]
            for kept, found in (
                (report.changed, built.changed),
                (report.conflicts, built.conflicts),
            ):
                kept[:0] = [x for x in found if x not in kept]
        return report

    def _synced(self) -> SyncReport:
        self._racy_after = self._settled = time.time_ns() - _RACY_NS
        if self._db is not None and self._identities() != self._opened:
            # The index or its log was replaced under this connection (a checkout or a copy
            # of one tiermem did not write): nothing in it is trusted.
            self._start_over()
        if self._suspect:
            self._read_again()
        if self._up_to_date():
            return SyncReport()
        try:
            # Syncs read the files in turns, so that two never parse the same changes (many
            # processes open a fresh clone at once); only their writes hold the index lock.
            with files.locked(self.layout, self.layout.memory / _TURNS):
                if self._up_to_date():
                    return SyncReport()  # another process synced while we waited
                return self._sync_locked(self._seen)
        except LockTimeout:
            # Another process held the index the whole wait (a rebuild of a large store,
            # many writers): what it holds is one consistent state; the next read syncs.
            return SyncReport(stale=_BUSY)

    def _up_to_date(self) -> bool:
        """Whether the index was synced with the files as they stand (by their fingerprint,
        kept in `_seen` for the sync that follows)."""
        self._seen = self._fingerprint()
        row = self.db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        return bool(row) and row[0] == self._seen

    def _read_again(self) -> None:
        """Forget what was indexed from files whose rows were found damaged: the sync that
        follows reads them again."""
        suspect, self._suspect = sorted(self._suspect), set()
        with files.locked(self.layout, self.layout.index), self._transaction():
            for rel in suspect:
                self.db.execute("UPDATE files SET size=-1, sha='' WHERE path=?", (rel,))
                self.db.execute("DELETE FROM dirs WHERE path=?", (rel.rpartition("/")[0],))
            self.db.execute("DELETE FROM meta WHERE key='fingerprint'")
        self._note(f"damaged rows of {', '.join(suspect)} left out; the next read reads them again")

    def _sync_locked(self, before: str) -> SyncReport:
        """Read and parse what changed, then write it under the index lock."""
        self._read_ahead(everything=False)
        try:
            with files.locked(self.layout, self.layout.index):
                return self._sync_all(before)
        finally:
            self._ahead = {}

    def _sync_all(self, before: str) -> SyncReport:
        """Sync every folder in one transaction, and keep the fingerprint the files had
        before (`before`): a file changed within the clock's tick could change again unseen,
        so then none is kept, and the next read looks at the files again."""
        report = SyncReport()
        with self._transaction():
            self._sync_folders(report, trust_archive=True)
            kept = "" if self._racy else before
            self.db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (kept,))
        return report

    def _read_ahead(self, everything: bool) -> None:
        """Read and parse, before the index lock is taken, the files a sync is about to write:
        those whose content is not the one indexed (every file, for a rebuild), up to
        `_AHEAD_BYTES` (the rest is read under the lock). Other processes write the index
        meanwhile: under the lock each file is compared again (`_sync_file`), and what was
        parsed is taken only for the file it was parsed from. What cannot be read here is
        left to the sync under the lock, which says it."""
        self._ahead = {}
        known: dict[str, tuple[int, int, str]] = {}
        dirs: dict[str, int] = {}
        if not everything:
            known = {
                r[0]: r[1:] for r in self.db.execute("SELECT path, size, mtime_ns, sha FROM files")
            }
            dirs = dict(self.db.execute("SELECT path, mtime_ns FROM dirs").fetchall())
        size = 0
        for folder, tier in self._folders(SyncReport()):
            rel_dir = self.layout.relative(folder)
            if tier == "archive" and rel_dir in dirs and dirs[rel_dir] == _mtime(folder):
                continue  # create-only: the same records (see `_unchanged`)
            with contextlib.suppress(TiermemError):
                size = self._ahead_in(folder, rel_dir, tier, known, size)
            if size > _AHEAD_BYTES:
                return

    def _ahead_in(
        self,
        folder: Path,
        rel_dir: str,
        tier: str,
        known: dict[str, tuple[int, int, str]],
        size: int,
    ) -> int:
        """Parse ahead the changed files of one folder; the bytes read so far, after them."""
        items = _listing(folder)
        with files.Folder(folder) as reader:
            for name in _readable(items, SyncReport()):
                rel = f"{rel_dir}/{name}"
                row = known.get(rel)
                try:
                    got = _moved(reader, name, row)
                except ParseError:
                    continue
                if not isinstance(got, tuple):
                    continue
                sha = _sha(got[0])
                if row is None or row[2] != sha:
                    self._ahead[rel] = parsing.parse_file(reader.path / name, rel, tier, got, sha)
                    size += len(got[0])
                    if size > _AHEAD_BYTES:
                        break
        return size

    def _stamp(self, mtime_ns: int) -> int:
        """An mtime as recorded: 0 (never trusted) when it is too recent to tell two writes
        in one tick of the file system's clock apart (what git calls racily clean)."""
        if mtime_ns > self._racy_after:
            self._racy = True
            return 0
        return mtime_ns

    def _fingerprint(self) -> str:
        """Every tier file's size and mtime, and every archive folder's mtime, as one digest.

        Every read runs it, so it stamps what `os.scandir` lists (names and types come with
        the listing) relative to the open folder, instead of building and testing paths.
        """
        parts: list[str] = []
        self._racy = False
        for tier in ("hot", "cold", "wiki", "archive"):
            wanted = _record_folder if tier == "archive" else _tier_file
            try:
                found = files.stamps(self.layout.tier_dir(tier), wanted)
            except ParseError:
                parts.append(f"{tier}/: unreadable")
                continue
            if tier == "archive":
                parts.extend(f"{name}/:{stamp}" for name, stamp in found)
            else:
                parts.extend(f"{tier}/{name}:{stamp}" for name, stamp in found)
        return _sha("\n".join(sorted(parts)))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _folders(self, report: SyncReport) -> list[tuple[Path, str]]:
        """(folder, tier) of every tier folder and every agent's archive folder; a link in
        place of an agent's archive folder is skipped, and said."""
        found = [(self.layout.tier_dir(t), t) for t in ("hot", "cold", "wiki")]
        try:
            items = _listing(self.layout.tier_dir("archive"))
        except ParseError as exc:
            report.errors.append(exc)
            return found
        for item in items:
            if item.kind == "folder":
                found.append((item.path, "archive"))
            elif item.kind == "link":
                report.errors.append(UnsafePathError(item.path, safepath.LINK_REASON))
        return found

    def _sync_folders(self, report: SyncReport, trust_archive: bool) -> None:
        present: set[str] = set()
        for folder, tier in self._folders(report):
            rel_dir = self.layout.relative(folder)
            # The mtime before the listing: a record added after it is seen by the next sync.
            mtime = _mtime(folder)
            try:
                items = _listing(folder)
            except ParseError as exc:
                report.errors.append(exc)  # what it held before is forgotten below
                continue
            present.add(rel_dir)
            if tier == "archive" and trust_archive and self._unchanged(mtime, rel_dir):
                continue
            self._sync_folder(folder, mtime, items, rel_dir, tier, report)
        known = [r[0] for r in self.db.execute("SELECT DISTINCT dir FROM files")]
        for rel_dir in known:
            if rel_dir not in present:
                self._forget(rel_dir, set(), report)
                self.db.execute("DELETE FROM dirs WHERE path=?", (rel_dir,))

    def _unchanged(self, mtime: int, rel_dir: str) -> bool:
        """Archive folders are create-only: the same mtime means the same records."""
        row = self.db.execute("SELECT mtime_ns FROM dirs WHERE path=?", (rel_dir,)).fetchone()
        return bool(row) and row[0] == mtime

    def _sync_folder(
        self,
        folder: Path,
        mtime: int,
        items: list[files.Item],
        rel_dir: str,
        tier: str,
        report: SyncReport,
    ) -> None:
        on_disk: set[str] = set()
        batch = _Batch()
        known = {
            row[0]: row[1:]
            for row in self.db.execute(
                "SELECT path, size, mtime_ns, sha, rows FROM files WHERE dir=?", (rel_dir,)
            )
        }
        with files.Folder(folder) as reader:
            for name in _readable(items, report):
                rel = f"{rel_dir}/{name}"
                changed = self._sync_file(reader, name, rel, tier, report, known.get(rel))
                if changed is _GONE:
                    continue
                on_disk.add(rel)
                if isinstance(changed, _Pending):
                    batch.add(changed)
                    if batch.chars > _PENDING_CHARS:
                        self._index_pending(batch, rel_dir)
                        batch = _Batch()
        self._index_pending(batch, rel_dir)
        self._forget(rel_dir, on_disk, report)
        self.db.execute("INSERT OR REPLACE INTO dirs VALUES(?, ?)", (rel_dir, self._stamp(mtime)))

    def _index_pending(self, batch: _Batch, rel_dir: str) -> None:
        """Index changed files of a folder: their old rows dropped, then every document in
        one statement per table; token counts and passages with them when the batch is small
        (in one pass of the counter), else left to the reads (see `_EAGER_CHARS`)."""
        docs = [d for p in batch.files for d in p.docs]
        if not batch.files:
            return
        for item in batch.files:
            if item.indexed:
                self._drop_rows(item.rel)
        shas = [sha for p in batch.files for sha in p.parsed.texts]
        derived: list[tuple[int | None, str | None]] = [(None, None)] * len(docs)
        if batch.chars <= _EAGER_CHARS:
            counts = self._counts(shas, [d.text for d in docs])
            derived = [(n, cut_passages(d.text)) for n, d in zip(counts, docs, strict=True)]
        self._insert(batch.files, shas, derived)
        self.db.executemany(
            "INSERT OR REPLACE INTO files VALUES(?, ?, ?, ?, ?, ?)",
            [
                (p.rel, rel_dir, p.parsed.ident[2], p.mtime_ns, p.parsed.sha, p.parsed.digest)
                for p in batch.files
            ],
        )

    def _insert(
        self,
        written: Sequence[_Pending],
        shas: Sequence[str],
        derived: Sequence[tuple[int | None, str | None]],
    ) -> None:
        """The documents of files (with their text hashes and what is derived of them), as
        rows and search terms, numbered after the last row."""
        (first,) = self.db.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM docs").fetchone()
        placed = [(order, d) for p in written for order, d in enumerate(p.docs)]
        made = zip(placed, shas, derived, strict=True)
        rows = [schema.row(first + n, sha, o, doc, d) for n, ((o, doc), sha, d) in enumerate(made)]
        self.db.executemany(schema.INSERT_DOC, rows)
        self._writes += len(placed)
        self.db.executemany(
            schema.INSERT_TERMS,
            [(first + n, *schema.terms(d)) for n, (_, d) in enumerate(placed)],
        )

    def _forget(self, rel_dir: str, keep: set[str], report: SyncReport) -> None:
        """Drop indexed files of a folder that are no longer on disk."""
        for (rel,) in self.db.execute("SELECT path FROM files WHERE dir=?", (rel_dir,)).fetchall():
            if rel not in keep:
                self._drop_rows(rel)
                self.db.execute("DELETE FROM files WHERE path=?", (rel,))
                report.removed.append(rel)

    def _sync_file(
        self,
        reader: files.Folder,
        name: str,
        rel: str,
        tier: str,
        report: SyncReport,
        row: tuple[int, int, str, str] | None,
    ) -> _Pending | object | None:
        """The documents of a file whose content changed since it was indexed (`row`: its
        size, mtime, hash and rows digest then), None when it did not change, `_GONE` when it
        vanished since the listing. A file never indexed is read at once: its size and times
        come with its bytes. What was parsed of it before the lock (`_read_ahead`) is taken
        when it is still the same file, or holds the same bytes."""
        report.scanned += 1
        if self._parsing is not None:
            self._parsing.until(rel, self._ahead)
        prior = self._ahead.pop(rel, None)
        try:
            own = prior is not None and row is None and self._settled == _OWN_READS
            got = prior if own else _moved(reader, name, row, prior, self._settled)
        except ParseError as exc:
            report.errors.append(exc)
            self._drop_rows(rel)  # what it held before must not be served as current
            self.db.execute("DELETE FROM files WHERE path=?", (rel,))
            return None
        if isinstance(got, tuple):
            data, st = got
            sha = _sha(data)
            if self._restamped(rel, row, sha, parsing.ident(st)):
                return None
            if prior is None or prior.sha != sha:
                prior = parsing.parse_file(reader.path / name, rel, tier, got, sha)
            got = replace(prior, ident=parsing.ident(st))
        elif isinstance(got, parsing.Parsed) and self._restamped(rel, row, got.sha, got.ident):
            return None
        if not isinstance(got, parsing.Parsed):
            return got  # unchanged (None), or gone
        return self._taken(got, rel, report, row is not None)

    def _restamped(
        self,
        rel: str,
        row: tuple[int, int, str, str] | None,
        sha: str,
        ident: tuple[int, int, int, int, int],
    ) -> bool:
        """Whether a file's rows already hold its content (its stamp moved, its content did
        not): then its new size and mtime are recorded, and it is not parsed."""
        if not (row and row[2] == sha and self._rows_hold(rel, row[3])):
            return False
        stamp = (ident[2], self._stamp(ident[3]), rel)
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", stamp)
        return True

    def _taken(
        self, parsed: parsing.Parsed, rel: str, report: SyncReport, indexed: bool
    ) -> _Pending | None:
        """A file's documents to write; None when it does not parse (said in the report)."""
        if parsed.error is not None:
            report.errors.append(parsed.error)
            return None
        report.conflicts.extend(parsed.conflicts)
        report.changed.append(rel)
        stamp = self._stamp(parsed.ident[3])
        return _Pending(rel, parsed, stamp, indexed)

    def _rows_hold(self, rel: str, digest: str | None) -> bool:
        """Whether a file's rows (and their search terms) are still what was indexed from
        it: checked where its stamp moved but its content did not, without parsing it."""
        rows = self.db.execute(
            f"SELECT rowid, {DOC_COLUMNS} FROM docs WHERE path=? ORDER BY ord", (rel,)
        ).fetchall()
        docs = [Doc(*row[1:]) for row in rows]
        if not same_digest(digest or "", parsing.rows_digest(docs)):
            return False
        if _terms_of(self.db, [row[0] for row in rows]) != {
            row[0]: schema.terms(d) for row, d in zip(rows, docs, strict=True)
        }:
            return False
        # Passages are not in the digest (a read may derive them later): made again.
        self.db.execute("UPDATE docs SET passages=NULL WHERE path=?", (rel,))
        return True

    def _drop_rows(self, rel: str) -> None:
        """Drop a file's documents and their search terms."""
        old = [r[0] for r in self.db.execute("SELECT rowid FROM docs WHERE path=?", (rel,))]
        if old:
            marks = ",".join("?" * len(old))
            self._writes += len(old)
            self.db.execute(f"DELETE FROM docs_fts WHERE rowid IN ({marks})", old)
            self.db.execute(f"DELETE FROM docs WHERE rowid IN ({marks})", old)

    @_snapshot
    def entry_totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens) for every agent and tier: a long entry's
        parts count once, an archive record (one file) once, whatever its chunks."""
        rows = self.db.execute(
            "SELECT agent, tier, COUNT(DISTINCT CASE WHEN tier='archive' THEN path"
            " WHEN parent != '' THEN parent ELSE id END),"
            " SUM(LENGTH(CAST(text AS BLOB))), SUM(tokens)"
            " FROM docs GROUP BY agent, tier ORDER BY agent, tier"
        ).fetchall()
        added = self._count_rest()
        return [(a, t, n, b or 0, (k or 0) + added.get((a, t), 0)) for a, t, n, b, k in rows]

    def _count_rest(self) -> dict[tuple[str, str], int]:
        """Count the documents indexed without their token counts, for figures over the
        whole store: the tokens they add, by (agent, tier); kept after the read."""
        added: dict[tuple[str, str], int] = {}
        after = 0
        while True:
            rows = self.db.execute(
                "SELECT rowid, sha, text, agent, tier FROM docs WHERE tokens IS NULL AND rowid > ?"
                " ORDER BY rowid LIMIT 2000",
                (after,),
            ).fetchall()
            if not rows:
                return added
            counts = self._counts([r[1] for r in rows], [r[2] for r in rows], keep=False)
            for (rowid, sha, _, agent, tier), n in zip(rows, counts, strict=True):
                added[(agent, tier)] = added.get((agent, tier), 0) + n
                self._made[rowid] = (sha, n, None)
            after = rows[-1][0]

    @_one_line
    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts, cached by content hash across runs."""
        return self._counts([_sha(t) for t in texts], texts, keep=True)

    def _counts(self, shas: Sequence[str], texts: Sequence[str], keep: bool = True) -> list[int]:
        """Token counts of texts by their hashes: the cache's, else counted in one pass of
        the counter (and cached, with `keep`; else kept by `_keep_derived`)."""
        known = self._cached(shas)
        missing = {s: t for s, t in zip(shas, texts, strict=True) if s not in known}
        if missing:
            made = self.counter.count_many(list(missing.values()))
            counted = dict(zip(missing, made, strict=True))
            known |= counted
            if keep:
                self.db.executemany(
                    "INSERT OR REPLACE INTO token_cache VALUES(?, ?)", list(counted.items())
                )
        return [known[s] for s in shas]

    def _cached(self, shas: Sequence[str]) -> dict[str, int]:
        """The token counts the cache holds for these texts (by content hash)."""
        known: dict[str, int] = {}
        for start in range(0, len(shas), 500):
            part = list(shas[start : start + 500])
            marks = ",".join("?" * len(part))
            known.update(
                self.db.execute(f"SELECT sha, n FROM token_cache WHERE sha IN ({marks})", part)
            )
        return known

    def rebuild(self) -> SyncReport:
        """Drop what the index holds and build it again from the files.

        It is emptied in one transaction, which other processes' connections survive; a
        damaged database is replaced by a new one instead.
        """
        self._racy_after = self._settled = time.time_ns() - _RACY_NS
        try:
            self._ready()
            if self._built is not None:  # just built whole from the files, as asked
                built, self._built = self._built, None
                return built
            self._read_ahead(everything=True)
            # Emptied and filled again in one transaction: readers see the old or the new.
            with files.locked(self.layout, self.layout.index), self._transaction():
                self._held, self._scopes = ((0, 0), 0, {}), ((0, 0, -1), {})
                for table in ("files", "dirs", "docs", "docs_fts"):
                    self.db.execute(f"DELETE FROM {table}")
                report = SyncReport()
                fingerprint = self._fingerprint()
                self._sync_folders(report, trust_archive=True)
                kept = "" if self._racy else fingerprint
                self.db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (kept,))
            return report
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise _store_error(exc) from None
        finally:
            self._ahead = {}
        try:
            self._start_over()
        except sqlite3.Error as again:
            raise _store_error(again) from None
        return self.sync()

    @_one_line
    def scrub(self) -> None:
        """Deleted text lingers in FTS5 segments, free pages and the write-ahead log: merge the
        segments, rewrite the file and empty the log (a purge runs this after its rebuild)."""
        self._ready()
        with files.locked(self.layout, self.layout.index):
            self.db.execute("INSERT INTO docs_fts(docs_fts) VALUES('optimize')")
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @_one_line
    def check(self) -> list[str]:
        """Differences between the index and the files, without changing the index: an
        index that may not be read is named (and looked at read-only, never built again);
        one that may is compared row by row with what every file holds."""
        from . import check as index_check

        untrusted = index_check.inspect(self.layout, self._wanted)
        if untrusted:
            return [
                *(f"untrusted index: {p}" for p in untrusted),
                *index_check.read_only(
                    self.layout, lambda db: index_check.differences(db, self.layout)
                ),
                *_tracked(self.layout),
            ]
        if self._db is None:  # an index not built yet is made empty: every file differs
            self._opened_now(whole=False)
        # One state of the index, read without its lock: other processes write and sync on
        # meanwhile (a whole store is read and parsed here, too long to keep them waiting).
        self.db.execute("BEGIN")
        try:
            report, unreadable = self._behind()
            behind = {*report.changed, *report.removed, *unreadable}
            rows = index_check.differences(self.db, self.layout, skip=behind)
        finally:
            self.db.execute("COMMIT")
        drift = [f"changed: {p}" for p in report.changed]
        drift += [f"removed: {p}" for p in report.removed]
        drift += [f"unreadable: {e}" for e in report.errors]
        drift += rows
        drift += [f"merge conflict: {c}" for c in sorted(set(report.conflicts) | self._conflicts())]
        return drift + _tracked(self.layout)

    def _behind(self) -> tuple[SyncReport, set[str]]:
        """What a sync would read again, found without writing: files whose content is not
        the one indexed (or never indexed), indexed files gone; and the files that cannot be
        read or parsed (a sync leaves them out)."""
        report, unreadable = SyncReport(), set[str]()
        indexed = {
            r[0]: r[1:] for r in self.db.execute("SELECT path, size, mtime_ns, sha FROM files")
        }
        seen: set[str] = set()
        for folder, tier in self._folders(report):
            rel_dir = self.layout.relative(folder)
            try:
                items = _listing(folder)
            except ParseError as exc:
                report.errors.append(exc)
                continue
            with files.Folder(folder) as reader:
                for name in _readable(items, report):
                    rel = f"{rel_dir}/{name}"
                    state = self._as_indexed(reader, name, rel, tier, indexed.get(rel), report)
                    if state != "gone":
                        seen.add(rel)
                    if state == "unreadable":
                        unreadable.add(rel)
        report.removed = sorted(set(indexed) - seen)
        return report, unreadable

    def _as_indexed(
        self,
        reader: files.Folder,
        name: str,
        rel: str,
        tier: str,
        row: tuple[int, int, str] | None,
        report: SyncReport,
    ) -> str:
        """How a file stands against its row (size, mtime, hash) in `files`: "gone" since
        the listing, "unreadable" (said in `report.errors`), or "" (its content not the one
        indexed is said in `report.changed`). As a sync, a file whose stamp did not move is
        not read here; its rows are compared with it all the same (`index_check`)."""
        try:
            got = _moved(reader, name, row)
        except ParseError as exc:
            report.errors.append(exc)
            return "unreadable"
        if not isinstance(got, tuple):
            return "" if got is None else "gone"
        if row is not None and _sha(got[0]) == row[2]:
            return ""
        try:
            parsed_docs(reader.path / name, rel, tier, got[0])
        except ParseError as exc:
            report.errors.append(exc)
            return "unreadable"
        report.changed.append(rel)
        return ""

    def _conflicts(self) -> set[str]:
        """Entries that exist in two versions in a tier file (after a merge), until rewritten."""
        found: set[str] = set()
        for folder, tier in self._folders(SyncReport()):
            if tier == "archive":
                continue
            try:
                paths = files.memory_files(folder)
            except ParseError:
                continue
            for path in paths:
                try:
                    loaded = store.load(self.layout, tier, path)
                except ParseError:
                    continue
                rel = self.layout.relative(path)
                for c in loaded.conflicts if loaded else []:
                    found.add(f"{rel}:{c.lines[0]}: entry {c.id}: {c.reason}")
        return found

    # --- queries ----------------------------------------------------------------------

    @_snapshot
    def search(
        self,
        query: str,
        agent: str | Sequence[str] | None = None,
        tiers: Sequence[str] | None = None,
        limit: int = 10,
        active_only: bool = False,
        paths: Sequence[str] | None = None,
        whole_wiki: bool = False,
    ) -> list[Hit]:
        """BM25-ranked documents matching any word of the query: of the agents if named
        (and, with `whole_wiki`, every wiki document besides theirs).

        Ties in score go to the newer document, then to the smaller id.
        """
        words = fts_query(query)
        if not words or limit <= 0:
            return []
        agents = [agent] if isinstance(agent, str) else list(agent or [])
        scope, scope_args = _scope(agents, tiers or [], active_only, paths or [], whole_wiki)
        match = _match(words, agents, whole_wiki)
        return self._hits([self._ranked(match, scope, scope_args, limit)])[0]

    @_snapshot
    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The best `limit` matches within each scope among the documents holding the
        query's rarest words, ranked as `search` ranks them by those words (see RARE_ROWS).

        One FTS5 query serves every scope: BM25 weighs each query word by reading the whole
        row list of that word once per query, which for a few scopes costs more than scoring
        their rows does.
        """
        words = fts_query(query)
        if not words or limit <= 0 or not scopes:
            return [[] for _ in scopes]
        match = _match(self._rarest(words), [])
        scored = self.db.execute(
            f"SELECT rowid, {BM25} AS score FROM docs_fts WHERE docs_fts MATCH ?"
            " ORDER BY score, rowid",
            [match],
        ).fetchall()
        rankings = []
        for scope, best in zip(scopes, self._best_within(scored, scopes, limit + 1), strict=True):
            cut = _cut(best, limit)
            if cut is None:  # a tie at the cut: broken by date and id, not by ranking again
                cut = self._through_tie(scored, scope, best, limit)
            rankings.append(cut)
        return [hits[:limit] for hits in self._hits(rankings)]

    def _through_tie(
        self,
        scored: list[tuple[int, float]],
        scope: Scope,
        best: list[tuple[int, float]],
        limit: int,
    ) -> list[tuple[int, float]]:
        """A scope's first `limit` when its cut falls between equal scores: the rows above
        the tie, then the scope's rows of that score, the newer first."""
        tie = best[limit - 1][1]
        tied = [row for row in scored if row[1] == tie]
        kinds = self._read_sliced(self._kinds, [rowid for rowid, _ in tied])
        held = [row for row in tied if row[0] in kinds and scope.holds(*kinds[row[0]])]
        return self._tie_broken([row for row in best if row[1] != tie] + held, limit)

    def _tie_broken(self, ranked: list[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
        """The first `limit` of ranked (rowid, bm25) rows whose cut falls between equal
        scores, the tie broken as `_hits` orders hits: the newer document, then the smaller
        id. Only the tied rows' dates are read: a tie can hold thousands of documents."""
        tie = ranked[limit - 1][1]
        above = [row for row in ranked if row[1] < tie]
        tied = [row for row in ranked if row[1] == tie]
        order = self._read_sliced(self._dates, [rowid for rowid, _ in tied])
        tied = [row for row in tied if row[0] in order]
        tied.sort(key=lambda row: order[row[0]][1])
        tied.sort(key=lambda row: order[row[0]][0], reverse=True)
        return above + tied[: limit - len(above)]

    def _read_sliced(
        self, read: Callable[[Sequence[int]], dict[int, _V]], rowids: Sequence[int]
    ) -> dict[int, _V]:
        """What `read` says of many rows, asked a slice at a time (SQLite's argument limit)."""
        found: dict[int, _V] = {}
        for start in range(0, len(rowids), _SLICE_MOST):
            found |= read(rowids[start : start + _SLICE_MOST])
        return found

    def _dates(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The date and id of some documents, by rowid."""
        marks = ",".join("?" * len(rowids))
        rows = self.db.execute(
            f"SELECT rowid, created, id FROM docs WHERE rowid IN ({marks})", list(rowids)
        )
        return {rowid: (created, doc_id) for rowid, created, doc_id in rows}

    def _best_within(
        self, scored: list[tuple[int, float]], scopes: Sequence[Scope], limit: int
    ) -> list[list[tuple[int, float]]]:
        """The first `limit` of the ranked (rowid, bm25) rows in each scope.

        The rows' tier, status and agent are read a slice at a time, best first, until every
        scope is full: the best few hundred of thousands of matches fill a large scope. A
        small scope (the wiki, the superseded) may never fill: its members are read whole.
        """
        best: list[list[tuple[int, float]]] = [[] for _ in scopes]
        few = self._small_scopes(scopes)
        many = [n for n in range(len(scopes)) if n not in few]
        within: dict[tuple[str, str, str], list[int]] = {}
        start, size = 0, _SLICE
        while start < len(scored) and not all(len(best[n]) >= limit for n in many):
            part = scored[start : start + size]
            start, size = start + size, min(size * 2, _SLICE_MOST)
            kinds = self._kinds([rowid for rowid, _ in part])
            for row in part:
                key = kinds.get(row[0])
                if key is None:
                    continue
                if key not in within:
                    within[key] = [n for n in many if scopes[n].holds(*key)]
                for n in within[key]:
                    if len(best[n]) < limit:
                        best[n].append(row)
        for n, members in few.items():
            best[n] = list(itertools.islice((r for r in scored if r[0] in members), limit))
        return best

    def _kinds(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
        """The tier, status and agent of some documents, by rowid."""
        marks = ",".join("?" * len(rowids))
        rows = self.db.execute(
            f"SELECT rowid, tier, status, agent FROM docs WHERE rowid IN ({marks})", list(rowids)
        )
        return {rowid: (tier, status, agent) for rowid, tier, status, agent in rows}

    def _small_scopes(self, scopes: Sequence[Scope]) -> dict[int, set[int]]:
        """The members of the scopes (by position) that hold at most _FEW documents; kept
        while the index holds the same documents (a server's spawns ask for the same few
        scopes, the wiki's and the superseded, spawn after spawn)."""
        state = (*self._state(), self._writes)
        if self._scopes[0] != state:
            self._scopes = (state, {})
        known = self._scopes[1]
        for scope in scopes:
            if scope not in known:
                known[scope] = self._members(scope, _FEW)
        return {n: members for n, s in enumerate(scopes) if (members := known[s]) is not None}

    def _members(self, scope: Scope, most: int) -> set[int] | None:
        """The rowids of a scope's documents, or None when it holds more than `most`."""
        condition, args = _scope_condition(scope)
        within = f"SELECT rowid FROM docs WHERE {condition}"
        (count,) = self.db.execute(
            f"SELECT count(*) FROM ({within} LIMIT ?)", [*args, most + 1]
        ).fetchone()
        if count > most:
            return None
        return {rowid for (rowid,) in self.db.execute(within, args)}

    def _rarest(self, words: str) -> str:
        """The rarest of a query's words, as many as hold about RARE_ROWS documents together
        (one at least): the documents a spawn's query ranks (see RARE_ROWS)."""
        terms = words.split(" OR ")
        held = self._held_now()
        for term in terms:
            if term not in held:
                held[term] = self._holding(term)
        chosen: set[str] = set()
        total = 0
        for term in sorted(terms, key=held.__getitem__):  # stable: ties keep the query's order
            if chosen and total + held[term] > RARE_ROWS:
                break
            chosen.add(term)
            total += held[term]
        return " OR ".join(t for t in terms if t in chosen)

    def _held_now(self) -> dict[str, int]:
        """The documents holding each word, as counted so far. The counts choose the words
        that hold about RARE_ROWS documents: they hold until another process commits, or this
        one has written a tenth of RARE_ROWS documents since (each could change each count)."""
        state, since, _ = self._held
        now = self._state()
        if state != now or self._writes - since > RARE_ROWS / 10:
            self._held = (now, self._writes, {})
        return self._held[2]

    def _state(self) -> tuple[int, int]:
        """Which state of the index this connection reads: it changes when another process
        commits (this one's own writes are counted in `_writes`)."""
        (version,) = self.db.execute("PRAGMA data_version").fetchone()
        return id(self.db), int(version)

    def _holding(self, term: str) -> int:
        """How many documents hold a word of the query (in their title or text), counted up
        to one more than RARE_ROWS: beyond, a word is too common to choose documents by."""
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)",
            [f"{WORDS}: {term}", RARE_ROWS + 1],
        ).fetchone()
        return int(row[0])

    def _hits(self, rankings: Sequence[Sequence[tuple[int, float]]]) -> list[list[Hit]]:
        """The documents of each ranking of (rowid, bm25), read in one query, best first;
        equal scores go to the newer document, then to the smaller id."""
        scores = {rowid: score for ranking in rankings for rowid, score in ranking}
        marks = ",".join("?" * len(scores))
        rows = self.db.execute(
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE rowid IN ({marks})", list(scores)
        ).fetchall()
        sound = self._sound(rows)
        docs = {row[0]: doc for row, doc in zip(rows, sound, strict=True) if doc is not None}
        results = []
        for ranking in rankings:
            hits = [Hit(docs[rowid], -score) for rowid, score in ranking if rowid in docs]
            hits.sort(key=lambda h: h.doc.id)
            hits.sort(key=lambda h: h.doc.created, reverse=True)
            hits.sort(key=lambda h: -h.score)
            results.append(hits)
        return results

    def _ranked(
        self, match: str, scope: str, scope_args: list[object], limit: int
    ) -> list[tuple[int, float]]:
        """(rowid, bm25) of the best `limit` matches.

        Ranking rowids alone lets SQLite keep only the best few while it scores: joining the
        documents first would sort every match with its text. A cut through a tie asks again
        for every match as good as the tie, and breaks it by date (see `_tie_broken`).
        """
        ranked = f"SELECT rowid, {BM25} AS score FROM docs_fts WHERE docs_fts MATCH ?{scope}"
        rows: list[tuple[int, float]] = self.db.execute(
            f"{ranked} ORDER BY score LIMIT ?", [match, *scope_args, limit + 1]
        ).fetchall()
        if _cut(rows, limit) is not None:
            return rows
        rows = self.db.execute(
            f"SELECT rowid, score FROM ({ranked}) WHERE score <= ? ORDER BY score",
            [match, *scope_args, rows[limit][1]],
        ).fetchall()
        return self._tie_broken(rows, limit)

    @_snapshot
    def docs(
        self, tier: str | None = None, agent: str | None = None, cls: str | None = None
    ) -> list[Doc]:
        """All indexed documents, optionally of one tier, agent or class."""
        sql = f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE 1=1"
        args: list[object] = []
        if tier:
            sql += " AND tier=?"
            args.append(tier)
        if agent:
            sql += " AND agent=?"
            args.append(agent)
        if cls:
            sql += " AND cls=?"
            args.append(cls)
        sql += " ORDER BY path, ord"
        return [d for d in self._sound(self.db.execute(sql, args).fetchall()) if d is not None]

    @_snapshot
    def by_ids(
        self,
        ids: Sequence[str],
        agent: Sequence[str] | None = None,
        tiers: Sequence[str] | None = None,
        whole_wiki: bool = False,
    ) -> list[Doc]:
        """The documents with these ids, in the order of the ids (an id held in two files,
        as after a merge, gives both), in the scope `search` gives the same arguments."""
        conditions, args = _conditions(agent or [], tiers or [], False, [], whole_wiki)
        where = "".join(f" AND {c}" for c in conditions)
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE id IN ({marks}){where}"
            " ORDER BY path, ord",
            [*ids, *args],
        )
        order = {doc_id: n for n, doc_id in enumerate(ids)}
        found = [d for d in self._sound(rows.fetchall()) if d is not None]
        return sorted(found, key=lambda d: order[d.id])

    @_snapshot
    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The newest active documents of some tiers (of one agent, if named), newest first."""
        conditions, args = _conditions([agent] if agent else [], tiers, True, [])
        # Walk the dates back rather than sort every match: an agent's by `docs_fresh`, the
        # whole team's (most documents qualify) by `docs_created`.
        keep = ("agent", "status") if agent else ()
        conditions = [c if c.startswith(keep) else f"+{c}" for c in conditions]
        where = " AND ".join(conditions) or "1"
        sql = (
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE {where}"
            " ORDER BY created DESC, id LIMIT ?"
        )
        rows = self.db.execute(sql, [*args, limit]).fetchall()
        return [d for d in self._sound(rows) if d is not None]

    @_snapshot
    def parts(self, parent: str) -> list[Doc]:
        """The parts of one long entry, or the chunks of one section of an archived text, in
        file order (wiki pages first, for a promotion caught halfway)."""
        sql = (
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE parent=?"
            " ORDER BY tier != 'wiki', tier, path, ord"
        )
        rows = self.db.execute(sql, (parent,)).fetchall()
        return [d for d in self._sound(rows) if d is not None]

    def _sound(self, rows: Sequence[Sequence[Any]]) -> list[Doc | None]:
        """The documents of rows (rowid, sha, *fields) whose text still hashes to what was
        indexed from its file, with what is derived from their text; None for a damaged one,
        whose file the next sync reads again."""
        found: list[Doc | None] = []
        for _, sha, *fields in rows:
            doc = Doc(*fields)
            if _sha(doc.text) == sha:
                found.append(doc)
            else:
                found.append(None)
                self._suspect.add(doc.path)
        return self._derive(rows, found)

    def _derive(self, rows: Sequence[Sequence[Any]], docs: list[Doc | None]) -> list[Doc | None]:
        """Documents indexed without their token counts or passages (see `_EAGER_CHARS`),
        completed: derived now, and kept in the index after the read (`_keep_derived`)."""
        todo = [(n, d) for n, d in enumerate(docs) if d and None in (d.tokens, d.passages)]
        if not todo:
            return docs
        uncounted = [(n, d) for n, d in todo if d.tokens is None]
        shas = [rows[n][1] for n, _ in uncounted]
        made = self._counts(shas, [d.text for _, d in uncounted], keep=False)
        counts = {n: count for (n, _), count in zip(uncounted, made, strict=True)}
        for n, doc in todo:
            tokens = counts.get(n, doc.tokens)
            cut = cut_passages(doc.text) if doc.passages is None else doc.passages
            docs[n] = replace(doc, tokens=tokens, passages=cut)
            self._made[rows[n][0]] = (rows[n][1], tokens, cut)
        return docs

    def _keep_derived(self) -> None:
        """Write what reads derived into the index, when it is free within a moment (while
        another process writes it, a later read derives them again)."""
        if not self._made or self.db.in_transaction:
            return  # nothing made, or kept when the outer read ends
        made, self._made = self._made, {}
        self.db.execute(f"PRAGMA busy_timeout = {_KEEP_WAIT_MS}")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(SQLITE_TIMEOUT_SECONDS * 1000)}")
        try:
            self._write_derived(made)
        except sqlite3.Error:
            self.db.execute("ROLLBACK")
            return
        self.db.execute("COMMIT")

    def _write_derived(self, made: dict[int, tuple[str, int | None, str | None]]) -> None:
        self.db.executemany(
            "UPDATE docs SET tokens=COALESCE(tokens, ?), passages=COALESCE(passages, ?)"
            " WHERE rowid=? AND sha=?",
            [(tokens, cut, rowid, sha) for rowid, (sha, tokens, cut) in made.items()],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO token_cache VALUES(?, ?)",
            [(sha, tokens) for sha, tokens, _ in made.values() if tokens is not None],
        )

    @_snapshot
    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens) for every agent and tier."""
        rows = self.db.execute(
            "SELECT agent, tier, COUNT(*), SUM(LENGTH(CAST(text AS BLOB))), SUM(tokens)"
            " FROM docs GROUP BY agent, tier ORDER BY agent, tier"
        ).fetchall()
        added = self._count_rest()
        return [(a, t, n, b or 0, (k or 0) + added.get((a, t), 0)) for a, t, n, b, k in rows]

    @_snapshot
    def documents(self) -> int:
        """How many documents the index holds."""
        (count,) = self.db.execute("SELECT COUNT(*) FROM docs").fetchone()
        return int(count)
