"""The index file's shape, shared by the index (`fts`) and its read-only check (`check`):
the SQLite schema and the columns of a document, the lock its users hold, the logs SQLite
leaves beside it, the owner terms that narrow a search to agents, and the documents a file
holds. It may import `protocol`, `passages` and the store.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

from ..errors import ParseError, TiermemError
from ..storage import archive, digest, files, governed, retired, store
from ..storage.entries import KEPT_TEXT, Entry
from ..storage.layout import Layout
from ..text.words import name_parts
from . import passages
from .protocol import Doc, archive_docs, entry_doc

SQLITE_TIMEOUT_SECONDS = 60.0


# Held shared by every open connection, exclusively by the one process replacing the file.
USERS_LOCK = "index.sqlite.users.lock"


# Beside the index, what SQLite applies to it on opening: tiermem's connections remove them
# when the last one closes, so one found while no process has the index open was left by a
# killed process, or put there by someone else.
SIDE_LOGS = ("-wal", "-journal")


# A document's row holds every field of `protocol.Doc` (declared there, once) and, beside
# them, what the index keeps of its own: the hash of its text as indexed, and its place in
# its file. Fields derived from the text (`DERIVED`) stay NULL until a read makes them.
DOC_FIELDS: tuple[str, ...] = tuple(Doc.__annotations__)
DERIVED = ("tokens", "passages")
STORED = tuple(f for f in DOC_FIELDS if f not in DERIVED)
_KEPT = (("sha", "TEXT"), ("ord", "INTEGER"))
_SQL_TYPES = {"str": "TEXT", "int": "INTEGER"}
DOC_COLUMNS = ", ".join(DOC_FIELDS)

# The fields of a document FTS5 finds words in, with their weight in a ranking: a title
# weighs four times the body (a word in the heading says what the entry is about), and the
# parts of its CamelCase names a fifth of the body (FTS5 reads `PdfViewer` as one word, and a task
# says "pdf viewer"; a part alone says less than a word as written: `LayeredScreenSurface`
# is not about layers). After them FTS5 holds the owner column: terms that narrow a search
# to agents (see `owners`), which add nothing to a score.
SEARCHED = (("title", 4.0), ("text", 1.0), ("names", 0.2))
_SEARCHED_FIELDS = ", ".join(name for name, _ in SEARCHED)
TERM_COLUMNS = f"{_SEARCHED_FIELDS}, owner"
WORDS = f"{{{' '.join(name for name, _ in SEARCHED)}}}"  # an FTS5 filter: words, not owners
BM25 = f"bm25(docs_fts, {', '.join(str(weight) for _, weight in SEARCHED)}, 0.0)"
# The owner column of a wiki document holds this term too: whoever wrote an entry, the wiki
# is the whole team's, and a search as one agent narrows to "its own, or the wiki" in FTS5.
WIKI_TERM = "sharedwiki"


def _columns() -> str:
    fields = [(name, _SQL_TYPES[kind]) for name, kind in Doc.__annotations__.items()]
    return ", ".join(f"{name} {kind}" for name, kind in (*fields, *_KEPT))


SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, dir TEXT, size INTEGER, mtime_ns INTEGER, sha TEXT, rows TEXT);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS docs(rowid INTEGER PRIMARY KEY, {_columns()});
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_agent_tier ON docs(agent, tier);
CREATE INDEX IF NOT EXISTS docs_created ON docs(created);
CREATE INDEX IF NOT EXISTS docs_fresh ON docs(agent, status, created);
CREATE INDEX IF NOT EXISTS docs_scope ON docs(tier, status, agent);
CREATE INDEX IF NOT EXISTS docs_parent ON docs(parent) WHERE parent != '';
CREATE TABLE IF NOT EXISTS token_cache(sha TEXT PRIMARY KEY, n INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5({TERM_COLUMNS}, tokenize='porter unicode61');
"""


# A whole index is built with its documents' own indexes made after their rows (one sort
# each costs less than keeping them in order row by row).
_LATE = "CREATE INDEX IF NOT EXISTS docs_"
DOC_INDEXES = "\n".join(line for line in SCHEMA.splitlines() if line.startswith(_LATE))
TABLES = "\n".join(line for line in SCHEMA.splitlines() if not line.startswith(_LATE))

INSERT_DOC = (
    f"INSERT INTO docs(rowid, sha, ord, {', '.join((*STORED, *DERIVED))})"
    f" VALUES({', '.join('?' * (3 + len(DOC_FIELDS)))})"
)
INSERT_TERMS = (
    f"INSERT INTO docs_fts(rowid, {TERM_COLUMNS}) VALUES({', '.join('?' * (2 + len(SEARCHED)))})"
)
stored = operator.attrgetter(*STORED)  # a document's fields that are not derived
# Where a field lies in a document's stored fields (`stored`): what a parse hands on is those
# tuples, not `Doc`s (a frozen dataclass of 17 fields costs more to make and to pickle than
# to index: a fresh clone's build unpickled 100,000 of them from its workers).
TEXT_AT = STORED.index("text")
_TITLE_AT = STORED.index("title")
_OWNER_AT = (STORED.index("agent"), STORED.index("tier"))
Stored = tuple[object, ...]  # a document's stored fields, in `STORED` order


def row(rowid: int, sha: str, order: int, fields: Stored, derived: Stored) -> Stored:
    """A document's row as `INSERT_DOC` writes it, from its stored fields (`stored`), with
    what is derived of its text."""
    return (rowid, sha, order, *fields, *derived)


def terms(doc: Doc) -> tuple[str, ...]:
    """What FTS5 holds of a document, column by column (`SEARCHED`, then its owners)."""
    return (*searched(doc.title, doc.text), owners(doc))


def searched(title: str, text: str) -> tuple[str, str, str]:
    """The searched fields of a document with this title and text, in `SEARCHED` order
    (names joined by `_`, `-`, `.` or `/` FTS5 splits itself; `names` holds the parts of the
    CamelCase ones)."""
    return title, text, " ".join(name_parts(f"{title}\n{text}"))


def stored_terms(fields: Stored) -> Stored:
    """What FTS5 holds of a document given by its stored fields (as `terms`)."""
    agent, tier = (fields[n] for n in _OWNER_AT)
    title, text = str(fields[_TITLE_AT]), str(fields[TEXT_AT])
    return (*searched(title, text), owner_terms(str(agent), str(tier)))


def cut_passages(text: str) -> str:
    """A document's passages as the index stores them."""
    return passages.encode(passages.cut(text))


def owner_term(agent: str) -> str:
    """The agent as one FTS5 token: names may hold '-' or '.', which the tokenizer splits on."""
    return f"ag{agent.encode('utf-8').hex() or '0'}"


def owners(doc: Doc) -> str:
    """The owner column of a document."""
    return owner_terms(doc.agent, doc.tier)


@functools.lru_cache(maxsize=4096)  # a build asks for every document: a store has few owners
def owner_terms(agent: str, tier: str) -> str:
    """The owner column of a document of this agent in this tier."""
    owner = owner_term(agent)
    return f"{owner} {WIKI_TERM}" if tier == "wiki" else owner


def file_docs(path: Path, rel: str, tier: str, data: bytes) -> tuple[list[Doc], list[str]]:
    """The documents of a file from its bytes, passages cut, and the merge conflicts it
    holds (ParseError when it does not parse)."""
    docs, conflicts = parsed_docs(path, rel, tier, data)
    return [replace(d, passages=cut_passages(d.text)) for d in docs], conflicts


def parsed_docs(path: Path, rel: str, tier: str, data: bytes) -> tuple[list[Doc], list[str]]:
    """The documents of a file as it holds them (nothing derived from their text yet), and
    the merge conflicts it holds (ParseError when it does not parse)."""
    if tier == "archive":
        record = archive.parse(data, path)
        return archive_docs(record, rel, retired.chunks_of(path, record.id)), []
    if tier == governed.TAG:
        return _governed_docs(path, rel, data), []
    tier_file = store.parse(tier, path, data)
    conflicts = [f"{rel}:{c.lines[0]}: entry {c.id}: {c.reason}" for c in tier_file.conflicts]
    agent = path.stem if tier != "wiki" else ""
    docs = [_with_kept_text(path, e, entry_doc(e, tier, agent, rel)) for e in tier_file.entries]
    return docs, conflicts


# Where an entry's kept text may be: a record of the archive, named as records are cited.
_KEPT_AT = re.compile(r"archive/[a-z0-9][a-z0-9_-]{0,63}/a-[0-9a-f]{10}(?:-[0-9a-f]{10})?\.md")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?:.*\r?\n){0,60}?---[ \t]*(?:\r?\n|\Z)")


def _with_kept_text(path: Path, entry: Entry, doc: Doc) -> Doc:
    """A document whose entry keeps its text in an archive record (`entries.KEPT_TEXT`)
    holds that text under the entry's title: the passages a search or a spawn shows. The
    record is create-only, so the tier file's own state says when to read it again; one
    that is missing or damaged leaves the entry's own text."""
    where = dict(entry.extra).get(KEPT_TEXT, "")
    if not where or not _KEPT_AT.fullmatch(where):
        return doc
    record_path = path.parent.parent / where  # a tier file sits in memory/{tier}/
    try:
        data = files.read_bytes(record_path)
        text = archive.parse(data, record_path).text if data is not None else ""
    except (TiermemError, OSError):
        return doc
    kept = _FRONT_MATTER.sub("", text, count=1).strip("\n")
    return replace(doc, text=f"{doc.title}\n{kept}") if kept else doc


def _governed_docs(path: Path, rel: str, data: bytes) -> list[Doc]:
    """The entry of one of Squad's governed memories, in the wiki (none: not one)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(path, line, "is not valid UTF-8") from None
    entry = governed.entry(text, rel)
    return [] if entry is None else [entry_doc(entry, "wiki", entry.agent, rel)]


def logs_beside(layout: Layout) -> bool:
    """Whether a log or journal that SQLite would apply lies beside the index and no live
    connection writes it (see `SIDE_LOGS`). Only asked while no tiermem process has the
    index open: then no connection of this process holds the locks SQLite keeps."""
    base = str(layout.index)
    if _size(f"{base}-journal"):
        return True  # an index in WAL mode never has one
    return bool(_size(f"{base}-wal")) and not _log_in_use(f"{base}-shm")


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except (FileNotFoundError, NotADirectoryError):
        return 0


# SQLite's unix VFS: every connection to a database in WAL mode holds a read lock on this
# byte of its shared-memory file (its "dead-man switch") while it is open.
_SHM_ALIVE_BYTE = 128


_LOCK_TABLE = "/proc/locks"


def _log_in_use(shm: str) -> bool:
    """Whether a connection (of another program, outside tiermem's users lock) has the log
    open: the kernel's table of locks shows SQLite's lock on the shared-memory file. Where
    there is no such table, a log beside the index is taken as in use, and left as it is."""
    try:
        st = os.lstat(shm)
    except (FileNotFoundError, NotADirectoryError):
        return False  # no shared memory: no connection has the log open
    try:
        with open(_LOCK_TABLE, encoding="ascii", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return True
    held = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for fields in (line.split() for line in lines):
        if held in fields:
            start, end = fields[fields.index(held) + 1 :][:2]
            if int(start) <= _SHM_ALIVE_BYTE and (end == "EOF" or int(end) >= _SHM_ALIVE_BYTE):
                return True
    return False


def objects(db: sqlite3.Connection) -> str:
    """A digest of every object a database holds: tables, indexes, triggers, views."""
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
    return sha(repr(rows.fetchall()))


def sha(data: bytes | str) -> str:
    """The SHA-256 of text or bytes, in hex."""
    return digest.sha256_hex(data)
