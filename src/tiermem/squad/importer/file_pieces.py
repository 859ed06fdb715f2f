"""A Squad file in pieces of bounded size, each starting where a section starts.

A history of 50 MB is imported piece by piece, so that no step holds more than one piece's
text, sections and entries at a time. A piece is at most PIECE_BYTES (one section longer
than that is one piece of its own) and is cut before a heading line outside fenced code,
else after a blank line, else at a line end: every piece is whole lines, decodes on its own
(a line end is never inside a UTF-8 character) and holds whole sections. A file that fits
in one piece, as every real team's file does, is one piece.
"""

from __future__ import annotations

import re

PIECE_BYTES = 1 << 20

# The lines that decide a cut: fences (code starts or ends), headings, blank lines.
_LINE = re.compile(
    rb"^(?:[ \t]*(?P<fence>`{3,}|~{3,})|(?P<heading> {0,3}#{1,6}[ \t])|[ \t]*\r?$)", re.M
)


def cuts(data: bytes, limit: int = PIECE_BYTES) -> list[tuple[int, int]]:
    """(start, end) byte offsets of the pieces of `data`, in order; they tile it."""
    pieces: list[tuple[int, int]] = []
    start = 0
    while len(data) - start > limit:
        end = _cut(data, start, start + limit)
        pieces.append((start, end))
        start = end
    pieces.append((start, len(data)))
    return pieces


def _cut(data: bytes, start: int, reach: int) -> int:
    """Where the piece that starts at `start` ends: the best cut after it, up to `reach`."""
    heading = blank = 0
    fence = b""
    for match in _LINE.finditer(data, start, reach):
        at = match.start()
        marker = match.group("fence")
        if marker is not None:
            fence = _fence_after(fence, marker, data, match.end())
        elif not fence and at > start:
            if match.group("heading") is not None:
                heading = at
            else:
                blank = data.find(b"\n", at, reach) + 1 or blank
    return heading or blank or _line_end(data, start, reach)


def _fence_after(fence: bytes, marker: bytes, data: bytes, end: int) -> bytes:
    """The open fence after a fence line (b"" when none is open)."""
    if not fence:
        return marker
    line_end = data.find(b"\n", end)
    rest = data[end : line_end if line_end >= 0 else len(data)]
    closes = marker[:1] == fence[:1] and len(marker) >= len(fence) and not rest.strip()
    return b"" if closes else fence


def _line_end(data: bytes, start: int, reach: int) -> int:
    """After the last line end before `reach`; in a line longer than a piece, the first line
    end after it (a line is never cut)."""
    end = data.rfind(b"\n", start, reach)
    if end >= 0:
        return end + 1
    end = data.find(b"\n", reach)
    return len(data) if end < 0 else end + 1
