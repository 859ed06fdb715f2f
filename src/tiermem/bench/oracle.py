"""What the best packing of a store's memory could put in a spawn: the bar for the assembler.

For each probe, the oracle knows the facts it needs and packs, from everything a spawn of
that agent can reach (active cold of the agent and the team, the wiki, the archive of the
agent and the team), the entries with the most facts per token still missing, within the
tokens the spawn left for memory. No assembler that ranks without knowing the answer can
do better; the gap between the two is what ranking and packing lose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..index.protocol import Doc
from ..memory import Memory
from ..storage.layout import TEAM
from ..vocabulary import LASTING_TIERS
from .facts import present_facts

# A block's heading and marks, over the stored count of its text.
BLOCK_TOKENS = 12


@dataclass(frozen=True)
class _Unit:
    doc: Doc
    facts: frozenset[str]
    cost: int


class Oracle:
    """Every entry of a store that holds any probe's fact, with the facts it holds."""

    def __init__(self, mem: Memory, facts: Iterable[str]) -> None:
        wanted = set(facts)
        mem.sync()
        self.units = [
            _Unit(doc, frozenset(found), doc.tokens + BLOCK_TOKENS)
            for doc in _reachable(mem.context.index.docs())
            if (found := present_facts(wanted, doc.text))
        ]

    def coverage(self, agent: str, facts: frozenset[str], budget: int) -> float:
        """The share of `facts` the best packing for `agent` holds within `budget` tokens."""
        owners = (agent, TEAM)
        pool = [
            u
            for u in self.units
            if u.facts & facts and (u.doc.tier == "wiki" or u.doc.agent in owners)
        ]
        return len(_greedy(pool, facts, budget)) / len(facts) if facts else 0.0


def _reachable(docs: Sequence[Doc]) -> list[Doc]:
    """What a spawn may load: active cold and wiki entries, and archived text."""
    return [d for d in docs if d.tier == "archive" or (d.tier in LASTING_TIERS and not d.status)]


def _greedy(pool: list[_Unit], facts: frozenset[str], budget: int) -> set[str]:
    """The facts of the units taken by most new facts per token while they fit."""
    got: set[str] = set()
    spent = 0
    while True:
        fits = [u for u in pool if spent + u.cost <= budget and (u.facts & facts) - got]
        if not fits:
            return got
        best = max(fits, key=lambda u: len((u.facts & facts) - got) / u.cost)
        pool.remove(best)
        spent += best.cost
        got |= best.facts & facts
