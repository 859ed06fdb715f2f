"""What the index answers: BM25 rankings of a query within scopes, documents by id, by
entry, by date, and figures over the whole store.

A query runs in one read transaction (see `fts.FtsIndex`); the rows it returns are checked
against the hash of their text and completed with what is derived of it (`derived`).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeVar, Unpack

from . import matching
from .database import Database
from .derived import Derived
from .protocol import EVERYWHERE, LISTED, Doc, Hit, Listing, Scope
from .schema import BM25, DOC_COLUMNS, WORDS

_V = TypeVar("_V")  # what a slice of rows is read for

# A spawn's query ranks the documents that hold its rarest words, as many words as hold about
# this many documents together, by those words alone: a document holding only the query's
# common words ("src", "docs", "test") is not among the best few dozen of a store of
# thousands, and BM25 reads the whole row list of every word it weighs, once per query, so
# weighing the common words was most of a spawn's time in a large store. Left out, they
# changed the four shared teams' forward coverage by less than 0.003 each (the passages
# chosen afterwards are still scored by every word). Search ranks every document holding any
# word: a person's query is short, its words chosen.
RARE_ROWS = 5000

_SLICE = 100  # ranked matches whose scope search_each reads first (then twice as many)
_SLICE_MOST = 3200  # and at most this many at once (SQLite takes some 32,000 arguments)
_FEW = 2000  # a scope of at most this many documents is read whole by search_each


def _cut(ranking: list[tuple[int, float]], limit: int) -> list[tuple[int, float]] | None:
    """The first `limit` of the best `limit + 1` (rowid, bm25), or None when the cut falls
    between equal scores: which of the tied documents make it depends on their dates."""
    if len(ranking) > limit:
        if ranking[limit][1] == ranking[limit - 1][1]:
            return None
        del ranking[limit:]
    return ranking


class Queries:
    """The questions the index answers, over one connection to it."""

    def __init__(self, database: Database, derived: Derived) -> None:
        self.database = database
        self.derived = derived
        # How many documents hold each word asked (see `_rarest`), as of one state of the
        # index (its connection, the commits of other processes) and this object's writes.
        self._held: tuple[tuple[int, int], int, dict[str, int]] = ((0, 0), 0, {})
        # The members of small scopes (see `_small_scopes`), as of one state and the writes.
        self._scopes: tuple[tuple[int, int, int], dict[Scope, set[int] | None]] = ((0, 0, -1), {})
        # The documents of a class or a tag (see `docs`), as of one state, the writes and
        # whether reads count tokens.
        self._kept: tuple[tuple[int, int, int, bool], dict[tuple[str | None, ...], list[Doc]]]
        self._kept = ((0, 0, -1, False), {})

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.db

    def forget(self) -> None:
        """Drop what was counted of the documents (the index was emptied and filled again)."""
        self._held, self._scopes = ((0, 0), 0, {}), ((0, 0, -1), {})
        self._kept = ((0, 0, -1, False), {})

    def search(self, query: str, scope: Scope = EVERYWHERE, limit: int = 10) -> list[Hit]:
        """BM25-ranked documents of the scope matching any word of the query, every word
        weighed; ties in score go to the newer document, then to the smaller id."""
        words = matching.fts_query(query)
        if not words or limit <= 0:
            return []
        where, where_args = matching.search_filter(scope)
        match = matching.match(words, scope)
        return self._hits([self._ranked(match, where, where_args, limit)])[0]

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The best `limit` matches within each scope among the documents holding the
        query's rarest words, ranked as `search` ranks them by those words (see RARE_ROWS).

        One FTS5 query serves every scope: BM25 weighs each query word by reading the whole
        row list of that word once per query, which for a few scopes costs more than scoring
        their rows does.
        """
        words = matching.fts_query(query)
        if not words or limit <= 0 or not scopes:
            return [[] for _ in scopes]
        match = matching.match(self._rarest(words))
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
        state = (*self.database.state(), self.database.writes)
        if self._scopes[0] != state:
            self._scopes = (state, {})
        known = self._scopes[1]
        for scope in scopes:
            if scope not in known:
                known[scope] = self._members(scope, _FEW)
        return {n: members for n, s in enumerate(scopes) if (members := known[s]) is not None}

    def _members(self, scope: Scope, most: int) -> set[int] | None:
        """The rowids of a scope's documents, or None when it holds more than `most`."""
        condition, args = matching.scope_condition(scope)
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
        now = self.database.state()
        if state != now or self.database.writes - since > RARE_ROWS / 10:
            self._held = (now, self.database.writes, {})
        return self._held[2]

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
        sound = self.derived.sound(rows)
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

    def docs(self, **where: Unpack[Listing]) -> list[Doc]:
        """All indexed documents, optionally of one tier, agent, file, class or tag. The
        documents of a class or a tag are kept while the index holds the same documents:
        a spawn asks for the policies and the agent's standing knowledge every time, and
        finding the policies reads every row."""
        tag = where.get("tag")
        asked = (where.get("tier"), where.get("agent"), where.get("path"), where.get("cls"), tag)
        kept = where.get("cls") or tag
        if kept:
            state = (*self.database.state(), self.database.writes, self.derived.counting)
            if self._kept[0] != state:
                self._kept = (state, {})
            if asked in self._kept[1]:
                return list(self._kept[1][asked])
        sql = f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE 1=1"
        args: list[object] = []
        for column in LISTED:  # the columns are the protocol's names, never a caller's
            if value := where.get(column):
                sql += f" AND {column}=?"
                args.append(value)
        if tag:
            sql += " AND instr(',' || tags || ',', ?) > 0"
            args.append(f",{tag},")
        sql += " ORDER BY path, ord"
        found = self.derived.docs(self.db.execute(sql, args).fetchall())
        if kept:
            self._kept[1][asked] = list(found)
        return found

    def by_ids(self, ids: Sequence[str], scope: Scope = EVERYWHERE) -> list[Doc]:
        """The documents of the scope with these ids, in the order of the ids (an id held in
        two files, as after a merge, gives both)."""
        conditions, args = matching.row_conditions(scope)
        where = "".join(f" AND {c}" for c in conditions)
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE id IN ({marks}){where}"
            " ORDER BY path, ord",
            [*ids, *args],
        )
        order = {doc_id: n for n, doc_id in enumerate(ids)}
        found = self.derived.docs(rows.fetchall())
        return sorted(found, key=lambda d: order[d.id])

    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The newest active documents of some tiers (of one agent, if named), newest first."""
        scope = Scope(tuple(tiers), (agent,) if agent else (), active_only=True)
        conditions, args = matching.row_conditions(scope)
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
        return self.derived.docs(rows)

    def parts(self, parent: str) -> list[Doc]:
        """The parts of one long entry, or the chunks of one section of an archived text, in
        file order (wiki pages first, for a promotion caught halfway)."""
        sql = (
            f"SELECT rowid, sha, {DOC_COLUMNS} FROM docs WHERE parent=?"
            " ORDER BY tier != 'wiki', tier, path, ord"
        )
        rows = self.db.execute(sql, (parent,)).fetchall()
        return self.derived.docs(rows)

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens) for every agent and tier: a long entry's
        parts count once, an archive record (one file) once, whatever its chunks. A count
        not in its row yet is taken from the cache, or made now (`Derived.count_rest`)."""
        rows = self.db.execute(
            "SELECT agent, tier, COUNT(DISTINCT CASE WHEN tier='archive' THEN path"
            " WHEN parent != '' THEN parent ELSE id END),"
            " SUM(LENGTH(CAST(text AS BLOB))),"
            " SUM(COALESCE(tokens, (SELECT n FROM token_cache WHERE token_cache.sha = docs.sha)))"
            " FROM docs GROUP BY agent, tier ORDER BY agent, tier"
        ).fetchall()
        added = self.derived.count_rest()
        return [(a, t, n, b or 0, (k or 0) + added.get((a, t), 0)) for a, t, n, b, k in rows]

    def documents(self) -> int:
        """How many documents the index holds."""
        (count,) = self.db.execute("SELECT COUNT(*) FROM docs").fetchone()
        return int(count)
