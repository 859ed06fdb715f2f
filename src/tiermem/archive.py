"""The archive: raw text, byte for byte, one create-only file per record.

A record is `.squad/memory/archive/{agent}/{id}.md`: one header comment line, then the raw
text exactly as it was given (after secret redaction, the one deliberate loss). The id is
`a-{key}-{whole}`: the key is derived from the text and where it came from, the rest from
all the file holds, header included. So one name always means the same bytes: two clones
that archive one text at different times make two records, never one file with two
contents (a git conflict), and search folds the two. Within a clone a text already
archived is not archived again (its key is found), which makes every Scribe step safe to
repeat after a crash, at any time. Records made before the header counted are `a-{key}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import files, validate
from .entries import Entry, content_id, escape_value, render_entry, unescape_value
from .errors import ParseError, UsageError
from .layout import TEAM, Layout
from .results import Result, about

_HEADER = "<!-- tiermem-archive "
# A section of a record (what a search returns) is split at deeper headings only while it is
# longer than the target, so a decision keeps its `### Why` and a history each entry whole.
CHUNK_TARGET_CHARS = 4000
CHUNK_MAX_CHARS = 6000
_HEADING = re.compile(r"(#{1,6})[ \t]+(\S.*)")
_FENCE = re.compile(r"[ ]{0,3}(```|~~~)")
RECORD_ID = re.compile(r"a-[0-9a-f]{10}(?:-[0-9a-f]{10})?")
_KEY_CHARS = len("a-0123456789")
# Header values: anything but letters, digits and a few path characters is percent-encoded.
_HEADER_UNSAFE = re.compile(r"[^A-Za-z0-9/:.\-_@#]")


def _sha256(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest()


_META_LINE = re.compile(r"^<!-- tiermem[ -][^\n]*-->\n?", re.MULTILINE)


@dataclass
class Record(Result):
    """One archived raw text and where it came from."""

    id: str
    agent: str
    created: str
    kind: str = field(
        metadata=about("What produced the record, e.g. hot, hot-session, import, wiki-request.")
    )
    source: str = field(metadata=about("The file the text came from."))
    title: str
    text: str = field(metadata=about("The raw text, byte for byte as it was archived."))
    location: str = field(init=False, metadata=about("How derived entries cite this record."))

    def __post_init__(self) -> None:
        self.location = f"archive/{self.agent}/{self.id}.md"


def new_record(agent: str, created: str, kind: str, source: str, title: str, text: str) -> Record:
    """A record named by its text (the key) and by everything its file holds."""
    title = " ".join(title.split())[:200]
    key = content_id("a", agent, kind, source, text)
    whole = content_id("", agent, kind, source, title, created, text)  # "-" and 10 hex
    return Record(key + whole, agent, created, kind, source, title, text)


def key_of(record_id: str) -> str:
    """The key of a record id: the same text from the same source, whenever archived."""
    return record_id[:_KEY_CHARS]


def _header(record: Record) -> str:
    raw = record.text.encode("utf-8")
    fields = {
        "id": record.id,
        "agent": record.agent,
        "created": record.created,
        "kind": record.kind,
        "source": record.source,
        "title": record.title,
        "bytes": str(len(raw)),
        "sha256": _sha256(raw),
    }
    items = " ".join(f"{k}={escape_value(v, _HEADER_UNSAFE)}" for k, v in fields.items() if v)
    return f"{_HEADER}{items} -->\n"


def keep_lost(layout: Layout, source: str, lost: list[Entry], owner: str = TEAM) -> None:
    """Archive the versions of entries that lost a merge conflict.

    The entry's own `agent=` came with the merge: a name tiermem would refuse (`..%2F..`)
    never becomes a folder; the record goes to the owner of the file it was found in.
    """
    for entry in lost:
        record = new_record(
            _safe_owner(entry.agent or TEAM, owner),
            entry.used or entry.created,
            "merge-conflict",
            source,
            entry.title,
            render_entry(entry),
        )
        write(layout, record)


def _safe_owner(agent: str, fallback: str) -> str:
    """The first of these names that is an agent's (or `team`), else `team`."""
    for name in (agent, fallback):
        try:
            return validate.owner(name)
        except UsageError:
            continue
    return TEAM


def path_of(layout: Layout, agent: str, record_id: str) -> Path:
    """Where a record lives; a name that would lead elsewhere is a UsageError."""
    if not RECORD_ID.fullmatch(record_id):
        raise UsageError(f"{record_id!r} is not an archive record id (a-<10 hex digits>)")
    return layout.tier_dir("archive") / validate.owner(agent) / f"{record_id}.md"


def write(layout: Layout, record: Record) -> bool:
    """Archive a record; False when its text was already archived here.

    Then the record is changed to name the one already kept (its id and location), so
    that what cites it cites a record that exists.
    """
    folder = layout.tier_dir("archive") / validate.owner(record.agent)
    known = _known_keys(folder)
    kept = known.get(key_of(record.id))
    if kept is not None and files.is_file(folder / f"{kept}.md"):
        record.id = kept
        record.location = f"archive/{record.agent}/{kept}.md"
        return False
    data = (_header(record) + record.text).encode("utf-8")
    created = files.create_exclusive(path_of(layout, record.agent, record.id), data)
    known.setdefault(key_of(record.id), record.id)
    return created


# Per folder, the record first kept for each key: read once per process, kept up to date by
# this process's writes (a record another process adds meanwhile is at worst kept twice).
_KEYS: dict[str, dict[str, str]] = {}


def _known_keys(folder: Path) -> dict[str, str]:
    known = _KEYS.get(str(folder))
    if known is None:
        known = {}
        for path in files.memory_files(folder):
            if RECORD_ID.fullmatch(path.stem):
                known.setdefault(key_of(path.stem), path.stem)
        _KEYS[str(folder)] = known
    return known


def parse(data: bytes, path: Path) -> Record:
    """Read a record file, checking its size and hash."""
    newline = data.find(b"\n")
    head = data[:newline].decode("utf-8", "replace") if newline >= 0 else ""
    if not head.startswith(_HEADER) or not head.endswith("-->"):
        raise ParseError(path, 1, "archive record has no tiermem-archive header")
    fields = dict(item.partition("=")[::2] for item in head[len(_HEADER) : -3].split())
    fields = {k: unescape_value(v) for k, v in fields.items()}
    raw = data[newline + 1 :]
    if str(len(raw)) != fields.get("bytes") or _sha256(raw) != fields.get("sha256"):
        raise ParseError(
            path,
            2,
            "archive record does not match its recorded size and hash "
            "(`tiermem doctor --repair` sets it aside and archives its text again)",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError(path, 2, "archive record is not valid UTF-8") from None
    return Record(
        fields.get("id", path.stem),
        fields.get("agent", path.parent.name),
        fields.get("created", ""),
        fields.get("kind", ""),
        fields.get("source", ""),
        fields.get("title", ""),
        text,
    )


def read(layout: Layout, agent: str, record_id: str) -> Record:
    """Load one record by agent and id."""
    path = path_of(layout, agent, record_id)
    data = files.read_bytes(path)
    if data is None:
        raise ParseError(path, 1, "archive record does not exist")
    return parse(data, path)


def records(layout: Layout, agent: str | None = None) -> list[Path]:
    """Paths of all records (of one agent), sorted; links and temp files are no records."""
    base = layout.tier_dir("archive")
    folders = [base / validate.owner(agent)] if agent else files.subfolders(base)
    found: list[Path] = []
    for folder in folders:
        found.extend(files.memory_files(folder))
    return found


@dataclass(frozen=True)
class Chunk:
    """A searchable piece of a record, and the section of the record it belongs to."""

    title: str
    text: str
    section: int


def chunks(text: str) -> list[Chunk]:
    """Split a record for search: small chunks to match, grouped in sections to return.

    A chunk starts at every heading of level 1 to 3 (so a query matches the subsection that
    is about it, and word statistics stay those of short texts). A section is a heading with
    everything under it up to CHUNK_TARGET_CHARS: a longer one is split at the shallowest
    heading inside it, and a stretch without headings is cut at blank lines. A search that
    matches a chunk returns its whole section. Metadata comments of archived entries are
    left out: they are noise to a reader.
    """
    text = _META_LINE.sub("", text)
    headings = _headings(text)
    found: list[Chunk] = []
    for n, (title, start, end) in enumerate(_sections(text, 0, len(text), headings, "")):
        cuts = [h.start for h in headings if start < h.start < end and h.level <= 3]
        for a, b in zip([start, *cuts], [*cuts, end], strict=True):
            for c, d in _cut(text, a, b):
                if text[c:d].strip():
                    found.append(Chunk(_own_title(text, c) or title, text[c:d], n))
    return found


@dataclass(frozen=True)
class _Heading:
    start: int
    level: int
    title: str


def _headings(text: str) -> list[_Heading]:
    """Markdown headings outside code fences, with their offsets."""
    found: list[_Heading] = []
    fence = ""
    offset = 0
    for line in text.splitlines(keepends=True):
        if m := _FENCE.match(line):
            fence = "" if fence == m.group(1) else (fence or m.group(1))
        elif not fence and (m := _HEADING.match(line)):
            found.append(_Heading(offset, len(m.group(1)), _title_of(m)))
        offset += len(line)
    return found


def _sections(
    text: str, start: int, end: int, headings: list[_Heading], title: str
) -> list[tuple[str, int, int]]:
    """(title, start, end) of each section, "section — subsection" where one was split."""
    inner = [h for h in headings if start < h.start < end]
    if end - start <= CHUNK_TARGET_CHARS or not inner:
        title = title or _own_title(text, start)
        return [(title, a, b) for a, b in _cut(text, start, end)]
    level = min(h.level for h in inner)
    cuts = [h for h in inner if h.level == level]
    spans = _sections(text, start, cuts[0].start, headings, title or _own_title(text, start))
    for n, cut in enumerate(cuts):
        stop = cuts[n + 1].start if n + 1 < len(cuts) else end
        sub = f"{title} — {cut.title}" if title else cut.title
        spans += _sections(text, cut.start, stop, headings, sub[:200])
    return spans


def _own_title(text: str, start: int) -> str:
    m = _HEADING.match(text, start)
    return _title_of(m)[:200] if m else ""


def _title_of(heading: re.Match[str]) -> str:
    """A heading's text without its closing marks (`## Title ##`)."""
    return heading.group(2).strip().strip("#").strip()


def _cut(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A span in parts of at most CHUNK_MAX_CHARS, ended at blank lines where there are."""
    spans = []
    while end - start > CHUNK_MAX_CHARS:
        at = text.rfind("\n\n", start + CHUNK_MAX_CHARS // 2, start + CHUNK_MAX_CHARS)
        at = at + 2 if at > 0 else start + CHUNK_MAX_CHARS
        spans.append((start, at))
        start = at
    return [*spans, (start, end)]
