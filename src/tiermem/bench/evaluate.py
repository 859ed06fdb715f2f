"""The probes of METRICS.md against a store, with the baselines, in one run."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..render.progress import track
from ..vocabulary import RECALL_TIERS
from .corpus import Event
from .facts import coverage
from .oracle import Oracle
from .probes import (
    Probe,
    full_history_text,
    grep_top5,
    read_text,
    recalled,
    squad_as_is_text,
    squad_root,
)


@dataclass
class ProbeResult:
    """One probe's figures for tiermem and the baselines."""

    probe: Probe
    tokens: int
    coverage: float
    recalled: bool
    situation: str
    squad_tokens: int
    squad_coverage: float
    full_tokens: int
    full_coverage: float
    grep_recalled: bool
    oracle_coverage: float = 0.0
    superseded_served: bool = False
    # What a Squad spawn loads besides memory: the charter and the spawn template's memory
    # lines, before `tiermem squad install --coordinator` and after it.
    frame_before: int = 0
    frame_after: int = 0


@dataclass
class Figures:
    """Aggregates over all probes of a corpus."""

    corpus: str
    mode: str
    probes: int
    results: list[ProbeResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The JSON summary: medians, p90s, means and ratios."""
        r = self.results
        tokens = [x.tokens for x in r]
        squad = [x.squad_tokens for x in r]
        full = [x.full_tokens for x in r]
        return {
            "corpus": self.corpus,
            "mode": self.mode,
            "probes": self.probes,
            "tiermem": {
                "tokens_median": _median(tokens),
                "tokens_p90": _p90(tokens),
                "coverage_mean": _mean(x.coverage for x in r),
                "coverage_median": _median([x.coverage for x in r]),
                "recall_at_5": _mean(1.0 if x.recalled else 0.0 for x in r),
                "superseded_served": _mean(1.0 if x.superseded_served else 0.0 for x in r),
                "situations": _counts(x.situation for x in r),
            },
            "oracle": {"coverage_mean": _mean(x.oracle_coverage for x in r)},
            "squad_as_is": {
                "tokens_median": _median(squad),
                "tokens_p90": _p90(squad),
                "coverage_mean": _mean(x.squad_coverage for x in r),
            },
            "full_history": {
                "tokens_median": _median(full),
                "tokens_p90": _p90(full),
                "coverage_mean": _mean(x.full_coverage for x in r),
            },
            "grep": {"recall_at_5": _mean(1.0 if x.grep_recalled else 0.0 for x in r)},
            "token_ratio_vs_squad": round(_median(tokens) / max(1.0, _median(squad)), 4),
            "squad_spawn": _squad_spawn(r),
        }


def _squad_spawn(results: list[ProbeResult]) -> dict[str, float]:
    """Tokens a Squad spawn loads for the agent's charter, its memory lines and its memory,
    as Squad has it (history.md and decisions.md whole) and after install --coordinator (the
    charter's memory section, the template's spawn step, the spawn prompt)."""
    before = [x.frame_before + x.squad_tokens for x in results]
    after = [x.frame_after + x.tokens for x in results]
    return {
        "before_median": _median(before),
        "before_p90": _p90(before),
        "after_median": _median(after),
        "after_p90": _p90(after),
        "ratio_median": round(_median(before) / max(1.0, _median(after)), 2),
    }


def _frame_tokens(tokens: dict[str, int]) -> int:
    """Tokens of a prompt around its memory (task, hot, headings, escalation)."""
    memory = sum(tokens.get(tier, 0) for tier in ("policy", *RECALL_TIERS))
    return tokens["total"] - memory


# A body this short ("Done.") says too little to tell whether a prompt repeats it.
_RETIRED_BODY_CHARS = 40


def _retired(mem: Memory) -> list[str]:
    """The gist of every superseded entry's body that no active entry still holds: what a
    spawn must not serve (a decision recorded again under its title supersedes its first
    record, and the text stays current in the second)."""
    from ..text.prose import readable
    from ..text.words import gist

    mem.sync()
    docs = mem.context.index.docs()
    current = [gist(d.text) for d in docs if d.tier != "archive" and not d.status]
    bodies = {gist(readable(d.text.partition("\n")[2])) for d in docs if d.status == "superseded"}
    return sorted(
        b
        for b in bodies
        if len(b) >= _RETIRED_BODY_CHARS and not any(b in text for text in current)
    )


def _serves(prompt: str, retired: list[str]) -> bool:
    """Whether a prompt holds the text of a superseded entry."""
    from ..text.prose import readable
    from ..text.words import gist

    held = gist(readable(prompt))
    return any(body in held for body in retired)


def _median(values: list[int] | list[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _p90(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[int(0.9 * (len(ordered) - 1))]) if ordered else 0.0


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return round(sum(items) / len(items), 4) if items else 0.0


def _counts(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


class _Baselines:
    """Squad-as-is and full-history texts per agent, counted once; the frame of a Squad
    spawn around memory, before and after tiermem's install."""

    def __init__(
        self, corpus: Path, events: list[Event], count: Callable[[list[str]], list[int]]
    ) -> None:
        self.corpus = corpus
        self.events = events
        self.count = count
        self._cache: dict[tuple[str, str], tuple[str, int]] = {}
        self._frames: dict[str, tuple[int, int]] = {}

    def get(self, kind: str, agent: str) -> tuple[str, int]:
        key = (kind, agent)
        if key not in self._cache:
            text = (
                squad_as_is_text(self.corpus, agent)
                if kind == "squad"
                else full_history_text(self.events, agent)
            )
            self._cache[key] = (text, self.count([text])[0])
        return self._cache[key]

    def frames(self, agent: str) -> tuple[int, int]:
        """The charter with Squad's two memory lines; the charter as the install leaves it
        (its lines that read decisions.md whole replaced, tiermem's memory section added) with
        the spawn step instead."""
        from ..squad.install.install_texts import SQUAD_SPAWN_LINES, agent_memory_block, spawn_block
        from ..squad.install.sealed_lines import replaced

        if agent not in self._frames:
            charter = read_text(squad_root(self.corpus) / "agents" / agent / "charter.md")
            block = agent_memory_block(agent, scribe=agent.lower() == "scribe")
            installed = replaced(charter)[0]
            before, after = self.count(
                [charter + SQUAD_SPAWN_LINES, f"{installed}\n{block}{spawn_block('')}"]
            )
            self._frames[agent] = (before, after)
        return self._frames[agent]


def evaluate(
    corpus: Path,
    store: Path,
    events: list[Event],
    probes: list[Probe],
    now: str,
    mode: str,
    progress: bool = False,
) -> Figures:
    """Run every probe: spawn --auto and search --limit 5 against the store; baselines beside."""
    from ..index.tokens import O200K
    from ..options import SearchRequest, SpawnRequest
    from ..search.hits import places_of
    from ..spawn.assemble import assemble

    mem = Memory(store, now=now)
    baselines = _Baselines(corpus, events, O200K.count_many)
    figures = Figures(corpus.name, mode, len(probes))
    oracle = Oracle(mem, {fact for probe in probes for fact in probe.facts})
    retired = _retired(mem)
    for probe in track(probes, f"probes {corpus.name} ({mode})", progress):
        # The steps themselves, not the doors: a probe may name an agent that left the team
        # before HEAD, whom an import does not know and the door would refuse as a typo.
        result = assemble(mem.context, SpawnRequest(probe.agent, probe.query, auto=True))
        room = mem.config.spawn.budget_tokens - _frame_tokens(result.tokens)
        found, _ = places_of(mem.context, SearchRequest(probe.query, probe.agent, limit=5))
        hits = [place.excerpt for place in found]
        squad_text, squad_tokens = baselines.get("squad", probe.agent)
        frame_before, frame_after = baselines.frames(probe.agent)
        full_text, full_tokens = baselines.get("full", probe.agent)
        figures.results.append(
            ProbeResult(
                probe=probe,
                tokens=result.tokens["total"],
                coverage=coverage(probe.facts, result.prompt),
                recalled=recalled(probe.facts, [h.text for h in hits]),
                situation=result.situation,
                squad_tokens=squad_tokens,
                squad_coverage=coverage(probe.facts, squad_text),
                full_tokens=full_tokens,
                full_coverage=coverage(probe.facts, full_text),
                grep_recalled=recalled(probe.facts, grep_top5(events, probe.agent, probe.query)),
                oracle_coverage=oracle.coverage(probe.agent, probe.facts, room),
                superseded_served=_serves(result.prompt, retired),
                frame_before=frame_before,
                frame_after=frame_after,
            )
        )
    mem.close()
    return figures
