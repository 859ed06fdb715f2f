"""Scoring: how much each passage of each candidate bears on the task.

A passage scores by the query terms it holds (each weighed by how rare it is among the
candidates' passages, and by whether it came from the task or its context), blended with how
well the index matched its whole entry: a line is read in the light of the entry around it.
Then the entry's standing: the asking agent's own memory and the team's decisions weigh more
than another agent's notes, and the situation read from the task weighs the tiers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..index import Doc
from ..layout import TEAM
from . import passages, words
from .candidates import Candidate
from .passages import Passage
from .query import Query

# How a passage's score is made: its own terms, its entry's match to the task, its entry's
# match to the agent's context.
LINE_SHARE = 0.6
ENTRY_SHARE = 0.4
OWN_WEIGHT = 1.5
TEAM_WEIGHT = 1.2
OTHERS_WEIGHT = 1.0
# Raw archived text a little below the same match in a finished tier.
TIER_WEIGHTS: Mapping[str, float] = {"cold": 1.0, "wiki": 1.0, "archive": 0.9}


@dataclass(frozen=True)
class Piece:
    """A passage of a candidate, priced and scored."""

    doc: Doc
    passage: Passage
    text: str
    tokens: int
    score: float


def pieces(
    candidates: Sequence[Candidate],
    query: Query,
    agent: str,
    tier_weights: Mapping[str, float] = TIER_WEIGHTS,
) -> list[Piece]:
    """Every passage of every candidate, scored."""
    cut = [(c, _texts(c.doc)) for c in candidates]
    stems = [(words.stem(t), w) for t, w in query.weights.items()]
    matched = [[i for i, (s, _) in enumerate(stems) if s in low] for _, t in cut for _, _, low in t]
    weights = _term_weights([w for _, w in stems], matched)
    total = sum(weights) or 1.0
    found = []
    lines = iter(matched)
    for cand, texts in cut:
        standing = _standing(cand.doc, agent) * tier_weights.get(cand.doc.tier, 1.0)
        entry = ENTRY_SHARE * cand.match
        per_char = cand.doc.tokens / max(1, len(cand.doc.text))
        for passage, text, _ in texts:
            line = sum(weights[i] for i in next(lines)) / total
            tokens = 1 + math.ceil(len(text) * per_char)
            found.append(
                Piece(cand.doc, passage, text, tokens, (LINE_SHARE * line + entry) * standing)
            )
    return found


# A passage of fewer words that names no fact is a sub-heading or a stub ("- **Learnings**"):
# it says nothing on its own (unless it is all its entry says).
MIN_WORDS = 4


def _texts(doc: Doc) -> list[tuple[Passage, str, str]]:
    """(passage, its text, lower-cased) of a document, less those that say nothing alone."""
    found = []
    cut = passages.decode(doc.passages)
    for p in cut:
        text = doc.text[p.start : p.end]
        if p.facts or len(text.split()) >= MIN_WORDS or len(cut) == 1:
            found.append((p, text, text.lower()))
    return found


def _term_weights(weights: Sequence[float], matched: Sequence[Sequence[int]]) -> list[float]:
    """Each term's weight times its rarity among the passages (inverse passage frequency)."""
    n = len(matched)
    df = Counter(i for line in matched for i in line)
    return [w * math.log(1.0 + (n + 1) / (df[i] + 0.5)) for i, w in enumerate(weights)]


def _standing(doc: Doc, agent: str) -> float:
    if doc.agent == agent:
        return OWN_WEIGHT
    return TEAM_WEIGHT if doc.agent == TEAM or doc.tier == "wiki" else OTHERS_WEIGHT
