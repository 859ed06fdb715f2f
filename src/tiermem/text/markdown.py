"""Markdown structure, read one way everywhere text is cut: headings, fenced code, safe cuts.

Squad's parser, the archive's chunks and the parts of a long entry all cut text at the same
places: at headings and blank lines outside fenced code, and never inside a code block, so
no piece of memory opens a fence it does not close. A union merge can leave half of a code
block behind; a lone fence that would swallow every later dated entry is taken as stray.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import add

BOM = "\ufeff"  # the byte order mark some editors write at the start of a file
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
# A dated entry heading: a fence that swallows one is likely merge damage.
_ENTRY_LINE = re.compile(r"^#{1,3}[ \t]+20\d\d-\d\d")


@dataclass(frozen=True, slots=True)
class Heading:
    """An ATX heading line outside code fences."""

    line: int
    level: int
    text: str


@dataclass(slots=True)
class Scan:
    """A markdown text split into lines, with its headings and marked lines located."""

    text: str
    starts: list[int]  # character offset of each line
    lines: list[str]
    headings: list[Heading]
    marked: list[int]  # lines outside code that start with one of the scan's marks
    code: set[int]  # candidate lines inside fenced code (headings, fences, marks)
    open_fence: str | None  # a fence still open at the end of the text


def split_lines(text: str) -> tuple[list[str], list[int]]:
    """Split on '\\n' only (markdown lines), returning contents and char offsets; a byte
    order mark that an editor put before the first line is not part of its content."""
    if not text:
        return [], []
    pieces = text.split("\n")
    if text.endswith("\n"):
        pieces.pop()
    lengths = accumulate(map(len, pieces), initial=0)
    starts = list(map(add, lengths, range(len(pieces))))
    pieces[0] = pieces[0].removeprefix(BOM)
    if "\r" in text:
        pieces = [piece.rstrip("\r") for piece in pieces]
    return pieces, starts


@functools.cache
def _candidates(marks: tuple[str, ...]) -> re.Pattern[str]:
    # Only lines that may be a heading, a fence or a mark matter to the structure; finding
    # them with one regex keeps the per-line Python work off the bulk of the text.
    extra = "".join(f"|{re.escape(m)}" for m in marks)
    return re.compile(rf"^{BOM}?[ \t]*(?:#|```|~~~{extra})", re.MULTILINE)


def _fence_step(line: str, fence: str | None) -> tuple[str | None, bool]:
    """Advance the fenced-code state over one line; report whether the line is a fence."""
    match = FENCE.match(line)
    if match is None:
        return fence, False
    marker, rest = match.group(1), match.group(2)
    if fence is None:
        if marker[0] == "`" and "`" in rest:
            return None, False
        return marker, True
    if marker[0] == fence[0] and len(marker) >= len(fence) and not rest.strip():
        return None, True
    return fence, True


@dataclass(slots=True)
class _FencePass:
    """One sweep over candidate lines: which are code, and an opener judged stray."""

    code: set[int] = field(default_factory=set)
    open_fence: str | None = None
    stray: int | None = None


def _fence_pass(lines: Sequence[str], candidates: Sequence[int], strays: set[int]) -> _FencePass:
    """Mark fenced candidate lines; stop at the first opener that looks like merge damage."""
    # A fence that covers a dated entry heading is taken as stray when it has no info
    # string (code examples usually name a language) or never closes.
    sweep = _FencePass()
    opener, bare, swallowed = -1, False, False
    for number in candidates:
        line = lines[number]
        if line.lstrip(" \t")[:1] in ("`", "~") and number not in strays:
            fence, is_fence = _fence_step(line, sweep.open_fence)
            if is_fence:
                if sweep.open_fence is None:
                    opener, bare, swallowed = number, not line.strip(" \t`~"), False
                sweep.open_fence = fence
                sweep.code.add(number)
                continue
        if sweep.open_fence is not None:
            sweep.code.add(number)
            swallowed = swallowed or bool(_ENTRY_LINE.match(line))
            if swallowed and bare:
                sweep.stray = opener
                return sweep
    if sweep.open_fence is not None and swallowed:
        sweep.stray = opener
    return sweep


def _code_lines(lines: Sequence[str], candidates: Sequence[int]) -> _FencePass:
    """Find fenced code, sweeping again without each stray opener until none is left."""
    strays: set[int] = set()
    while True:
        sweep = _fence_pass(lines, candidates, strays)
        if sweep.stray is None:
            return sweep
        strays.add(sweep.stray)


def scan(text: str, marks: tuple[str, ...] = ()) -> Scan:
    """Locate headings (and lines starting with one of `marks`), skipping fenced code."""
    lines, starts = split_lines(text)
    candidates = [bisect_right(starts, m.start()) - 1 for m in _candidates(marks).finditer(text)]
    fences = _code_lines(lines, candidates)
    headings: list[Heading] = []
    marked: list[int] = []
    for number in candidates:
        line = lines[number]
        if number in fences.code:
            continue
        if marks and line.startswith(marks):
            marked.append(number)
        elif match := ATX.match(line):
            headings.append(Heading(number, len(match.group(1)), line))
    return Scan(text, starts, lines, headings, marked, fences.code, fences.open_fence)


# --- cutting ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Title:
    """A heading located by character offset, with its text without marks."""

    start: int
    level: int
    title: str


def titles(text: str, found: Scan | None = None) -> list[Title]:
    """The headings of a text outside fenced code, by character offset (from its `scan`,
    when one was made already)."""
    found = found or scan(text)
    return [Title(found.starts[h.line], h.level, heading_text(h.text)) for h in found.headings]


def heading_text(line: str) -> str:
    """A heading line's text, without its marks (`## Title ##` gives `Title`)."""
    match = ATX.match(line)
    return (match.group(2) or "").strip().strip("#").strip() if match else line.strip()


def code_spans(text: str, found: Scan | None = None) -> list[tuple[int, int]]:
    """(start, end) character spans of the fenced code blocks (an unclosed one runs to the
    end), from the text's `scan` when one was made already."""
    found = found or scan(text)
    fence_lines = [n for n in sorted(found.code) if FENCE.match(found.lines[n])]
    spans: list[tuple[int, int]] = []
    fence: str | None = None
    opened = 0
    for number in fence_lines:
        was = fence
        fence, _ = _fence_step(found.lines[number], fence)
        if was is None and fence is not None:
            opened = found.starts[number]
        elif was is not None and fence is None:
            spans.append((opened, _line_end(found, number)))
    if fence is not None:
        spans.append((opened, len(text)))
    return spans


def closed(text: str) -> str:
    """The text with a code fence it leaves open closed at its end (a merge can leave half
    a code block behind; memory must not open a fence that swallows what follows it)."""
    fence = scan(text).open_fence
    return f"{text.rstrip(chr(10))}\n{fence}" if fence else text


def _line_end(found: Scan, number: int) -> int:
    """The offset just after a line and its newline."""
    return found.starts[number + 1] if number + 1 < len(found.starts) else len(found.text)


def _outside(spans: Sequence[tuple[int, int]], at: int) -> bool:
    """Whether a cut at `at` leaves every code block whole."""
    return not any(start < at < end for start, end in spans)


def cut_at(text: str, spans: Sequence[tuple[int, int]], low: int, end: int) -> int:
    """The best place in (low, end] to end a piece of text: after a blank line, else after a
    line, never inside fenced code (`spans`, from `code_spans(text)`); `end` when there is
    none, or the end of the code block `end` falls in, so the piece keeps it whole."""
    for separator in ("\n\n", "\n"):
        at = text.rfind(separator, low, end)
        while at > low:
            cut = at + len(separator)
            if _outside(spans, cut):
                return cut
            at = text.rfind(separator, low, at)
    inside = next((b for a, b in spans if a < end < b), None)
    return inside if inside is not None else end
