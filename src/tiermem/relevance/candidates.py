"""Candidates: the entries and archived texts a spawn may draw on, found by the index.

Everything a spawn may load is a candidate: active cold entries and archived text of every
agent (the asking agent's own and the team's in a scope of their own, so another agent's
long history cannot crowd them out), and the whole active wiki. Superseded entries are not,
nor archived text that holds one: a decision the team replaced must not come back. One
query of the index serves every scope.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence, Set
from dataclasses import dataclass, replace

from ..index import passages
from ..index.protocol import Doc, Hit, Index, Scope
from ..storage.layout import TEAM
from ..text import words
from ..text.prose import readable
from ..text.words import gist
from ..vocabulary import LASTING_TIERS, OWNED_RECALL_TIERS

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
    # How many of the agent's (own) or the team's (team) sessions ago it was written, among
    # the newest; -1 when it is older than those.
    own_ago: int = -1
    team_ago: int = -1


def find(index: Index, agent: str, text: str, tiers: Sequence[str]) -> list[Candidate]:
    """The candidates for an agent's query within some tiers (cold, wiki, archive): the
    index's best matches, then the newest entries of the agent and of the whole team, and
    the agent's standing knowledge whatever the task's words."""
    matched, retired = _matches(index, agent, text, tiers)
    fresh = {c.doc.id: c for c in newest(index, agent, tiers) if not _holds(c.doc, retired)}
    marked = [_dated(c, fresh[c.doc.id]) if c.doc.id in fresh else c for c in matched]
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
        for d in index.docs(tier="cold", agent=agent, tag=STANDING_TAG)
        if not d.status
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
    superseded = Scope(tiers=LASTING_TIERS, status="superseded")
    found = index.search_each(
        text, [s for s, _ in scopes] + [superseded], max(n for _, n in scopes)
    )
    pools = [hits[:n] for hits, (_, n) in zip(found, scopes, strict=False)]
    retired = _retired(found[-1][:SUPERSEDED_POOL])
    return _merged([h for pool in pools for h in pool], retired), retired


# The next piece of work most often builds on the last few: the newest entries of the agent
# and of the team are candidates whatever the task's words (at a match of 0). On the four
# teams' forward probes, the names of an agent's last session alone held about a third of
# what its next piece of work used, its last three sessions' 0.35-0.61, the team's last ten
# sessions' 0.48-0.70.
NEWEST_OWN = 20
NEWEST_TEAM = 30


def newest(index: Index, agent: str, tiers: Sequence[str]) -> list[Candidate]:
    """The newest entries of the agent and of the team in some tiers, unmatched, each with
    how many sessions ago it was written."""
    kept = [t for t in tiers if t != "hot"]
    own = index.newest(kept, agent, NEWEST_OWN)
    team = index.newest(kept, None, NEWEST_TEAM)
    own_ago, team_ago = _sessions_ago(own), _sessions_ago(team)
    mine = {d.id for d in own}
    found = [
        Candidate(d, 0.0, newest=True, own_ago=own_ago[d.id], team_ago=team_ago.get(d.id, -1))
        for d in own
    ]
    return found + [Candidate(d, 0.0, team_ago=team_ago[d.id]) for d in team if d.id not in mine]


def _sessions_ago(docs: Sequence[Doc]) -> dict[str, int]:
    """For documents newest first, how many distinct writing times came after each one's (a
    session's summary and its archived text share one)."""
    times: dict[str, int] = {}
    for doc in docs:
        times.setdefault(doc.created[:16], len(times))
    return {doc.id: times[doc.created[:16]] for doc in docs}


def _dated(matched: Candidate, fresh: Candidate) -> Candidate:
    """A matched candidate with what its newest-entries twin knows of its age."""
    return replace(matched, newest=fresh.newest, own_ago=fresh.own_ago, team_ago=fresh.team_ago)


def _scopes(own: tuple[str, ...], tiers: Sequence[str]) -> list[tuple[Scope, int]]:
    """The scopes to search, each with the number of matches it offers."""
    kept = tuple(t for t in OWNED_RECALL_TIERS if t in tiers)
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
# shown whole, first (the likeliest few); so is a section whose heading does, or whose heading
# holds a name the task gives (a file, an identifier, an issue number).
NAMED_SHARE = 0.75
SECTION_SHARE = 0.5
NAMED_MOST = 4
# An entry the task names (its id, and None), or one section of it (its id, and the span of
# the heading or lead-in its passages are under).
Named = tuple[str, "tuple[int, int] | None"]


def named(
    found: Sequence[Candidate], terms: Sequence[str], facts: Set[str] = frozenset()
) -> list[Named]:
    """The entries (id, None) and sections (id, the span of their heading) that a task's
    terms and names name, best match first (see NAMED_SHARE)."""
    task = {words.stem(t) for t in terms}
    if not task and not facts:
        return []
    hits: list[Named] = []
    for c in sorted(found, key=lambda c: -c.match):
        if task and len(task & _title_stems(c.doc.title)) >= NAMED_SHARE * len(task):
            hits.append((c.doc.id, None))
            continue
        for lead, text in _headings(c.doc.text, c.doc.passages):
            if _names(text, task, facts):
                hits.append((c.doc.id, lead))
    return hits[:NAMED_MOST]


def _names(heading: str, task: Set[str], facts: Set[str]) -> bool:
    """Whether a section's heading is what the task names: it shares two or more words with
    the task, half of the shorter of the two ("Stage 7 publishing analysis" names "Stage 7
    Publishing Architecture"), or it holds one of the names the task gives."""
    low = heading.lower()
    if any(f in low for f in facts):
        return True
    said = _title_stems(heading)
    shared = len(task & said)
    return shared >= 2 and shared >= SECTION_SHARE * min(len(task), len(said))


@functools.lru_cache(maxsize=8192)
def _headings(text: str, stored: str) -> tuple[tuple[tuple[int, int], str], ...]:
    """The distinct lines that introduce an entry's passages (their spans and text), in order
    (cached: the same entries come back spawn after spawn)."""
    leads = dict.fromkeys(p.lead for p in passages.decode(stored) if p.lead is not None)
    return tuple((lead, text[lead[0] : lead[1]]) for lead in leads if lead is not None)


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
