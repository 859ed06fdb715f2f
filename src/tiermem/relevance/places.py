"""Places: what a search shows, the passages that answer with what they need around them.

A search ranks entries (BM25 over the index, then the `Ranker`); what it shows of them are
places. A place is a passage that matches the question with its neighbours: the turns
before and after a matching turn (the question asked before an answer, the answer after a
question), a decision's reason beside it. Passages are scored against the question within
the entries found, and a passage among matching neighbours scores higher than one alone,
so a place grows where the text keeps answering. Ten results are ten places: no two share
a passage, and a passage whose sentence is already shown elsewhere (a summary's sentence in
the note it came from) is not shown again. A long entry may give two places; a short one
shows whole, as does an entry the question names by its title.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..index import passages
from ..index.protocol import Hit
from ..text import words
from . import excerpts, scoring
from .excerpts import Excerpt

# What one place shows at most, in tokens: ten places stay within about 2,500 tokens.
PLACE_TOKENS = 260
# Passages kept before and after the matching one while they fit PLACE_TOKENS: after first,
# as an answer follows its question and a reason its decision.
BEFORE = 3
AFTER = 5
# How much the entry's own rank weighs beside its passage's match (the rest is the match).
# Chosen on the four teams' heading probes (search's top 5) and LoCoMo's development half:
# at 0.5 LoCoMo's R@10 is 0.785 and the probes lose up to 0.05 (a section named by the
# question loses to a chattier entry's passages); at 0.7, 0.770 and none lost.
ENTRY_SHARE = 0.7
# A joined name in the question (`nap.ts`, `stage_2`) weighs this many times a word.
NAME_WEIGHT = 2.0
# An entry gives at most this many places while other entries have places to give: a long
# one does not fill a page of results.
PLACES_PER_ENTRY = 2


@dataclass(frozen=True, slots=True)
class Place:
    """A result: the entry it lies in (scored by the place) and what it shows of it."""

    hit: Hit
    excerpt: Excerpt


@dataclass(frozen=True, slots=True)
class _Passages:
    """One entry's passages, how well each matches, and its rank among the entries."""

    hit: Hit
    spans: list[passages.Span]
    match: list[float]
    entry: float  # the entry's score over the best entry's, 0..1
    tokens_per_char: float


def best(
    query: str, hits: Sequence[Hit], limit: int, whole: frozenset[str] = frozenset()
) -> list[Place]:
    """The `limit` best places in these entries (ranked best first) for a query; entries
    whose ids are in `whole` show whole."""
    stems: dict[str, float] = {}
    for term in words.terms(query):
        # A joined name (`nap.ts`) says exactly what its words only suggest.
        weight = NAME_WEIGHT if words.is_name(term) else 1.0
        stems[words.stem(term)] = max(weight, stems.get(words.stem(term), 0.0))
    cut = [(h, passages.spans(h.doc.text)) for h in hits]
    counts = [words.stem_counts(h.doc.text[a:b]) for h, spans in cut for a, b, _, _ in spans]
    scores = iter(scoring.Bm25(counts, stems).scores())
    top = max((h.score for h in hits), default=0.0) or 1.0
    entries = [
        _Passages(
            h,
            spans,
            [next(scores) for _ in spans],
            max(0.0, h.score / top),
            h.doc.tokens / max(1, len(h.doc.text)),
        )
        for h, spans in cut
    ]
    return _chosen(entries, limit, whole)


def _centres(entries: Sequence[_Passages]) -> Iterator[tuple[float, int, int]]:
    """(score, entry, passage) of every passage a place could be centred on, best first: the
    entry's rank (the index's BM25 with its title, the ranker's weight) and the passage's
    match with its neighbours', each over the best; an entry none of whose passages matches
    (found by its title) offers its first."""
    regions = [scoring.regions(entry.match) for entry in entries]
    top = max((r for region in regions for r in region), default=0.0) or 1.0
    found = []
    for e, (entry, region) in enumerate(zip(entries, regions, strict=True)):
        share = ENTRY_SHARE * entry.entry
        matched = [
            (share + (1 - ENTRY_SHARE) * r / top, e, i)
            for i, r in enumerate(region)
            if entry.match[i] > 0
        ]
        if not matched and entry.spans:
            matched = [(share, e, 0)]
        found += matched
    return iter(sorted(found, key=lambda c: (-c[0], c[1], c[2])))


def _chosen(entries: Sequence[_Passages], limit: int, whole: frozenset[str]) -> list[Place]:
    """The places, best first: each entry gives at most PLACES_PER_ENTRY while others have
    places to give; only then do the rest of its places follow (a question one long chat
    answers still gets a page of its places)."""
    taken: dict[int, set[int]] = {}
    counts: dict[int, int] = {}  # entry -> places it gives
    shown: set[str] = set()
    places: list[Place] = []
    centres = list(_centres(entries))
    for cap in (PLACES_PER_ENTRY, None):
        for score, e, i in centres:
            if len(places) >= limit:
                return places
            entry = entries[e]
            used = taken.setdefault(e, set())
            if i in used or (used and _whole(entry, whole)):
                continue
            if cap is not None and counts.get(e, 0) >= cap:
                continue
            window = _window(entry, i, used, shown, whole)
            if not window:
                continue
            used.update(window)
            counts[e] = counts.get(e, 0) + 1
            shown.update(_sentences(entry, window))
            places.append(_place(entry, window, score, whole))
    return places


def _whole(entry: _Passages, whole: frozenset[str]) -> bool:
    return entry.hit.doc.id in whole or entry.hit.doc.tokens <= excerpts.EXCERPT_TOKENS


def _window(
    entry: _Passages, centre: int, used: set[int], shown: set[str], whole: frozenset[str]
) -> list[int]:
    """The passages a place centred here shows: all of a short entry; else the centre, then
    the ones after and before it in turn while they fit PLACE_TOKENS, never one another
    place shows, nor one whose text is shown already."""
    if _whole(entry, whole):
        if entry.hit.doc.tier == "archive" and excerpts.mostly_shown(entry.hit.doc.text, shown):
            return []  # archived text whose sentences are shown already (a summary's source)
        return list(range(len(entry.spans)))
    if centre in used or _repeats(entry, centre, shown):
        return []
    window, spent = [centre], _cost(entry, centre)
    for j in _outward(centre, len(entry.spans)):
        if j in used or _repeats(entry, j, shown):
            continue
        cost = _cost(entry, j)
        if spent + cost <= PLACE_TOKENS and (j + 1 in window or j - 1 in window):
            window.append(j)
            spent += cost
    return sorted(window)


def _outward(centre: int, count: int) -> Iterator[int]:
    """The neighbours a window may take, in the order it takes them: after, before, after..."""
    for step in range(1, max(AFTER, BEFORE) + 1):
        if step <= AFTER and centre + step < count:
            yield centre + step
        if step <= BEFORE and centre - step >= 0:
            yield centre - step


def _echoes(lead: str, said: set[str]) -> bool:
    """Whether a line that introduces passages says nothing they do not (a note's title made
    of its first words, over that first line): then it is left out. One word may differ
    (its label, `Note:`), and a title cut short (`…`) ends in part of a word."""
    cut = lead.rstrip()
    if cut.endswith("…"):
        cut = cut[:-1].rsplit(None, 1)[0] if " " in cut.strip() else cut[:-1]
    heard = words.words(cut)
    return len(heard) > 1 and sum(w not in said for w in heard) <= 1


def _cost(entry: _Passages, j: int) -> float:
    """A passage's tokens (the lines that introduce it are shown over it, and not counted:
    the room is for what answers)."""
    start, end, _, _ = entry.spans[j]
    return (end - start) * entry.tokens_per_char


def _repeats(entry: _Passages, j: int, shown: set[str]) -> bool:
    key = _key(entry, j)
    return len(key) >= excerpts.SENTENCE_CHARS and key in shown


def _key(entry: _Passages, j: int) -> str:
    start, end, _, _ = entry.spans[j]
    return words.gist(entry.hit.doc.text[start:end])


def _sentences(entry: _Passages, window: Sequence[int]) -> set[str]:
    return {key for j in window if len(key := _key(entry, j)) >= excerpts.SENTENCE_CHARS}


def _place(entry: _Passages, window: Sequence[int], score: float, whole: frozenset[str]) -> Place:
    doc = entry.hit.doc
    if _whole(entry, whole):
        return Place(Hit(doc, score), Excerpt(doc.text, (), doc.tokens))
    shown = [(entry.spans[j][0], entry.spans[j][1]) for j in window]
    said = set(words.words(" ".join(doc.text[a:b] for a, b in shown)))
    leads = {
        lead
        for j in window
        if (lead := entry.spans[j][3]) is not None and not _echoes(doc.text[slice(*lead)], said)
    }
    spans = tuple(sorted({*leads, *shown}))
    text = excerpts.shown_text(doc.text, spans)
    tokens = max(1, math.ceil(len(text) * entry.tokens_per_char))
    return Place(Hit(doc, score), Excerpt(text, spans, tokens))
