"""The situation a task is read as: which tiers to weigh up, and why.

The words of the task (and whether it continues what hot holds) say what kind of work it is:
an incident review leans on the archive, recurring work on past sessions, work against a
spec or convention on the wiki. A situation weighs tiers; it never shuts one out: whatever
memory holds that bears on the task competes for the room.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..text import words
from ..text.facts import key_facts
from ..vocabulary import RECALL_TIERS
from .scoring import TIER_WEIGHTS

LEAN = 1.25  # the weight a situation gives the tiers it leans on
_INCIDENT = re.compile(
    r"\b(incident|outage|post-?mortem|retro(spective)?|rca|root cause analysis|sev[0-9])\b", re.I
)
_KNOWLEDGE = re.compile(
    r"\b(spec|specification|adr|contract|convention|conventions|policy|policies|guideline|standard"
    r"|schema|protocol|design doc|onboard(ing)? (to|onto|into|the|a|new|us)|get up to speed"
    r"|architecture|api)\b",
    re.I,
)
_RECURRING = re.compile(
    r"\b(resume|continue|pick up|again|still|recurring|regression|flaky|debug\w*|bug|investigat\w*"
    r"|broke\w*|failing|follow[- ]?up|revisit|re-?open\w*)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Situation:
    """What the task was read as: the tiers it leans on, and the signs that said so."""

    leans: frozenset[str]
    signs: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=lambda: dict(TIER_WEIGHTS))

    @property
    def name(self) -> str:
        """The situation's name, from what the task says."""
        if "archive" in self.leans and "cold" in self.leans and "wiki" in self.leans:
            return "post-incident review"
        cold = "cold" in self.leans
        wiki = "wiki" in self.leans
        if cold and wiki:
            return "recurring work under standing decisions"
        if cold:
            return "resuming or debugging something recurring"
        if wiki:
            return "implementing against a spec, ADR or convention"
        return "new task"


# A task continues the one in hot when it shares at least this share of its terms with it.
CONTINUES_SHARE = 0.5


def continues(task: str, hot_task: str) -> bool:
    """Whether a task continues the task hot holds: it shares most of its words with it (an
    old blocker or a note that happens to share a word is not the task)."""
    terms = {words.stem(t) for t in words.terms(task)}
    said = {words.stem(t) for t in words.terms(hot_task)} if hot_task.strip() else set()
    return bool(terms & said) and len(terms & said) >= CONTINUES_SHARE * len(terms)


def _said(task: str) -> str:
    """The task's words that may say what kind of work it is: less its names (a quoted span,
    a path, an identifier) and the capitalised names inside a sentence ("add the
    Retrospective Digest" names a feature, not a retrospective)."""
    text = _QUOTED.sub(" ", task)
    for fact in sorted(key_facts(text), key=len, reverse=True):
        text = re.sub(re.escape(fact), " ", text, flags=re.I)
    inner = text.split()[1:]
    if sum(w[:1].isupper() for w in inner) * 2 <= len(inner):
        text = _INNER_CAPITAL.sub(" ", text)  # a sentence: its inner capitalised words are names
    return _TEST_OF.sub(" ", text)


_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"")
_INNER_CAPITAL = re.compile(r"(?<=\w )[A-Z][\w-]*")
# "a regression test" says what is written, not that the work recurs.
_TEST_OF = re.compile(r"\bregression[- ]tests?\b|\bregression suites?\b", re.I)


def read(task: str, hot_task: str) -> Situation:
    """The situation of a task, from its words (not its names: see `_said`) and the task
    the agent's hot tier holds."""
    said = _said(task)
    return _read(said, task, hot_task)


def _read(said: str, task: str, hot_task: str) -> Situation:
    if incident := _INCIDENT.search(said):
        every = frozenset(RECALL_TIERS)
        return _weighed(every, (f"the task names {incident.group(0)!r}",))
    leans: set[str] = set()
    signs = []
    if m := _RECURRING.search(said):
        leans.add("cold")
        signs.append(f"the task says {m.group(0)!r}")
    if continues(task, hot_task):
        leans.add("cold")
        signs.append("it continues the task in hot")
    if m := _KNOWLEDGE.search(said):
        leans.add("wiki")
        signs.append(f"the task names {m.group(0)!r}")
    return _weighed(frozenset(leans), tuple(signs))


def _weighed(leans: frozenset[str], signs: tuple[str, ...]) -> Situation:
    weights = {t: w * (LEAN if t in leans else 1.0) for t, w in TIER_WEIGHTS.items()}
    return Situation(leans, signs, weights)


def tier_weights(seen: Situation, named: set[str], auto: bool) -> dict[str, float]:
    """The tiers memory is drawn from, with their weights: all of them with --auto (weighed
    by the situation, the tiers named adding weight), else those named."""
    if auto:
        return {t: w * (LEAN if t in named else 1.0) for t, w in seen.weights.items()}
    return {t: w for t, w in seen.weights.items() if t in named}
