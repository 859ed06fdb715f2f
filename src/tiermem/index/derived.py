"""What the index derives from a document's text: its token count and its passages.

A sync writes its documents without token counts (unless this process has the encoding
already, see `rows.Rows.write`), and without passages when it takes in much text at once (a
fresh clone's first read, an import: see `rows.EAGER_CHARS`); the first read that returns
such a document derives them and keeps them after its snapshot, so a fresh clone's first
search pays for the documents it shows, not for the whole store, and a write pays for no
count. Token counts are also kept by the hash of the text they count (`token_cache`): a text
counted once, as a document or not (an entry moved to another tier keeps its text), is never
counted again. A read that needs no counts (`uncounted`) takes them from the row or the
cache, and counts nothing.
"""

from __future__ import annotations

import contextlib
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, cast

from . import schema
from .database import Database
from .protocol import Doc
from .schema import cut_passages
from .schema import sha as _sha
from .tokens import TokenCounter

_KEEP_WAIT_MS = 50  # how long a read waits for the index to keep what it derived
_COUNT_ROWS = 2000  # documents counted at once for a figure over the whole store


class Derived:
    """Documents completed from their rows, what was derived for them kept, and token counts
    cached by the hash of their text."""

    def __init__(self, database: Database, counter: TokenCounter) -> None:
        self.database = database
        self.counter = counter
        self.suspect: set[str] = set()  # files whose rows were found damaged: read again
        # What reads derived for rows indexed without it: rowid -> (text hash, tokens,
        # passages), either left None when not derived; kept after the read.
        self._made: dict[int, tuple[str, int | None, str | None]] = {}
        # Token counts made for figures over the whole store, by rowid: kept in the cache only
        # (rewriting every row of a large store for them took longer than counting), under
        # the hash the row holds; in arrays, so as not to hold a text hash per document.
        self._counted = (array("q"), array("q"))
        self.counting = True  # reads count what neither a row nor the cache holds

    @contextlib.contextmanager
    def uncounted(self) -> Iterator[None]:
        """Reads that need no token counts: a document never counted is returned without
        one (`tokens` None), as its row holds it, instead of counted."""
        saved, self.counting = self.counting, False
        try:
            yield
        finally:
            self.counting = saved

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.db

    def docs(self, rows: Sequence[Sequence[Any]]) -> list[Doc]:
        """The sound documents of rows (rowid, sha, *fields), completed (see `sound`)."""
        return [d for d in self.sound(rows) if d is not None]

    def sound(self, rows: Sequence[Sequence[Any]]) -> list[Doc | None]:
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
                self.suspect.add(doc.path)
        return self._derive(rows, found)

    def _derive(self, rows: Sequence[Sequence[Any]], docs: list[Doc | None]) -> list[Doc | None]:
        """Documents indexed without their token counts or passages, completed: derived
        now, and kept in the index after the read (`keep`)."""
        todo = [(n, d) for n, d in enumerate(docs) if d and None in (d.tokens, d.passages)]
        if not todo:
            return docs
        uncounted = [(n, d) for n, d in todo if d.tokens is None]
        shas = [rows[n][1] for n, _ in uncounted]
        texts = [d.text for _, d in uncounted]
        made = self.known_counts(shas, texts, count=self.counting, keep=False)
        counts = {n: count for (n, _), count in zip(uncounted, made, strict=True)}
        for n, doc in todo:
            # None only within `uncounted`, whose reads never look at it.
            tokens = cast(int, counts.get(n, doc.tokens))
            cut = cut_passages(doc.text) if doc.passages is None else doc.passages
            docs[n] = replace(doc, tokens=tokens, passages=cut)
            self._made[rows[n][0]] = (rows[n][1], tokens, cut)
        return docs

    def keep(self) -> None:
        """Write what reads derived into the index, when it is free within a moment (while
        another process writes it, a later read derives them again)."""
        if not (self._made or self._counted[0]) or self.db.in_transaction:
            return  # nothing made, or kept when the outer read ends
        made, counted = self._made, self._counted
        self._made, self._counted = {}, (array("q"), array("q"))
        self.db.execute(f"PRAGMA busy_timeout = {_KEEP_WAIT_MS}")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return
        finally:
            timeout = int(schema.SQLITE_TIMEOUT_SECONDS * 1000)
            self.db.execute(f"PRAGMA busy_timeout = {timeout}")
        try:
            self._write(made, counted)
        except sqlite3.Error:
            self.db.execute("ROLLBACK")
            return
        self.db.execute("COMMIT")

    def _write(
        self,
        made: dict[int, tuple[str, int | None, str | None]],
        counted: tuple[array[int], array[int]],
    ) -> None:
        self.db.executemany(
            "UPDATE docs SET tokens=COALESCE(tokens, ?), passages=COALESCE(passages, ?)"
            " WHERE rowid=? AND sha=?",
            [(tokens, cut, rowid, sha) for rowid, (sha, tokens, cut) in made.items()],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO token_cache VALUES(?, ?)",
            [(sha, tokens) for sha, tokens, _ in made.values() if tokens is not None],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO token_cache SELECT sha, ? FROM docs WHERE rowid=?",
            zip(counted[1], counted[0], strict=True),
        )

    def count_rest(self) -> dict[tuple[str, str], int]:
        """Count the documents indexed without a token count, in the cache or in their row,
        for figures over the whole store: the tokens they add, by (agent, tier); kept in the
        cache after the read (see `Queries.totals`)."""
        added: dict[tuple[str, str], int] = {}
        after = 0
        while True:
            rows = self.db.execute(
                "SELECT rowid, sha, text, agent, tier FROM docs WHERE tokens IS NULL AND rowid > ?"
                " AND NOT EXISTS (SELECT 1 FROM token_cache WHERE token_cache.sha = docs.sha)"
                f" ORDER BY rowid LIMIT {_COUNT_ROWS}",
                (after,),
            ).fetchall()
            if not rows:
                return added
            counts = self.counts([r[1] for r in rows], [r[2] for r in rows], keep=False)
            for (rowid, _, _, agent, tier), n in zip(rows, counts, strict=True):
                added[(agent, tier)] = added.get((agent, tier), 0) + n
                self._counted[0].append(rowid)
                self._counted[1].append(n)
            after = rows[-1][0]

    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts, cached by content hash across runs."""
        return self.counts([_sha(t) for t in texts], texts, keep=True)

    def known_counts(
        self, shas: Sequence[str], texts: Sequence[str], count: bool, keep: bool = True
    ) -> list[int | None]:
        """Token counts of texts by their hashes: the cache's, the rest counted when `count`
        (see `counts`), else None."""
        if count:
            return list(self.counts(shas, texts, keep))
        known = self._cached(shas)
        return [known.get(sha) for sha in shas]

    def counts(self, shas: Sequence[str], texts: Sequence[str], keep: bool = True) -> list[int]:
        """Token counts of texts by their hashes: the cache's, else counted in one pass of
        the counter (and cached, with `keep`; else kept by `keep()`)."""
        known = self._cached(shas)
        missing = {s: t for s, t in zip(shas, texts, strict=True) if s not in known}
        if missing:
            made = self.counter.count_many(list(missing.values()))
            counted = dict(zip(missing, made, strict=True))
            known |= counted
            if keep:
                self._keep_counts(counted)
        return [known[s] for s in shas]

    def _keep_counts(self, counted: dict[str, int]) -> None:
        """Keep counts in the cache when the index is free within a moment: a read waits on
        no other process's writes for them (a later count makes them again)."""
        self.db.execute(f"PRAGMA busy_timeout = {_KEEP_WAIT_MS}")
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO token_cache VALUES(?, ?)", list(counted.items())
            )
        except sqlite3.OperationalError:
            return
        finally:
            timeout = int(schema.SQLITE_TIMEOUT_SECONDS * 1000)
            self.db.execute(f"PRAGMA busy_timeout = {timeout}")

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
