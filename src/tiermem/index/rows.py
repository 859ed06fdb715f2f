"""The documents of files as rows of the index: a folder's changed files written together,
a file's rows dropped, and its rows compared with what was indexed from it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..storage.digest import same as same_digest
from . import parsing, schema, tokens
from .database import Database
from .derived import Derived
from .protocol import Doc, SyncReport
from .schema import DOC_COLUMNS, cut_passages

# Changed files are written together, up to this much text: a folder of 50 MB of archive
# records is indexed in bounded memory.
PENDING_CHARS = 4_000_000
# Up to this much text, a sync cuts its documents' passages at once (a note, a session end:
# reads after ordinary writes never write), and takes their token counts from the cache, or
# counts them when this process has the encoding already (see `tokens.ready`: a note never
# pays 0.35 s to load it). Above it, and for any count not made, reads derive them for the
# documents they return (`derived`): cutting passages and counting tokens cost about 0.2 s per
# million characters, two thirds of a 100,000-entry store's build.
EAGER_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class Pending:
    """A changed file's documents, waiting to be written with the folder's others."""

    rel: str
    parsed: parsing.Parsed
    mtime_ns: int  # as recorded (see `Sync._stamp`)
    indexed: bool  # it has rows from before, which go first

    @property
    def rows(self) -> list[schema.Stored]:
        return self.parsed.rows


@dataclass(slots=True)
class Batch:
    """Changed files of one folder waiting to be written, and the text they hold."""

    files: list[Pending] = field(default_factory=list)
    chars: int = 0

    def add(self, item: Pending) -> None:
        self.files.append(item)
        self.chars += sum(len(str(r[schema.TEXT_AT])) for r in item.rows)


def _terms_of(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The search terms FTS5 holds for these rows, column by column."""
    found: dict[int, tuple[str, ...]] = {}
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        query = f"SELECT rowid, {schema.TERM_COLUMNS} FROM docs_fts WHERE rowid IN ({marks})"
        found.update((r[0], tuple(r[1:])) for r in db.execute(query, part))
    return found


class Rows:
    """The rows of the index's documents, written and dropped a file at a time."""

    def __init__(self, database: Database, derived: Derived) -> None:
        self.database = database
        self.derived = derived

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.db

    def write(self, batch: Batch, rel_dir: str, eager: bool = True) -> None:
        """Index changed files of a folder: their old rows dropped, then every document in
        one statement per table; passages and known token counts with them when the batch is
        small and `eager`, else left to the reads (see `EAGER_CHARS`)."""
        if not batch.files:
            return
        for item in batch.files:
            if item.indexed:
                self.drop(item.rel)
        shas = [sha for p in batch.files for sha in p.parsed.texts]
        derived: list[tuple[int | None, str | None]] = [(None, None)] * len(shas)
        if eager and batch.chars <= EAGER_CHARS:
            texts = [str(r[schema.TEXT_AT]) for p in batch.files for r in p.rows]
            counts = self.derived.known_counts(shas, texts, tokens.ready(self.derived.counter))
            derived = [(n, cut_passages(t)) for n, t in zip(counts, texts, strict=True)]
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
        written: Sequence[Pending],
        shas: Sequence[str],
        derived: Sequence[tuple[int | None, str | None]],
    ) -> None:
        """The documents of files (with their text hashes and what is derived of them), as
        rows and search terms, numbered after the last row."""
        (first,) = self.db.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM docs").fetchone()
        placed = [(order, r) for p in written for order, r in enumerate(p.rows)]
        made = zip(placed, shas, derived, strict=True)
        rows = [schema.row(first + n, sha, o, r, d) for n, ((o, r), sha, d) in enumerate(made)]
        self.db.executemany(schema.INSERT_DOC, rows)
        self.database.writes += len(placed)
        self.db.executemany(
            schema.INSERT_TERMS,
            [(first + n, *schema.stored_terms(r)) for n, (_, r) in enumerate(placed)],
        )

    def forget(self, rel_dir: str, keep: set[str], report: SyncReport) -> None:
        """Drop indexed files of a folder that are no longer on disk."""
        for (rel,) in self.db.execute("SELECT path FROM files WHERE dir=?", (rel_dir,)).fetchall():
            if rel not in keep:
                self.drop(rel)
                self.db.execute("DELETE FROM files WHERE path=?", (rel,))
                report.removed.append(rel)

    def hold(self, rel: str, digest: str | None) -> bool:
        """Whether a file's rows (and their search terms) are still what was indexed from
        it: checked where its stamp moved but its content did not, without parsing it."""
        rows = self.db.execute(
            f"SELECT rowid, {DOC_COLUMNS} FROM docs WHERE path=? ORDER BY ord", (rel,)
        ).fetchall()
        docs = [Doc(*row[1:]) for row in rows]
        texts = [schema.sha(d.text) for d in docs]
        held = parsing.rows_digest([schema.stored(d) for d in docs], texts)
        if not same_digest(digest or "", held):
            return False
        if _terms_of(self.db, [row[0] for row in rows]) != {
            row[0]: schema.terms(d) for row, d in zip(rows, docs, strict=True)
        }:
            return False
        # Passages are not in the digest (a read may derive them later): made again.
        self.db.execute("UPDATE docs SET passages=NULL WHERE path=?", (rel,))
        return True

    def drop(self, rel: str) -> None:
        """Drop a file's documents and their search terms."""
        old = [r[0] for r in self.db.execute("SELECT rowid FROM docs WHERE path=?", (rel,))]
        if old:
            marks = ",".join("?" * len(old))
            self.database.writes += len(old)
            self.db.execute(f"DELETE FROM docs_fts WHERE rowid IN ({marks})", old)
            self.db.execute(f"DELETE FROM docs WHERE rowid IN ({marks})", old)
