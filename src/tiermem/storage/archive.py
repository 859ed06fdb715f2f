"""The archive: raw text, byte for byte, one create-only file per record.

A record is `.squad/memory/archive/{agent}/{id}.md`: one header comment line, then the raw
text exactly as it was given (after secret redaction, the one deliberate loss). The id is
`a-{key}-{whole}`: the key is derived from the text and where it came from, the rest from
all the file holds, header included. So one name always means the same bytes: two clones
that archive one text at different times make two records, never one file with two
contents (a git conflict), and search folds the two. Within a clone a text already
archived is not archived again (its key is found), which makes every Scribe step safe to
repeat after a crash, at any time. Records made before the header counted are `a-{key}`.
The one exception: `tiermem forget --purge` rewrites a record in place, under its name (and
`doctor --repair` writes back a record git left with conflict markers in its header).
Retiring a passage never touches its record: it is a line of the ledger of retired
passages (`storage.retired`).

An imported file that is not all UTF-8 is archived as its original bytes (header
`decode=replace`): the record's text reads them with U+FFFD in place of the bytes that are not
UTF-8, and the file can still be rebuilt byte for byte (`body`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ParseError, TiermemError, UsageError
from ..results.base import Result, about
from ..text import markdown
from ..vocabulary import trust_of_parts
from . import files, validate
from .entries import Entry, content_id, escape_value, render_entry, unescape_value
from .layout import TEAM, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..vocabulary import Trust

_HEADER = "<!-- tiermem-archive "
_HEADER_MAX_BYTES = 65536
# A section of a record (what a search returns) is split at deeper headings only while it is
# longer than the target, so a decision keeps its `### Why` and a history each entry whole.
CHUNK_TARGET_CHARS = 4000
CHUNK_MAX_CHARS = 6000
RECORD_ID = re.compile(r"a-[0-9a-f]{10}(?:-[0-9a-f]{10})?")
_KEY_CHARS = len("a-0123456789")
# Header values: anything but letters, digits and a few path characters is percent-encoded.
_HEADER_UNSAFE = re.compile(r"[^A-Za-z0-9/:.\-_@#]")


def _sha256(raw: bytes) -> str:
    from .digest import sha256_hex

    return sha256_hex(raw)


_META_LINE = re.compile(r"^<!-- tiermem[ -][^\n]*-->\n?", re.MULTILINE)


@dataclass(slots=True)
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
    part: str = field(
        default="",
        metadata=about("`N/M`: the N-th of M pieces of a file too large for one record."),
    )
    trust: str = field(
        default="",
        metadata=about("'untrusted' when some of the text came from tools or the web."),
    )
    retired: str = field(
        default="",
        metadata=about(
            "Chunks an older tiermem's `forget` retired in the record's header (`0,3`): kept "
            "byte for byte, never searched or served (retirements now go to the ledger, "
            ".squad/memory/retired.txt)."
        ),
    )
    committed: str = field(
        default="",
        metadata=about(
            "For an imported file: when git last committed it, the latest its text was "
            "written (`created` stays empty: the import day is no date of the text)."
        ),
    )
    location: str = field(init=False, metadata=about("How derived entries cite this record."))

    def retired_chunks(self) -> set[int]:
        """The numbers of the chunks (`a-...#N`; the first is 0) retired from search."""
        return {int(n) for n in self.retired.split(",") if n.isdigit()}

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
    part: str = "",
    trust: str = "",
    committed: str = "",
) -> Record:
    """A record named by its text (the key) and by everything its file holds.

    `raw`: the original bytes of a text that is not all UTF-8 (`text` is their decoding with
    U+FFFD); two such files that decode alike still get two records. `part` (`N/M`) names a
    piece of a file archived in several records: two pieces with the same text are two.
    `trust` is `untrusted` when any of the text came from tools or the web: the whole record
    is marked, and every passage and search result drawn from it says so.
    `committed`: for a file of the repository, when git last committed it.
    """
    title = " ".join(title.split())[:200]
    parts = [text] if raw is None else [text, _sha256(raw)]
    parts += [f"part={part}"] if part else []
    parts += [f"trust={trust}"] if trust else []
    key = content_id("a", agent, kind, source, *parts)
    dated = [created, f"committed={committed}"] if committed else [created]
    whole = content_id("", agent, kind, source, title, *dated, *parts)  # "-" and 10 hex
    return Record(
        key + whole, agent, created, kind, source, title, text, part, trust, "", committed
    )


def trust_of(entries: Iterable[Entry]) -> Trust:
    """A record's trust from the entries whose text it holds: untrusted if any is."""
    return trust_of_parts(e.trust for e in entries)


def key_of(record_id: str) -> str:
    """The key of a record id: the same text from the same source, whenever archived."""
    return record_id[:_KEY_CHARS]


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
        "part": record.part,
        "trust": record.trust,
        "retired": record.retired,
        "committed": record.committed,
        **extra,
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
            _safe_owner(entry.agent or owner, owner),
            entry.used or entry.created,
            "merge-conflict",
            source,
            entry.title,
            render_entry(entry),
            trust=entry.trust,
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
        raise UsageError(f"{record_id!r} is not an archive record id (a-<10 hex digits>[-<10>])")
    return layout.tier_dir("archive") / validate.owner(agent) / f"{record_id}.md"


def write(layout: Layout, record: Record, raw: bytes | None = None) -> bool:
    """Archive a record; False when its text was already archived here.

    Then the record is changed to name the one already kept (its id and location), so
    that what cites it cites a record that exists. With `raw`, the record keeps those bytes
    (of which `record.text` is the decoding).
    """
    folder = layout.tier_dir("archive") / validate.owner(record.agent)
    known = _known_keys(folder)
    kept = known.get(key_of(record.id))
    if kept is not None and files.is_file(folder / f"{kept}.md"):
        record.id = kept
        record.location = f"archive/{record.agent}/{kept}.md"
        return False
    body = record.text.encode("utf-8") if raw is None else raw
    data = _header(record, raw).encode("utf-8") + body
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
        for name in sorted(files.file_names(folder)):  # the first by name, as listed before
            stem = name[:-3]
            if RECORD_ID.fullmatch(stem):
                known.setdefault(key_of(stem), stem)
        _KEYS[str(folder)] = known
    return known


def rewrite(layout: Layout, record: Record, purged: str) -> None:
    """Replace a record's text in place (the one exception to create-only: a purge).

    The record keeps its id and file name, so every source that cites it stays valid; its
    header gets the new size and hash, and `purged=` names what was taken out.
    """
    data = (_header(record, purged=purged) + record.text).encode("utf-8")
    files.atomic_write(path_of(layout, record.agent, record.id), data)


def without_retired(record: Record, data: bytes) -> bytes:
    """A record file's bytes with no chunk retired in its header (they are the ledger's
    now, `storage.retired`): the file as it was archived, or as a purge left it."""
    fields = _fields(data[: data.find(b"\n")].decode("utf-8", "replace"))
    raw = body(data) if fields.get("decode") == "replace" else None
    kept = {k: fields[k] for k in ("purged",) if fields.get(k)}
    return _header(replace(record, retired=""), raw, **kept).encode("utf-8") + body(data)


# Git's conflict markers, each at the start of a line: ours, a diff3 base, theirs, the end;
# and which part of a conflict each one starts ("": what both sides hold).
_MARKER = re.compile(rb"^(?:<{7}|\|{7}|={7}|>{7})(?: [^\n]*)?\r?$", re.MULTILINE)
_STEPS = {
    ("", b"<<<<<<<"): "ours",
    ("ours", b"|||||||"): "base",
    ("ours", b"======="): "theirs",
    ("base", b"======="): "theirs",
    ("theirs", b">>>>>>>"): "",
}


def conflict_sides(data: bytes) -> tuple[bytes, bytes] | None:
    """The two versions of a file git left with conflict markers (ours, theirs; a diff3
    base left out), None when it holds no conflict or markers that do not pair."""
    ours: list[bytes] = []
    theirs: list[bytes] = []
    state, seen = "", False
    for line in data.splitlines(keepends=True):
        marked = _MARKER.fullmatch(line.rstrip(b"\n"))
        after = _STEPS.get((state, line[:7])) if marked else None
        if after is not None:
            state, seen = after, True
            continue
        if state in ("", "ours"):
            ours.append(line)
        if state in ("", "theirs"):
            theirs.append(line)
    if not seen or state:
        return None
    return b"".join(ours), b"".join(theirs)


def has_markers(data: bytes) -> bool:
    """Whether bytes hold a line that reads as one of git's conflict markers."""
    return bool(_MARKER.search(data))


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
        raise ParseError(
            path,
            2,
            "archive record does not match its recorded size and hash "
            "(`tiermem doctor --repair` sets it aside and archives its text again)",
        )
    try:
        text = decode(raw) if fields.get("decode") == "replace" else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError(path, 2, "archive record is not valid UTF-8") from None
    return from_fields(fields, path, text)


def from_fields(fields: dict[str, str], path: Path, text: str) -> Record:
    """A record from its header fields and text; a field left out is taken from the path."""
    return Record(
        fields.get("id", path.stem),
        fields.get("agent", path.parent.name),
        fields.get("created", ""),
        fields.get("kind", ""),
        fields.get("source", ""),
        fields.get("title", ""),
        text,
        fields.get("part", ""),
        fields.get("trust", ""),
        fields.get("retired", ""),
        fields.get("committed", ""),
    )


def header(path: Path) -> dict[str, str]:
    """A record's header fields, read from its first line only (empty when unreadable)."""
    try:
        data = files.read_bytes(path, _HEADER_MAX_BYTES)
    except (OSError, TiermemError):
        return {}
    if data is None:
        return {}
    return _fields(data.split(b"\n", 1)[0].decode("utf-8", "replace"))


def _fields(head: str) -> dict[str, str]:
    """The fields of a header line (empty when it is no header)."""
    if not head.startswith(_HEADER) or not head.endswith("-->"):
        return {}
    items = (item.partition("=")[::2] for item in head[len(_HEADER) : -3].split())
    return {k: unescape_value(v) for k, v in items}


def read(layout: Layout, agent: str, record_id: str) -> Record:
    """Load one record by agent and id."""
    path = path_of(layout, agent, record_id)
    data = files.read_bytes(path)
    if data is None:
        raise ParseError(path, 1, "archive record does not exist")
    return parse(data, path)


def at(layout: Layout, location: str) -> Record | None:
    """The record an entry cites (`archive/{agent}/{id}.md`, a `#L12` after it ignored);
    None for a location that names no record, or one that cannot be read."""
    parts = location.split("#")[0].split("/")
    if len(parts) != 3 or parts[0] != "archive" or not parts[2].endswith(".md"):
        return None
    try:  # the agent and the id are checked as names: a cited location leads nowhere else
        return read(layout, parts[1], parts[2].removesuffix(".md"))
    except (OSError, TiermemError):
        return None


# Records that keep a text as the team wrote it, under its own heading and date: what a
# search or a spawn reads of an entry's text once the entry has left its tier. A record of
# a hot file holds the same words among metadata lines, so an entry made from one is still
# archived whole.
_KEEPING = frozenset({"import", "decision"})


def kept_whole(layout: Layout, entry: Entry) -> tuple[str, int] | None:
    """(location, line) of a source record of the entry that holds its text verbatim as the
    team wrote it (`_KEEPING`), and its untrusted mark where it has one; None when no
    source does."""
    text = entry.body.strip("\n") or entry.title
    for location in dict.fromkeys(s.split("#")[0] for s in entry.sources):
        record = at(layout, location)
        if record is None or record.kind not in _KEEPING or (entry.trust and not record.trust):
            continue
        found = record.text.find(text)
        if found >= 0:
            return location, record.text.count("\n", 0, found) + 1
    return None


def leaving(layout: Layout, entry: Entry) -> str:
    """The text to archive of an entry leaving its tier: the entry whole, or, when a source
    record holds its text verbatim already, its heading and metadata and where that text is
    (text the store keeps whole is not kept whole a second time)."""
    kept = kept_whole(layout, entry)
    if kept is None:
        return render_entry(entry)
    location, line = kept
    return render_entry(replace(entry, body=f"Its text is kept whole in {location}, line {line}."))


def records_folders(layout: Layout) -> list[Path]:
    """The archive's folders, one per agent (or the team), sorted."""
    return files.subfolders(layout.tier_dir("archive"))


def records(layout: Layout, agent: str | None = None) -> list[Path]:
    """Paths of all records (of one agent), sorted; links and temp files are no records."""
    base = layout.tier_dir("archive")
    folders = [base / validate.owner(agent)] if agent else files.subfolders(base)
    found: list[Path] = []
    for folder in folders:
        found.extend(files.memory_files(folder))
    return found


@dataclass(frozen=True, slots=True)
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
    if "<!-- tiermem" in text:  # most records hold none: the pattern is not run over them
        text = _META_LINE.sub("", text)
    shape = _Shape(text)
    found: list[Chunk] = []
    for n, (title, start, end) in enumerate(shape.sections(0, len(text), "")):
        cuts = [h.start for h in shape.inside(start, end) if h.level <= 3]
        for a, b in zip([start, *cuts], [*cuts, end], strict=True):
            for c, d in shape.cut(a, b):
                if text[c:d].strip():
                    _add(found, Chunk(shape.own_title(c) or title, text[c:d], n))
    return found


def _add(found: list[Chunk], chunk: Chunk) -> None:
    """A chunk after one that is only a heading joins it: a heading alone is no passage a
    search should answer with, and the text under it is what its title names."""
    last = found[-1] if found else None
    if last is not None and last.section == chunk.section and _heading_only(last.text):
        found[-1] = Chunk(last.title, last.text + chunk.text, last.section)
    else:
        found.append(chunk)


def _heading_only(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) == 1 and lines[0].lstrip().startswith("#")


class _Shape:
    """A record's headings and code blocks, read once, and the cuts they allow."""

    def __init__(self, text: str) -> None:
        self.text = text
        found = markdown.scan(text)  # once: headings and code come from the same lines
        self.headings = markdown.titles(text, found)
        self.titles = {h.start: h.title[:200] for h in self.headings}
        self.code = markdown.code_spans(text, found)
        self.starts = [h.start for h in self.headings]

    def inside(self, start: int, end: int) -> list[markdown.Title]:
        """The headings strictly inside a span (found by bisection: a record of 100,000
        sections is chunked in linear time)."""
        return self.headings[bisect_right(self.starts, start) : bisect_left(self.starts, end)]

    def own_title(self, start: int) -> str:
        """The title of the heading that starts at `start` (empty when none does)."""
        return self.titles.get(start, "")

    def sections(self, start: int, end: int, title: str) -> list[tuple[str, int, int]]:
        """(title, start, end) of each section, "section — subsection" where one was split."""
        inner = self.inside(start, end)
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
