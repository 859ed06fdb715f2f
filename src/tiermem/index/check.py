"""Whether a search index may be read, and whether it holds what the files hold.

A read trusts only an index sealed by this clone over the objects it holds (`clone`,
`fts.FtsIndex`), and looks at a file's rows again only where the file's stamp moved.
`tiermem reindex --check` and `tiermem doctor` look at everything: the index file as it
lies (read-only: nothing is built, no log beside it is applied), then every row against the
file it came from, and every row's search terms against the row.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TypeVar

from ..errors import ParseError
from ..storage import clone, files, safepath
from ..storage.layout import Layout
from . import schema
from .protocol import Doc

LEFT_LOGS = (
    "a write-ahead log or journal lies beside it while no process has it open (left by a "
    "killed process, or put there): SQLite would apply it, so the next read builds the "
    "index again"
)
NOT_SEALED = (
    "was not built on this clone (committed to the repository, copied, or changed since): "
    "its rows are never read, and the next read builds it again"
)
# A row's passages are compared when it holds them (a read derives them: see `fts`).
_KEY_FIELDS = tuple(f for f in schema.DOC_FIELDS if f != "tokens")
_PASSAGES = _KEY_FIELDS.index("passages")
_T = TypeVar("_T")


def inspect(layout: Layout, wanted: str, quick: bool = False) -> list[str]:
    """What keeps an index file from being read ([] when nothing does, or there is none).

    Read-only: a log left beside it is named, never applied; `quick` runs SQLite's own
    check of the file's structure too.
    """
    if safepath.kind(layout.index) != "file":
        return []
    if logs_left(layout):
        return [LEFT_LOGS]
    try:
        return read_only(layout, functools.partial(_problems, layout, wanted, quick), raise_=True)
    except sqlite3.Error as exc:
        return [f"is not a database tiermem can read ({exc})"]


def logs_left(layout: Layout) -> bool:
    """Whether a log or journal lies beside the index while no process has it open."""
    users = files.open_lock(layout, schema.USERS_LOCK)
    try:
        if not files.try_lock(users):
            return False  # open in another process: its log is its own
        return schema.logs_beside(layout)
    finally:
        os.close(users)


def read_only(
    layout: Layout, look: Callable[[sqlite3.Connection], list[_T]], raise_: bool = False
) -> list[_T]:
    """What `look` finds in the index opened read-only ([] when it cannot be opened)."""
    uri = f"file:{urllib.parse.quote(str(layout.index))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=schema.SQLITE_TIMEOUT_SECONDS)
        try:
            return look(db)
        finally:
            db.close()
    except sqlite3.Error:
        if raise_:
            raise
        return []


def _problems(layout: Layout, wanted: str, quick: bool, db: sqlite3.Connection) -> list[str]:
    if quick and db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        return ["is a damaged database"]
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'seal')"))
    built = meta.get("schema")
    if built != wanted:
        return [f"was built by another version or program (schema {built or 'none'!r})"]
    found = _objects_not_made(db)
    mark = clone.peek(layout)
    sealed = mark is not None and clone.seal(mark, f"{wanted}\n{schema.objects(db)}") == meta.get(
        "seal"
    )
    return found if sealed else [NOT_SEALED, *found]


@functools.cache
def _made() -> frozenset[tuple[str, str, str, str | None]]:
    """The objects tiermem makes in an index: (type, name, table, sql)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema.SCHEMA)
        return frozenset(_listed(db))
    finally:
        db.close()


def _listed(db: sqlite3.Connection) -> Iterator[tuple[str, str, str, str | None]]:
    yield from db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")


def _objects_not_made(db: sqlite3.Connection) -> list[str]:
    """Objects the index holds that tiermem never makes, or holds otherwise."""
    made = {(kind, name): sql for kind, name, _, sql in _made()}
    found = []
    for kind, name, _, sql in sorted(_listed(db)):
        if (kind, name) not in made:
            found.append(f"holds a {kind} {name!r} that tiermem never makes")
        elif made[(kind, name)] != sql:
            found.append(f"holds the {kind} {name!r} otherwise than tiermem makes it")
    held = {(kind, name) for kind, name, _, _ in _listed(db)}
    found += [f"lacks the {kind} {name!r}" for kind, name in sorted(set(made) - held)]
    return found


def differences(db: sqlite3.Connection, layout: Layout, skip: Collection[str] = ()) -> list[str]:
    """How the rows of an index differ from what the files hold: every file parsed, every
    row compared (`skip`: files already known to have changed since they were indexed)."""
    found: list[str] = []
    seen: set[str] = set()
    for path, tier in _memory_files(layout):
        rel = layout.relative(path)
        seen.add(rel)
        if rel not in skip and not _same(_held(db, rel), _derived(path, rel, tier)):
            found.append(f"rows differ from the file: {rel}")
    for rel, count in db.execute("SELECT path, COUNT(*) FROM docs GROUP BY path ORDER BY path"):
        if rel not in seen and rel not in skip:
            found.append(f"rows no file holds: {rel} ({count})")
    terms = _terms_differ(db)
    if terms:
        found.append(f"search terms differ from the rows: {terms} row(s)")
    return found


def _memory_files(layout: Layout) -> Iterator[tuple[Path, str]]:
    """Every file a sync indexes, with its tier (a folder that cannot be listed: none)."""
    folders = [(layout.tier_dir(t), t) for t in ("hot", "cold", "wiki")]
    with contextlib.suppress(ParseError):
        folders += [(p, "archive") for p in files.subfolders(layout.tier_dir("archive"))]
    for folder, tier in folders:
        try:
            paths = files.memory_files(folder)
        except ParseError:
            continue
        yield from ((path, tier) for path in paths)


def _key(doc: Doc) -> tuple[object, ...]:
    return tuple(getattr(doc, f) for f in _KEY_FIELDS)


def _held(db: sqlite3.Connection, rel: str) -> list[tuple[object, ...]]:
    """What the index holds for a file, row by row."""
    rows = db.execute(f"SELECT {schema.DOC_COLUMNS} FROM docs WHERE path=? ORDER BY ord", (rel,))
    return [_key(Doc(*row)) for row in rows]


def _same(held: list[tuple[object, ...]], derived: list[Doc]) -> bool:
    """Whether a file's rows are what it holds: passages are cut from the text only where a
    row holds them (those not derived yet match any)."""
    if len(held) != len(derived):
        return False
    for row, doc in zip(held, derived, strict=True):
        wanted = list(_key(doc))
        wanted[_PASSAGES] = None if row[_PASSAGES] is None else schema.cut_passages(doc.text)
        if row != tuple(wanted):
            return False
    return True


def _derived(path: Path, rel: str, tier: str) -> list[Doc]:
    """What the file holds, as documents before anything is derived from their text ([]
    when it cannot be read: a sync drops its rows)."""
    try:
        data = files.read_bytes(path)
        return schema.parsed_docs(path, rel, tier, data)[0] if data is not None else []
    except ParseError:
        return []


def _terms_differ(db: sqlite3.Connection) -> int:
    """How many rows' search terms (FTS5) are not those of the row, or belong to no row."""
    rows = db.execute(f"SELECT rowid, {schema.DOC_COLUMNS} FROM docs ORDER BY rowid")
    terms = db.execute(f"SELECT rowid, {schema.TERM_COLUMNS} FROM docs_fts ORDER BY rowid")
    wanted = ((r[0], schema.terms(Doc(*r[1:]))) for r in rows)
    held = ((t[0], tuple(t[1:])) for t in terms)
    return _unpaired(wanted, held)


def _unpaired(
    wanted: Iterator[tuple[int, tuple[str, ...]]],
    held: Iterator[tuple[int, tuple[str, ...]]],
) -> int:
    """How many of two rowid-ordered streams are missing from the other or differ."""
    count = 0
    a, b = next(wanted, None), next(held, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            count, a = count + 1, next(wanted, None)
        elif a is None or b[0] < a[0]:
            count, b = count + 1, next(held, None)
        else:
            count += a[1] != b[1]
            a, b = next(wanted, None), next(held, None)
    return count
