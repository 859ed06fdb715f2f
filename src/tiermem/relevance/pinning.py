"""Pinning: which policies a spawn pins ahead of the passages, in what order, and how much of
the room they may take."""

from __future__ import annotations

from collections.abc import Sequence

from ..index.protocol import Doc, Hit, Index
from ..storage.governed import ALWAYS
from ..storage.layout import TEAM
from . import candidates
from .candidates import Candidate
from .ranking import Ranker

# Pinned policies take at most this share of the room: rules, not the whole of memory.
POLICY_SHARE = 0.15
# Policies matching under this share of the best policy match are not pinned.
POLICY_FLOOR = 0.7


def policies(
    index: Index, ranker: Ranker, agent: str, found: Sequence[Candidate], task: str
) -> list[list[Doc]]:
    """Policies that bear on the task, best first, each whole: all the parts of a long one.

    A policy the task names (its title's words are in the task) comes first, however long
    the task, then one the team said to load always (a POLICY of Squad's governed memory,
    load guidance ALWAYS); then those the task's words reach best, in the ranker's order.
    Any other policy the task's words do not reach is not pinned: its rule would cost tokens
    in every spawn for nothing. One split in parts is pinned whole or not at all, so the rule
    never arrives without its reasons, nor a pointer without its rule.
    """
    owners = (agent, TEAM)

    def ours(doc: Doc) -> bool:
        return doc.cls == "policy" and (doc.tier == "wiki" or doc.agent in owners)

    hits = [Hit(c.doc, c.match) for c in found if c.match > 0 and ours(c.doc)]
    best = max((h.score for h in hits), default=0.0)
    every = index.docs(cls="policy")
    named = [Hit(d, best or 1.0) for d in candidates.named_by(task, every)]
    # What the team said to load always (Squad's load guidance ALWAYS), whatever the task.
    always = [Hit(d, best or 1.0) for d in every if ALWAYS in d.tags.split(",")]
    reached = ranker.rank([h for h in hits if h.score >= best * POLICY_FLOOR], agent)
    groups: dict[str, list[Doc]] = {}
    chosen = [*named, *always]
    for hit in [*(h for h in chosen if ours(h.doc) and not h.doc.status), *reached]:
        key = hit.doc.parent or hit.doc.id
        if key not in groups:
            parts = index.parts(key) if hit.doc.parent else [hit.doc]
            groups[key] = [d for d in parts if not d.status]
    return list(groups.values())
