"""Excerpts: the text a search result shows of an entry (whole, or some of its passages
under its title line with `…` where text is left out, as `places` chooses them), and how
rare each of a query's terms is among the lines of the texts found.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..index import passages
from ..text import words

# An entry up to this many tokens shows whole (see `places`).
EXCERPT_TOKENS = 240
GAP = "…"
# A summary picks its sentences from the text it summarises: once that text is shown, a text
# whose sentences are mostly already there tells the reader little. Sentences shorter than
# this ("Thanks, sounds good!") are too common to say where they come from.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
SENTENCE_CHARS = 20
SHOWN_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The text a result shows, and where its parts sit in the entry (none when whole)."""

    text: str
    spans: tuple[tuple[int, int], ...] = ()
    tokens: int = 0


def mostly_shown(text: str, shown: Collection[str]) -> bool:
    """Whether most of a text's sentences are in texts already shown (given as gists)."""
    if not shown:
        return False
    said = [s for s in (words.gist(p) for p in _SENTENCE.split(text)) if len(s) >= SENTENCE_CHARS]
    again = sum(1 for s in said if any(s in t for t in shown))
    return bool(said) and again >= SHOWN_SHARE * len(said)


def rarity(texts: Sequence[str], terms: Sequence[str]) -> dict[str, float]:
    """Each term's weight for choosing passages: rarer among these texts' lines weighs more
    (a name on every line of a conversation tells one line from another least)."""
    lines = [line.lower() for text in texts for line in text.splitlines() if line.strip()]
    found = {}
    for term in terms:
        key = words.stem(term)
        df = sum(1 for line in lines if key in line)
        found[term] = math.log(1.0 + (len(lines) + 1) / (df + 0.5))
    return found


def shown_text(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """The entry's title line and its shown passages, `…` where text was left out."""
    lines = [text[: passages.body_start(text)].rstrip("\r\n")]
    end = passages.body_start(text)
    for start, stop in spans:
        if text[end:start].strip():
            lines.append(GAP)
        lines.append(text[start:stop])
        end = stop
    if text[end:].strip():
        lines.append(GAP)
    return "\n".join(lines)
