"""Parse Squad markdown (histories, decisions, inbox, logs) into byte-exact sections."""

# Every parser returns sections that tile their input: joining the text of all sections in
# order gives the input back exactly, and start/end are UTF-8 byte offsets, so callers can
# archive raw spans byte for byte.  Nothing here writes files or touches a tiermem store.

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ...text.markdown import Heading, Scan, scan
from .heading_dates import date_leads, find_date, parse_date, split_date, strip_heading_marks

__all__ = [
    "HistoryReader",
    "Section",
    "decision_key",
    "front_matter",
    "is_filler",
    "merge_inbox",
    "parse_decisions",
    "parse_history",
    "parse_inbox",
    "parse_log",
    "render_decision",
]


# Section kinds.  history.md: 'preamble', 'title' ('# Name'), 'context' (project context,
# current status, summary), 'core-context', 'learning', 'team-update' (a 📌 paragraph) and
# 'text' (loose text after a team update, titled after the entry it continues).
# decisions.md and inbox files: 'preamble', 'title' ('# Decisions'), 'group' (a heading
# whose children are decisions) and 'decision'.  Logs: 'log'.


@dataclass(frozen=True)
class Section:
    """One contiguous piece of a Squad markdown file."""

    kind: str
    title: str  # heading text without '#' marks and without the date
    date: str | None  # 'YYYY-MM-DD', or 'YYYY-MM' when only the month is known
    text: str  # exact source text, heading included
    start: int  # UTF-8 byte offset of text in the file
    end: int  # exclusive
    line: int  # 1-based line of the heading (first line for level 0)
    level: int  # heading level, 0 for non-heading blocks
    author: str | None  # **By:** / **Author:** of a decision or log
    parent: str | None  # enclosing '##' title in a history, group title in decisions


# --- scanning ---------------------------------------------------------------------------

_PIN = "📌"


def _scan(text: str) -> Scan:
    """Locate headings and pinned team-update lines, skipping fenced code."""
    return scan(text, marks=(_PIN,))


# --- section assembly -------------------------------------------------------------------


@dataclass(frozen=True)
class _Cut:
    """Where a section begins and what it is; its end is the next cut."""

    line: int
    kind: str
    title: str = ""
    date: str | None = None
    level: int = 0
    author: str | None = None
    parent: str | None = None


def _section(cut: _Cut, chunk: str, start: int, end: int) -> Section:
    """Build the public section for one cut and its text."""
    return Section(
        kind=cut.kind,
        title=cut.title,
        date=cut.date,
        text=chunk,
        start=start,
        end=end,
        line=cut.line + 1,
        level=cut.level,
        author=cut.author,
        parent=cut.parent,
    )


def _materialize(doc: Scan, cuts: Sequence[_Cut]) -> list[Section]:
    """Turn ordered cuts into sections that tile the text, with UTF-8 byte offsets."""
    if not doc.lines:
        return []
    if not cuts or cuts[0].line != 0:
        cuts = [_Cut(0, "preamble"), *cuts]
    sections: list[Section] = []
    byte = 0
    for index, cut in enumerate(cuts):
        start = doc.starts[cut.line]
        end = doc.starts[cuts[index + 1].line] if index + 1 < len(cuts) else len(doc.text)
        chunk = doc.text[start:end]
        size = len(chunk.encode("utf-8", "surrogatepass"))
        sections.append(_section(cut, chunk, byte, byte + size))
        byte += size
    return sections


# --- metadata in section bodies -----------------------------------------------------------

_META = re.compile(
    r"(?:^|\|)\s*(?:[-*+]\s+)?\*\*(?P<key>[A-Za-z][A-Za-z ]{0,20}?)\s*(?::\*\*|\*\*\s*:)"
    r"(?P<value>[^|]*)"
)
_PLAIN_META = re.compile(r"^(?P<key>date|author|by)[ \t]*:[ \t]*(?P<value>\S.*?)\s*$", re.I)
_AUTHOR_KEYS = ("by", "author", "authors", "decided by", "agent")
_DATE_KEYS = ("date", "timestamp", "when")
_META_REACH = 20  # metadata sits right under a heading; reading further finds body prose
_DECISION_KEYS = frozenset({"by", "author", "authors", "date", "what", "status", "decided by"})


@dataclass(frozen=True)
class _Meta:
    """Bold '**Key:** value' fields found at the top of a section body."""

    fields: dict[str, str]

    @property
    def author(self) -> str | None:
        """The first author-like field, without markdown emphasis."""
        return _first_field(self.fields, _AUTHOR_KEYS)

    @property
    def date(self) -> str | None:
        """The date named by a Date/Timestamp field, if it parses."""
        raw = _first_field(self.fields, _DATE_KEYS)
        hit = find_date(raw) if raw else None
        return hit.value if hit else None

    @property
    def marks_decision(self) -> bool:
        """Whether the fields are the ones Squad writes under a decision heading."""
        return not _DECISION_KEYS.isdisjoint(self.fields)


def _first_field(fields: dict[str, str], keys: Iterable[str]) -> str | None:
    """Return the value of the first present key, emphasis removed, or None."""
    for key in keys:
        value = fields.get(key, "").replace("**", "").strip()
        if value:
            return value
    return None


def _read_meta(lines: Sequence[str]) -> _Meta:
    """Collect '**Key:** value' and bare 'date: …' fields (first wins) from body lines."""
    fields: dict[str, str] = {}
    for line in lines:
        plain = _PLAIN_META.match(line)
        if plain is not None:
            fields.setdefault(plain.group("key").lower(), plain.group("value"))
        if ":**" not in line and "**:" not in line:
            continue
        for match in _META.finditer(line):
            fields.setdefault(match.group("key").strip().lower(), match.group("value").strip())
    return _Meta(fields)


def _own_lines(doc: Scan, index: int) -> list[str]:
    """Body lines of heading `index` up to the next heading of any level."""
    first = doc.headings[index].line + 1
    last = doc.headings[index + 1].line if index + 1 < len(doc.headings) else len(doc.lines)
    return doc.lines[first:last]


_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


def is_filler(line: str) -> bool:
    """Blank lines, horizontal rules and one-line HTML comments carry no content."""
    return not line.strip() or bool(_RULE.match(line) or _COMMENT.match(line))


# --- history.md ---------------------------------------------------------------------------

_CORE_CONTEXT = re.compile(r"^core context\b", re.IGNORECASE)
_LEARNING_GROUP = re.compile(
    r"^(?:learnings?|key learnings|recent (?:updates|sessions|work|learnings)|updates|"
    r"session history|cross-agent updates|work log|archived on|archive|prior work)\b",
    re.IGNORECASE,
)
_CONTEXT = re.compile(
    r"^(?:project context|context|current (?:phase|status|focus|state|sprint)|"
    r"(?:executive )?summary|overview)\b",
    re.IGNORECASE,
)
# What an agent says of itself beside its Core Context: its role, domain, what it owns.
_SELF = re.compile(
    r"(?:my |the |agent )?(?:role|domain|responsibilit(?:y|ies)|ownership|mission|identity"
    r"|expertise|focus|scope)|about(?: me)?|who i am|what i own",
    re.IGNORECASE,
)


@dataclass
class _HistoryState:
    """Where the history walk stands: the open '##' group and the open entry."""

    group_kind: str | None = None
    entry_level: int | None = None
    top_title: str | None = None
    last: _Cut | None = None


def _history_heading(state: _HistoryState, heading: Heading) -> _Cut | None:
    """Classify one history heading; None when it belongs to the open entry."""
    date, title = parse_date(heading.text)
    if state.entry_level is not None and heading.level > state.entry_level and date is None:
        return None
    if heading.level == 1:
        state.group_kind = state.entry_level = state.top_title = None
        kind = "context" if _CONTEXT.match(title) else "title"
        return _Cut(heading.line, kind, title, date, 1)
    if heading.level == 2:
        return _history_top(state, heading, title, date)
    kind = "learning" if date is not None else (state.group_kind or "learning")
    state.entry_level = heading.level
    return _Cut(heading.line, kind, title, date, heading.level, parent=state.top_title)


def _history_top(state: _HistoryState, heading: Heading, title: str, date: str | None) -> _Cut:
    """Classify a '##' heading: a container of entries, or an entry of its own."""
    state.top_title, state.entry_level, state.group_kind = title, None, None
    if _CORE_CONTEXT.match(title):
        state.group_kind = "core-context"
    elif _LEARNING_GROUP.match(title):
        state.group_kind = "learning"
    elif date is None and (_CONTEXT.match(title) or _SELF.fullmatch(title.strip(" :"))):
        state.group_kind = "context"
    else:
        state.entry_level = 2
    return _Cut(heading.line, state.group_kind or "learning", title, date, 2)


def _pin_title(line: str) -> tuple[str | None, str]:
    """Date and label of a '📌 **Team update (…):** …' line."""
    body = line[len(_PIN) :].strip()
    if body.startswith("**"):
        label = body[2:].split("**", 1)[0]
    else:
        label = re.split(r":\s", body, maxsplit=1)[0]
    date, title = parse_date(label.replace("**", ""))
    if date is None:
        hit = find_date(body)
        date = hit.value if hit else None
    return date, title.rstrip(":").strip()


def _pin_cuts(doc: Scan, line: int, stops: set[int], state: _HistoryState) -> list[_Cut]:
    """Cut a team-update paragraph, and the loose text after it, into their own sections."""
    # The loose text continues the entry the update interrupted, so it keeps that title.
    date, title = _pin_title(doc.lines[line])
    parent = state.top_title
    cuts = [_Cut(line, "team-update", title, date, 0, parent=parent)]
    after = line + 1
    while after < len(doc.lines) and after not in stops and doc.lines[after].strip():
        after += 1
    while after < len(doc.lines) and after not in stops and not doc.lines[after].strip():
        after += 1
    if after < len(doc.lines) and after not in stops:
        last = state.last or _Cut(0, "text")
        cuts.append(_Cut(after, "text", last.title, last.date, 0, parent=parent))
    return cuts


def _history_cuts(doc: Scan, state: _HistoryState) -> list[_Cut]:
    """The cuts of a history's headings and pinned lines, the walk going on from `state`."""
    headings = {heading.line: heading for heading in doc.headings}
    stops = set(headings) | set(doc.marked)
    cuts = []
    for line in sorted(stops):
        if line in headings:
            cut = _history_heading(state, headings[line])
            if cut is not None:
                cuts.append(cut)
                state.last = cut
        else:
            state.entry_level = None
            cuts.extend(_pin_cuts(doc, line, stops, state))
    return cuts


def parse_history(text: str) -> list[Section]:
    """Split an agent history.md into title, context, learning and team-update sections."""
    return HistoryReader().read(text)


class HistoryReader:
    """A history cut into sections one piece after another (see `importer.file_pieces`): the walk's
    state (the open '##' group, the entry being read) goes on from piece to piece, and
    lines and byte offsets count from the start of the file."""

    def __init__(self) -> None:
        self.state = _HistoryState()
        self.line = 0
        self.byte = 0

    def read(self, text: str) -> list[Section]:
        """The sections of the next piece of the history."""
        doc = _scan(text)
        cuts = _history_cuts(doc, self.state)
        if self.line and doc.lines and (not cuts or cuts[0].line != 0):
            # A piece cut inside an entry (no heading near): its start continues that entry.
            last = self.state.last or _Cut(0, "text")
            cuts.insert(0, _Cut(0, "text", last.title, last.date, 0, parent=self.state.top_title))
        found = [
            replace(s, start=s.start + self.byte, end=s.end + self.byte, line=s.line + self.line)
            for s in _materialize(doc, cuts)
        ]
        self.line += text.count("\n")
        self.byte += len(text.encode("utf-8", "surrogatepass"))
        return found


# --- decisions.md -----------------------------------------------------------------------

_FILE_TITLE = re.compile(
    r"^(?:[\w-]+\s+)?(?:decisions|decision log)(?:\s+(?:archive|log))?\s*(?:$|[—–-]\s)",
    re.IGNORECASE,
)
_DECISION_LABEL = re.compile(r"\bdecision(?:\s+record)?\s*:", re.IGNORECASE)
_LABEL_PREFIX = re.compile(r"^(?:[\w-]+\s+){0,2}?decision(?:\s+record)?\s*:\s*", re.IGNORECASE)


class _Facts:
    """What the decision walk needs to know about one heading."""

    # Most headings are subheadings settled by their level alone, so metadata and body
    # checks are worked out only when a rule asks for them (large archives stay fast).

    def __init__(self, doc: Scan, index: int) -> None:
        self.doc, self.index, self.heading = doc, index, doc.headings[index]
        plain = strip_heading_marks(self.heading.text)
        self.hit, self.title = split_date(plain)
        self.leads = date_leads(plain, self.hit)
        self.labelled = bool(_DECISION_LABEL.search(plain))
        self._meta: _Meta | None = None
        self._lead: list[str | None] = []

    @property
    def meta(self) -> _Meta:
        """Bold fields right under the heading."""
        if self._meta is None:
            self._meta = _read_meta(_own_lines(self.doc, self.index)[:_META_REACH])
        return self._meta

    @property
    def date(self) -> str | None:
        """The heading's date, else the one in its metadata."""
        return self.hit.value if self.hit else self.meta.date

    @property
    def lead(self) -> str | None:
        """The first line of content under the heading, if any."""
        if not self._lead:
            own = _own_lines(self.doc, self.index)
            self._lead.append(next((line for line in own if not is_filler(line)), None))
        return self._lead[0]

    @property
    def bare(self) -> bool:
        """Whether the heading has no content of its own before the next heading."""
        return self.lead is None

    @property
    def opens(self) -> bool:
        """Whether the heading announces a decision by itself (date first, 'Decision:', fields)."""
        return self.leads or self.labelled or self.meta.marks_decision


@dataclass(frozen=True)
class _OpenDecision:
    """The decision block currently collecting subheadings."""

    level: int
    dated: bool


def _absorbs(current: _OpenDecision | None, facts: _Facts, following: _Facts | None) -> bool:
    """Whether a heading is a subheading of the open decision rather than a new block."""
    # Deeper headings belong to the decision, except Squad's date-first form, which Scribe
    # appends after whatever came before.  Real files also write '## Context' under a
    # '### 2026-03-01: …' entry, so a same-level or shallower heading (below '#') that has
    # no date, label or metadata of its own, and heads no group, continues a dated one.
    if current is None or facts.leads:
        return False
    level = facts.heading.level
    if level > current.level:
        return True
    if level == 1 or not current.dated or facts.date is not None or facts.opens:
        return False
    return not _heads_group(facts, following)


def _heads_group(facts: _Facts, following: _Facts | None) -> bool:
    """A contentless heading whose first child opens a decision names a group."""
    if not facts.bare or following is None:
        return False
    return following.heading.level > facts.heading.level and following.opens


def _decision_kind(facts: _Facts, following: _Facts | None) -> str:
    """Name a heading that opens a block: file title, group of decisions, or decision."""
    if facts.opens:
        return "decision"
    if facts.heading.level == 1 and _FILE_TITLE.match(facts.title):
        return "title"
    return "group" if _heads_group(facts, following) else "decision"


def _decision_cuts(doc: Scan) -> list[_Cut]:
    """Walk the headings of a decisions file and cut it into blocks."""
    facts = [_Facts(doc, index) for index in range(len(doc.headings))]
    groups: list[tuple[int, str]] = []
    current: _OpenDecision | None = None
    cuts: list[_Cut] = []
    openers: list[int] = []
    for index, fact in enumerate(facts):
        following = facts[index + 1] if index + 1 < len(facts) else None
        if _absorbs(current, fact, following):
            continue
        level = fact.heading.level
        kind = _decision_kind(fact, following)
        while groups and (groups[-1][0] >= level or kind == "title"):
            groups.pop()
        parent = groups[-1][1] if groups else None
        current = _OpenDecision(level, fact.date is not None) if kind == "decision" else None
        if kind == "group":
            groups.append((level, fact.title))
        author = fact.meta.author if kind == "decision" else None
        cuts.append(_Cut(fact.heading.line, kind, fact.title, fact.date, level, author, parent))
        openers.append(index)
    bounds = [*openers[1:], len(facts)][: len(openers)]
    return [
        _field_sections(cut, facts[first + 1 : last])
        for cut, first, last in zip(cuts, openers, bounds, strict=True)
    ]


def _field_sections(cut: _Cut, inner: Sequence[_Facts]) -> _Cut:
    """Fill a missing date or author from '## Date' / '## Author' subsections."""
    if cut.kind != "decision" or (cut.date and cut.author):
        return cut
    date, author = cut.date, cut.author
    for fact in inner:
        name, value = fact.title.strip(" :*").lower(), (fact.lead or "").strip(" -*_")
        hit = find_date(value) if name in _DATE_KEYS and date is None else None
        date = hit.value if hit else date
        if name in _AUTHOR_KEYS and author is None and value:
            author = value
    return replace(cut, date=date, author=author)


def parse_decisions(text: str) -> list[Section]:
    """Split decisions.md (or an archive) into title, group and decision sections.

    A governed decision as Squad 0.10 writes it (`squad memory write --class DECISION`: YAML
    front matter with its title, author and `createdAt`, then the text, no heading) is a
    decision of its own wherever it stands, in an inbox file or appended by `squad nap`.
    """
    doc = _scan(text)
    governed = _governed_cuts(doc)
    if not governed:
        return _materialize(doc, _decision_cuts(doc))
    taken = {cut.line for cut in governed}
    cuts = [cut for cut in _decision_cuts(doc) if cut.line not in taken] + governed
    return _materialize(doc, sorted(cuts, key=lambda cut: cut.line))


_FRONT_KEY = re.compile(r"^[A-Za-z][\w-]*[ \t]*:")
_FRONT_REACH = 40  # lines a front matter block may span


def _governed_cuts(doc: Scan) -> list[_Cut]:
    """Cuts for each front-matter block that names a title: the block, then its decision."""
    cuts: list[_Cut] = []
    for number, line in enumerate(doc.lines):
        if line.strip() != "---" or number in doc.code:
            continue
        end = _front_end(doc.lines, number)
        if end is None:
            continue
        fields = _fields(doc.lines[number + 1 : end])
        if fields.get("title") and end + 1 < len(doc.lines):
            hit = find_date(fields.get("createdat") or fields.get("date", ""))
            author = fields.get("author") or fields.get("by") or None
            cuts.append(_Cut(number, "front-matter"))
            cuts.append(
                _Cut(end + 1, "decision", fields["title"], hit.value if hit else None, 0, author)
            )
    return cuts


def _front_end(lines: Sequence[str], first: int) -> int | None:
    """The closing `---` of a front matter block opened at `first` (None: it is no block)."""
    for number in range(first + 1, min(len(lines), first + _FRONT_REACH)):
        line = lines[number]
        if line.strip() == "---":
            return number if number > first + 1 else None
        if not (_FRONT_KEY.match(line) or line.startswith((" ", "\t", "- "))):
            return None
    return None


def _fields(lines: Sequence[str]) -> dict[str, str]:
    """`key: value` pairs of front matter lines, keys lower-cased, values read as YAML
    writes its plain scalars: quotes dropped (a double-quoted one's escapes read, so `\\n`
    is a line break, not two characters), a folded or literal block (`>`, `|-`) its
    indented lines."""
    fields: dict[str, str] = {}
    for n, line in enumerate(lines):
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t")):
            fields.setdefault(key.strip().lower(), _scalar(value.strip(), lines[n + 1 :]))
    return fields


_BLOCK = re.compile(r"[>|][+-]?\d?")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": ""}


def _scalar(value: str, after: Sequence[str]) -> str:
    """One front matter value: a block scalar's lines, a quoted string's text."""
    if _BLOCK.fullmatch(value):
        block = []
        for line in after:
            if line.strip() and not line.startswith((" ", "\t")):
                break
            block.append(line.strip())
        joiner = " " if value.startswith(">") else "\n"
        return joiner.join(block).strip()
    if len(value) > 1 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), inner)
    if len(value) > 1 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value.strip("\"'")


# --- inbox ----------------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<body>(?:.*\r?\n){0,60}?)---[ \t]*(?:\r?\n|\Z)")


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """The `key: value` pairs of a leading front matter block, and the text after it."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    return _fields(match.group("body").splitlines()), text[match.end() :]


def _filename_title(filename: str) -> str:
    """A readable title from an inbox filename such as 'hal-ci-guard.md'."""
    stem = re.sub(r"\.md$", "", filename.rsplit("/", 1)[-1], flags=re.IGNORECASE)
    hit = find_date(stem)
    if hit is not None:
        stem = stem[: hit.start] + stem[hit.end :]
    words = re.sub(r"[-_\s]+", " ", stem).strip()
    return words[:1].upper() + words[1:]


def _filename_date(filename: str) -> str | None:
    """The date embedded in a filename such as '2026-03-07T15-50-01Z-x.md', if any."""
    hit = find_date(filename.rsplit("/", 1)[-1])
    return hit.value if hit else None


def parse_inbox(text: str, filename: str) -> list[Section]:
    """Parse one decisions/inbox file; undated decisions take the front matter or filename date."""
    sections = parse_decisions(text)
    if text.strip() and not any(section.kind == "decision" for section in sections):
        sections = [_whole_file_decision(text, filename, sections[-1].end)]
    front, _ = front_matter(text)
    hit = find_date(front.get("date", ""))
    fallback_date = hit.value if hit else _filename_date(filename)
    fallback_author = front.get("author") or front.get("by") or None
    return [_fill_in(section, fallback_date, fallback_author) for section in sections]


def _whole_file_decision(text: str, filename: str, size: int) -> Section:
    """An inbox file without decision headings is one decision named after the file."""
    meta = _read_meta(text.splitlines()[:_META_REACH])
    title = _filename_title(filename)
    return Section("decision", title, meta.date, text, 0, size, 1, 0, meta.author, None)


def _fill_in(section: Section, date: str | None, author: str | None) -> Section:
    """Give an undated or unattributed decision the file-level date and author."""
    if section.kind != "decision":
        return section
    return replace(section, date=section.date or date, author=section.author or author)


# --- logs -------------------------------------------------------------------------------------


def parse_log(text: str, filename: str) -> list[Section]:
    """Parse a log/ or orchestration-log/ file as one 'log' section (a session record)."""
    doc = _scan(text)
    if not doc.lines:
        return []
    heading = doc.headings[0] if doc.headings else None
    date, title = parse_date(heading.text) if heading else (None, _filename_title(filename))
    meta = _read_meta(doc.lines[:_META_REACH])
    when = date or meta.date or _filename_date(filename)
    cut = _Cut(0, "log", title, when, heading.level if heading else 0, meta.author)
    line = heading.line + 1 if heading else 1
    return [replace(section, line=line) for section in _materialize(doc, [cut])]


# --- folding and merging -------------------------------------------------------------------


def _label_free(title: str) -> str:
    """Drop a leading 'Decision:' style label from a title."""
    return _LABEL_PREFIX.sub("", title.strip(), count=1).strip()


def _body(section: Section) -> str:
    """Section text without its heading line."""
    if section.level == 0:
        return section.text
    return section.text.split("\n", 1)[1] if "\n" in section.text else ""


def _content_lines(text: str) -> list[str]:
    """Lines that carry content, with markdown structure and spacing normalized away."""
    kept = []
    for line in text.split("\n"):
        stripped = line.strip()
        if is_filler(stripped) or re.fullmatch(r"`{3,}|~{3,}", stripped):
            continue
        stripped = re.sub(r"^#{1,6}\s+", "", stripped)
        kept.append(" ".join(stripped.split()).casefold())
    return kept


def decision_key(section: Section) -> str:
    """Key equal for copies of one decision: normalized title plus a digest of the body."""
    # Heading style, date, heading levels, blank lines, rules and spacing do not count, so a
    # union-merge duplicate and an inbox file rendered into decisions.md fold together.  The
    # body is part of the key because titles repeat ('User directive'): folding on the title
    # alone would drop real decisions.
    title = re.sub(r"[\W_]+", " ", _label_free(section.title).casefold()).strip()
    body = "\n".join(_content_lines(_body(section)))
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{title}#{digest}"


def _demote(body: str, floor: int = 4) -> str:
    """Shift body headings so the shallowest one sits at `floor` (below a '###' entry)."""
    doc = _scan(body)
    if not doc.headings:
        return body
    shift = max(0, floor - min(heading.level for heading in doc.headings))
    pieces, last = [], 0
    for heading in doc.headings:
        hashes = doc.starts[heading.line] + heading.text.index("#")
        pieces += [body[last:hashes], "#" * min(6, heading.level + shift)]
        last = hashes + heading.level
    return "".join([*pieces, body[last:]])


def render_decision(date: str, title: str, body: str) -> str:
    """Squad's canonical entry: '### YYYY-MM-DD: Title', a blank line, then the body."""
    # Body headings move below the entry heading so they stay inside it when parsed back;
    # an unclosed fence is closed so it cannot swallow the entries appended after it.
    heading = f"### {date}: {' '.join(title.split())}\n"
    text = _demote(body).lstrip("\r\n").rstrip()
    fence = _scan(text).open_fence
    if fence is not None:
        text += f"\n{fence}"
    return heading + (f"\n{text}\n" if text else "")


@dataclass(frozen=True)
class _InboxEntry:
    """One decision taken from an inbox file, ready to render."""

    title: str
    date: str
    body: str
    key: str


def _orphan_text(section: Section) -> str:
    """Content of a non-decision inbox section worth carrying into the merged body."""
    text = _FRONT_MATTER.sub("", section.text, count=1) if section.line == 1 else section.text
    if section.level > 0:
        text = text.split("\n", 1)[1] if "\n" in text else ""
    return text if text.strip() else ""


def _heading_time(section: Section) -> str | None:
    """The date and time a decision's heading starts with, as written, where it gives a time
    of day (`squad_decide` writes `### 2026-03-10T14-05-22: Title`): kept whole."""
    if section.level == 0 or section.date is None:
        return None
    heading = strip_heading_marks(section.text.split("\n", 1)[0])
    hit = find_date(heading)
    if hit is None or hit.start != 0 or hit.value != section.date:
        return None
    written = heading[: hit.end]
    return written if "T" in written[len(hit.value) :] else None


def _inbox_entries(filename: str, text: str, default_date: str | None) -> list[_InboxEntry]:
    """Decisions of one inbox file with bodies, dates and titles settled."""
    entries: list[_InboxEntry] = []
    pending = ""
    for section in parse_inbox(text, filename):
        if section.kind != "decision":
            pending += _orphan_text(section)
            continue
        date = _heading_time(section) or section.date or default_date
        if date is None:
            raise ValueError(f"{filename}: decision has no date; pass default_date")
        title = _label_free(section.title) or _filename_title(filename)
        body = pending.strip("\n") + "\n\n" + _body(section) if pending else _body(section)
        entries.append(_InboxEntry(title, date, body, decision_key(section)))
        pending = ""
    if pending and entries:
        last = entries[-1]
        entries[-1] = replace(last, body=last.body.rstrip("\n") + "\n\n" + pending)
    return entries


def _append_blocks(existing: str, blocks: Sequence[str]) -> str:
    """Append rendered blocks after the existing text, which stays byte for byte."""
    if not blocks:
        return existing
    prefix = existing
    if prefix and not prefix.endswith("\n"):
        prefix += "\n"
    fence = _scan(prefix).open_fence
    if fence is not None:
        prefix += fence + "\n"
    if prefix and not prefix.endswith("\n\n"):
        prefix += "\n"
    return prefix + "\n".join(blocks)


_DATE_VALUE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?")


def _governed_decision(text: str) -> bool:
    """Whether an inbox file is a decision of Squad's governed memory (`squad memory write
    --class DECISION`): front matter with its class and title."""
    fields, rest = front_matter(text)
    return (
        fields.get("class", "").upper() == "DECISION"
        and bool(fields.get("title"))
        and bool(rest.strip())
    )


def merge_inbox(
    decisions_md: str, inbox: Sequence[tuple[str, str]], default_date: str | None = None
) -> tuple[str, list[str]]:
    """Append inbox (filename, text) decisions to decisions.md; return it and merged names."""
    # Decisions whose key is already present, or earlier in the inbox, are folded; the names
    # returned are those whose content is now in the text (appended or already there).  An
    # undated decision takes its file's front matter or filename date, else default_date;
    # with none it is a ValueError and nothing is merged (the function is pure anyway).
    if default_date is not None and not _DATE_VALUE.fullmatch(default_date):
        raise ValueError(f"default_date must be YYYY-MM-DD or YYYY-MM, not {default_date!r}")
    # Every existing section counts, not only decisions: a bare heading reads as a group
    # once a deeper entry is appended after it, and its content is present all the same.
    seen = {decision_key(section) for section in parse_decisions(decisions_md)}
    blocks: list[str] = []
    merged: list[str] = []
    for filename, text in inbox:
        if _governed_decision(text):
            # Squad's own merge (`squad nap`) appends such a file whole: its front matter
            # (id, class, load guidance, title, author, time) stays the decision's header.
            block = text.strip("\n").rstrip() + "\n"
            keys = {decision_key(s) for s in parse_decisions(block) if s.kind == "decision"}
            if not (keys and keys <= seen):
                blocks.append(block)
            seen |= keys
            merged.append(filename)
            continue
        for entry in _inbox_entries(filename, text, default_date):
            block = render_decision(entry.date, entry.title, entry.body)
            keys = {decision_key(s) for s in parse_decisions(block) if s.kind == "decision"}
            if entry.key not in seen and not (keys and keys <= seen):
                blocks.append(block)
            seen |= keys | {entry.key}
        merged.append(filename)
    return _append_blocks(decisions_md, blocks), merged
