"""A sync: the index brought up to date with the files, re-reading only what changed.

A sync compares each file's size and mtime with what was indexed, then its content hash, and
re-reads only files that really changed. Archive folders are create-only, so an unchanged
folder mtime means no record was added there. What changed is read and parsed before the
index lock is taken, which is held only to write (see `Sync._read_ahead`).
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..errors import LockTimeout, ParseError, TiermemError
from ..storage import files, retired
from . import parsing
from .database import TURNS, Database, store_error
from .derived import Derived
from .protocol import SyncReport
from .rows import PENDING_CHARS, Batch, Pending, Rows
from .schema import sha as _sha

_RACY_NS = 2_000_000_000  # a file read this soon after its last write is racy (see `_stamp`)
BUSY = (
    "the index was read as it stood: another process held it for the whole wait (the next "
    "read brings it up to date)"
)
_OWN_READS = sys.maxsize  # what a build of its own file has parsed is taken as it is read


class Sync:
    """Brings the index up to date with the files, and builds it again from them."""

    def __init__(
        self, database: Database, derived: Derived, rows: Rows, note: Callable[[str], None]
    ) -> None:
        self.database = database
        self.layout = database.layout
        self.derived = derived
        self.rows = rows
        self._note = note  # what the user should hear (damaged rows read again)
        self._seen = ""  # the files' fingerprint, as a sync began
        # Files changed before this are taken as parsed when their stat is the same (see
        # `parsing.Parsed.holds`); the time a sync began, less the clock's tick.
        self._settled = 0
        self._parsing: parsing.Parsing | None = None  # worker processes parsing for a build
        self._ahead: dict[str, parsing.Parsed] = {}  # files parsed before the lock
        # What this sync read within the clock's tick of its last write (see `_stamp`): the
        # files, and whether a folder was listed so.
        self._racy: list[str] = []
        self._racy_folder = False
        # The ledger of retired passages as read before this sync parsed anything: every
        # record it parses is read with this ledger or a later one (see `_retirements`).
        self._retired: retired.Retired = {}

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.db

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
                raise store_error(exc) from None
        try:
            self.database.start_over()
            return self._sync()
        except sqlite3.Error as exc:
            raise store_error(exc) from None

    def _sync(self) -> SyncReport:
        report = self._synced()
        built = self.database.take_built()
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
        self._settled = time.time_ns() - _RACY_NS
        if self.database.replaced():
            self.database.start_over()
        if self.derived.suspect:
            self.read_again()
        if self._up_to_date():
            return SyncReport()
        try:
            # Syncs read the files in turns, so that two never parse the same changes (many
            # processes open a fresh clone at once); only their writes hold the index lock.
            with files.locked(self.layout, self.layout.memory / TURNS):
                if self._up_to_date():
                    return SyncReport()  # another process synced while we waited
                return self._sync_locked(self._seen)
        except LockTimeout:
            # Another process held the index the whole wait (a rebuild of a large store,
            # many writers): what it holds is one consistent state; the next read syncs.
            return SyncReport(stale=BUSY)

    @property
    def _eager(self) -> bool:
        """Whether a small batch's passages are cut as it is written: not in a build of a new
        index (`fill`), whose first reads want it whole and soon; they derive what they
        return (see `rows.EAGER_CHARS`)."""
        return self._settled != _OWN_READS

    def _up_to_date(self) -> bool:
        """Whether the index was synced with the files as they stand (by their fingerprint,
        kept in `_seen` for the sync that follows)."""
        self._seen = self._fingerprint()
        row = self.db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        return bool(row) and row[0] == self._seen

    def read_again(self) -> None:
        """Forget what was indexed from files whose rows were found damaged: the sync that
        follows reads them again."""
        suspect, self.derived.suspect = sorted(self.derived.suspect), set()
        with files.locked(self.layout, self.layout.index), self.database.transaction():
            for rel in suspect:
                self.db.execute("UPDATE files SET size=-1, sha='' WHERE path=?", (rel,))
                self.db.execute("DELETE FROM dirs WHERE path=?", (rel.rpartition("/")[0],))
            self.db.execute("DELETE FROM meta WHERE key='fingerprint'")
        self._note(f"damaged rows of {', '.join(suspect)} left out; the next read reads them again")

    def _sync_locked(self, before: str) -> SyncReport:
        """Read and parse what changed, then write it under the index lock."""
        self._retired = retired.load(self.layout)
        self._read_ahead(everything=False)
        try:
            with files.locked(self.layout, self.layout.index):
                return self._sync_all(before)
        finally:
            self._ahead = {}

    def _sync_all(self, before: str, emptied: bool = False) -> SyncReport:
        """Sync every folder in one transaction (the index emptied first, if asked), and
        keep the fingerprint the files had before (`before`): a file read within the clock's
        tick of its last write could change again unseen, so then, unless it is settled
        since (`_settle`), none is kept, and the next read looks at the files again."""
        report = SyncReport()
        with self.database.transaction():
            for table in ("files", "dirs", "docs", "docs_fts") if emptied else ():
                self.db.execute(f"DELETE FROM {table}")
            self._retirements()
            self._sync_folders(report, trust_archive=True)
            self._settle()
            kept = "" if self._racy or self._racy_folder else before
            self.db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (kept,))
        return report

    def _retirements(self) -> None:
        """Records whose retired passages changed since the index read them (a `forget`, a
        merge of the ledger) are read again, their folders listed again: their bytes did not
        change, the ledger did. The ledger as this sync read it is kept.

        The ledger only grows (retirements are appended, a merge adds lines), so a record
        parsed with a later ledger than the one kept differs from the next sync's ledger
        only where the kept one does too, and is read again then.
        """
        row = self.db.execute("SELECT value FROM meta WHERE key='retired'").fetchone()
        before = retired.parse(str(row[0]).splitlines()) if row else {}
        for record in sorted(retired.changed(before, self._retired)):
            pattern = f"%/archive/%/{record}.md"
            paths = self.db.execute("SELECT path, dir FROM files WHERE path LIKE ?", (pattern,))
            for path, folder in paths.fetchall():
                self.db.execute("UPDATE files SET size=-1, sha='' WHERE path=?", (path,))
                self.db.execute("DELETE FROM dirs WHERE path=?", (folder,))
        text = retired.as_text(self._retired)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES('retired', ?)", (text,))

    def _read_ahead(self, everything: bool) -> None:
        """Read and parse, before the index lock is taken, the files a sync is about to write
        (see `parsing.ahead`; every file, for a rebuild). Other processes write the index
        meanwhile: under the lock each file is compared again (`_sync_file`), and what was
        parsed is taken only for the file it was parsed from."""
        known: dict[str, tuple[int, int, str]] = {}
        dirs: dict[str, int] = {}
        if not everything:
            known = {
                r[0]: r[1:] for r in self.db.execute("SELECT path, size, mtime_ns, sha FROM files")
            }
            dirs = dict(self.db.execute("SELECT path, mtime_ns FROM dirs").fetchall())
        self._ahead = parsing.ahead(self.layout, known, dirs)

    def _stamp(self, mtime_ns: int, read_ns: int, rel: str) -> int:
        """A file's mtime as recorded: 0 (never trusted) when it was read (at `read_ns`)
        within the tick of the file system's clock of its last write, which a write after
        the read could leave as it was (what git calls racily clean)."""
        if mtime_ns <= read_ns - _RACY_NS:
            return mtime_ns
        self._racy.append(rel)
        return 0

    def _folder_stamp(self, mtime_ns: int, listed_ns: int, tier: str) -> int:
        """A folder's mtime as recorded, as a file's (`_stamp`): only an archive folder's is
        trusted (an unchanged one is not read), so only theirs keep the fingerprint out."""
        if mtime_ns <= listed_ns - _RACY_NS:
            return mtime_ns
        self._racy_folder |= tier == "archive"
        return 0

    def _settle(self) -> None:
        """Record the stamps of the racy files that are now old enough and still hold the
        bytes indexed (read again, their hashes compared): after a fresh clone's build, the
        tier files it read first, seconds after the checkout wrote them. The next read then
        trusts the fingerprint instead of reading them again."""
        racy, self._racy = self._racy, []
        for rel in racy:
            if not self._settled_file(rel):
                self._racy.append(rel)

    def _settled_file(self, rel: str) -> bool:
        """Whether a racy file is settled: written long enough ago, holding the bytes
        indexed, its stamp now recorded."""
        path = self.layout.root / rel
        read_ns = time.time_ns()
        try:
            with files.Folder(path.parent) as reader:
                if reader.lstat(path.name).st_mtime_ns > read_ns - _RACY_NS:
                    return False  # still within the tick: not read for nothing
                got = reader.read(path.name)
        except (TiermemError, OSError):
            return False
        row = self.db.execute("SELECT sha FROM files WHERE path=?", (rel,)).fetchone()
        if got is None or row is None or row[0] != _sha(got[0]):
            return False
        st = got[1]
        if st.st_mtime_ns > read_ns - _RACY_NS:
            return False
        stamp = (st.st_size, st.st_mtime_ns, rel)
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", stamp)
        return True

    def _fingerprint(self) -> str:
        """The files' fingerprint (`parsing.fingerprint`), a sync's stamps counted anew."""
        self._racy, self._racy_folder = [], False
        return parsing.fingerprint(self.layout)

    def _sync_folders(self, report: SyncReport, trust_archive: bool) -> None:
        present: set[str] = set()
        for folder, tier in parsing.folders(self.layout, report):
            rel_dir = self.layout.relative(folder)
            # The mtime before the listing: a record added after it is seen by the next sync.
            listed_ns = time.time_ns()
            mtime = parsing.folder_mtime(folder)
            try:
                items = files.listing(folder)
            except ParseError as exc:
                report.errors.append(exc)  # what it held before is forgotten below
                continue
            present.add(rel_dir)
            if tier == "archive" and trust_archive and self._unchanged(mtime, rel_dir):
                continue
            self._sync_folder(folder, (mtime, listed_ns), items, rel_dir, tier, report)
        known = [r[0] for r in self.db.execute("SELECT DISTINCT dir FROM files")]
        for rel_dir in known:
            if rel_dir not in present:
                self.rows.forget(rel_dir, set(), report)
                self.db.execute("DELETE FROM dirs WHERE path=?", (rel_dir,))

    def _unchanged(self, mtime: int, rel_dir: str) -> bool:
        """Archive folders are create-only: the same mtime means the same records."""
        row = self.db.execute("SELECT mtime_ns FROM dirs WHERE path=?", (rel_dir,)).fetchone()
        return bool(row) and row[0] == mtime

    def _sync_folder(
        self,
        folder: Path,
        mtime: tuple[int, int],
        items: list[files.Item],
        rel_dir: str,
        tier: str,
        report: SyncReport,
    ) -> None:
        on_disk: set[str] = set()
        batch = Batch()
        known = {
            row[0]: row[1:]
            for row in self.db.execute(
                "SELECT path, size, mtime_ns, sha, rows FROM files WHERE dir=?", (rel_dir,)
            )
        }
        with files.Folder(folder) as reader:
            for name in parsing.readable(items, report):
                rel = f"{rel_dir}/{name}"
                changed = self._sync_file(reader, name, rel, tier, report, known.get(rel))
                if changed is parsing.GONE:
                    continue
                on_disk.add(rel)
                if isinstance(changed, Pending):
                    batch.add(changed)
                    if batch.chars > PENDING_CHARS:
                        self.rows.write(batch, rel_dir, self._eager)
                        batch = Batch()
        self.rows.write(batch, rel_dir, self._eager)
        self.rows.forget(rel_dir, on_disk, report)
        stamp = self._folder_stamp(*mtime, tier)  # its mtime, and the clock before its listing
        self.db.execute("INSERT OR REPLACE INTO dirs VALUES(?, ?)", (rel_dir, stamp))

    def _sync_file(
        self,
        reader: files.Folder,
        name: str,
        rel: str,
        tier: str,
        report: SyncReport,
        row: tuple[int, int, str, str] | None,
    ) -> Pending | object | None:
        """The documents of a file whose content changed since it was indexed (`row`: its
        size, mtime, hash and rows digest then), None when it did not change, `parsing.GONE` when it
        vanished since the listing. A file never indexed is read at once: its size and times
        come with its bytes. What was parsed of it before the lock (`_read_ahead`) is taken
        when it is still the same file, or holds the same bytes."""
        report.scanned += 1
        if self._parsing is not None:
            self._parsing.until(rel, self._ahead)
        prior = self._ahead.pop(rel, None)
        read_ns = time.time_ns()
        try:
            own = prior is not None and row is None and self._settled == _OWN_READS
            got = prior if own else parsing.moved(reader, name, row, prior, self._settled)
        except ParseError as exc:
            report.errors.append(exc)
            self.rows.drop(rel)  # what it held before must not be served as current
            self.db.execute("DELETE FROM files WHERE path=?", (rel,))
            return None
        if isinstance(got, tuple):
            data, st = got
            sha = _sha(data)
            if self._restamped(rel, row, sha, parsing.ident(st), read_ns):
                return None
            if prior is None or prior.sha != sha:
                prior = parsing.parse_file(reader.path / name, rel, tier, got, sha)
            got = replace(prior, ident=parsing.ident(st), read_ns=read_ns)
        elif isinstance(got, parsing.Parsed) and self._restamped(
            rel, row, got.sha, got.ident, got.read_ns
        ):
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
        read_ns: int,
    ) -> bool:
        """Whether a file's rows already hold its content (its stamp moved, its content did
        not): then its new size and mtime are recorded, and it is not parsed."""
        if not (row and row[2] == sha and self.rows.hold(rel, row[3])):
            return False
        stamp = (ident[2], self._stamp(ident[3], read_ns, rel), rel)
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", stamp)
        return True

    def _taken(
        self, parsed: parsing.Parsed, rel: str, report: SyncReport, indexed: bool
    ) -> Pending | None:
        """A file's documents to write; None when it does not parse (said in the report)."""
        if parsed.error is not None:
            report.errors.append(parsed.error)
            return None
        report.conflicts.extend(parsed.conflicts)
        report.changed.append(rel)
        stamp = self._stamp(parsed.ident[3], parsed.read_ns, rel)
        return Pending(rel, parsed, stamp, indexed)

    def rebuild(self) -> SyncReport:
        """Drop what the index holds and build it again from the files.

        It is emptied in one transaction, which other processes' connections survive; a
        damaged database is replaced by a new one instead.
        """
        self._settled = time.time_ns() - _RACY_NS
        try:
            self.database.ready()
            built = self.database.take_built()
            if built is not None:  # just built whole from the files, as asked
                return built
            self._retired = retired.load(self.layout)
            self._read_ahead(everything=True)
            # Emptied and filled again in one transaction: readers see the old or the new.
            with files.locked(self.layout, self.layout.index):
                return self._sync_all(self._fingerprint(), emptied=True)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise store_error(exc) from None
        finally:
            self._ahead = {}
        try:
            self.database.start_over()
        except sqlite3.Error as again:
            raise store_error(again) from None
        return self.sync()

    def fill(self, db: sqlite3.Connection) -> SyncReport:
        """Sync the files into a new index of this process's own (see `Database._fill`):
        what it reads is what it writes, no other process writing between."""
        self._settled = _OWN_READS
        self._retired = retired.load(self.layout)
        self._parsing = parsing.workers(self.layout)
        try:
            with self.database.using(db):
                return self._sync_all(self._fingerprint())
        finally:
            self._ahead = {}
            if self._parsing is not None:
                self._parsing.close()
                self._parsing = None
