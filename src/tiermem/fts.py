"""The search index in SQLite FTS5 (`.squad/memory/index.sqlite`), synced before every read.

The markdown files are the truth; the index is a cache that can be deleted at any time. A
sync compares each file's size and mtime with what was indexed, then its content hash, and
re-reads only files that really changed. Archive folders are
create-only, so an unchanged folder mtime means no record was added there.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import archive, files, store
from .errors import ParseError
from .index import Doc, Hit, Scope, SyncReport, archive_docs, entry_doc
from .layout import Layout
from .tokens import TokenCounter

SCHEMA_VERSION = "11"
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, dir TEXT, size INTEGER, mtime_ns INTEGER, sha TEXT);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS docs(
    rowid INTEGER PRIMARY KEY, id TEXT, path TEXT, tier TEXT, agent TEXT, cls TEXT,
    status TEXT, title TEXT, text TEXT, created TEXT, used TEXT, session TEXT,
    trust TEXT, tags TEXT, sha TEXT, tokens INTEGER, ord INTEGER, parent TEXT, sources TEXT);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_agent_tier ON docs(agent, tier);
CREATE INDEX IF NOT EXISTS docs_cls ON docs(cls);
CREATE INDEX IF NOT EXISTS docs_scope ON docs(tier, status, agent);
CREATE INDEX IF NOT EXISTS docs_parent ON docs(parent) WHERE parent != '';
CREATE TABLE IF NOT EXISTS token_cache(sha TEXT PRIMARY KEY, n INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
    title, text, owner, tokenize='porter unicode61');
"""


_DOC_FIELDS = (
    "id tier agent path title text cls status created used session trust tags tokens parent"
    " sources".split()
)
_DOC_COLUMNS = ", ".join(_DOC_FIELDS)
# Titles weigh four times the body: a word in the heading says what the entry is about.
# The owner column only narrows a search to agents; it adds nothing to a score.
_BM25 = "bm25(docs_fts, 4.0, 1.0, 0.0)"


@dataclass(frozen=True)
class _Pending:
    """A changed file's documents, waiting for their token counts."""

    rel: str
    docs: list[Doc]
    size: int
    mtime_ns: int
    sha: str


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


def fts_query(query: str) -> str:
    """Turn any user text into a safe FTS5 query: each word quoted, any word may match."""
    stop = _STOP_WORDS | _QUESTION_WORDS if query.rstrip().endswith("?") else _STOP_WORDS
    words: list[str] = []
    for word in _WORD.findall(query.lower()):
        if word not in words and word not in stop:
            words.append(word)
    if not words:  # a query of stop words only still means something
        words = list(dict.fromkeys(_WORD.findall(query.lower())))
    return " OR ".join(f'"{w}"' for w in words)


def _owner_term(agent: str) -> str:
    """The agent as one FTS5 token: names may hold '-' or '.', which the tokenizer splits on."""
    return f"ag{agent.encode('utf-8').hex() or '0'}"


# The owner column of a wiki document holds this token too: whoever wrote an entry, the wiki
# is the whole team's, and a search as one agent narrows to "its own, or the wiki" in FTS5.
_WIKI_TERM = "sharedwiki"


def _owners(doc: Doc) -> str:
    """The owner column of a document."""
    owner = _owner_term(doc.agent)
    return f"{owner} {_WIKI_TERM}" if doc.tier == "wiki" else owner


def _match(words: str, agents: Sequence[str], whole_wiki: bool = False) -> str:
    """The FTS5 query: any of the words, in a title or text, of one of the agents if named
    (or of anyone in the wiki, with `whole_wiki`).

    FTS5 narrows by agent itself, skipping through the agent's short list of rows. Tier and
    status are left to `_scope`: their terms would be in most rows, and BM25 reads the whole
    row list of every term in the query to weigh it.
    """
    match = f"{{title text}}: ({words})"
    if agents:
        owners = [_owner_term(a) for a in agents] + ([_WIKI_TERM] if whole_wiki else [])
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


def _cut(ranking: list[tuple[int, float]], limit: int) -> list[tuple[int, float]] | None:
    """The first `limit` of the best `limit + 1` (rowid, bm25), or None when the cut falls
    between equal scores: which of the tied documents make it depends on their dates."""
    if len(ranking) > limit:
        if ranking[limit][1] == ranking[limit - 1][1]:
            return None
        del ranking[limit:]
    return ranking


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    """What a folder holds (nothing when it does not exist, or is not a folder)."""
    try:
        with os.scandir(folder) as found:
            return list(found)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _stamp_of(item: os.DirEntry[str]) -> str:
    """Size and mtime of a listed file or folder, the link itself for a link (never followed:
    a link to nothing must not fail every read), empty when it vanished since the listing."""
    try:
        st = item.stat(follow_symlinks=False)
    except FileNotFoundError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _sha(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


class FtsIndex:
    """The index in SQLite FTS5: synced from the files, and searched."""

    def __init__(self, layout: Layout, counter: TokenCounter) -> None:
        self.layout = layout
        self.counter = counter
        self._db: sqlite3.Connection | None = None
        self._last_conflicts: list[str] = []

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (opened and migrated on first use)."""
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.layout.memory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.layout.index, timeout=60, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = None
        # Stored token counts are those of the counter that made them: another counter (a
        # test's fake) gets an index of its own counts.
        wanted = f"{SCHEMA_VERSION}/{type(self.counter).__name__}"
        with contextlib.suppress(sqlite3.DatabaseError):
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            version = row[0] if row else None
        if version != wanted:
            db.close()
            self._drop_files()
            db = sqlite3.connect(self.layout.index, timeout=60, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (wanted,))
        return db

    def _drop_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.layout.index) + suffix)

    def close(self) -> None:
        """Close the connection."""
        if self._db is not None:
            self._db.close()
            self._db = None

    # --- sync -------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Bring the index up to date with the files; re-read only what changed.

        A fingerprint of every tier file's size and mtime (and every archive folder's mtime)
        is compared first, without the lock: an unchanged store costs a few stat calls.
        """
        before = self._fingerprint()
        row = self.db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        if row and row[0] == before:
            return SyncReport()
        with files.locked(self.layout, self.layout.index):
            report = SyncReport()
            with self._transaction():
                self._sync_folders(report, trust_archive=True)
                self.db.execute("INSERT OR REPLACE INTO meta VALUES('fingerprint', ?)", (before,))
            return report

    def _fingerprint(self) -> str:
        """Every tier file's size and mtime, and every archive folder's mtime, as one digest.

        Every read runs it, so it scans with `os.scandir` (names and types come with the
        listing) instead of building, sorting and testing paths: one stat per file or folder.
        """
        parts: list[str] = []
        for tier in ("hot", "cold", "wiki"):
            for item in _listing(self.layout.tier_dir(tier)):
                if item.name.endswith(".md") and not item.name.startswith(files.TEMP_PREFIX):
                    parts.append(f"{tier}/{item.name}:{_stamp_of(item)}")
        for item in self._archive_folders():
            parts.append(f"{item.name}/:{_stamp_of(item)}")
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

    def _archive_folders(self) -> list[os.DirEntry[str]]:
        """Every agent's archive folder."""
        return [item for item in _listing(self.layout.tier_dir("archive")) if item.is_dir()]

    def _folders(self) -> list[tuple[Path, str]]:
        """(folder, tier) of every tier folder and every agent's archive folder."""
        found = [(self.layout.tier_dir(t), t) for t in ("hot", "cold", "wiki")]
        archived = sorted(Path(item.path) for item in self._archive_folders())
        return found + [(folder, "archive") for folder in archived]

    def _sync_folders(self, report: SyncReport, trust_archive: bool) -> None:
        present: set[str] = set()
        for folder, tier in self._folders():
            rel_dir = self.layout.relative(folder)
            present.add(rel_dir)
            if tier == "archive" and trust_archive and self._unchanged(folder, rel_dir):
                continue
            self._sync_folder(folder, rel_dir, tier, report)
        known = [r[0] for r in self.db.execute("SELECT DISTINCT dir FROM files")]
        for rel_dir in known:
            if rel_dir not in present:
                self._forget(rel_dir, set(), report)
                self.db.execute("DELETE FROM dirs WHERE path=?", (rel_dir,))

    def _unchanged(self, folder: Path, rel_dir: str) -> bool:
        """Archive folders are create-only: the same mtime means the same records."""
        row = self.db.execute("SELECT mtime_ns FROM dirs WHERE path=?", (rel_dir,)).fetchone()
        return bool(row) and row[0] == folder.stat().st_mtime_ns

    def _sync_folder(self, folder: Path, rel_dir: str, tier: str, report: SyncReport) -> None:
        mtime = folder.stat().st_mtime_ns if folder.is_dir() else 0
        on_disk: set[str] = set()
        pending: list[_Pending] = []
        for path in sorted(folder.glob("*.md")):
            if files.is_temp(path):
                continue
            try:
                st = path.stat()
            except FileNotFoundError:
                continue  # gone since the listing, or a link to nothing: nothing to index
            rel = self.layout.relative(path)
            on_disk.add(rel)
            changed = self._sync_file(path, st, rel, rel_dir, tier, report)
            if changed is not None:
                pending.append(changed)
        # Token counts for every changed file at once: one pass of the counter, not one per file.
        counts = iter(self.token_counts([d.text for p in pending for d in p.docs]))
        for item in pending:
            self._replace(item.rel, item.docs, [next(counts) for _ in item.docs])
            self.db.execute(
                "INSERT OR REPLACE INTO files VALUES(?, ?, ?, ?, ?)",
                (item.rel, rel_dir, item.size, item.mtime_ns, item.sha),
            )
        self._forget(rel_dir, on_disk, report)
        self.db.execute("INSERT OR REPLACE INTO dirs VALUES(?, ?)", (rel_dir, mtime))

    def _forget(self, rel_dir: str, keep: set[str], report: SyncReport) -> None:
        """Drop indexed files of a folder that are no longer on disk."""
        for (rel,) in self.db.execute("SELECT path FROM files WHERE dir=?", (rel_dir,)).fetchall():
            if rel not in keep:
                self._replace(rel, [])
                self.db.execute("DELETE FROM files WHERE path=?", (rel,))
                report.removed.append(rel)

    def _sync_file(
        self, path: Path, st: os.stat_result, rel: str, rel_dir: str, tier: str, report: SyncReport
    ) -> _Pending | None:
        """The documents of a file whose content changed since it was indexed, else None."""
        report.scanned += 1
        row = self.db.execute(
            "SELECT size, mtime_ns, sha FROM files WHERE path=?", (rel,)
        ).fetchone()
        if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
            return None
        try:
            data = path.read_bytes()
        except OSError as exc:
            report.errors.append(ParseError(path, 1, f"cannot be read ({exc.strerror})"))
            self._replace(rel, [])  # what it held before must not be served as if current
            self.db.execute("DELETE FROM files WHERE path=?", (rel,))
            return None
        sha = _sha(data)
        if row and row[2] == sha:
            self.db.execute(
                "UPDATE files SET size=?, mtime_ns=? WHERE path=?",
                (st.st_size, st.st_mtime_ns, rel),
            )
            return None
        try:
            docs = self._docs_of(path, rel, tier, data)
        except ParseError as exc:
            report.errors.append(exc)
            return None
        report.conflicts.extend(self._last_conflicts)
        self._last_conflicts = []
        report.changed.append(rel)
        return _Pending(rel, docs, st.st_size, st.st_mtime_ns, sha)

    def _docs_of(self, path: Path, rel: str, tier: str, data: bytes) -> list[Doc]:
        if tier == "archive":
            return archive_docs(archive.parse(data, path), rel)
        tier_file = store.load(self.layout, tier, path)
        assert tier_file is not None
        self._last_conflicts = [
            f"{rel}:{c.lines[0]}: entry {c.id}: {c.reason}" for c in tier_file.conflicts
        ]
        agent = path.stem if tier != "wiki" else ""
        return [entry_doc(e, tier, agent, rel) for e in tier_file.entries]

    def _replace(self, rel: str, docs: Sequence[Doc], counts: Sequence[int] = ()) -> None:
        old = [r[0] for r in self.db.execute("SELECT rowid FROM docs WHERE path=?", (rel,))]
        if old:
            marks = ",".join("?" * len(old))
            self.db.execute(f"DELETE FROM docs_fts WHERE rowid IN ({marks})", old)
            self.db.execute(f"DELETE FROM docs WHERE rowid IN ({marks})", old)
        for order, (doc, tokens) in enumerate(zip(docs, counts, strict=True)):
            cur = self.db.execute(
                "INSERT INTO docs(id, path, tier, agent, cls, status, title, text, created, used,"
                " session, trust, tags, sha, tokens, ord, parent, sources)"
                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    doc.id,
                    rel,
                    doc.tier,
                    doc.agent,
                    doc.cls,
                    doc.status,
                    doc.title,
                    doc.text,
                    doc.created,
                    doc.used,
                    doc.session,
                    doc.trust,
                    doc.tags,
                    _sha(doc.text),
                    tokens,
                    order,
                    doc.parent,
                    doc.sources,
                ),
            )
            self.db.execute(
                "INSERT INTO docs_fts(rowid, title, text, owner) VALUES(?, ?, ?, ?)",
                (cur.lastrowid, doc.title, doc.text, _owners(doc)),
            )

    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts, cached by content hash across runs."""
        shas = [_sha(t) for t in texts]
        known: dict[str, int] = {}
        for start in range(0, len(shas), 500):
            part = shas[start : start + 500]
            marks = ",".join("?" * len(part))
            known.update(
                self.db.execute(f"SELECT sha, n FROM token_cache WHERE sha IN ({marks})", part)
            )
        missing = [(s, t) for s, t in zip(shas, texts, strict=True) if s not in known]
        if missing:
            counted = self.counter.count_many([t for _, t in missing])
            for (sha, _), n in zip(missing, counted, strict=True):
                known[sha] = n
                self.db.execute("INSERT OR REPLACE INTO token_cache VALUES(?, ?)", (sha, n))
        return [known[s] for s in shas]

    def rebuild(self) -> SyncReport:
        """Drop the index and build it again from the files."""
        self.close()
        with files.locked(self.layout, self.layout.index):
            self._drop_files()
        return self.sync()

    def check(self) -> list[str]:
        """Differences between the index and the files, without changing the index."""
        with files.locked(self.layout, self.layout.index):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                report = SyncReport()
                self._sync_folders(report, trust_archive=False)
            finally:
                self.db.execute("ROLLBACK")
        drift = [f"changed: {p}" for p in report.changed]
        drift += [f"removed: {p}" for p in report.removed]
        drift += [f"unreadable: {e}" for e in report.errors]
        drift += [f"merge conflict: {c}" for c in sorted(set(report.conflicts) | self._conflicts())]
        return drift

    def _conflicts(self) -> set[str]:
        """Entries that exist in two versions in a tier file (after a merge), until rewritten."""
        found: set[str] = set()
        for folder, tier in self._folders():
            if tier == "archive":
                continue
            for path in sorted(folder.glob("*.md")):
                try:
                    loaded = store.load(self.layout, tier, path)
                except ParseError:
                    continue
                rel = self.layout.relative(path)
                for c in loaded.conflicts if loaded else []:
                    found.add(f"{rel}:{c.lines[0]}: entry {c.id}: {c.reason}")
        return found

    # --- queries ----------------------------------------------------------------------

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
        ranked = self._ranked(match, scope, scope_args, limit)
        if ranked is None:
            return self._ranked_in_full(match, scope, scope_args, limit)
        return self._hits([ranked])[0]

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The best `limit` matches within each scope, ranked as `search` ranks them.

        One FTS5 query serves every scope: BM25 weighs each query word by reading the whole
        row list of that word once per query, which for a few scopes costs more than scoring
        their rows does.
        """
        words = fts_query(query)
        if not words or limit <= 0 or not scopes:
            return [[] for _ in scopes]
        match = _match(words, [])
        conditions = [_scope_condition(scope) for scope in scopes]
        scored = self.db.execute(
            f"SELECT rowid, {_BM25} FROM docs_fts WHERE docs_fts MATCH ? AND +docs_fts.rowid IN"
            f" (SELECT rowid FROM docs WHERE {' OR '.join(f'({w})' for w, _ in conditions)})",
            [match, *(arg for _, args in conditions for arg in args)],
        ).fetchall()
        rankings = [self._best_within(scored, *condition, limit) for condition in conditions]
        found = iter(self._hits([r for r in rankings if r is not None]))
        return [
            next(found)
            if ranking is not None
            else self._ranked_in_full(match, *_scope_filter(scope), limit)
            for scope, ranking in zip(scopes, rankings, strict=True)
        ]

    def _best_within(
        self, scored: list[tuple[int, float]], condition: str, args: list[object], limit: int
    ) -> list[tuple[int, float]] | None:
        """The best `limit` of the scored rows that meet the condition (see `_cut`)."""
        members = {
            rowid for (rowid,) in self.db.execute(f"SELECT rowid FROM docs WHERE {condition}", args)
        }
        best = heapq.nsmallest(
            limit + 1, (row for row in scored if row[0] in members), key=lambda row: row[1]
        )
        return _cut(best, limit)

    def _hits(self, rankings: Sequence[Sequence[tuple[int, float]]]) -> list[list[Hit]]:
        """The documents of each ranking of (rowid, bm25), read in one query, best first;
        equal scores go to the newer document, then to the smaller id."""
        scores = {rowid: score for ranking in rankings for rowid, score in ranking}
        marks = ",".join("?" * len(scores))
        rows = self.db.execute(
            f"SELECT rowid, {_DOC_COLUMNS} FROM docs WHERE rowid IN ({marks})", list(scores)
        )
        docs = {row[0]: Doc(*row[1:]) for row in rows}
        results = []
        for ranking in rankings:
            hits = [Hit(docs[rowid], -score) for rowid, score in ranking]
            hits.sort(key=lambda h: h.doc.id)
            hits.sort(key=lambda h: h.doc.created, reverse=True)
            hits.sort(key=lambda h: -h.score)
            results.append(hits)
        return results

    def _ranked(
        self, match: str, scope: str, scope_args: list[object], limit: int
    ) -> list[tuple[int, float]] | None:
        """(rowid, bm25) of the best `limit` matches, or None when a tie crosses the cut.

        Ranking rowids alone lets SQLite keep only the best few while it scores: joining the
        documents first would sort every match with its text.
        """
        rows: list[tuple[int, float]] = self.db.execute(
            f"SELECT rowid, {_BM25} AS score FROM docs_fts WHERE docs_fts MATCH ?{scope}"
            " ORDER BY score LIMIT ?",
            [match, *scope_args, limit + 1],
        ).fetchall()
        return _cut(rows, limit)

    def _ranked_in_full(
        self, match: str, scope: str, scope_args: list[object], limit: int
    ) -> list[Hit]:
        """The search with ties broken inside SQLite, for the rare cut through a tie."""
        rows = self.db.execute(
            f"SELECT {', '.join(f'd.{c}' for c in _DOC_FIELDS)}, {_BM25} AS score"
            f" FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid WHERE docs_fts MATCH ?{scope}"
            " ORDER BY score, d.created DESC, d.id LIMIT ?",
            [match, *scope_args, limit],
        )
        n = len(_DOC_FIELDS)
        return [Hit(Doc(*row[:n]), -float(row[n])) for row in rows]

    def docs(
        self, tier: str | None = None, agent: str | None = None, cls: str | None = None
    ) -> list[Doc]:
        """All indexed documents, optionally of one tier, agent or class."""
        sql = f"SELECT {_DOC_COLUMNS} FROM docs WHERE 1=1"
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
        return [Doc(*row) for row in self.db.execute(sql, args)]

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
            f"SELECT {_DOC_COLUMNS} FROM docs WHERE id IN ({marks}){where} ORDER BY path, ord",
            [*ids, *args],
        )
        order = {doc_id: n for n, doc_id in enumerate(ids)}
        return sorted((Doc(*row) for row in rows), key=lambda d: order[d.id])

    def parts(self, parent: str) -> list[Doc]:
        """The parts of one long entry, or the chunks of one section of an archived text, in
        file order (wiki pages first, for a promotion caught halfway)."""
        sql = (
            f"SELECT {_DOC_COLUMNS} FROM docs WHERE parent=?"
            " ORDER BY tier != 'wiki', tier, path, ord"
        )
        return [Doc(*row) for row in self.db.execute(sql, (parent,))]

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens) for every agent and tier."""
        rows = self.db.execute(
            "SELECT agent, tier, COUNT(*), SUM(LENGTH(CAST(text AS BLOB))), SUM(tokens)"
            " FROM docs GROUP BY agent, tier ORDER BY agent, tier"
        )
        return [(a, t, n, b or 0, k or 0) for a, t, n, b, k in rows]
