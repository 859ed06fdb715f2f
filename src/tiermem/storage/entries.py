"""The entry format: markdown that people read and edit, with one metadata comment per entry.

A tier file looks like::

    # flight: cold memory
    <!-- tiermem-file tier=cold agent=flight -->

    ## 2026-03-01 session: fixed the publish pipeline
    <!-- tiermem id=c-1a2b3c4d5e class=learning agent=flight created=2026-03-01T10:00:00Z -->
    Body text, any markdown.

An entry starts at a heading line immediately followed by a ``<!-- tiermem ... -->`` line, so
headings inside a body never split it. Body lines that would look like metadata are escaped
with one extra leading backslash. Values are percent-encoded where they hold spaces, commas
or ``>``. The same id appearing twice (a union merge, a copy) is folded on read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ..errors import ParseError

CLASSES = ("policy", "decision", "convention", "contract", "learning", "action", "status")
STRUCTURED = frozenset({"policy", "decision", "convention", "contract"})
STATUSES = ("", "superseded", "expired")
# The tag of an agent's standing self-knowledge (a history's Core Context): one `learning`
# entry of that agent in its cold tier, which Scribe neither expires nor counts against the
# cold budget; a newer version replaces it (the old text is archived first).
STANDING = "standing"
# The metadata key of an entry whose text is kept elsewhere in the store (the archive record
# named by its value): its body only points there, and the index reads that text for it
# (a team skill: its SKILL.md, archived once, never copied again into the wiki).
KEPT_TEXT = "text"

_META_PREFIX = "<!-- tiermem "
_FILE_PREFIX = "<!-- tiermem-file "
_META_END = " -->"
_HEADING = re.compile(r"#{1,6} ")
_ESCAPED = re.compile(r"\\*<!-- tiermem")
_UNSAFE = re.compile(r"[%\s,<>\"'\x00-\x1f\x7f]")
# `was` holds an old id percent-encoded already: written and read as it is.
_ENCODED_UNSAFE = re.compile(r"[\s,<>\"'\x00-\x1f\x7f]")
_BOUNDARY = re.compile(r"^#{1,6} [^\n]*\n<!-- tiermem ", re.MULTILINE)
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_TIME_KEYS = ("created", "used")
_LIST_KEYS = ("tags", "sources", "supersedes")
# An entry id: a letter or digit, then letters, digits and `.`, `_`, `:`, `/`, `#` or `-`, 64
# at most (tiermem's own are a letter, `-` and hex). Ids are shown outside every fence (what
# a spawn left out, what a search found), so one read from a file that breaks this (a line
# end, a tag, a heading, a page of text) is never shown: the entry is read under a fresh id
# made from it, the same in every clone, and the old one is kept, percent-encoded, as `was`.
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/#-]{0,63}")
WAS = "was"
# An author (`agent=`) that is no agent's name is read as none (the file's agent stands in),
# and kept, percent-encoded, as `was-agent`: it would be shown, and made a folder's name.
WAS_AGENT = "was-agent"
_ENCODED = (WAS, WAS_AGENT)  # values kept percent-encoded: written and read as they are
# The metadata whose values are ids of entries, read by the same rule.
_ID_KEYS = frozenset({"superseded_by", "supersedes"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One piece of memory: a title, a markdown body and its metadata."""

    id: str
    cls: str
    title: str
    body: str = ""
    agent: str = ""
    created: str = ""
    used: str = ""
    session: str = ""
    slot: str = ""
    status: str = ""
    tags: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: str = ""
    trust: str = ""
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def active(self) -> bool:
        """Neither superseded nor expired."""
        return not self.status

    @property
    def standing(self) -> bool:
        """Whether this is an agent's standing self-knowledge (tag `standing`)."""
        return STANDING in self.tags

    @property
    def text(self) -> str:
        """Title and body as one text, for search and token counts."""
        return f"{self.title}\n{self.body}" if self.body else self.title


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two versions of one entry were found; the chosen one is kept."""

    id: str
    lines: tuple[int, ...]
    reason: str
    lost: Entry | None = None


@dataclass(frozen=True, slots=True)
class Mended:
    """What a read of a tier file found malformed and read mended; a rewrite writes it so."""

    line: int
    problem: str
    renamed: str = ""  # for an id that breaks `ID`: the fresh id it is read under


@dataclass(slots=True)
class TierFile:
    """A parsed tier file: header, file metadata, entries in file order."""

    heading: str
    meta: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    entries: list[Entry] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    mended: list[Mended] = field(default_factory=list)

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id, if present."""
        return next((e for e in self.entries if e.id == entry_id), None)

    def put(self, entry: Entry) -> None:
        """Replace the entry with the same id, or append it."""
        for i, existing in enumerate(self.entries):
            if existing.id == entry.id:
                self.entries[i] = entry
                return
        self.entries.append(entry)

    def remove(self, ids: set[str]) -> list[Entry]:
        """Drop the entries with these ids; return what was dropped."""
        dropped = [e for e in self.entries if e.id in ids]
        self.entries = [e for e in self.entries if e.id not in ids]
        return dropped


def content_id(prefix: str, *parts: str) -> str:
    """A stable id derived from content, so the same fact gets the same id everywhere."""
    from .digest import short_sha256  # here, not at the top: `tiermem hot show` never hashes

    digest = short_sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:10]}"


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{b:02X}" for b in match.group().encode("utf-8"))


def _escape(value: str) -> str:
    return _UNSAFE.sub(_percent, value) if _UNSAFE.search(value) else value


def escape_value(value: str, unsafe: re.Pattern[str] | None = None) -> str:
    """Percent-encode the characters of a metadata value that would break its line."""
    pattern = unsafe or _UNSAFE
    return pattern.sub(_percent, value) if pattern.search(value) else value


def _decode_run(match: re.Match[str]) -> str:
    return bytes.fromhex(match.group().replace("%", "")).decode("utf-8", "replace")


def _unquote(value: str) -> str:
    return _PERCENT_RUN.sub(_decode_run, value) if "%" in value else value


unescape_value = _unquote


def read_id(raw: str) -> str:
    """An id as read from a file: itself when it keeps to `ID`, else the fresh id made from it."""
    return raw if ID.fullmatch(raw) else content_id("x", WAS, raw)


# (attribute, metadata key) of the optional fields, in the order they are written.
_OPTIONAL = tuple(
    (item.name, item.name.replace("_", "-"))
    for item in fields(Entry)
    if item.name not in ("id", "cls", "title", "body", "extra")
)
_KNOWN = {key: name for name, key in _OPTIONAL}


def _meta_pairs(entry: Entry) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = [("id", _escape(entry.id)), ("class", _escape(entry.cls))]
    for name, key in _OPTIONAL:
        value = getattr(entry, name)
        if isinstance(value, tuple):
            if value:
                pairs.append((key, ",".join(_escape(v) for v in value)))
        elif value:
            pairs.append((key, _escape(value)))
    pairs.extend((k, _extra_value(k, v)) for k, v in entry.extra)
    return pairs


def _extra_value(key: str, value: str) -> str:
    return escape_value(value, _ENCODED_UNSAFE) if key in _ENCODED else _escape(value)


def render_meta(entry: Entry) -> str:
    """The metadata comment line of an entry."""
    body = " ".join(f"{k}={v}" for k, v in _meta_pairs(entry))
    return f"{_META_PREFIX}{body}{_META_END}"


def _escape_body(body: str) -> str:
    if "<!-- tiermem" not in body:
        return body
    lines = body.split("\n")
    return "\n".join("\\" + ln if _ESCAPED.match(ln) else ln for ln in lines)


def _unescape_body(lines: list[str]) -> str:
    return "\n".join(ln[1:] if ln.startswith("\\") and _ESCAPED.match(ln) else ln for ln in lines)


def render_entry(entry: Entry, level: int = 2) -> str:
    """An entry as markdown: heading, metadata line, body."""
    head = f"{'#' * level} {entry.title}\n{render_meta(entry)}\n"
    return head + (_escape_body(entry.body) + "\n" if entry.body else "")


def render(tier_file: TierFile) -> str:
    """A whole tier file as markdown; parse(render(f)) gives f back."""
    meta = " ".join(f"{k}={_escape(v)}" for k, v in tier_file.meta.items())
    parts = [f"# {tier_file.heading}\n", f"{_FILE_PREFIX}{meta}{_META_END}\n"]
    if tier_file.notes:
        # Escaped like a body: written below the file's metadata line, a note line that
        # looks like metadata must not make the heading line above it start an entry.
        parts.append(_escape_body(tier_file.notes.rstrip("\n")) + "\n")
    for entry in tier_file.entries:
        parts.append("\n" + render_entry(entry))
    return "".join(parts)


def normalize_body(body: str) -> str:
    """Bodies end without trailing newlines and use \\n line ends."""
    return body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")


# --- parsing -------------------------------------------------------------------------


def _parse_pairs(line: str, path: Path, lineno: int, prefix: str) -> dict[str, str]:
    stripped = line.rstrip()
    if not stripped.endswith("-->"):
        raise ParseError(path, lineno, "metadata comment is not closed with '-->' on its line")
    inner = stripped[len(prefix) : -3].strip()
    pairs: dict[str, str] = {}
    for token in inner.split():
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise ParseError(path, lineno, f"metadata item {token!r} is not key=value")
        pairs[key] = value
    return pairs


def _split(value: str) -> tuple[str, ...]:
    return tuple(_unquote(v) for v in value.split(",") if v)


def _entry_from(
    pairs: dict[str, str], title: str, body: str, default_cls: str, path: Path, lineno: int
) -> Entry:
    from .clock import parse_time

    values: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    for key, raw in pairs.items():
        if key == "class":
            values["cls"] = _unquote(raw)
        elif key == "id":
            values["id"] = _unquote(raw)
        elif key in _KNOWN:
            name = _KNOWN[key]
            values[name] = _split(raw) if name in _LIST_KEYS else _unquote(raw)
        else:
            extra.append((key, raw if key in _ENCODED else _unquote(raw)))
    cls = str(values.pop("cls", default_cls))
    if cls not in CLASSES:
        raise ParseError(
            path, lineno, f"unknown class {cls!r} (expected one of {', '.join(CLASSES)})"
        )
    if values.get("status", "") not in STATUSES:
        raise ParseError(path, lineno, f"unknown status {values['status']!r}")
    for key in _TIME_KEYS:
        if values.get(key) and not _CANONICAL_TIME.fullmatch(str(values[key])):
            try:
                parse_time(str(values[key]))
            except Exception:
                raise ParseError(path, lineno, f"{key} is not an ISO-8601 time") from None
    entry_id = str(values.pop("id", "") or content_id("x", title, body))
    if not ID.fullmatch(entry_id):
        extra.append((WAS, escape_value(entry_id)))
        entry_id = read_id(entry_id)
    if extra or values.keys() & _ID_KEYS:
        _read_ids(values, extra)
    agent = values.get("agent")
    if agent and not is_author(str(agent)):
        extra.append((WAS_AGENT, escape_value(str(values.pop("agent")))))
    return Entry(id=entry_id, cls=cls, title=title, body=body, extra=tuple(extra), **values)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1024)  # a store has few authors, and every entry names one
def is_author(agent: str) -> bool:
    """Whether an entry's `agent=` may be read as it is: none, an agent's name, or `team`."""
    from ..errors import UsageError
    from . import validate

    try:
        return not agent or bool(validate.owner(agent))
    except UsageError:
        return False


def _read_ids(values: dict[str, object], extra: list[tuple[str, str]]) -> None:
    """The ids an entry names (what superseded it, what it supersedes, the entry it is a part
    of) read by the rule of its own id, so that a link to a renamed entry still holds."""
    for name in _ID_KEYS if values.keys() & _ID_KEYS else ():
        value = values.get(name)
        if isinstance(value, tuple):
            values[name] = tuple(read_id(v) for v in value)
        elif isinstance(value, str) and value:
            values[name] = read_id(value)
    for n, (key, value) in enumerate(extra):
        if key == "parent":
            extra[n] = (key, read_id(value))


def winner(a: Entry, b: Entry) -> Entry:
    """The version of one entry that a merge keeps: order-independent, so every clone agrees."""

    def rank(e: Entry) -> tuple[int, str, str, str]:
        from .digest import short_sha256

        digest = short_sha256(render_entry(e).encode("utf-8")).hexdigest()
        return (STATUSES.index(e.status) if e.status in STATUSES else 0, e.used, e.created, digest)

    return a if rank(a) >= rank(b) else b


def marked_as(kept: Entry, versions: Sequence[Entry]) -> Entry:
    """The version a merge keeps, untrusted when any version of it is: the mark of text
    from a tool or the web is never lost to a version that wins without it."""
    if kept.trust or not any(v.trust for v in versions):
        return kept
    return replace(kept, trust=max(v.trust for v in versions))


def parse(text: str, path: Path | str = "<memory>", default_cls: str = "learning") -> TierFile:
    """Parse a tier file; raise ParseError (file and line) when it cannot be read safely.

    What a union merge or a hand edit left malformed is read mended, and said in `mended`:
    an id that breaks `ID`, an entry's metadata line inside another's text (read as an entry
    of its own, or as another version of the same one), a second file header.
    """
    path = Path(path)
    text = text.replace("\r\n", "\n")
    starts = [m.start() for m in _BOUNDARY.finditer(text)]
    head_end = starts[0] if starts else len(text)
    tier_file = _parse_preamble(text[:head_end].split("\n"), path)
    seen: dict[str, tuple[int, int]] = {}
    line = text.count("\n", 0, head_end) + 1
    reader = _Block(tier_file, path, default_cls)
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        block = text[start:end].split("\n")
        for entry, first in reader.read(block, line):
            _fold(tier_file, entry, seen, first)
        line += len(block) - 1
    return tier_file


def _header_at(lines: list[str], i: int) -> bool:
    """Whether line i starts a file header: a heading followed by the file's metadata."""
    return i + 1 < len(lines) and lines[i + 1].startswith(_FILE_PREFIX)


def _parse_preamble(lines: list[str], path: Path) -> TierFile:
    tier_file = TierFile(heading="")
    notes: list[str] = []
    for i, line in enumerate(lines):
        if not tier_file.heading and line.startswith("# ") and not "".join(notes).strip():
            tier_file.heading = line[2:].strip()
        elif line.startswith(_FILE_PREFIX):
            pairs = _parse_pairs(line, path, i + 1, _FILE_PREFIX)
            _header(tier_file, {k: _unquote(v) for k, v in pairs.items()}, i + 1)
        elif line == f"# {tier_file.heading}" and _header_at(lines, i):
            continue  # a duplicated header from a union merge (a heading with its metadata)
        else:
            notes.append(line)
    text = _unescape_body(notes) if "<!-- tiermem" in "\n".join(notes) else "\n".join(notes)
    # Line ends as a body's: a lone carriage return would come back as a line end.
    tier_file.notes = text.replace("\r", "\n").strip("\n")
    tier_file.heading = tier_file.heading or "memory"
    return tier_file


def _header(tier_file: TierFile, meta: dict[str, str], line: int) -> None:
    """A file header, the first or one a union merge added: where two differ (two clones
    started a session each), the newer is the file's, the same in every clone."""
    if not tier_file.meta:
        tier_file.meta = meta
        return
    if meta == tier_file.meta:
        return
    tier_file.meta = max(tier_file.meta, meta, key=_header_rank)
    what = "a second file header (a union merge of two versions of the file)"
    tier_file.mended.append(Mended(line, f"{what}; the newer one kept"))


def _header_rank(meta: dict[str, str]) -> tuple[str, str, list[tuple[str, str]]]:
    return (meta.get("started", ""), meta.get("session", ""), sorted(meta.items()))


class _Block:
    """One entry's lines, from its heading to the next entry's: the entry, or the versions a
    union merge interleaved there."""

    def __init__(self, tier_file: TierFile, path: Path, default_cls: str) -> None:
        self.tier_file, self.path, self.default_cls = tier_file, path, default_cls
        self.title = ""

    def read(self, lines: list[str], first_line: int) -> list[tuple[Entry, int]]:
        """(entry, line it starts on) of each version the block holds, in file order."""
        self.title = _HEADING.sub("", lines[0], count=1).strip() or "(untitled)"
        versions: list[tuple[Entry, int]] = []
        metas: list[tuple[int, dict[str, str]]] = []
        body: list[str] = []
        start = 1
        while start < len(lines) and lines[start].startswith(_META_PREFIX):
            lineno = first_line + start
            metas.append((lineno, _parse_pairs(lines[start], self.path, lineno, _META_PREFIX)))
            start += 1
        rest = "\n".join(lines[start:])
        if not rest.startswith("<!-- tiermem") and "\n<!-- tiermem" not in rest:
            return [self.version(metas, lines[start:], rest)]  # as written: no merge inside
        for i, line in enumerate(lines[start:], start):
            lineno = first_line + i
            kind, pairs = self.kind_of(line, lineno)
            if kind == "text":
                body.append(line)
            elif kind == "header":  # a merge's second file header: not text of the entry
                if body and body[-1] == f"# {self.tier_file.heading}":
                    body.pop()
            else:
                if body:  # metadata after text: another version, from a merge
                    versions.append(self.version(metas, body))
                    metas, body = [], []
                    self.mended(lineno, "an entry's metadata line inside the text above it")
                metas.append((lineno, pairs))
        versions.append(self.version(metas, body))
        return versions

    def kind_of(self, line: str, lineno: int) -> tuple[str, dict[str, str]]:
        """What a line below an entry's metadata is: "meta" (with its items), "header" or
        "text". Only a line that parses is metadata (a merge's), and a file header there is
        taken in as one."""
        for prefix, kind in ((_META_PREFIX, "meta"), (_FILE_PREFIX, "header")):
            if not line.startswith(prefix):
                continue
            try:
                pairs = _parse_pairs(line, self.path, lineno, prefix)
            except ParseError:
                return "text", {}
            if kind == "header":
                _header(self.tier_file, {k: _unquote(v) for k, v in pairs.items()}, lineno)
            return kind, pairs
        return "text", {}

    def version(
        self, metas: list[tuple[int, dict[str, str]]], rest: list[str], raw: str | None = None
    ) -> tuple[Entry, int]:
        """The entry one run of metadata lines and the text under it (`raw`: joined) make."""
        raw = "\n".join(rest) if raw is None else raw
        body = normalize_body(_unescape_body(rest) if "<!-- tiermem" in raw else raw)
        made = [
            _entry_from(p, self.title, body, self.default_cls, self.path, ln) for ln, p in metas
        ]
        entry = marked_as(functools.reduce(winner, made), made)
        first = metas[0][0] - 1
        if len(metas) > 1:
            reason = "several metadata lines (merge); newest kept"
            self.tier_file.conflicts.append(Conflict(entry.id, (first,), reason))
        if any(key in _ENCODED for m in made for key, _ in m.extra):  # rare: read mended
            for line, pairs in metas:
                self.check_id(line, pairs.get("id", ""))
                self.check_author(line, pairs.get("agent", ""))
        return entry, first

    def check_author(self, line: int, written: str) -> None:
        """Say an author that is no agent's name, as it is written in the file."""
        if not is_author(_unquote(written)):
            from ..text.shown import meta

            self.mended(line, f"agent {meta(written, 40)} is no agent's name; read as the file's")

    def check_id(self, line: int, written: str) -> None:
        """Say an id that breaks `ID`, as it is written in the file (percent-encoded)."""
        raw = _unquote(written)
        if raw and not ID.fullmatch(raw):
            from ..text.shown import meta  # a bad id is rare: reads do without it

            fresh = read_id(raw)
            problem = f"id {meta(written, 40)} breaks the id rule; read as {fresh}"
            self.tier_file.mended.append(Mended(line, problem, fresh))

    def mended(self, line: int, problem: str) -> None:
        self.tier_file.mended.append(Mended(line, problem))


def _fold(tier_file: TierFile, entry: Entry, seen: dict[str, tuple[int, int]], line: int) -> None:
    if entry.id not in seen:
        seen[entry.id] = (len(tier_file.entries), line)
        tier_file.entries.append(entry)
        return
    index, first_line = seen[entry.id]
    existing = tier_file.entries[index]
    if existing == entry:
        return
    kept = winner(existing, entry)
    lost = entry if kept is existing else existing
    kept = marked_as(kept, (lost,))
    tier_file.entries[index] = kept
    if (lost.title, lost.body) != (kept.title, kept.body):
        reason = "same id with different text; newest kept, the other archived on next write"
        tier_file.conflicts.append(Conflict(entry.id, (first_line, line), reason, lost))


def split_long(body: str, limit: int) -> list[tuple[str, str]]:
    """(subtitle, text) parts of a body, each within `limit` bytes when it can be.

    Parts break at headings first, then at blank lines, then at line ends, and never inside
    fenced code (a code block longer than the limit stays whole in one part), so no text is
    lost, each part still reads as a whole, and none opens a fence it does not close; small
    neighbours are joined again.
    """
    if len(body.encode("utf-8")) <= limit:
        return [("", body)]
    from ..text import markdown  # only long bodies are split: reading a tier file never is

    starts = [t.start for t in markdown.titles(body)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    blocks: list[tuple[str, str]] = []
    for i, start in enumerate(starts):
        block = body[start : starts[i + 1] if i + 1 < len(starts) else len(body)]
        first = block.partition("\n")[0]
        subtitle = markdown.heading_text(first) if markdown.ATX.match(first) else ""
        blocks += [(subtitle, piece) for piece in _pieces(block, limit)]
    return _join_parts(blocks, limit)


def _pieces(block: str, limit: int) -> list[str]:
    """A block in pieces of at most `limit` bytes, cut where `markdown.cut_at` allows."""
    from ..text import markdown

    code = markdown.code_spans(block)
    pieces: list[str] = []
    start = 0
    while len(block[start:].encode("utf-8")) > limit:
        at = markdown.cut_at(block, code, start, _reach(block, start, limit))
        if not start < at < len(block):
            break
        pieces.append(block[start:at])
        start = at
    return [*pieces, block[start:]]


def _reach(text: str, start: int, limit: int) -> int:
    """The furthest offset whose text from `start` is within `limit` UTF-8 bytes."""
    end = min(len(text), start + limit)
    while end > start and len(text[start:end].encode("utf-8")) > limit:
        end -= max(1, (len(text[start:end].encode("utf-8")) - limit) // 4)
    return end


def _join_parts(blocks: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    for subtitle, text in blocks:
        if parts and len((parts[-1][1] + text).encode("utf-8")) <= limit:
            parts[-1] = (parts[-1][0] or subtitle, parts[-1][1] + text)
        else:
            parts.append((subtitle, text))
    return [(s, t.strip("\n")) for s, t in parts if t.strip()]


PART_MAX_BYTES = 1200
# No part passes this, whatever its text: a code block or a line longer than that is cut too
# (the block closed at the cut and opened again after it), so a page's bound holds on any
# input.
PART_HARD_BYTES = 8 * 1024


def _bounded(text: str, limit: int) -> list[str]:
    """A text in pieces of at most `limit` bytes, cut at line ends (inside a line only when
    one line is longer); a code block cut open is closed and opened again."""
    from ..text import markdown

    pieces: list[str] = []
    while len(text.encode("utf-8")) > limit:
        reach = _reach(text, 0, limit - 16)  # room for the fence that closes the piece
        at = text.rfind("\n", 0, reach) + 1 or reach
        head, text = text[:at], text[at:]
        fence = markdown.scan(head).open_fence
        if fence:
            head, text = f"{head.rstrip(chr(10))}\n{fence}", f"{fence}\n{text}"
        pieces.append(head)
    return [*pieces, text]


def _clean(subtitle: str) -> str:
    from ..text.prose import clean_title  # only a long body's parts need it

    return clean_title(subtitle, 120)


def split_entry(entry: Entry, limit: int = PART_MAX_BYTES) -> list[Entry]:
    """An entry whose body is too long for a prompt, as parts that each load on their own.

    Parts keep the entry's metadata, get ids derived from it, and name it as `parent`. A code
    fence left open (merge damage in the source) is closed where the entry or part ends.
    """
    from ..text import markdown

    parts = [
        (subtitle if n == 0 else "", piece)
        for subtitle, text in split_long(entry.body, limit)
        for n, piece in enumerate(_bounded(text, PART_HARD_BYTES))
    ]
    if len(parts) == 1:
        body = markdown.closed(entry.body)
        return [entry if body == entry.body else replace(entry, body=body)]
    made = []
    for n, (subtitle, text) in enumerate(parts):
        if n == 0:
            title = entry.title
        elif subtitle:
            title = f"{entry.title} — {_clean(subtitle)}"
        else:
            title = f"{entry.title} ({n + 1}/{len(parts)})"
        extra = (*entry.extra, ("parent", entry.id), ("part", f"{n + 1}/{len(parts)}"))
        body = markdown.closed(text)
        part_id = content_id(entry.id, str(n))
        made.append(replace(entry, id=part_id, title=title[:200], body=body, extra=extra))
    return made
