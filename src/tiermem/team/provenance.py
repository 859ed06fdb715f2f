"""Provenance: where an entry came from, said in words from its session and its sources.

An entry names the session it came from (when it came from one) and its sources: the archive
records that hold the text it was made from (`archive/{agent}/{id}.md`, `#L12` for a line).
`origin` reads the header of the first source record and says what it was: an import of a
Squad file, an agent's session, a decision recorded by hand or merged from Squad's inbox, a
wiki request. An archived text says where it was archived from.
"""

from __future__ import annotations

import re

from ..context import Context
from ..errors import TiermemError
from ..index.protocol import Doc
from ..storage import archive, files, governed

_LOCATION = re.compile(
    r"archive/([A-Za-z0-9._-]{1,64})/(" + archive.RECORD_ID.pattern + r")\.md(?:#L(\d+))?"
)


def sources_of(doc: Doc) -> list[str]:
    """The sources an entry names, in order."""
    return [s for s in doc.sources.split(",") if s]


def origin(ctx: Context, doc: Doc) -> str:
    """Where an entry (or an archived text) came from, in a few words."""
    if doc.tier == "archive":
        fields = archive.header(ctx.layout.root / doc.path)  # refuses links and `..`
        return "raw text: " + describe(fields) if fields else f"raw text in {doc.path}"
    sources = sources_of(doc)
    if governed.TAG in doc.tags.split(","):
        return _governed(ctx, doc)
    if not sources:
        if doc.tier == "hot":
            return f"{doc.agent}'s current session {doc.session}".rstrip()
        return "no source recorded (written by hand, or before sources were kept)"
    said = record_origin(ctx, sources[0])
    more = len(sources) - 1
    if more:
        said += f" (and {more} more source{'s' if more > 1 else ''})"
    return f"{said}; session {doc.session}" if doc.session else said


def _governed(ctx: Context, doc: Doc) -> str:
    """Where one of Squad's governed memories is, who wrote it and when."""
    kind = next((t.removeprefix("squad-").upper() for t in doc.tags.split(",")[1:2]), "")
    try:
        text = files.read_text(ctx.layout, ctx.layout.root / doc.path) or ""
    except TiermemError:
        text = ""
    by = governed.author(text) or "an unknown author"
    day = doc.created[:10] or "an unknown day"
    return f"Squad's governed memory ({kind}) in {doc.path}, written by {by} on {day}"


def record_origin(ctx: Context, location: str) -> str:
    """What an archive record a source names was, in words."""
    match = _LOCATION.fullmatch(location)
    if match is None:
        return f"cited as {location}"
    agent, record_id, line = match.groups()
    fields = archive.header(archive.path_of(ctx.layout, agent, record_id))
    if not fields:
        return f"archive record {location} (not found)"
    said = describe(fields)
    return f"{said}, line {line}" if line else said


def describe(fields: dict[str, str]) -> str:
    """An archive record's header in words: what produced it, from where, when."""
    kind, source = fields.get("kind", ""), fields.get("source", "")
    agent, day = fields.get("agent", ""), fields.get("created", "")[:10] or "undated"
    if kind == "import":  # dated by its file's last commit, never by the import
        committed = fields.get("committed", "")[:10]
        return f"imported from {source}" + (f" (committed {committed})" if committed else "")
    if kind in ("hot-session", "session"):
        return f"{agent}'s session, archived when it ended on {day}"
    if kind == "hot":
        return f"text that left {agent}'s hot tier on {day}"
    if kind == "decision":
        return _decision(source, day)
    if kind == "wiki-request":
        return f"wiki request by {agent} on {day}"
    if kind == "merge-conflict":
        return f"a version of an entry that lost a merge of {source} ({day})"
    if kind in ("expire", "cold-budget"):
        return f"a cold entry of {agent} that left cold ({kind}) on {day}"
    if kind == "forgotten":
        return f"an entry retired from {source} on {day}"
    return f"{kind or 'record'} from {source or 'an unknown file'} on {day}"


def _decision(source: str, day: str) -> str:
    if source.startswith("decision:"):
        return f"decision recorded by {source.removeprefix('decision:')} on {day}"
    if source.startswith(".squad/decisions/inbox/"):
        return f"decision merged from Squad's inbox ({source}) on {day}"
    if source.startswith("hot/"):
        return (
            f"decision made in {source.removeprefix('hot/').removesuffix('.md')}'s session on {day}"
        )
    return f"decision recorded from {source} on {day}"
