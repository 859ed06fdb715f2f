"""Reading one entry by any id a search or a spawn gives: a tier entry (or a part of one), a
whole archived record (`a-0123456789-abcdef0123`), or one section of it
(`a-0123456789-abcdef0123#4`)."""

from __future__ import annotations

from dataclasses import replace

from ..context import Context
from ..errors import NotFoundError, UsageError
from ..options import SearchRequest
from ..results.reading import EntryText
from ..storage import archive, files
from ..storage.validate import entry_ids
from ..text.shown import meta, titled
from ..vocabulary import trust_of_parts
from .hits import places_of


def read_entry(ctx: Context, entry_id: str, agent: str | None = None) -> EntryText:
    """The whole entry, record or section with this id, its metadata as outputs show it."""
    return _shown(_read(ctx, entry_id, agent))


def _shown(entry: EntryText) -> EntryText:
    """An entry as every output shows it: its metadata (title, author, file, source) as one
    inert line each, the title that starts its text too (`text.shown`)."""
    return replace(
        entry,
        text=titled(entry.text, entry.title)[0],
        title=meta(entry.title),
        agent=meta(entry.agent),
        path=meta(entry.path),
        source=meta(entry.source),
    )


def _read(ctx: Context, entry_id: str, agent: str | None) -> EntryText:
    if entry_ids(entry_id) != [entry_id]:
        raise UsageError(
            f"{entry_id!r} is not an entry id (e.g. c-0123456789, a-0123456789-abcdef0123 or "
            "a-0123456789-abcdef0123#4, as search results and spawn sources give them)"
        )
    if archive.RECORD_ID.fullmatch(entry_id):
        return _record(ctx, entry_id, agent)
    hits, _ = places_of(ctx, SearchRequest(entry_id, limit=1))
    if not hits:
        joined = _parts(ctx, entry_id)
        if joined is None:
            raise NotFoundError(f"no entry {entry_id} (ids come from search and spawn)")
        return joined
    doc = hits[0].hit.doc
    return EntryText(
        doc.id,
        doc.tier,
        doc.agent,
        doc.path,
        doc.title,
        doc.text,
        doc.cls,
        doc.created,
        trust=doc.trust,
    )


def _parts(ctx: Context, entry_id: str) -> EntryText | None:
    """An entry stored in parts, by the id of the whole (the id search shows for it)."""
    parts = ctx.index.parts(entry_id)
    if not parts:
        return None
    first = parts[0]
    glue = "" if first.tier == "archive" else "\n\n"
    text = glue.join(p.text for p in parts if p.path == first.path)
    trust = trust_of_parts(p.trust for p in parts)
    return EntryText(
        entry_id, first.tier, first.agent, first.path, first.title, text, first.cls, trust=trust
    )


def _record(ctx: Context, record_id: str, agent: str | None) -> EntryText:
    """A whole archived record, found under its agent (or under any agent)."""
    folders = [agent] if agent else [p.name for p in archive.records_folders(ctx.layout)]
    for name in folders:
        path = archive.path_of(ctx.layout, name, record_id)
        data = files.read_bytes(path) if files.is_file(path) else None
        if data is not None:
            record = archive.parse(data, path)
            where = ctx.layout.relative(path)
            return EntryText(
                record.id,
                "archive",
                record.agent,
                where,
                record.title,
                record.text,
                created=record.created,
                source=record.source,
                trust=record.trust,
            )
    owner = f" for {agent}" if agent else ""
    raise NotFoundError(f"no archive record {record_id}{owner}")
