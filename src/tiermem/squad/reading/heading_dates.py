"""Dates in Squad headings and file names: ISO days, months, month names, ranges."""

# Squad histories date their entries every way people write dates: '2026-03-10: Title',
# 'Title (2026-03-22)', '### 2025-07: Title', 'March 3, 2026'. These helpers find the date
# in a heading and the title left around it; squad_parse uses them to cut and label sections.

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DateHit",
    "date_leads",
    "find_date",
    "find_dates",
    "parse_date",
    "split_date",
    "strip_heading_marks",
]


_ISO_DATE = re.compile(
    r"(?<![0-9A-Za-z])(?P<y>20\d\d)-(?P<m>0[1-9]|1[0-2])"
    r"(?:-(?P<d>0[1-9]|[12]\d|3[01]|XX)"
    r"(?:T\d{2}(?:[:-]?\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?)?"
    r"(?![0-9])(?!-\d)"
)
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_YEAR = re.compile(r"(?<![0-9])20\d\d(?![0-9])")
_MONTH_BEFORE_YEAR = re.compile(
    r"\b(?P<mon>" + "|".join(_MONTHS) + r")\s+(?:(?P<d>[0-3]?\d)(?:st|nd|rd|th)?,?\s+)?$",
    re.IGNORECASE,
)
_SEPARATORS = " \t:—–-|,;·"
_OPENING_MARKS = re.compile(r"^\s{0,3}#{1,6}(?=\s|$)")
_CLOSING_MARKS = re.compile(r"[ \t]+#+[ \t]*$")


@dataclass(frozen=True)
class DateHit:
    """A date found in a line: its normalized value and where it sits."""

    value: str
    start: int
    end: int


def _iso_hit(text: str) -> DateHit | None:
    """Find the first ISO-style date (day or month precision) in text."""
    match = _ISO_DATE.search(text)
    if match is None:
        return None
    day = match.group("d")
    value = f"{match.group('y')}-{match.group('m')}"
    if day and day != "XX":
        value += f"-{day}"
    return DateHit(value, match.start(), match.end())


def _month_hit(text: str) -> DateHit | None:
    """Find the first 'March 20, 2026' or 'July 2026' style date in text."""
    for year in _YEAR.finditer(text):
        match = _MONTH_BEFORE_YEAR.search(text, max(0, year.start() - 24), year.start())
        if match is None:
            continue
        value = f"{year.group()}-{_MONTHS.index(match.group('mon').lower()) + 1:02d}"
        day = match.group("d")
        if day and 1 <= int(day) <= 31:
            value += f"-{int(day):02d}"
        return DateHit(value, match.start(), year.end())
    return None


def find_date(text: str) -> DateHit | None:
    """Return the earliest date in text, whichever notation it uses."""
    if "20" not in text:
        return None
    hits = [hit for hit in (_iso_hit(text), _month_hit(text)) if hit is not None]
    return min(hits, key=lambda hit: hit.start) if hits else None


def find_dates(text: str) -> list[DateHit]:
    """Every ISO day in text ('2026-03-10', '2026-03-10T09:00Z'), in order."""
    found = []
    for match in _ISO_DATE.finditer(text):
        day = match.group("d")
        if day and day != "XX":
            value = f"{match.group('y')}-{match.group('m')}-{day}"
            found.append(DateHit(value, match.start(), match.end()))
    return found


def strip_heading_marks(heading: str) -> str:
    """Drop the leading '#' run, a closing '#' sequence and stray '#' left by typos."""
    text = _OPENING_MARKS.sub("", heading.rstrip("\r\n"), count=1).strip()
    if text.endswith("#"):
        text = _CLOSING_MARKS.sub("", f" {text}").strip()
    return text.lstrip("#").strip() if text.startswith("#") else text


def _join_around(left: str, right: str) -> str:
    """Glue the text either side of a removed date, keeping one sensible separator."""
    if left.rstrip().endswith("(") and right.lstrip().startswith(")"):
        return f"{left.rstrip()[:-1].rstrip()} {right.lstrip()[1:].lstrip()}"
    if left.rstrip().endswith("("):
        return left.rstrip() + right.lstrip(_SEPARATORS)
    if right.lstrip().startswith(")"):
        return left.rstrip(_SEPARATORS) + right.lstrip()
    left_core, right_core = left.rstrip(_SEPARATORS), right.lstrip(_SEPARATORS)
    if not left_core or not right_core:
        return left_core + right_core
    joint = right[: len(right) - len(right_core)].strip() or left[len(left_core) :].strip()
    if joint == ":":
        return f"{left_core}: {right_core}"
    return f"{left_core} {joint} {right_core}"


_RANGE_LINK = re.compile(r"\s*(?:to|through|until|thru|–|—|-|\.\.)\s*", re.IGNORECASE)


def _range_end(plain: str, end: int) -> int:
    """Extend a date to cover a following 'to 2026-05-14' so a range leaves the title whole."""
    link = _RANGE_LINK.match(plain, end)
    if link is None:
        return end
    second = find_date(plain[link.end() :])
    return link.end() + second.end if second is not None and second.start == 0 else end


def split_date(plain: str) -> tuple[DateHit | None, str]:
    """Find the date in a heading already stripped of '#' marks; return it and the rest."""
    hit = find_date(plain)
    if hit is None:
        return None, plain
    end = _range_end(plain, hit.end)
    title = _join_around(plain[: hit.start], plain[end:])
    return hit, re.sub(r"\s{2,}", " ", title).strip()


def parse_date(heading: str) -> tuple[str | None, str]:
    """Split a heading into (date, title without '#' marks and without the date)."""
    hit, title = split_date(strip_heading_marks(heading))
    return (hit.value if hit else None), title


def date_leads(plain: str, hit: DateHit | None) -> bool:
    """Whether the heading opens with its date, as in Squad's '### 2026-03-10: Title'."""
    return hit is not None and not re.search(r"[0-9A-Za-z]", plain[: hit.start])
