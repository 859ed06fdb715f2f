"""Prose a reader can act on: plain words, the lines that only introduce others, clean titles.

Memory is read by an agent about to act, so every text tiermem shows is whole sentences and
bullets that say what was done and why. Three rules serve that everywhere text is chosen:

- the **plain words** of a line are what it says besides its names (METRICS.md): a line with
  three names and fewer than two plain words is a **fact list**, which says only that things
  exist;
- a heading, a bold lead-in, a line ending in `:` and a table's header row **introduce** what
  follows them, and are shown only with it;
- a **title** is the words of a heading or first sentence, without list marks, emphasis or a
  leading date, cut at a word.
"""

from __future__ import annotations

import functools
import re

from .facts import key_facts

STOP_WORDS = frozenset(
    """a an the and or of to in on for with by at from as is are was were be been it its this
    that these those we our you your they their he she not no yes do does did done use used
    using via into per about after before than then so if but also all any each more most
    other some such only own same can will just should now new when where which who what how
    why add added adds fix fixed fixes update updated""".split()
)
# Words that label a line without saying anything of their own.
EMPTY_LABELS = frozenset(
    "refs files file commit commits key decision decisions session status".split()
)
_SAY_NOTHING = STOP_WORDS | EMPTY_LABELS
# A fact list: this many names or more with fewer than PROSE_WORDS plain words.
LIST_FACTS = 3
PROSE_WORDS = 2

_WORD = re.compile(r"[a-z]{3,}")


def plain_words(line: str) -> frozenset[str]:
    """The words of three letters or more a line says besides its names, lower-cased, less
    stop words and empty labels."""
    return _plain(line)


@functools.lru_cache(maxsize=65536)
def _plain(line: str) -> frozenset[str]:
    low = line.lower()
    for fact in sorted(key_facts(line), key=len, reverse=True):
        low = low.replace(fact, " ")
    return frozenset(w for w in _WORD.findall(low) if w not in _SAY_NOTHING)


def is_fact_list(line: str) -> bool:
    """A line of names that says nothing of them (`Refs: a.ts b.ts FooBar`)."""
    return len(key_facts(line)) >= LIST_FACTS and len(plain_words(line)) < PROSE_WORDS


# --- what a line is ----------------------------------------------------------------------

HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# Only bold text on the line (a list mark before it, a colon inside or after it).
_BOLD_LEAD = re.compile(r"^\s*(?:[-*+]\s+)?(\*\*|__)[^*_].*?\1\s*:?\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def introduces(line: str) -> bool:
    """Whether a line only introduces what follows it: a heading, a bold lead-in alone, or a
    line ending in `:`."""
    stripped = line.rstrip()
    return bool(HEADING.match(stripped) or _BOLD_LEAD.match(stripped) or stripped.endswith(":"))


def is_table_row(line: str) -> bool:
    """A row of a Markdown table (its header row included)."""
    return bool(_TABLE_ROW.match(line))


def is_table_rule(line: str) -> bool:
    """The line under a table's header row (`|---|:--:|`)."""
    return bool(_TABLE_RULE.match(line))


def as_lead(line: str) -> str:
    """An introducing line as shown above what it introduces: a heading becomes bold text,
    so that a group's label stays the only heading of its group."""
    heading = HEADING.match(line.rstrip())
    if heading is None:
        return line.rstrip()
    words = strip_emphasis(heading.group(2)).strip()
    return f"**{words}**" if words else ""


_FENCE = re.compile(r"^\s*(```|~~~)")


def readable(text: str) -> str:
    """A text without its lines of bare names (outside code), and without a lead-in left
    with nothing to introduce: what a derived entry shows an agent (the raw text, kept in
    the archive, still holds every name)."""
    kept: list[str] = []
    code = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            code = not code
        elif not code and is_fact_list(line):
            continue
        kept.append(line)
    return "\n".join(_introduced(kept))


def _introduced(lines: list[str]) -> list[str]:
    """The lines less lead-ins (not headings) whose next non-blank line is another lead-in,
    a heading, or the end."""
    out: list[str] = []
    for n, line in enumerate(lines):
        if line.strip() and introduces(line) and not HEADING.match(line.strip()):
            after = next((ln for ln in lines[n + 1 :] if ln.strip()), None)
            if after is None or introduces(after):
                continue
        out.append(line)
    return out


# --- titles -------------------------------------------------------------------------------

TITLE_CHARS = 72
ELLIPSIS = "…"
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_LEADING_DATE = re.compile(
    r"^\(?\d{4}-\d\d(?:-(?:\d\d|XX))?(?:[T ][\d:]+Z?)?\)?"
    r"(?:\s*(?:session|checkpoint))?\s*(?:[:—–|-]\s*|\s+|$)"
    r"|^(?:19|20)\d\d\s*[:—–|-]\s+",  # a year alone: "2026 — Architecture pass"
    re.IGNORECASE,
)
_TRAILING_DATE = re.compile(r"\s*[(\[]\d{4}-\d\d(?:-\d\d)?[)\]]\s*$")
# Marks before a leading date: a table row's pipe, a pin or a check mark ("📌 2026-03-05: …").
_BEFORE_DATE = re.compile(r"^[^\w(\[]+(?=\(?\d{4}-\d\d)")


def strip_emphasis(text: str) -> str:
    """Text without Markdown's bold and italic marks."""
    return _EMPHASIS.sub("", text)


def clean_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A title from a heading or a first sentence: no heading, list or emphasis marks, no
    leading or trailing date (the entry carries its own), cut at a word with `…`."""
    title = " ".join(strip_emphasis(text.strip().lstrip("#")).split())
    for _ in range(3):  # "2026-03-06 session: - 2026-03-05 — Title"
        title = _BEFORE_DATE.sub("", LIST_MARK.sub("", title), count=1)
        title = _LEADING_DATE.sub("", title, count=1).strip()
    title = _TRAILING_DATE.sub("", title).strip(" :—–-|")
    return cut_at_word(title, limit)


def cut_at_word(text: str, limit: int) -> str:
    """A text of about `limit` characters at most, cut at the last space before it with `…`
    (never inside a word: a first word longer than the limit is kept whole)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if text[limit - 1] != " ":
        if " " not in head:
            first = text.split(" ", 1)
            return first[0] + (ELLIPSIS if len(first) > 1 else "")
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:—–-(") + ELLIPSIS
