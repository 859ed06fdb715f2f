"""Ranking: how much a match counts for the agent asking, and the order hits are offered in.

The index scores documents with BM25 and the engine scores the passages of each (`scoring`);
a `Ranker` says how many times its score a document counts for the asking agent (`weight`)
and orders hits (`rank`). What a ranker changes, and all it changes: the order of search
results, the order in which a spawn pins the policies that bear on its task, and the weight
of a spawn's passages of each entry (so which passages fill the room). What it does not:
which entries are candidates (`candidates`), the weight of the team's entries, of the wiki
and of each tier against another agent's (`scoring`), and how passages are packed
(`packing`). `OwnFirst` weighs the asking agent's own memory OWN_WEIGHT times;
`tiermem.testing.ByScore` weighs every entry alike.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ..index.protocol import Doc, Hit

# An agent's own memory is the likeliest to bear on its question; the team's decisions still
# rank first when they match clearly better. Chosen on the four corpora's probes: against 1.0
# and 2.0, 1.5 kept replayed recall and coverage and raised them after an import.
OWN_WEIGHT = 1.5
# Among equal scores, the more binding kind of entry comes first.
CLASS_ORDER = {
    "policy": 0,
    "decision": 1,
    "contract": 2,
    "convention": 3,
    "learning": 4,
    "status": 5,
    "action": 6,
}


@runtime_checkable
class Ranker(Protocol):
    """How much each entry counts for the agent asking, and the order it sees hits in."""

    def weight(self, doc: Doc, agent: str | None) -> float:
        """How many times its score a document counts for the asking agent (1.0: as is)."""
        ...

    def rank(self, hits: Sequence[Hit], agent: str | None) -> list[Hit]:
        """The hits, best first, with the scores they were ranked by."""
        ...


class OwnFirst:
    """The asking agent's own entries count `boost` times their score, others' as scored.

    Hits tie to the newer entry, then to the more binding class, then to the smaller id,
    so the same store and question always give the same order.
    """

    def __init__(self, boost: float = OWN_WEIGHT) -> None:
        self.boost = boost

    def weight(self, doc: Doc, agent: str | None) -> float:
        """`boost` for the asking agent's own entries, else 1.0."""
        return self.boost if agent and doc.agent == agent else 1.0

    def rank(self, hits: Sequence[Hit], agent: str | None) -> list[Hit]:
        """Hits re-scored for the agent and sorted best first."""
        weighed = [
            replace(h, score=h.score * self.boost) if agent and h.doc.agent == agent else h
            for h in hits
        ]
        return sorted(weighed, key=_order)


def _order(hit: Hit) -> tuple[float, float, int, str]:
    doc = hit.doc
    return (-hit.score, -recency(doc.created), CLASS_ORDER.get(doc.cls, 9), doc.id)


@functools.lru_cache(maxsize=8192)
def recency(created: str) -> float:
    """A creation time as a number that sorts like it (cached: every spawn sorts again)."""
    digits = "".join(ch for ch in created if ch.isdigit())[:14]
    return float(digits or 0)


DEFAULT = OwnFirst()
