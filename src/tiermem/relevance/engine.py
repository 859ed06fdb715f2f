"""The engine's one door: from a query and a room of tokens to the passages worth showing."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass

from ..index.protocol import Doc
from ..storage.entries import STRUCTURED
from ..text import prose
from ..text.facts import key_facts
from ..text.shown import inline
from . import candidates, packing, scoring
from .candidates import Candidate
from .packing import Group, Room
from .query import Query
from .ranking import Ranker

# A label names its entry in a few words: enough to say what it is, short enough to repeat.
LABEL_WORDS = 7
LABEL_CHARS = 50
# An agent's standing knowledge (its history's core context) takes at most this share of
# the room: it is always about the agent, rarely all about the task.
STANDING_SHARE = 0.2
STANDING_TAG = candidates.STANDING_TAG
LEFT_OUT_LISTED = 10


@dataclass(slots=True)
class Choice:
    """What a prompt's memory holds, and what bore on the task but did not fit."""

    groups: list[Group]
    left_out: list[Doc]


def choose(
    found: Sequence[Candidate],
    agent: str,
    query: Query,
    weights: Mapping[str, float],
    room: Room,
    related: Callable[[list[str]], list[Candidate]] | None = None,
    held: Sequence[str] = (),
    *,
    ranker: Ranker,
) -> Choice:
    """The passages of the candidates of cold, wiki and the archive (the tiers `weights`
    names; policies are pinned apart) that fill `room` tokens best for the agent's query.

    `related` finds more candidates by the facts the first ones make likeliest: entries that
    name the same files and identifiers bear on the task though they share none of its words.
    `held` is the text the prompt holds already (hot, pinned policies). `ranker` weighs each
    entry for the asking agent (see `ranking`).
    """
    found = [c for c in found if c.doc.tier in weights and c.doc.cls != "policy"]
    scorer = scoring.Scorer(query, agent, ranker, weights)
    pieces = scorer.pieces(found)
    newest = {c.doc.id for c in found if c.newest}
    if related is not None and EXPAND_FACTS:
        worth = _worth(_said(pieces), agent, newest)
        top = sorted(worth, key=lambda f: (-worth[f], f))[:EXPAND_FACTS]
        have = {c.doc.id for c in found}
        more = [c for c in related(top) if c.doc.id not in have and c.doc.tier in weights]
        found = found + [c for c in more if c.doc.cls != "policy"]
        pieces = scorer.pieces(found)
    whole = _named(found, query)
    pieces = _unrepeated(pieces, held, set(whole))
    labels = {c.doc.id: label(c.doc, agent) for c in found}
    caps = {
        c.doc.id: int(room.fill * STANDING_SHARE)
        for c in found
        if c.doc.agent == agent and STANDING_TAG in c.doc.tags.split(",")
    }
    worth = _worth(_said(pieces), agent, newest)
    groups = packing.pack(pieces, room, labels, worth, caps, whole)
    return Choice(groups, _left_out(found, groups))


def _said(pieces: Sequence[scoring.Piece]) -> list[scoring.Piece]:
    """The passages that say something of the names they hold (a list of names alone tells
    nothing of how likely a name is to be used)."""
    return [p for p in pieces if not p.listed]


def _named(found: Sequence[Candidate], query: Query) -> list[str]:
    """The entries the task names, to be shown whole: a session's raw text before its
    summary (the summary holds a part of what the raw text says)."""
    named = candidates.named(found, query.task_terms)
    tiers = {c.doc.id: c.doc.tier for c in found}
    return sorted(named, key=lambda doc_id: tiers[doc_id] != "archive")


def _unrepeated(
    pieces: Sequence[scoring.Piece], held: Sequence[str], whole: Set[str] = frozenset()
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


# The likeliest facts of the first candidates that look for more.
EXPAND_FACTS = 16


# How likely a fact of the candidates is to be used by the next piece of work, as a logistic
# model of what is known of it here: how well the best passage naming it matches the task,
# how many passages name it (the subject's central names recur), whether the agent itself
# wrote it, whether it is in one of the agent's newest entries, whether a past session's
# summary kept it. Fitted on one team's forward probes and checked on another's (area under
# the curve 0.85 on both). Refitted with lists of names no longer among the passages (on
# SadConsole and primal-grid, 120 probes each), the area on squad and jjgnet-broadcast
# stayed 0.85 and forward coverage in prose fell on the teams it was fitted on (0.606 to
# 0.556, 0.624 to 0.598): what matters to packing is the chances' scale against a passage's
# match, which these values hold. Richer features (the fact in the task's words, its age,
# the entries that match best) and a boosted-tree model gained at most 0.01 of area: which
# names the next work uses is mostly not in the words.
FACT_BIAS = -6.0
FACT_MATCH = 2.3
FACT_MENTIONS = 0.75
FACT_OWN = 0.1
FACT_NEWEST = 0.6
FACT_SUMMARY = 0.3


@dataclass(slots=True)
class _FactSeen:
    match: float = 0.0
    mentions: int = 0
    own: bool = False
    newest: bool = False
    summary: bool = False


def _worth(
    pieces: Sequence[scoring.Piece], agent: str, newest: Set[str] = frozenset()
) -> dict[str, float]:
    """Each fact's chance of being what the next piece of work uses (see FACT_BIAS);
    `newest` holds the ids of the agent's newest entries."""
    best = max((p.score for p in pieces), default=0.0) or 1.0
    seen: dict[str, _FactSeen] = {}
    for p in pieces:
        for fact in p.passage.facts:
            s = seen.setdefault(fact, _FactSeen())
            s.match = max(s.match, p.score / best)
            s.mentions += 1
            s.own = s.own or p.doc.agent == agent
            s.newest = s.newest or p.doc.id in newest
            s.summary = s.summary or p.doc.tier == "cold"
    return {f: _chance(s) for f, s in seen.items()}


def _chance(s: _FactSeen) -> float:
    logit = (
        FACT_BIAS
        + FACT_MATCH * s.match
        + FACT_MENTIONS * math.log(1 + s.mentions)
        + FACT_OWN * s.own
        + FACT_NEWEST * s.newest
        + FACT_SUMMARY * s.summary
    )
    return 1.0 / (1.0 + math.exp(-logit))


# Entries matching the task at least this well (against the best match) are reported as
# left out when none of their passages fitted.
LEFT_OUT_MATCH = 0.5


def _left_out(found: Sequence[Candidate], groups: Sequence[Group]) -> list[Doc]:
    """The best-matching entries the prompt shows nothing of, best first (an entry in parts
    counts as shown when any part of it is)."""
    shown = {g.doc.parent or g.doc.id for g in groups}
    ranked = sorted(found, key=lambda c: (-c.match, c.doc.id))
    kept = [
        c.doc
        for c in ranked
        if c.match >= LEFT_OUT_MATCH and (c.doc.parent or c.doc.id) not in shown
    ]
    return kept[:LEFT_OUT_LISTED]


def label(doc: Doc, agent: str) -> str:
    """A short label of an entry: a few words of its title, then what kind of entry it is,
    when it was written, the id that reads it whole, and whose it is when it is not the
    asking agent's."""
    parts = [kind(doc), doc.created[:10] or "undated", doc.parent or doc.id]
    if doc.agent and doc.agent != agent:
        parts.append(f"by {doc.agent}")
    return inline(f"{short_title(doc.title, doc.text)} ({', '.join(parts)})")


def kind(doc: Doc) -> str:
    """What an entry is, in a word: its class when it binds (a policy, decision, convention
    or contract), an agent's standing knowledge, an archived text, else a session summary."""
    if STANDING_TAG in doc.tags.split(","):
        return "standing"
    if doc.cls in STRUCTURED:
        return doc.cls
    return "archived" if doc.tier == "archive" else "session"


UNTITLED = "untitled"
# A title of fewer plain words than this says nothing of its own ("Problem", "Learnings",
# "Phase 2"): the entry's first line says more.
TITLE_WORDS = 2


def short_title(title: str, text: str = "") -> str:
    """The first words of a title (without marks or a leading date), cut at a word with `…`;
    a title that says nothing alone gives way to the first line of the entry's body, and a
    title of marks alone is named as such."""
    clean = prose.clean_title(title, LABEL_CHARS)
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
