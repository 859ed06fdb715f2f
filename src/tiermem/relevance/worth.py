"""Worth: how likely each fact of the candidates is to be what the next piece of work uses.

The facts (paths, identifiers, issue numbers, quoted commands) are what the next piece of work
looks up and reuses, so passages are packed by the chances of the new facts they bring. A
fact's chance is a logistic model of what the candidates say of it (`FEATURES`): how well the
best passage naming it matches the task, how many passages and entries name it (a subject's
central names recur), whether the agent itself wrote it and how many sessions ago, how
recently the team wrote it, whether the task names its words, which tiers hold it, and its
kind (a path, an identifier, a quoted span, an issue number, a version) and length.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..text import words
from .scoring import Piece

# The model's weights, by feature (see `features`), and its bias.
WEIGHTS: Mapping[str, float] = {
    "match": 2.3,
    "mentions": 0.75,
    "entries": 0.0,
    "own": 0.1,
    "own_recent": 1.5,
    "team_recent": 0.8,
    "in_task": 0.0,
    "summary": 0.3,
    "wiki": 0.0,
    "archive": 0.0,
    "path": 0.0,
    "identifier": 0.0,
    "span": 0.0,
    "issue": 0.0,
    "length": 0.0,
}
BIAS = -6.0
# A session's weight in `own_recent` (`team_recent`) halves every OWN_HALF (TEAM_HALF)
# sessions back.
OWN_HALF = 2.0
TEAM_HALF = 4.0
_ISSUE = re.compile(r"#\d+")
_VERSION = re.compile(r"v?\d+\.\d+(?:\.\d+)?")
_PATH = re.compile(r".*(?:/|\.[a-z]{1,5})$")
_IDENTIFIER = re.compile(r"[a-z0-9_]+")


@dataclass(slots=True)
class _Seen:
    match: float = 0.0
    mentions: int = 0
    entries: set[str] = field(default_factory=set)
    own: bool = False
    own_recent: float = 0.0
    team_recent: float = 0.0
    tiers: set[str] = field(default_factory=set)


def features(
    pieces: Sequence[Piece],
    agent: str,
    ago: Mapping[str, tuple[int, int]],
    task: frozenset[str] = frozenset(),
) -> dict[str, dict[str, float]]:
    """What the candidates say of each of their facts, feature by feature (`WEIGHTS`).

    `ago` says how many of the agent's and of the team's sessions ago an entry was written
    (-1: longer ago than the newest looked at); `task` holds the stems of the task's terms."""
    best = max((p.score for p in pieces), default=0.0) or 1.0
    seen: dict[str, _Seen] = {}
    for p in pieces:
        if not p.passage.facts:
            continue
        own_ago, team_ago = ago.get(p.doc.id, (-1, -1))
        # What the passage says of each of its facts alike.
        match, entry, own = p.score / best, p.doc.parent or p.doc.id, p.doc.agent == agent
        own_recent, team_recent = _decay(own_ago, OWN_HALF), _decay(team_ago, TEAM_HALF)
        for fact in p.passage.facts:
            s = seen.get(fact)
            if s is None:
                s = seen[fact] = _Seen()
            s.match = max(s.match, match)
            s.mentions += 1
            s.entries.add(entry)
            s.own = s.own or own
            s.own_recent = max(s.own_recent, own_recent)
            s.team_recent = max(s.team_recent, team_recent)
            s.tiers.add(p.doc.tier)
    return {fact: _described(fact, s, task) for fact, s in seen.items()}


def _decay(sessions_ago: int, half: float) -> float:
    return 0.5 ** (sessions_ago / half) if sessions_ago >= 0 else 0.0


def _described(fact: str, s: _Seen, task: frozenset[str]) -> dict[str, float]:
    kind, stems, length = _alone(fact)
    return {
        "match": s.match,
        "mentions": math.log1p(s.mentions),
        "entries": math.log1p(len(s.entries)),
        "own": float(s.own),
        "own_recent": s.own_recent,
        "team_recent": s.team_recent,
        "in_task": float(bool(task & stems)),
        "summary": float("cold" in s.tiers),
        "wiki": float("wiki" in s.tiers),
        "archive": float("archive" in s.tiers),
        "path": float(kind == "path"),
        "identifier": float(kind == "identifier"),
        "span": float(kind == "span"),
        "issue": float(kind == "issue"),
        "length": length,
    }


@functools.lru_cache(maxsize=65536)
def _alone(fact: str) -> tuple[str, frozenset[str], float]:
    """What a fact says of itself: its kind, its words' stems and its length, as features
    read them (cached: the same facts come back spawn after spawn)."""
    return _kind(fact), frozenset(words.stem(w) for w in words.words(fact)), math.log1p(len(fact))


def _kind(fact: str) -> str:
    if _ISSUE.fullmatch(fact):
        return "issue"
    if _VERSION.fullmatch(fact):
        return "version"
    if _PATH.fullmatch(fact):
        return "path"
    if _IDENTIFIER.fullmatch(fact):
        return "identifier"
    return "span"


def chances(
    pieces: Sequence[Piece],
    agent: str,
    ago: Mapping[str, tuple[int, int]] | None = None,
    task: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """Each fact's chance of being what the next piece of work uses (see `features`)."""
    # A feature of no weight adds nothing: it is left out of the sums.
    return {
        fact: _logistic(BIAS + sum(WEIGHTS[k] * v for k, v in x.items() if WEIGHTS[k]))
        for fact, x in features(pieces, agent, ago or {}, task).items()
    }


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))
