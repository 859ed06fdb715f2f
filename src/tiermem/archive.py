"""The archive: raw text, byte for byte, one create-only file per record.

A record is `.squad/memory/archive/{agent}/{id}.md`: one header comment line, then the raw
text exactly as it was given (after secret redaction, the one deliberate loss). The id is
derived from the content, so archiving the same text twice is a no-op: that makes every
Scribe step safe to repeat after a crash.

An imported file that is not all UTF-8 is archived as its original bytes (header
`decode=replace`): the record's text reads them with U+FFFD in place of the bytes that are not
UTF-8, and the file can still be rebuilt byte for byte (`body`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import files, markdown
from .entries import Entry, content_id, escape_value, render_entry, unescape_value
from .errors import ParseError
from .layout import Layout
from .results import Result, about

_HEADER = "<!-- tiermem-archive "
# A section of a record (what a search returns) is split at deeper headings only while it is
# longer than the target, so a decision keeps its `### Why` and a history each entry whole.
CHUNK_TARGET_CHARS = 4000
CHUNK_MAX_CHARS = 6000
RECORD_ID = re.compile(r"a-[0-9a-f]{10}")
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


def new_record(
    agent: str,
    created: str,
    kind: str,
    source: str,
    title: str,
    text: str,
    raw: bytes | None = None,
) -> Record:
    """A record whose id depends on what it holds, not on when it was made.

    `raw`: the original bytes of a text that is not all UTF-8 (`text` is their decoding with
    U+FFFD); two such files that decode alike still get two records.
    """
    parts = (text,) if raw is None else (text, _sha256(raw))
    record_id = content_id("a", agent, kind, source, *parts)
    return Record(record_id, agent, created, kind, source, " ".join(title.split())[:200], text)


def decode(raw: bytes) -> str:
    """Bytes as text, with U+FFFD for what is not UTF-8 (as a lossy record is read)."""
    return raw.decode("utf-8", "replace")


def _header(record: Record, raw: bytes | None = None, **extra: str) -> str:
    lossy = raw is not None
    raw = raw if raw is not None else record.text.encode("utf-8")
    fields = {
        "id": record.id,
        "agent": record.agent,
        "created": record.created,
        "kind": record.kind,
        "source": record.source,
        "title": record.title,
        "bytes": str(len(raw)),
        "sha256": _sha256(raw),
        "decode": "replace" if lossy else "",
        **extra,
    }
    items = " ".join(f"{k}={escape_value(v, _HEADER_UNSAFE)}" for k, v in fields.items() if v)
    return f"{_HEADER}{items} -->\n"


def keep_lost(layout: Layout, source: str, lost: list[Entry]) -> None:
    """Archive the versions of entries that lost a merge conflict."""
    for entry in lost:
        record = new_record(
            entry.agent or "team",
            entry.used or entry.created,
            "merge-conflict",
            source,
            entry.title,
            render_entry(entry),
        )
        write(layout, record)


def path_of(layout: Layout, agent: str, record_id: str) -> Path:
    """Where a record lives."""
    return layout.tier_dir("archive") / agent / f"{record_id}.md"


def write(layout: Layout, record: Record, raw: bytes | None = None) -> bool:
    """Archive a record; False when the same record was already there.

    With `raw`, the record keeps those bytes (of which `record.text` is the decoding).
    """
    body = record.text.encode("utf-8") if raw is None else raw
    data = _header(record, raw).encode("utf-8") + body
    return files.create_exclusive(path_of(layout, record.agent, record.id), data)


def rewrite(layout: Layout, record: Record, purged: str) -> None:
    """Replace a record's text in place (the one exception to create-only: a purge).

    The record keeps its id and file name, so every source that cites it stays valid; its
    header gets the new size and hash, and `purged=` names what was taken out.
    """
    data = (_header(record, purged=purged) + record.text).encode("utf-8")
    files.atomic_write(path_of(layout, record.agent, record.id), data)


def body(data: bytes) -> bytes:
    """The archived bytes of a record file, as they were given (after its header line)."""
    return data[data.find(b"\n") + 1 :]


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
        raise ParseError(path, 2, "archive record does not match its recorded size and hash")
    try:
        text = decode(raw) if fields.get("decode") == "replace" else raw.decode("utf-8")
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


def header(path: Path) -> dict[str, str]:
    """A record's header fields, read from its first line only (empty when unreadable)."""
    try:
        with path.open("rb") as handle:
            head = handle.readline(65536).decode("utf-8", "replace").rstrip("\n")
    except OSError:
        return {}
    if not head.startswith(_HEADER) or not head.endswith("-->"):
        return {}
    items = (item.partition("=")[::2] for item in head[len(_HEADER) : -3].split())
    return {k: unescape_value(v) for k, v in items}


def read(layout: Layout, agent: str, record_id: str) -> Record:
    """Load one record by agent and id."""
    path = path_of(layout, agent, record_id)
    return parse(path.read_bytes(), path)


def records_folders(layout: Layout) -> list[Path]:
    """The archive's folders, one per agent (or the team), sorted."""
    base = layout.tier_dir("archive")
    return sorted(p for p in base.glob("*") if p.is_dir() and not p.is_symlink())


def records(layout: Layout, agent: str | None = None) -> list[Path]:
    """Paths of all records (of one agent), sorted."""
    base = layout.tier_dir("archive")
    folders = [base / agent] if agent else sorted(p for p in base.glob("*") if p.is_dir())
    found: list[Path] = []
    for folder in folders:
        found.extend(p for p in sorted(folder.glob("*.md")) if not files.is_temp(p))
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
    heading inside it, and a stretch without headings is cut at blank lines (never inside
    fenced code). A search that matches a chunk returns its whole section. Metadata comments
    of archived entries are left out: they are noise to a reader.
    """
    text = _META_LINE.sub("", text)
    shape = _Shape(text)
    found: list[Chunk] = []
    for n, (title, start, end) in enumerate(shape.sections(0, len(text), "")):
        cuts = [h.start for h in shape.headings if start < h.start < end and h.level <= 3]
        for a, b in zip([start, *cuts], [*cuts, end], strict=True):
            for c, d in shape.cut(a, b):
                if text[c:d].strip():
                    found.append(Chunk(shape.own_title(c) or title, text[c:d], n))
    return found


class _Shape:
    """A record's headings and code blocks, read once, and the cuts they allow."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.headings = markdown.titles(text)
        self.titles = {h.start: h.title[:200] for h in self.headings}
        self.code = markdown.code_spans(text)

    def own_title(self, start: int) -> str:
        """The title of the heading that starts at `start` (empty when none does)."""
        return self.titles.get(start, "")

    def sections(self, start: int, end: int, title: str) -> list[tuple[str, int, int]]:
        """(title, start, end) of each section, "section — subsection" where one was split."""
        inner = [h for h in self.headings if start < h.start < end]
        if end - start <= CHUNK_TARGET_CHARS or not inner:
            title = title or self.own_title(start)
            return [(title, a, b) for a, b in self.cut(start, end)]
        level = min(h.level for h in inner)
        cuts = [h for h in inner if h.level == level]
        spans = self.sections(start, cuts[0].start, title or self.own_title(start))
        for n, cut in enumerate(cuts):
            stop = cuts[n + 1].start if n + 1 < len(cuts) else end
            sub = f"{title} — {cut.title}" if title else cut.title
            spans += self.sections(cut.start, stop, sub[:200])
        return spans

    def cut(self, start: int, end: int) -> list[tuple[int, int]]:
        """A span in parts of at most CHUNK_MAX_CHARS, ended at blank lines where there are
        and never inside fenced code (a code block longer than that stays whole)."""
        spans = []
        while end - start > CHUNK_MAX_CHARS:
            low, high = start + CHUNK_MAX_CHARS // 2, start + CHUNK_MAX_CHARS
            at = min(markdown.cut_at(self.text, self.code, low, high), end)
            if at >= end:
                break
            spans.append((start, at))
            start = at
        return [*spans, (start, end)]
