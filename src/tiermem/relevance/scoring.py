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
from ..text import prose, words
from .candidates import Candidate
from .query import Query
from .ranking import Ranker

# How a passage's score is made: its own match (BM25, with its lead, and a share of its
# neighbours': `regions`), its section's, its entry's match to the task (the index's BM25),
# each over the best among the candidates.
LINE_SHARE = 0.6
SECTION_SHARE = 0.3
ENTRY_SHARE = 0.4
K1 = 1.2
B = 0.75
# A passage's neighbours lend it their match, this share per step away (up to REACH steps):
# the answer after a question, the line after the one that names the subject. A search's
# place shows its neighbours with it; a spawn takes passages one by one, so a neighbour lends
# a spawn's passage less.
NEIGHBOUR_SHARE = 0.5
PACKED_NEIGHBOUR_SHARE = 0.25
REACH = 3
# What the team wrote in its last few sessions (a teammate's decision of an hour ago) outranks
# older text of the same match: the next piece of work most often builds on it.
FRESH_WEIGHT = 1.25
FRESH_SESSIONS = 3
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
    topical: bool = True  # it (or its lead) holds a word of the task or a name it gives


class Scorer:
    """Scores the passages of candidates for one query. A spawn scores its first candidates,
    then those their facts brought in: each candidate is cut and counted once.

    A passage's match is BM25 of the passage with the line that introduces it, plus a share of
    its section's (the passages under one lead), each over the best among the candidates,
    blended with how well the index matched its whole entry."""

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
        self.stems: dict[str, float] = {}
        for term, weight in query.weights.items():
            key = words.stem(term)
            self.stems[key] = max(weight, self.stems.get(key, 0.0))
        self._cut: dict[tuple[str, str], list[_Cut]] = {}

    def pieces(self, candidates: Sequence[Candidate]) -> list[Piece]:
        """Every passage of every candidate, scored."""
        cut = [(c, self._of(c.doc)) for c in candidates]
        lines = Bm25([p.counts for _, parts in cut for p in parts], self.stems)
        sections = _sections(cut)
        by_section = Bm25(list(sections.values()), self.stems)
        line_scores = _in_regions(lines.scores(), [len(parts) for _, parts in cut])
        section_scores = dict(zip(sections, by_section.scores(), strict=True))
        top_line = max(line_scores, default=0.0) or 1.0
        top_section = max(section_scores.values(), default=0.0) or 1.0
        found = []
        n = 0
        for cand, parts in cut:
            standing = self._standing(cand.doc) * self.tier_weights.get(cand.doc.tier, 1.0)
            standing *= FRESH_WEIGHT if 0 <= cand.team_ago < FRESH_SESSIONS else 1.0
            entry = ENTRY_SHARE * cand.match
            per_char = cand.doc.tokens / max(1, len(cand.doc.text))
            for part in parts:
                line = line_scores[n] / top_line
                section = section_scores[(cand.doc.id, part.passage.lead)] / top_section
                n += 1
                score = (LINE_SHARE * line + SECTION_SHARE * section + entry) * standing
                tokens = 1 + math.ceil(len(part.text) * per_char)
                lead = part.lead
                lead_tokens = 1 + math.ceil(len(lead) * per_char) if lead else 0
                found.append(
                    Piece(
                        cand.doc,
                        part.passage,
                        part.text,
                        tokens,
                        score,
                        lead,
                        lead_tokens,
                        part.listed,
                    )
                )
        return found

    def _standing(self, doc: Doc) -> float:
        """What an entry's passages weigh for whose it is: the ranker's weight for the asking
        agent, times the team's or another agent's weight for an entry not its own."""
        weight = self.ranker.weight(doc, self.agent)
        if doc.agent == self.agent:
            return weight
        return weight * (TEAM_WEIGHT if doc.agent == TEAM or doc.tier == "wiki" else OTHERS_WEIGHT)

    def _of(self, doc: Doc) -> list[_Cut]:
        key = (doc.path, doc.id)
        if key not in self._cut:
            self._cut[key] = _cuts(doc.text, doc.passages)
        return self._cut[key]


@dataclass(frozen=True, slots=True)
class _Cut:
    """A passage of an entry with its text and its stems (the lead's counted in)."""

    passage: Passage
    text: str
    listed: bool  # a line of names that says nothing of them
    counts: Mapping[str, float]
    lead: str  # the line(s) it is shown under (see `_lead`)


def _sections(
    cut: Sequence[tuple[Candidate, list[_Cut]]],
) -> dict[tuple[str, object], dict[str, float]]:
    """The stems of each section of the candidates: the passages under one lead together (an
    entry's passages without a lead are its one section)."""
    found: dict[tuple[str, object], dict[str, float]] = {}
    for cand, parts in cut:
        # An entry's sections are summed once: the same entries come back spawn after spawn.
        sections = _doc_sections(cand.doc.text, cand.doc.passages)
        if not any((cand.doc.id, lead) in found for lead in sections):
            found.update(((cand.doc.id, lead), counts) for lead, counts in sections.items())
            continue
        for part in parts:  # an id held twice (a union merge): its sections add up
            key = (cand.doc.id, part.passage.lead)
            counts = found[key] = dict(found.get(key, {}))
            for stem, n in part.counts.items():
                counts[stem] = counts.get(stem, 0.0) + n
    return found


def regions(match: Sequence[float], share: float = NEIGHBOUR_SHARE) -> list[float]:
    """Each passage's match plus its neighbours', less each step away: one passage scorer
    for a spawn's passages and a search's places."""
    return [
        sum(
            match[j] * share ** abs(j - i)
            for j in range(max(0, i - REACH), min(len(match), i + REACH + 1))
        )
        for i in range(len(match))
    ]


def _in_regions(scores: Sequence[float], sizes: Sequence[int]) -> list[float]:
    """The passages' scores, entry by entry (`sizes` passages each, in order), as `regions`."""
    found: list[float] = []
    for size in sizes:
        found += regions(scores[len(found) : len(found) + size], PACKED_NEIGHBOUR_SHARE)
    return found


class Bm25:
    """Plain BM25 of some texts (as stem counts, `words.stem_counts`) against weighted query
    stems: the one passage scorer, of a spawn's candidates and of a search's places. A stem's
    rarity is among these texts (a name on every line of a conversation tells one line from
    another least)."""

    def __init__(self, texts: Sequence[Mapping[str, float]], query: Mapping[str, float]) -> None:
        self.texts = texts
        self.query = query
        n = len(texts)
        self.lengths = [sum(t.values()) for t in texts]
        self.average = (sum(self.lengths) / n) if n else 1.0
        # The query's stems each text holds: most texts hold none, and a text is scored by
        # those alone.
        self.held = [t.keys() & query.keys() for t in texts]
        df = Counter(stem for held in self.held for stem in held)
        self.idf = {
            stem: math.log(1.0 + (n - df[stem] + 0.5) / (df[stem] + 0.5))
            for stem in query
            if df[stem]
        }

    def scores(self) -> list[float]:
        """Each text's score, in order (its terms added in the query's order)."""
        order = {stem: n for n, stem in enumerate(self.idf)}
        found = []
        for text, length, held in zip(self.texts, self.lengths, self.held, strict=True):
            score = 0.0
            if held:
                norm = K1 * (1 - B + B * length / (self.average or 1.0))
                for stem in sorted(held, key=order.__getitem__):
                    tf = text[stem]
                    if tf:
                        score += self.query[stem] * self.idf[stem] * tf * (K1 + 1) / (tf + norm)
            found.append(score)
        return found


# A passage of fewer words that names no fact is a sub-heading or a stub ("- **Learnings**"):
# it says nothing on its own (unless it is all its entry says).
MIN_WORDS = 4


# A spawn scores about 200 entries: the cache holds the last ten spawns' worth, each entry's
# text about three times over (25 MB at most, an archived chunk being at most 4,000 chars).
_CUT_CACHED = 2048


@functools.lru_cache(maxsize=_CUT_CACHED)
def _cuts(text: str, stored: str) -> list[_Cut]:
    """A document's passages, less those that say nothing alone, each with its text and its
    stems counted with the line that introduces it (a bullet under "### Stage 7 Publishing"
    is about Stage 7 publishing). Cached: the same entries come back spawn after spawn."""
    found = []
    cut = passages.decode(stored)
    for p in cut:
        part = text[p.start : p.end]
        if p.facts or len(part.split()) >= MIN_WORDS or len(cut) == 1:
            lead = text[p.lead[0] : p.lead[1]] if p.lead else ""
            counts = words.stem_counts(f"{lead}\n{part}")
            found.append(_Cut(p, part, prose.is_fact_list(part), counts, _lead(text, p)))
    return found


@functools.lru_cache(maxsize=_CUT_CACHED)
def _doc_sections(text: str, stored: str) -> dict[object, dict[str, float]]:
    """The stems of each section of a document (see `_sections`), by lead; never changed
    by a caller."""
    found: dict[object, dict[str, float]] = {}
    for part in _cuts(text, stored):
        counts = found.setdefault(part.passage.lead, {})
        for stem, n in part.counts.items():
            counts[stem] = counts.get(stem, 0.0) + n
    return found


def held_terms(text: str, terms: Sequence[str]) -> list[str]:
    """The terms (by stem) a text holds, in the terms' order."""
    low = text.lower()
    return [t for t in terms if words.stem(t) in low]


def _lead(text: str, passage: Passage) -> str:
    """The line(s) a passage is shown under: a heading as bold text, a table's header row
    with its rule, a lead-in as written."""
    if passage.lead is None:
        return ""
    start, end = passage.lead
    lines = text[start:end].split("\n")
    return "\n".join(filter(None, [prose.as_lead(lines[0]), *lines[1:]]))
