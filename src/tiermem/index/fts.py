"""The search index in SQLite FTS5 (`.squad/memory/index.sqlite`), synced before every read.

The markdown files are the truth; the index is a cache that can be deleted at any time.
`FtsIndex` is the `Index` tiermem opens unless it is handed another, made of parts that each
own one concern: the file, trusted or built again (`database`); a sync from the files
(`sync`, writing `rows`); the questions it answers (`queries`, asked in `matching`'s terms);
and what is derived from a document's text when first read (`derived`).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, TypeVar

from ..errors import TiermemError
from ..storage import files
from ..storage.layout import Layout
from . import passages, schema
from .database import Database, one_line
from .derived import Derived
from .protocol import Index, SyncReport
from .queries import Queries
from .rows import Rows
from .sync import Sync
from .tokens import TokenCounter

SCHEMA_VERSION = "20"  # 19: CamelCase names' parts searched; 20: `DTOs` is one word

_T = TypeVar("_T")
_P = ParamSpec("_P")


def wanted(counter: TokenCounter) -> str:
    """The schema an index must have to be read: this version's, with this counter's counts
    (another counter, a test's fake, gets an index of its own counts). A change to the
    tables' shape (a field of `Doc`, a searched column) is a schema of its own by itself, and
    so is a change to how entries are cut into passages."""
    shape = schema.sha(schema.SCHEMA)[:12]
    return f"{SCHEMA_VERSION}.{shape}.{passages.CUT_VERSION}/{type(counter).__name__}"


def _unsaid(line: str) -> None:
    """Where notes go when nobody listens."""


def _asked(
    question: Callable[Concatenate[Queries, _P], _T],
) -> Callable[Concatenate[FtsIndex, _P], _T]:
    """A question of `Queries` as a method of the index: asked in one read transaction,
    SQLite's failures said in one line; its signature and help are the question's."""

    @one_line
    def asked(index: FtsIndex, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return index._read(question, index._queries, *args, **kwargs)

    functools.update_wrapper(asked, question)
    return asked


class FtsIndex(Index):
    """The index in SQLite FTS5: synced from the files, and searched."""

    def __init__(
        self, layout: Layout, counter: TokenCounter, note: Callable[[str], None] | None = None
    ) -> None:
        self.layout = layout
        self.counter = counter
        # A new index file is filled by a sync of the whole store into it.
        self._database = Database(layout, wanted(counter), lambda db: self._sync.fill(db))
        self._derived = Derived(self._database, counter)
        rows = Rows(self._database, self._derived)
        self._sync = Sync(self._database, self._derived, rows, note or _unsaid)
        self._queries = Queries(self._database, self._derived)

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (opened, or built, on first use)."""
        return self._database.db

    def _read(self, query: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """A query that sees one state of the index: its statements run in one read
        transaction, so a sync another process commits between them cannot mix two states;
        what it derived is kept after, and damaged rows it met are read again."""
        if self.db.in_transaction:
            return query(*args, **kwargs)
        self.db.execute("BEGIN")
        try:
            return query(*args, **kwargs)
        finally:
            self.db.execute("COMMIT")
            self._derived.keep()
            if self._derived.suspect:
                with contextlib.suppress(TiermemError, sqlite3.Error):
                    self._sync.read_again()  # else the next sync does

    def sync(self) -> SyncReport:
        """Bring the index up to date with the files; re-read only what changed."""
        return self._sync.sync()

    def rebuild(self, scrub: bool = False) -> SyncReport:
        """Drop what the index holds and build it again from the files (see `Sync.rebuild`);
        with `scrub`, then leave no trace of the text it dropped (`_scrub`)."""
        self._queries.forget()
        report = self._sync.rebuild()
        if scrub:
            self._scrub()
        return report

    @one_line
    def _scrub(self) -> None:
        """Deleted text lingers in FTS5 segments, free pages and the write-ahead log: merge the
        segments, rewrite the file and empty the log."""
        self._database.ready()
        with files.locked(self.layout, self.layout.index):
            self.db.execute("INSERT INTO docs_fts(docs_fts) VALUES('optimize')")
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @one_line
    def check(self) -> list[str]:
        """Differences between the index and the files, without changing the index."""
        from . import check

        return check.drift(self._database)

    # The questions, each asked of `Queries` in one read transaction (see `_read`).
    search = _asked(Queries.search)
    search_each = _asked(Queries.search_each)
    docs = _asked(Queries.docs)
    by_ids = _asked(Queries.by_ids)
    newest = _asked(Queries.newest)
    parts = _asked(Queries.parts)
    totals = _asked(Queries.totals)
    documents = _asked(Queries.documents)

    @one_line
    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts, cached by content hash across runs."""
        return self._derived.token_counts(texts)

    def uncounted(self) -> AbstractContextManager[None]:
        """Reads within it count no tokens: a count neither a row nor the cache holds stays
        None (see `Derived.uncounted`)."""
        return self._derived.uncounted()

    def close(self) -> None:
        """Close the connection, and let other processes replace the index again."""
        self._database.close()
