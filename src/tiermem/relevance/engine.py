"""The relevance engine's one door: what a spawn shows of memory within its room, and why.

`choose` takes the candidates the index found and the ask (the task's query, the agent, the
tiers and their weights, the room, what the prompt holds already, the task's facts) and
returns a `Choice`: passages of cold, wiki and archived entries grouped under their labels,
each group with the reason it was chosen, and what bore on the task but did not fit (the
spawn pins the policies before it, `pinning`). The spawn renders it; the report and the log read its
reasons. Search's places (`places`) score passages with the same scorer (`scoring`).

How the room is filled: an entry or section the task names comes first, as whole as the room
allows; then passages by the likely use of the facts they bring per token (`worth`), while
the room lasts and passages that bear on the task remain. Nothing that shares nothing with
the task is shown as filler.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..index.protocol import Doc
from ..storage.entries import STRUCTURED
from ..text import prose, words
from ..text.facts import key_facts
from ..text.shown import inline
from . import candidates, packing, scoring, worth
from .candidates import Candidate, Named
from .packing import Group, Room
from .query import Query
from .ranking import Ranker

# A label names its entry in a few words: enough to say what it is, short enough to repeat.
LABEL_WORDS = 6
LABEL_CHARS = 44
# An agent's standing knowledge (its history's core context) takes at most this share of
# the room but for the sections the task names: it is always about the agent, rarely all
# about the task.
STANDING_SHARE = 0.2
STANDING_TAG = candidates.STANDING_TAG
LEFT_OUT_LISTED = 10


@dataclass(frozen=True, slots=True)
class Ask:
    """What the engine is asked for a spawn."""

    query: Query  # the task's terms and the agent's context (`query.build`)
    agent: str
    weights: Mapping[str, float]  # the tiers memory may come from, weighed
    room: int  # the tokens memory may take
    held: Sequence[str] = ()  # text the prompt holds already (hot, pinned policies)
    facts: frozenset[str] = frozenset()  # the names the task gives (files, identifiers, issues)


@dataclass(slots=True)
class Choice:
    """What a prompt's memory holds, and what bore on the task but did not fit."""

    groups: list[Group]
    left_out: list[Doc]
    full: bool = False  # the room ran out while passages that bear on the task remained
    reasons: dict[str, str] = field(default_factory=dict)  # entry id -> why it is shown


def choose(
    found: Sequence[Candidate],
    ask: Ask,
    related: Callable[[list[str]], list[Candidate]] | None = None,
    *,
    ranker: Ranker,
) -> Choice:
    """The passages of the candidates of cold, wiki and the archive (the tiers the ask
    weighs; policies are pinned apart) that fill the room best for the agent's task.

    `related` finds more candidates by the facts the first ones make likeliest: entries that
    name the same files and identifiers bear on the task though they share none of its words.
    `ranker` weighs each entry for the asking agent (see `ranking`).
    """
    agent, query = ask.agent, ask.query
    found = [c for c in found if c.doc.tier in ask.weights and c.doc.cls != "policy"]
    scorer = scoring.Scorer(query, agent, ranker, ask.weights)
    pieces = scorer.pieces(found)
    newest = {c.doc.id for c in found if c.newest}
    ago = {c.doc.id: (c.own_ago, c.team_ago) for c in found}
    task = frozenset(words.stem(t) for t in query.task_terms)
    if related is not None and EXPAND_FACTS:
        chances = worth.chances(_said(pieces), agent, ago, task)
        top = sorted(chances, key=lambda f: (-chances[f], f))[:EXPAND_FACTS]
        have = {c.doc.id for c in found}
        more = [c for c in related(top) if c.doc.id not in have and c.doc.tier in ask.weights]
        found = found + [c for c in more if c.doc.cls != "policy"]
        pieces = scorer.pieces(found)
        ago = {c.doc.id: (c.own_ago, c.team_ago) for c in found}
    named = candidates.named(found, query.task_terms, ask.facts)
    pieces = _unrepeated(pieces, ask.held, {doc_id for doc_id, _ in named})
    pieces = _bearing(pieces, task, ask.facts)
    labels = {c.doc.id: label(c.doc, agent) for c in found}
    pieces = _untitled(pieces, labels)
    caps = {
        c.doc.id: int(ask.room * STANDING_SHARE)
        for c in found
        if c.doc.agent == agent and STANDING_TAG in c.doc.tags.split(",")
    }
    chances = worth.chances(_said(pieces), agent, ago, task)
    room = Room(ask.room, int(ask.room * packing.WHOLE_SHARE))
    packed = packing.pack(pieces, room, labels, chances, caps, _named_first(found, named))
    groups = packed.groups
    return Choice(
        groups,
        _left_out(pieces, groups) if packed.full else [],
        packed.full,
        {g.doc.id: _why(g, query, named, newest) for g in groups},
    )


def _said(pieces: Sequence[scoring.Piece]) -> list[scoring.Piece]:
    """The passages that say something of the names they hold (a list of names alone tells
    nothing of how likely a name is to be used)."""
    return [p for p in pieces if not p.listed]


def _named_first(found: Sequence[Candidate], named: Sequence[Named]) -> list[Named]:
    """The entries and sections the task names, to be shown whole: a session's raw text
    before its summary (the summary holds a part of what the raw text says)."""
    tiers = {c.doc.id: c.doc.tier for c in found}
    return sorted(named, key=lambda n: tiers[n[0]] != "archive")


def _unrepeated(
    pieces: Sequence[scoring.Piece], held: Sequence[str], whole: set[str]
) -> list[scoring.Piece]:
    """The pieces less archived lines the prompt may hold in a finished form: the raw text
    of a note its session's summary kept, of a decision the wiki holds (but for an entry
    the task names, shown whole)."""
    finished = {packing.gist(p.text) for p in pieces if p.doc.tier != "archive"}
    finished |= {packing.gist(line) for text in held for line in text.splitlines()}
    return [
        p
        for p in pieces
        if p.doc.tier != "archive" or p.doc.id in whole or packing.gist(p.text) not in finished
    ]


def _untitled(pieces: Sequence[scoring.Piece], labels: Mapping[str, str]) -> list[scoring.Piece]:
    """The pieces, less the leads that only say again what their entry's label says (a
    session's heading under a label made of it): shown once, in the label."""
    return [
        replace(p, lead="", lead_tokens=0) if p.lead and _echoes(p.lead, labels[p.doc.id]) else p
        for p in pieces
    ]


def _echoes(lead: str, label: str) -> bool:
    """Whether the label says all a lead says: a label whose title is cut (`Caroline:
    Researching…`) shows only the lead's start, so the lead stays."""
    said = words.gist(lead).strip(" :*_")
    title = words.gist(label.rsplit(" (", 1)[0]).strip()
    if not said or not title or title.endswith(prose.ELLIPSIS):
        return False
    return title.startswith(said)


def _bearing(
    pieces: Sequence[scoring.Piece], task: frozenset[str], facts: frozenset[str]
) -> list[scoring.Piece]:
    """The pieces of entries that bear on the task: those whose text holds a word of the
    task (`task`, stems) or a name it gives (`facts`), or a name (a path, an identifier)
    that a passage holding a task's word holds. An entry that shares nothing with the task
    is filler, however new, and however much it shares with the agent's other work."""
    # An entry's text is read once, however many of its passages there are.
    texts = {(p.doc.id, p.doc.text) for p in pieces}
    said = {doc_id for doc_id, text in texts if _holds(text, task, facts)}
    names = {
        f
        for p in pieces
        if p.passage.facts and _holds(f"{p.lead}\n{p.text}", task, facts)
        for f in p.passage.facts
    }
    bearing = said | {p.doc.id for p in pieces if p.passage.facts & names}
    return [p for p in pieces if p.doc.id in bearing]


def _holds(text: str, task: frozenset[str], facts: frozenset[str]) -> bool:
    counts = words.stem_counts(text)
    return any(t in counts for t in task) or any(f in text.lower() for f in facts)


# The likeliest facts of the first candidates that look for more.
EXPAND_FACTS = 16


def _left_out(pieces: Sequence[scoring.Piece], groups: Sequence[Group]) -> list[Doc]:
    """The entries that bear on the task and that the prompt shows nothing of, best match
    first (an entry in parts counts as shown when any part of it is)."""
    shown = {g.doc.parent or g.doc.id for g in groups}
    best: dict[str, tuple[float, Doc]] = {}
    for p in pieces:
        key = p.doc.parent or p.doc.id
        if key not in shown and p.score > best.get(key, (-1.0, p.doc))[0]:
            best[key] = (p.score, p.doc)
    ranked = sorted(best.values(), key=lambda sd: (-sd[0], sd[1].id))
    return [d for _, d in ranked[:LEFT_OUT_LISTED]]


# The task's words a reason quotes at most.
REASON_WORDS = 4


def _why(group: Group, query: Query, named: Sequence[Named], newest: set[str]) -> str:
    """Why a group is shown, in a few words: the task names it (or a section of it), the
    task's words it holds, the names it shares with the rest, or whose standing knowledge
    it is."""
    doc = group.doc
    sections = [lead for doc_id, lead in named if doc_id == doc.id]
    if None in sections:
        return "the task names it"
    if sections and (lead := sections[0]) is not None:
        return f"the task names its section '{inline(doc.text[lead[0] : lead[1]].strip('#* '))}'"
    said = " ".join([doc.title, *(p.lead for p in group.pieces), *(p.text for p in group.pieces)])
    held = scoring.held_terms(said, query.task_terms)[:REASON_WORDS]
    if held:
        return "it says " + ", ".join(f"'{t}'" for t in held)
    if STANDING_TAG in doc.tags.split(","):
        return "the agent's standing knowledge"
    if doc.id in newest:
        return "among the agent's newest entries"
    facts = sorted({f for p in group.pieces for f in p.passage.facts})[:REASON_WORDS]
    if facts:
        return "it names " + ", ".join(f"`{f}`" for f in facts) + " as matching passages do"
    return "it matches the agent's current work"


def label(doc: Doc, agent: str) -> str:
    """A short label of an entry: a few words of its title, then whose it is (when it is not
    the asking agent's) and what kind, when it was written, and the id that reads it whole."""
    what = " ".join(filter(None, (doc.agent if doc.agent != agent else "", kind(doc))))
    parts = [what, doc.created[:10] or "undated", doc.parent or doc.id]
    return inline(f"{short_title(doc.title, doc.text)} ({', '.join(filter(None, parts))})")


def kind(doc: Doc) -> str:
    """What an entry is, in a word: its class when it binds (a policy, decision, convention
    or contract), an agent's standing knowledge, an archived text, else a session summary."""
    if STANDING_TAG in doc.tags.split(","):
        return "standing"
    if doc.cls in STRUCTURED:
        return doc.cls
    return ""


UNTITLED = "untitled"
# Titles a file gives every entry of its kind: they say whose file it was, not what the entry
# says (an archived hot checkpoint is "ada: hot memory", a history "Ada — Project History").
_GENERIC_TITLE = re.compile(r"^[\w .-]+(?::| —| -) (?:hot memory|project history|history)$", re.I)
# A title of fewer plain words than this says nothing of its own ("Problem", "Learnings",
# "Phase 2"): the entry's first line says more.
TITLE_WORDS = 2


@functools.lru_cache(maxsize=8192)
def short_title(title: str, text: str = "") -> str:
    """The first words of a title (without marks or a leading date), cut at a word with `…`;
    a title that says nothing alone gives way to the first line of the entry's body, and a
    title of marks alone is named as such (cached: every candidate is labelled, and the
    same entries come back spawn after spawn)."""
    clean = "" if _GENERIC_TITLE.match(title.strip("# ")) else prose.clean_title(title, LABEL_CHARS)
    if len(prose.plain_words(clean)) < TITLE_WORDS and not key_facts(clean):
        first = next((ln for ln in text.splitlines()[1:] if ln.strip()), "")
        better = prose.clean_title(first, LABEL_CHARS)
        if len(prose.plain_words(better)) >= TITLE_WORDS:
            clean = f"{clean}: {better}" if clean else better
            clean = prose.cut_at_word(clean, LABEL_CHARS)
    if not any(ch.isalnum() for ch in clean):
        return UNTITLED
    words = clean.removesuffix(prose.ELLIPSIS).split(" ")
    if len(words) > LABEL_WORDS:
        return " ".join(words[:LABEL_WORDS]).rstrip(" ,;:—–-(") + prose.ELLIPSIS
    return clean
