"""Scoring: how much each passage of each candidate bears on the task.

A passage scores by the query terms it holds (each weighed by how rare it is among the
candidates' passages, and by whether it came from the task or its context), blended with how
well the index matched its whole entry: a line is read in the light of the entry around it.
Then the entry's standing: the ranker's weight for the asking agent (its own memory, under
`ranking.OwnFirst`), the team's decisions and the wiki above another agent's notes, and the
situation read from the task weighing the tiers.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..index import passages
from ..index.passages import Passage
from ..index.protocol import Doc
from ..storage.layout import TEAM
from ..text import prose
from . import words
from .candidates import Candidate
from .query import Query
from .ranking import Ranker

# How a passage's score is made: its own terms, its entry's match to the task, its entry's
# match to the agent's context.
LINE_SHARE = 0.6
ENTRY_SHARE = 0.4
# Whose an entry is, beside the ranker's weight for the asking agent's own (`ranking`).
TEAM_WEIGHT = 1.2
OTHERS_WEIGHT = 1.0
# Raw archived text a little below the same match in a finished tier.
TIER_WEIGHTS: Mapping[str, float] = {"cold": 1.0, "wiki": 1.0, "archive": 0.9}


@dataclass(frozen=True, slots=True)
class Piece:
    """A passage of a candidate, priced and scored."""

    doc: Doc
    passage: Passage
    text: str
    tokens: int
    score: float
    lead: str = ""  # the line(s) introducing it, shown above it once per group
    lead_tokens: int = 0
    listed: bool = False  # a line of names alone: shown only in an entry shown whole


class Scorer:
    """Scores the passages of candidates for one query. A spawn scores its first candidates,
    then those their facts brought in: each candidate is cut and matched once."""

    def __init__(
        self,
        query: Query,
        agent: str,
        ranker: Ranker,
        tier_weights: Mapping[str, float] = TIER_WEIGHTS,
    ) -> None:
        self.agent = agent
        self.ranker = ranker
        self.tier_weights = tier_weights
        self.stems = [(words.stem(t), w) for t, w in query.weights.items()]
        self._matched: dict[tuple[str, str], _Matched] = {}

    def pieces(self, candidates: Sequence[Candidate]) -> list[Piece]:
        """Every passage of every candidate, scored."""
        cut = [(c, self._match(c.doc)) for c in candidates]
        weights = _term_weights([w for _, w in self.stems], [m for _, t in cut for m in t.terms])
        total = sum(weights) or 1.0
        found = []
        for cand, texts in cut:
            standing = self._standing(cand.doc) * self.tier_weights.get(cand.doc.tier, 1.0)
            entry = ENTRY_SHARE * cand.match
            per_char = cand.doc.tokens / max(1, len(cand.doc.text))
            for (passage, text, listed), terms in zip(texts.passages, texts.terms, strict=True):
                line = sum(weights[i] for i in terms) / total
                tokens = 1 + math.ceil(len(text) * per_char)
                score = (LINE_SHARE * line + entry) * standing
                lead = _lead(cand.doc.text, passage)
                lead_tokens = 1 + math.ceil(len(lead) * per_char) if lead else 0
                found.append(
                    Piece(cand.doc, passage, text, tokens, score, lead, lead_tokens, listed)
                )
        return found

    def _standing(self, doc: Doc) -> float:
        """What an entry's passages weigh for whose it is: the ranker's weight for the asking
        agent, times the team's or another agent's weight for an entry not its own."""
        weight = self.ranker.weight(doc, self.agent)
        if doc.agent == self.agent:
            return weight
        return weight * (TEAM_WEIGHT if doc.agent == TEAM or doc.tier == "wiki" else OTHERS_WEIGHT)

    def _match(self, doc: Doc) -> _Matched:
        """A document's passages and the query terms each holds (a term its whole text lacks
        is looked for in none of them)."""
        key = (doc.path, doc.id)
        if key not in self._matched:
            low, texts = _texts(doc.text, doc.passages)
            present = [i for i, (stem, _) in enumerate(self.stems) if stem in low]
            terms = [[i for i in present if self.stems[i][0] in t[2]] for t in texts]
            self._matched[key] = _Matched([(p, t, listed) for p, t, _, listed in texts], terms)
        return self._matched[key]


@dataclass(frozen=True, slots=True)
class _Matched:
    passages: list[tuple[Passage, str, bool]]  # each with its text, and whether it lists names
    terms: list[list[int]]  # the query terms (by position) each passage holds


# A passage of fewer words that names no fact is a sub-heading or a stub ("- **Learnings**"):
# it says nothing on its own (unless it is all its entry says).
MIN_WORDS = 4


# A spawn scores about 200 entries: the cache holds the last ten spawns' worth, each entry's
# text about three times over (25 MB at most, an archived chunk being at most 4,000 chars).
_CUT_CACHED = 2048


@functools.lru_cache(maxsize=_CUT_CACHED)
def _texts(text: str, stored: str) -> tuple[str, list[tuple[Passage, str, str, bool]]]:
    """A document's text lower-cased, and (passage, its text, lower-cased, whether it is a
    list of names that says nothing of them) of each passage but those that say nothing
    alone. Cached: the same entries come back spawn after spawn."""
    found = []
    cut = passages.decode(stored)
    for p in cut:
        part = text[p.start : p.end]
        if p.facts or len(part.split()) >= MIN_WORDS or len(cut) == 1:
            found.append((p, part, part.lower(), prose.is_fact_list(part)))
    return text.lower(), found


def _lead(text: str, passage: Passage) -> str:
    """The line(s) a passage is shown under: a heading as bold text, a table's header row
    with its rule, a lead-in as written."""
    if passage.lead is None:
        return ""
    start, end = passage.lead
    lines = text[start:end].split("\n")
    return "\n".join(filter(None, [prose.as_lead(lines[0]), *lines[1:]]))


def _term_weights(weights: Sequence[float], matched: Sequence[Sequence[int]]) -> list[float]:
    """Each term's weight times its rarity among the passages (inverse passage frequency)."""
    n = len(matched)
    df = Counter(i for line in matched for i in line)
    return [w * math.log(1.0 + (n + 1) / (df[i] + 0.5)) for i, w in enumerate(weights)]
