"""Passages: the lines, bullets and sentences of an entry that a spawn can take on their own.

Most of an entry's value sits in a few of its lines (the path, the decision, the command), so
the assembler chooses passages, not whole entries, and shows each group of them under a
short label of its entry. An entry is cut once, by the index (when it takes the entry in, or
for entries indexed in bulk when a read first returns it): each passage is a span of the
entry's text (so it is quoted exactly) with the key facts it holds.

A line that only introduces others (a heading, a bold lead-in, a line ending in `:`) is no
passage of its own: it is the **lead** of the lines after it, shown above the first of them
a prompt takes, so it never stands alone; a table row's lead is its table's header row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.facts import key_facts
from ..text.prose import HEADING, introduces, is_table_row, is_table_rule

# Bumped when the cut changes: an index of passages cut another way is built again.
CUT_VERSION = "8"  # 2: leads; 3: a heading alone joins the archived chunk after it;
# 4: a heading with nothing under it is a passage; 5: a code block is one passage; 6: no
# sentence ends inside a quoted span; 7: so is a title line with nothing under it; 8: and
# a lead-in nothing follows

# A line longer than this is cut at its sentence ends (and, failing that, at a space): one
# relevant sentence should not bring a paragraph with it.
MAX_CHARS = 360
# A body this short is one passage: cutting it would cost more in labels than it saves.
WHOLE_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z`*\[(#\"'0-9-])")
_FENCE = re.compile(r"\s*(```|~~~)")
# Lines that carry no words: rules, table separators, lone markers, comments.
_BARE = re.compile(r"\s*(?:[-*_=|:\s]+|<!--.*-->|[-*+>]|\d+\.)\s*$")


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of an entry's text, and the key facts it holds."""

    start: int
    end: int
    facts: frozenset[str]
    code: bool = False  # inside a fenced code block: shown inside a fence again
    lead: tuple[int, int] | None = None  # the line(s) that introduce it, shown above it


def body_start(text: str) -> int:
    """Where an entry's body starts: after its heading line (its label shows the title)."""
    newline = text.find("\n")
    return len(text) if newline < 0 else newline + 1


def cut(text: str) -> list[Passage]:
    """The passages of an entry's text (title line excluded), in order, with their facts."""
    return [
        Passage(a, b, frozenset(key_facts(text[a:b])), code, lead)
        for a, b, code, lead in spans(text)
    ]


Span = tuple[int, int, bool, "tuple[int, int] | None"]


def spans(text: str) -> list[Span]:
    """(start, end, in code, lead) of each passage of an entry's text (title line
    excluded)."""
    start = body_start(text)
    body = text[start:]
    if not body.strip():
        return _title_alone(text[:start])
    said = _title_said(text, start)
    if len(body.strip()) <= WHOLE_CHARS and "```" not in body and not _leads(body):
        lead = len(body) - len(body.lstrip())
        return [*said, (start + lead, start + len(body.rstrip()), False, None)]
    return [*said, *_Cutter(text).spans(start)]


def _title_said(text: str, start: int) -> list[Span]:
    """The title line as a passage when nothing comes under it before a heading no deeper:
    an archived chunk of notes written one line each begins with one (`## Note: Caroline:
    Researching adoption agencies…`), which a label would show cut."""
    heading = HEADING.match(text[:start].strip())
    if heading is None:
        return []
    level = len(heading.group(1))
    for line in text[start:].split("\n"):
        if not line.strip() or _BARE.match(line):
            continue
        under = HEADING.match(line.strip())
        if under is None or len(under.group(1)) > level:
            return []  # the title introduces what follows
        break
    return _title_alone(text[:start])


def _leads(body: str) -> bool:
    """Whether a body has lines that introduce others (then it is cut, so that they are
    shown as leads)."""
    return any(introduces(line.strip()) for line in body.splitlines() if line.strip())


def _title_alone(first: str) -> list[Span]:
    """An entry that is only its title line (a one-line note, archived as a heading) says
    what it says there: its words are its passage."""
    heading = HEADING.match(first.strip())
    words = heading.group(2) if heading else first.strip()
    if len(words.split()) < HEADING_WORDS:
        return []
    at = first.index(words)
    return [(at, at + len(words), False, None)]


class _Cutter:
    """Reads an entry's lines in order, keeping the lead that introduces each."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[Span] = []
        self.heading: tuple[int, int] | None = None
        self.intro: tuple[int, int] | None = None  # a lead-in, for the lines after it
        self.header: tuple[int, int] | None = None  # the table being read: its header row
        self.blank = False  # the last line was blank
        self.said: tuple[int, int, int] | None = None  # a heading nothing came under yet
        self.unused: tuple[int, int] | None = None  # a lead-in nothing came under yet

    def spans(self, start: int) -> list[Span]:
        block: tuple[int, int] | None = None  # the code block being read: its first and last line
        code = False
        at = start
        for line in self.text[start:].split("\n"):
            line_start, at = at, at + len(line) + 1
            end = line_start + len(line.rstrip())
            if _FENCE.match(line):
                if code and block is not None:
                    self._code(*block)
                code, block = not code, None
            elif code:
                if line.strip():
                    block = (block[0] if block else line_start, end)
            else:
                self._line(line, line_start, end)
        if code and block is not None:
            self._code(*block)  # a block the text never closes ends with it
        self._said_intro()
        self._close(0)
        return self.found

    def _code(self, start: int, end: int) -> None:
        """A code block is one passage: shown whole or not at all, never a fence around one
        stray line of it."""
        self.said = self.unused = None
        self.found.append((start, end, True, self.lead))

    def _line(self, line: str, start: int, end: int) -> None:
        stripped = line.strip()
        if not stripped:
            self.blank = True
            self.header = None
            return
        if self.blank and not _LIST_ITEM.match(line):
            self._said_intro()
            self.intro = None  # a paragraph after a blank line is not the lead-in's list
        self.blank = False
        if is_table_row(stripped):
            self._row(stripped, start, end)
        elif heading := HEADING.match(stripped):
            level = len(heading.group(1))
            self._said_intro()
            self._close(level)
            self.heading, self.intro, self.header = (start, end), None, None
            self.said = (start + line.index(heading.group(2)), end, level)
        elif introduces(stripped):
            self._said_intro()
            self.intro, self.header = (start, end), None
            self.unused = self.intro
        elif not _BARE.match(line):
            self.header = None
            self._add(start, end, False, self.lead)

    @property
    def lead(self) -> tuple[int, int] | None:
        """What introduces the next line: the nearest lead-in, else its heading."""
        return self.intro or self.heading

    def _row(self, row: str, start: int, end: int) -> None:
        if self.header is None:
            self.header = (start, end)
        elif is_table_rule(row):
            self.header = (self.header[0], end)
        else:
            self._add(start, end, False, self.header)

    def _said_intro(self) -> None:
        """A lead-in that nothing came under (`0 quokkalanternwharf :` ends the text) says
        what it says: its words are a passage, under its heading."""
        if self.unused is not None:
            start, end = self.unused
            self.unused = self.said = None
            self.found.append((start, end, False, self.heading))

    def _close(self, level: int) -> None:
        """A heading followed by one no deeper (or by the end) says what it says in its own
        words, as a one-line note does: its words are a passage (a heading followed by a
        deeper one only introduces it)."""
        said, self.said = self.said, None
        if said is not None and said[2] >= level:
            words = self.text[said[0] : said[1]].split()
            if len(words) >= HEADING_WORDS:
                self.found.append((said[0], said[1], False, None))

    def _add(self, start: int, end: int, code: bool, lead: tuple[int, int] | None) -> None:
        self.said = self.unused = None
        for a, b in _sentences(self.text, start, end):
            self.found.append((a, b, code, lead))


# A heading with nothing under it is a passage of its own when it has this many words.
HEADING_WORDS = 4
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line's span, cut at sentence ends (then at spaces) into pieces of MAX_CHARS or less."""
    if end - start <= MAX_CHARS:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    at = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if text.count("`", start, match.start()) % 2:
            continue  # inside a quoted span (`?? 0`): not a sentence's end
        if match.start() - at > 0:
            pieces.append((at, match.start()))
        at = match.end()
    pieces.append((at, end))
    return [span for a, b in pieces for span in _at_spaces(text, a, b)]


def _at_spaces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A span cut at the last space before each MAX_CHARS."""
    spans = []
    while end - start > MAX_CHARS:
        cut_at = text.rfind(" ", start + MAX_CHARS // 2, start + MAX_CHARS)
        if cut_at < 0:
            cut_at = start + MAX_CHARS
        spans.append((start, cut_at))
        start = cut_at + 1 if text[cut_at] == " " else cut_at
    spans.append((start, end))
    return spans


def encode(passages: list[Passage]) -> str:
    """Passages as the index stores them (compact JSON)."""
    import json  # here: a search that shows no passage never loads it

    rows = [[p.start, p.end, int(p.code), sorted(p.facts), *(p.lead or ())] for p in passages]
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False)


def decode(stored: str) -> list[Passage]:
    """Passages from what `encode` stored (none from an empty or damaged value)."""
    import json

    try:
        rows = json.loads(stored) if stored else []
        return [_passage(*row) for row in rows]
    except (ValueError, TypeError):
        return []


def _passage(start: int, end: int, code: int, facts: list[str], *lead: int) -> Passage:
    at = (int(lead[0]), int(lead[1])) if len(lead) == 2 else None
    return Passage(int(start), int(end), frozenset(facts), bool(code), at)
