"""tiermem's marked sections in a Squad file: a charter's memory section, the spawn step.

A section runs from a begin marker to its end marker, each on a line of its own. What an
install does with one depends on whose it is, which its begin marker says: a section whose
seal is that of its text is tiermem's as it wrote it (`ours`), in this version or an older
one; a section marked the way tiermem marked before it sealed them is tiermem's only when its
text is exactly what tiermem writes now. Any other section that looks like tiermem's (edited
by hand, or written by someone else) is `edited`: no install or uninstall changes a byte of
it, and `--check` says so. A begin marker with no end is a line like any other. The seal is a
hash anyone can compute, so it says only that a section is as tiermem writes it: an uninstall
also needs the install record to list the file (`installer`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import install_texts

_BEGIN = re.compile(
    r"^(?P<indent>[ \t]*)<!-- tiermem:begin (?P<kind>memory|spawn)\b(?P<words>[^\n]*?) -->\n",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Section:
    """One marked section of a file: where it is, what it holds, whose it is."""

    start: int
    end: int  # after the end marker's line (and its newline, when it has one)
    indent: str
    variant: str
    body: str
    ours: bool


def sections(text: str, kind: str, expected: Callable[[str, str], str]) -> list[Section]:
    """Every section of `kind` in `text`, in order. `expected(variant, indent)` is the text
    tiermem writes in such a section now (what makes an unsealed section tiermem's)."""
    begins = [m for m in _BEGIN.finditer(text) if m["kind"] == kind]
    end = re.compile(rf"^[ \t]*{re.escape(install_texts.end_marker(kind))}[ \t]*(?:\n|\Z)", re.M)
    found: list[Section] = []
    for n, begin in enumerate(begins):
        if found and begin.start() < found[-1].end:
            continue  # a line inside the section before
        close = end.search(text, begin.end())
        limit = begins[n + 1].start() if n + 1 < len(begins) else len(text)
        if close is None or close.start() >= limit:
            continue  # no end of its own: a line like any other
        body = text[begin.end() : close.start()]
        variant, ours = _whose(begin, body, expected)
        found.append(Section(begin.start(), close.end(), begin["indent"], variant, body, ours))
    return found


def _whose(
    begin: re.Match[str], body: str, expected: Callable[[str, str], str]
) -> tuple[str, bool]:
    """(variant, whether the section is tiermem's as it wrote it) from its begin marker."""
    kind, words = begin["kind"], begin["words"]
    legacy = install_texts.LEGACY_BEGIN.get(f"<!-- tiermem:begin {kind}{words} -->")
    if legacy is not None:
        return legacy[1], body == expected(legacy[1], begin["indent"])
    *variant, last = words.split() or [""]
    if len(variant) > 1 or not re.fullmatch(install_texts.SEAL, last):
        return "", False
    named = variant[0] if variant else ""
    return named, last == install_texts.seal(kind, named, body)


def without(text: str, section: Section, lead: str) -> str:
    """The text without a section, and without `lead` set before it (when it is there: the
    caller says what is still as the install set it)."""
    start = section.start
    if lead and text[:start].endswith(lead):
        start -= len(lead)
    return text[:start] + text[section.end :]


def edited_note(kind: str) -> str:
    """What `--check`, install and uninstall say of a section that looks like tiermem's and
    is not as tiermem wrote it."""
    return (
        f"a {kind} section marked as tiermem's that is not as tiermem wrote it (edited by "
        "hand, or not tiermem's): left as it is"
    )


def replaced(text: str, section: Section, new: str) -> str:
    """The text with `new` in place of a section."""
    return text[: section.start] + new + text[section.end :]
