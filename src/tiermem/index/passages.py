"""Passages: the lines, bullets and sentences of an entry that a spawn can take on their own.

Most of an entry's value sits in a few of its lines (the path, the decision, the command), so
the assembler chooses passages, not whole entries, and shows each group of them under a
short label of its entry. An entry is cut once, by the index (when it takes the entry in, or
for entries indexed in bulk when a read first returns it): each passage is a span of the
entry's text (so it is quoted exactly) with the key facts it holds.
"""

from __future__ import annotations

import re

from ..record import record
from ..text.facts import key_facts

# A line longer than this is cut at its sentence ends (and, failing that, at a space): one
# relevant sentence should not bring a paragraph with it.
MAX_CHARS = 360
# A body this short is one passage: cutting it would cost more in labels than it saves.
WHOLE_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z`*\[(#\"'0-9-])")
_FENCE = re.compile(r"\s*(```|~~~)")
# Lines that carry no words: rules, table separators, lone markers, comments.
_BARE = re.compile(r"\s*(?:[-*_=|:\s]+|<!--.*-->|[-*+>]|\d+\.)\s*$")


@record(frozen=True)
class Passage:
    """A span of an entry's text, and the key facts it holds."""

    start: int
    end: int
    facts: frozenset[str]
    code: bool = False  # inside a fenced code block: shown inside a fence again


def body_start(text: str) -> int:
    """Where an entry's body starts: after its heading line (its label shows the title)."""
    newline = text.find("\n")
    return len(text) if newline < 0 else newline + 1


def cut(text: str) -> list[Passage]:
    """The passages of an entry's text (title line excluded), in order, with their facts."""
    return [Passage(a, b, frozenset(key_facts(text[a:b])), code) for a, b, code in spans(text)]


def spans(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, in code) of each passage of an entry's text (title line excluded)."""
    start = body_start(text)
    body = text[start:]
    if not body.strip():
        return []
    if len(body.strip()) <= WHOLE_CHARS and "```" not in body:
        lead = len(body) - len(body.lstrip())
        return [(start + lead, start + len(body.rstrip()), False)]
    return _spans(text, start)


def _spans(text: str, start: int) -> list[tuple[int, int, bool]]:
    """(start, end, in code) of each line worth a passage, long lines cut in sentences."""
    spans: list[tuple[int, int, bool]] = []
    code = False
    at = start
    for line in text[start:].split("\n"):
        line_start, at = at, at + len(line) + 1
        if _FENCE.match(line):
            code = not code
            continue
        if not line.strip() or (not code and _BARE.match(line)):
            continue
        end = line_start + len(line.rstrip())
        spans.extend((a, b, code) for a, b in _sentences(text, line_start, end))
    return spans


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line's span, cut at sentence ends (then at spaces) into pieces of MAX_CHARS or less."""
    if end - start <= MAX_CHARS:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    at = start
    for match in _SENTENCE_END.finditer(text, start, end):
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

    rows = [[p.start, p.end, int(p.code), sorted(p.facts)] for p in passages]
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False)


def decode(stored: str) -> list[Passage]:
    """Passages from what `encode` stored (none from an empty or damaged value)."""
    import json

    try:
        rows = json.loads(stored) if stored else []
        return [Passage(int(a), int(b), frozenset(f), bool(c)) for a, b, c, f in rows]
    except (ValueError, TypeError):
        return []
