"""Excerpts: what a search result shows of a long entry or archived text.

A result is an entry, ranked as a whole; a long one shows the passages that match the query
(each with the one after it, which most often answers or explains it), in the entry's
order, with `…` where text is left out, so that ten results cost a few hundred tokens, not
thousands. An entry the query names by its title, or a short one, shows whole; reading an
id (`search ID`) always gives the whole entry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..index import passages
from ..index.protocol import Doc
from . import words

# An entry up to this many tokens shows whole; a longer one shows about this much of itself.
EXCERPT_TOKENS = 240
# Passages kept before and after each matching one.
PRECEDING = 0
FOLLOWING = 1
GAP = "…"


@dataclass(frozen=True, slots=True)
class Excerpt:
    """The text a result shows, and where its parts sit in the entry (none when whole)."""

    text: str
    spans: tuple[tuple[int, int], ...] = ()
    tokens: int = 0


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


def of(
    doc: Doc, terms: Sequence[str], whole: bool = False, weights: Mapping[str, float] | None = None
) -> Excerpt:
    """What a result shows of a document for a query's terms (weighed by `weights`, see
    `rarity`; names count double)."""
    if whole or doc.tokens <= EXCERPT_TOKENS:
        return Excerpt(doc.text, (), doc.tokens)
    found = passages.spans(doc.text)
    if not found:
        return Excerpt(doc.text, (), doc.tokens)
    per_char = doc.tokens / max(1, len(doc.text))
    chosen = _chosen(doc.text, found, terms, per_char, weights or {})
    # Each passage with the line that introduces it: a lead-in never stands alone.
    leads = {lead for i in chosen if (lead := found[i][3]) is not None}
    spans = tuple(sorted({*leads, *((found[i][0], found[i][1]) for i in chosen)}))
    text = shown_text(doc.text, spans)
    return Excerpt(text, spans, max(1, round(len(text) * per_char)))


def _chosen(
    text: str,
    found: list[passages.Span],
    terms: Sequence[str],
    per_char: float,
    weights: Mapping[str, float],
) -> list[int]:
    """The indexes of the passages to show: the best matches, each with the one after it,
    while they fit EXCERPT_TOKENS (the best one always); the first ones when none matches."""
    stems = [(words.stem(t), weights.get(t, 1.0) * (2 if words.is_name(t) else 1)) for t in terms]
    lows = [text[a:b].lower() for a, b, _, _ in found]
    score = [sum(w for s, w in stems if s in low) for low in lows]
    ranked = sorted((i for i in range(len(found)) if score[i]), key=lambda i: (-score[i], i))
    chosen: set[int] = set()
    spent = 0.0
    for i in ranked or [0]:
        for j in range(max(0, i - PRECEDING), min(len(found), i + 1 + FOLLOWING)):
            cost = (found[j][1] - found[j][0]) * per_char
            if j not in chosen and (not chosen or spent + cost <= EXCERPT_TOKENS):
                chosen.add(j)
                spent += cost
        if spent >= EXCERPT_TOKENS:
            break
    return sorted(chosen)


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
