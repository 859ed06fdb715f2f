"""The probes of METRICS.md against a store, with the baselines, in one run."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..progress import track
from .corpus import Event
from .facts import coverage
from .probes import Probe, full_history_text, grep_top5, recalled, squad_as_is_text


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
                "situations": _counts(x.situation for x in r),
            },
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
        }


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
    """Squad-as-is and full-history texts per agent, counted once."""

    def __init__(
        self, corpus: Path, events: list[Event], count: Callable[[list[str]], list[int]]
    ) -> None:
        self.corpus = corpus
        self.events = events
        self.count = count
        self._cache: dict[tuple[str, str], tuple[str, int]] = {}

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
    from ..tokens import O200K

    mem = Memory(store, now=now)
    baselines = _Baselines(corpus, events, O200K.count_many)
    figures = Figures(corpus.name, mode, len(probes))
    for probe in track(probes, f"probes {corpus.name} ({mode})", progress):
        result = mem.spawn(probe.agent, probe.query, auto=True)
        hits = mem.search(probe.query, agent=probe.agent, limit=5)
        squad_text, squad_tokens = baselines.get("squad", probe.agent)
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
            )
        )
    mem.close()
    return figures
