"""The headline figures of `tiermem bench speed`: what an agent waits on, each with its ratio
to `python -c pass` measured in the same run on the same store (a busy machine stretches both
alike) and the goals set on it.

Whole commands and calls in process at the target size and at the largest size measured,
the MCP server's first answer (with the MCP SDK's own import beside it) and its spawns, and
the first reads of git clones of the largest store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .generated import TARGET_SIZE


@dataclass(frozen=True, slots=True)
class Headline:
    """One line of the headline table: figures of one store, read together."""

    label: str
    keys: tuple[str, ...]  # figures in ms, or in s when they end in `_s`
    largest: bool = False  # of the largest store measured, else of the target size's
    peak: str = ""  # the figure of its peak memory (MB), if any
    also: tuple[str, ...] = ()  # further figures whose goals the line answers for


HEADLINES = (
    Headline("`spawn --auto`, whole process", ("cli_spawn_ms",), peak="cli_spawn_mb"),
    Headline("`search`, whole process", ("cli_search_ms",), peak="cli_search_mb"),
    Headline("`hot show` / `hot note`", ("cli_hot_show_ms", "cli_hot_note_ms")),
    Headline("in-process spawn p50 / p95", ("spawn_p50_ms", "spawn_p95_ms")),
    Headline("in-process search p50 / p95", ("search_p50_ms", "search_p95_ms")),
    Headline("in-process spawn p50 / p95", ("spawn_p50_ms", "spawn_p95_ms"), largest=True),
    Headline("in-process search p95", ("search_p95_ms",), largest=True),
    Headline("`spawn --auto` / `search`, whole", ("cli_spawn_ms", "cli_search_ms"), largest=True),
    Headline(
        "MCP first answer / spawn p95",
        ("mcp_first_answer_ms", "mcp_spawn_p95_ms"),
        also=("mcp_sdk_import_ms",),
    ),
    Headline(
        "git clone: first `search` / the next",
        ("clone_first_search_s", "clone_next_search_s"),
        largest=True,
        peak="clone_first_search_mb",
    ),
)
# The ratio a whole command's goal is set on, by the figure of its time.
RATIOS = {f"cli_{n}_ms": f"cli_{n}_ratio" for n in ("spawn", "search", "hot_show", "hot_note")}


def _ms(key: str, value: float) -> float:
    return value * 1000 if key.endswith("_s") else value


def rows(stores: Sequence[Mapping[str, Any]], targets: Sequence[Any]) -> list[dict[str, Any]]:
    """Each headline of the stores measured (those whose store was measured), with its
    values in ms, their ratios to `python -c pass` of the same store, and its goals."""
    if not stores:
        return []
    by_size = {int(s["entries"]): s for s in stores}
    largest = max(by_size)
    found = []
    for line in HEADLINES:
        size = largest if line.largest else TARGET_SIZE
        if line.largest and largest == TARGET_SIZE and not line.peak.startswith("clone_"):
            continue  # the target size's own lines say it
        store = by_size.get(size)
        if store is None or not all(k in store for k in line.keys):
            continue
        base = float(store["cli_baseline_ms"])
        values = [_ms(k, float(store[k])) for k in line.keys]
        figures = [*line.keys, *(RATIOS[k] for k in line.keys if k in RATIOS), *line.also]
        goals = [t for t in targets if t.figure in figures and t.applies(size)]
        found.append(
            {
                "label": line.label,
                "entries": size,
                "figures": list(line.keys),
                "ms": values,
                "ratios": [v / base for v in values],
                "baseline_ms": base,
                "peak_mb": float(store[line.peak]) if line.peak in store else None,
                "also_ms": {k: float(store[k]) for k in line.also if k in store},
                "goals": [_goal(t, store) for t in goals if t.figure in store],
            }
        )
    return found


def _goal(target: Any, store: Mapping[str, Any]) -> dict[str, Any]:
    met = float(store[target.figure]) <= target.limit
    return {"figure": target.figure, "goal": target.shown(), "met": met}


def lines(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The headline table in words."""
    out = ["headline figures (each against `python -c pass` in the same run, same store):"]
    for row in found:
        values = " / ".join(_shown(ms) for ms in row["ms"])
        ratios = " / ".join(f"{r:.1f}x" for r in row["ratios"])
        text = f"  {row['label']} at {row['entries']:,}: {values} = {ratios}"
        text += f" (`python -c pass` {row['baseline_ms']:.1f} ms)"
        if row["peak_mb"] is not None:
            text += f", peak {row['peak_mb']:.0f} MB"
        for key, ms in row["also_ms"].items():
            text += f"; {key.removesuffix('_ms').replace('_', ' ')} {ms:,.0f} ms"
        for goal in row["goals"]:
            verdict = "met" if goal["met"] else "MISSED"
            text += f"; {goal['figure']} {goal['goal']}: {verdict}"
        out.append(text)
    return out


def _shown(ms: float) -> str:
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.1f} ms"
