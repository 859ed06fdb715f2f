"""Candidates: the entries and archived texts a spawn may draw on, found by the index.

Everything a spawn may load is a candidate: active cold entries and archived text of every
agent (the asking agent's own and the team's in a scope of their own, so another agent's
long history cannot crowd them out), and the whole active wiki. Superseded entries are not,
nor archived text that holds one: a decision the team replaced must not come back. One
query of the index serves every scope.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..index.protocol import Doc, Hit, Index, Scope
from ..storage.layout import TEAM
from ..text.prose import readable
from . import words
from .words import gist

# How many of the index's best matches each scope offers: enough to hold what a 2,000-token
# prompt can use a few times over, few enough to score line by line in a few milliseconds.
# Deeper pools only add weak matches: at 60/40/40 forward coverage on the four teams was
# 0.006 lower than at 30/20/20 (and 0.020 higher than at 20/15/15), for twice the work.
OWN_POOL = 30
TEAM_POOL = 20
WIKI_POOL = 20
SUPERSEDED_POOL = 20
# A superseded body shorter than this is too common to recognise in archived text.
RETIRED_CHARS = 20


@dataclass(frozen=True, slots=True)
class Candidate:
    """An entry (or archived chunk) and how well the index matched it, 0..1 (best = 1)."""

    doc: Doc
    match: float
    newest: bool = False  # among the newest entries of the asking agent


def find(index: Index, agent: str, text: str, tiers: Sequence[str]) -> list[Candidate]:
    """The candidates for an agent's query within some tiers (cold, wiki, archive): the
    index's best matches, then the newest entries of the agent and of the whole team, and
    the agent's standing knowledge whatever the task's words."""
    matched, retired = _matches(index, agent, text, tiers)
    fresh = {c.doc.id: c for c in newest(index, agent, tiers) if not _holds(c.doc, retired)}
    marked = [
        replace(c, newest=fresh[c.doc.id].newest) if c.doc.id in fresh else c for c in matched
    ]
    have = {c.doc.id for c in matched}
    found = marked + [c for c in fresh.values() if c.doc.id not in have]
    have |= fresh.keys()
    return found + [c for c in standing(index, agent, tiers) if c.doc.id not in have]


STANDING_TAG = "standing"


def standing(index: Index, agent: str, tiers: Sequence[str]) -> list[Candidate]:
    """The agent's standing knowledge (its history's Core Context), unmatched: it is about
    the agent whatever the task, so it is always weighed."""
    if "cold" not in tiers:
        return []
    return [
        Candidate(d, 0.0)
        for d in index.docs(tier="cold", agent=agent)
        if STANDING_TAG in d.tags.split(",") and not d.status
    ]


def matches(index: Index, agent: str, text: str, tiers: Sequence[str]) -> list[Candidate]:
    """The index's best matches for a text in each scope of some tiers."""
    return _matches(index, agent, text, tiers)[0]


def _matches(
    index: Index, agent: str, text: str, tiers: Sequence[str]
) -> tuple[list[Candidate], list[str]]:
    """The best matches, and the bodies of the superseded entries the text reaches (what
    archived text must not bring back)."""
    scopes = _scopes((agent, TEAM), tiers)
    if not scopes:
        return [], []
    superseded = Scope(tiers=("cold", "wiki"), status="superseded")
    found = index.search_each(
        text, [s for s, _ in scopes] + [superseded], max(n for _, n in scopes)
    )
    pools = [hits[:n] for hits, (_, n) in zip(found, scopes, strict=False)]
    retired = _retired(found[-1][:SUPERSEDED_POOL])
    return _merged([h for pool in pools for h in pool], retired), retired


# The next piece of work most often builds on the last few: the newest entries of the agent
# and of the team are candidates whatever the task's words (at a match of 0).
NEWEST_OWN = 10
NEWEST_TEAM = 20


def newest(index: Index, agent: str, tiers: Sequence[str]) -> list[Candidate]:
    """The newest entries of the agent and of the team in some tiers, unmatched."""
    kept = [t for t in tiers if t != "hot"]
    own = index.newest(kept, agent, NEWEST_OWN)
    team = [d for d in index.newest(kept, None, NEWEST_TEAM) if d.id not in {o.id for o in own}]
    return [Candidate(d, 0.0, newest=True) for d in own] + [Candidate(d, 0.0) for d in team]


def _scopes(own: tuple[str, ...], tiers: Sequence[str]) -> list[tuple[Scope, int]]:
    """The scopes to search, each with the number of matches it offers."""
    kept = tuple(t for t in ("cold", "archive") if t in tiers)
    scopes = []
    if kept:
        scopes.append((Scope(tiers=kept, agents=own, active_only=True), OWN_POOL))
        scopes.append((Scope(tiers=kept, active_only=True), TEAM_POOL))
    if "wiki" in tiers:
        scopes.append((Scope(tiers=("wiki",), active_only=True), WIKI_POOL))
    return scopes


def _merged(hits: list[Hit], retired: list[str]) -> list[Candidate]:
    """Each document once, with its match scaled to 0..1, less retired archived text."""
    top = max((h.score for h in hits), default=0.0) or 1.0
    found: dict[str, Candidate] = {}
    for hit in hits:
        if hit.doc.id in found or _holds(hit.doc, retired):
            continue
        found[hit.doc.id] = Candidate(hit.doc, hit.score / top)
    return list(found.values())


def _retired(superseded: list[Hit]) -> list[str]:
    bodies = (_shown(h.doc.text.partition("\n")[2]) for h in superseded)
    return [b for b in bodies if len(b) > RETIRED_CHARS]


def _holds(doc: Doc, retired: list[str]) -> bool:
    if not retired or doc.tier != "archive":
        return False
    text = _shown(doc.text)
    return any(body in text for body in retired)


@functools.lru_cache(maxsize=4096)
def _shown(text: str) -> str:
    """A text as compared for a retired body: both read as entries show them (a derived
    entry leaves out lines of bare names). Cached: the same texts come back spawn after
    spawn in a long-lived process."""
    return gist(readable(text))


# Entries found by the facts of other candidates match the task at second hand.
RELATED_SHARE = 0.5


def related(
    index: Index, agent: str, facts: Sequence[str], tiers: Sequence[str]
) -> list[Candidate]:
    """Candidates that name some of these facts, their match scaled down."""
    if not facts:
        return []
    # Each fact's words, not the fact as a phrase: an entry naming `api-utils.tsx` in another
    # folder is related to one naming `docs/retro/api-utils.tsx` (asked as phrases, forward
    # coverage fell by 0.009 on the four teams).
    return [
        Candidate(c.doc, c.match * RELATED_SHARE)
        for c in matches(index, agent, " ".join(facts), tiers)
    ]


# An entry whose title holds this share of the task's words is what the task names: it is
# shown whole, first (the likeliest few).
NAMED_SHARE = 0.75
NAMED_MOST = 4


def named(found: Sequence[Candidate], terms: Sequence[str]) -> list[str]:
    """The ids of the entries a task's terms name (see NAMED_SHARE), best match first."""
    task = {words.stem(t) for t in terms}
    if not task:
        return []
    hits = []
    for c in sorted(found, key=lambda c: -c.match):
        if len(task & _title_stems(c.doc.title)) >= NAMED_SHARE * len(task):
            hits.append(c.doc.id)
    return hits[:NAMED_MOST]


# A task names an entry when it holds this share of the words of the entry's title (of at
# least two words): "follow the Zod validation policy" names "Always validate with Zod".
NAMED_BY_SHARE = 0.75


def named_by(task: str, docs: Sequence[Doc]) -> list[Doc]:
    """The documents whose titles the task names, however long the task."""
    said = {words.stem(t) for t in words.terms(task)}
    found = []
    for doc in docs:
        title = _title_stems(doc.title)
        if len(title) >= 2 and len(title & said) >= NAMED_BY_SHARE * len(title):
            found.append(doc)
    return found


@functools.lru_cache(maxsize=65536)
def _title_stems(title: str) -> frozenset[str]:
    """A title's terms, stemmed: the same titles come back spawn after spawn."""
    return frozenset(words.stem(t) for t in words.terms(title))


# A page the coordinator named is drawn on even where the task's words miss it.
NAMED_PAGE_MATCH = 0.5


def on_pages(index: Index, found: list[Candidate], pages: set[str]) -> list[Candidate]:
    """The candidates less the wiki beyond the named pages; a named page none of whose
    entries matched offers them all."""
    kept = [c for c in found if c.doc.tier != "wiki" or c.doc.path in pages]
    missed = pages - {c.doc.path for c in kept if c.doc.tier == "wiki"}
    for doc in index.docs(tier="wiki") if missed else ():
        if doc.path in missed and not doc.status:
            kept.append(Candidate(doc, NAMED_PAGE_MATCH))
    return kept
