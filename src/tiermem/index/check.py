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
from ..storage import clone, files, governed, safepath, store
from ..storage.layout import Layout
from ..vocabulary import FILE_TIERS
from . import parsing, schema
from .database import Database
from .protocol import Doc, SyncReport

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
    folders: list[tuple[Path, str]] = [(layout.tier_dir(t), t) for t in FILE_TIERS]
    folders += [(p, parsing.GOVERNED) for p in governed.folders(layout) if files.is_folder(p)]
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


# --- the index against the files -------------------------------------------------------


def drift(database: Database) -> list[str]:
    """Differences between the index and the files, without changing the index: an
    index that may not be read is named (and looked at read-only, never built again);
    one that may is compared row by row with what every file holds."""
    layout = database.layout
    untrusted = inspect(layout, database.wanted)
    if untrusted:
        return [
            *(f"untrusted index: {p}" for p in untrusted),
            *read_only(layout, lambda db: differences(db, layout)),
            *_tracked(layout),
        ]
    if not database.is_open:  # an index not built yet is made empty: every file differs
        database.opened_now(whole=False)
    # One state of the index, read without its lock: other processes write and sync on
    # meanwhile (a whole store is read and parsed here, too long to keep them waiting).
    db = database.db
    db.execute("BEGIN")
    try:
        report, unreadable = _behind(db, layout)
        behind = {*report.changed, *report.removed, *unreadable}
        rows = differences(db, layout, skip=behind)
    finally:
        db.execute("COMMIT")
    found = [f"changed: {p}" for p in report.changed]
    found += [f"removed: {p}" for p in report.removed]
    found += [f"unreadable: {e}" for e in report.errors]
    found += rows
    found += [f"merge conflict: {c}" for c in sorted(set(report.conflicts) | _conflicts(layout))]
    return found + _tracked(layout)


def _behind(db: sqlite3.Connection, layout: Layout) -> tuple[SyncReport, set[str]]:
    """What a sync would read again, found without writing: files whose content is not
    the one indexed (or never indexed), indexed files gone; and the files that cannot be
    read or parsed (a sync leaves them out)."""
    report, unreadable = SyncReport(), set[str]()
    indexed = {r[0]: r[1:] for r in db.execute("SELECT path, size, mtime_ns, sha FROM files")}
    seen: set[str] = set()
    for folder, tier in parsing.folders(layout, report):
        rel_dir = layout.relative(folder)
        try:
            items = files.listing(folder)
        except ParseError as exc:
            report.errors.append(exc)
            continue
        with files.Folder(folder) as reader:
            for name in parsing.readable(items, report):
                rel = f"{rel_dir}/{name}"
                state = _as_indexed(reader, name, rel, tier, indexed.get(rel), report)
                if state != "gone":
                    seen.add(rel)
                if state == "unreadable":
                    unreadable.add(rel)
    report.removed = sorted(set(indexed) - seen)
    return report, unreadable


def _as_indexed(
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
        got = parsing.moved(reader, name, row)
    except ParseError as exc:
        report.errors.append(exc)
        return "unreadable"
    if not isinstance(got, tuple):
        return "" if got is None else "gone"
    if row is not None and schema.sha(got[0]) == row[2]:
        return ""
    try:
        docs, _ = schema.parsed_docs(reader.path / name, rel, tier, got[0])
    except ParseError as exc:
        report.errors.append(exc)
        return "unreadable"
    if docs or row is not None or tier != parsing.GOVERNED:
        report.changed.append(rel)  # (an agent's note in Squad's inbox is none of its own)
    return ""


def _conflicts(layout: Layout) -> set[str]:
    """Entries that exist in two versions in a tier file (after a merge), until rewritten."""
    found: set[str] = set()
    for folder, tier in parsing.folders(layout, SyncReport()):
        if tier in ("archive", parsing.GOVERNED):
            continue
        try:
            paths = files.memory_files(folder)
        except ParseError:
            continue
        for path in paths:
            try:
                loaded = store.load(layout, tier, path)
            except ParseError:
                continue
            rel = layout.relative(path)
            for c in loaded.conflicts if loaded else []:
                found.add(f"{rel}:{c.lines[0]}: entry {c.id}: {c.reason}")
    return found


def _tracked(layout: Layout) -> list[str]:
    """The index and the rest of this clone's own files, where git tracks them: a committed
    index is how a poisoned one reaches a clone."""
    from ..storage import bootstrap

    tracked = bootstrap.tracked_locals(layout)
    return [f"git: {rel} {bootstrap.tracked_local(rel)}" for rel in tracked]
