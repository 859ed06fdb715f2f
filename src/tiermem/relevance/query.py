"""The query a spawn ranks by: the task's words, then the agent's current context.

The task says what the work is; the agent's hot tier (its task, why and last actions) and
its newest entries say what it has been doing, which is what the next piece of work most
often builds on. Context words weigh less than the task's, and only the most distinctive
of them are kept, so a long history cannot drown the task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..index.protocol import Index
from ..text import words

HOT_WEIGHT = 0.5
RECENT_WEIGHT = 0.3
# Context words kept: enough to name the subject the agent is on, too few to be a topic model.
CONTEXT_TERMS = 10
# The agent's newest entries whose words say what it has been working on.
RECENT_ENTRIES = 3


@dataclass(frozen=True, slots=True)
class Query:
    """Weighted terms: the task's (a word at weight 1, a part of a CamelCase name at
    `words.PART_WEIGHT`, as passages count them), its context's below."""

    weights: dict[str, float]
    task: tuple[str, ...] = ()

    @property
    def task_terms(self) -> list[str]:
        """The task's own terms, in order."""
        return list(self.task)

    @property
    def task_text(self) -> str:
        """The task's own terms, as the index is asked for them."""
        return " ".join(self.task)

    @property
    def context_text(self) -> str:
        """The terms that came from the context alone."""
        return " ".join(t for t in self.weights if t not in self.task)


def build(task: str, hot: str = "", recent: Sequence[str] = ()) -> Query:
    """The query of a task, with the hot tier's words and the distinctive words of the
    agent's newest entries as context."""
    own = words.terms(task)
    # `RowFontSurface Renderer`: the name's parts together say about as much as one word.
    parts = set(words.name_parts(task)) - set(words.plain_words(task))
    weights = {t: words.PART_WEIGHT if t in parts else 1.0 for t in own}
    for text, weight in ((hot, HOT_WEIGHT), ("\n".join(recent), RECENT_WEIGHT)):
        for term in distinctive(text, exclude=weights):
            weights.setdefault(term, weight)
    return Query(weights, tuple(own))


def recent(index: Index, agent: str) -> list[str]:
    """The texts of the agent's newest cold entries: the context a spawn's query draws on."""
    return [d.text for d in index.newest(["cold"], agent, RECENT_ENTRIES)]


def distinctive(text: str, exclude: dict[str, float] | None = None) -> list[str]:
    """The words that say most about a text: frequent in it, long enough to be specific,
    no stop word or task filler; at most CONTEXT_TERMS of them."""
    if not text.strip():
        return []
    skip = words.STOP | words.TASK_FILLER | words.QUESTION
    counts = Counter(
        w for w in words.words(text) if len(w) > 3 and w not in skip and not w.isdigit()
    )
    ranked = sorted(counts, key=lambda t: (-counts[t] * min(len(t), 10), t))
    return [t for t in ranked if t not in (exclude or {})][:CONTEXT_TERMS]
