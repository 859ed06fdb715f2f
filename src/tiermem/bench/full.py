"""`tiermem bench all`: every corpus replayed and imported, probed, and measured, as JSON."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..storage.clock import format_time
from . import import_quality, quality
from .corpus import corpus_dirs, last_date, load_events
from .evaluate import evaluate
from .forward import run_forward
from .hot_writes import hot_figures
from .imported import import_planned, import_retention, rebuild_check
from .probes import Probe, build_probes


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _git(*args: str) -> str:
    """What a git command prints, run in this package's checkout."""
    here = Path(__file__).resolve().parent
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=True, cwd=here)
    return done.stdout.strip()


def commit() -> str:
    try:
        dirty = _git("status", "--porcelain", "--untracked-files=no")
        return _git("rev-parse", "--short=12", "HEAD") + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def corpus_figures(corpus: Path, out: Path, limit: int | None) -> dict[str, Any]:
    """Replay and import one corpus; probes, Scribe quality and timings for both."""
    events = load_events(corpus)
    probes = build_probes(events)[:limit] if limit else build_probes(events)
    now = format_time(last_date(events))
    _log(f"{corpus.name}: replay ({len(events)} events), forward probes asked on the way")
    forward = run_forward(corpus, out / corpus.name / "replay")
    assert forward.replay is not None
    replayed = forward.replay
    store = Path(replayed.store)
    mem = Memory(store, now=now)
    figures: dict[str, Any] = {
        "events": replayed.events,
        "sessions": replayed.sessions,
        "replay_seconds": replayed.seconds,
        "replay_skipped": replayed.skipped,
        "compression": quality.compression(mem),
        "retention": quality.retention(mem, events),
        "readability": quality.readability(mem),
        "policy": quality.policy_retention(store, now),
        "scribe_run_seconds": quality.scribe_run_seconds(store, now),
    }
    mem.close()
    figures["forward"] = forward.summary()
    _log(f"{corpus.name}: probes after replay ({len(probes)})")
    figures["replay"] = evaluate(corpus, store, events, probes, now, "replay").summary()
    _log(f"{corpus.name}: import")
    started = time.perf_counter()
    imported, planned = import_planned(corpus, out / corpus.name / "import")
    figures["import_seconds"] = round(time.perf_counter() - started, 2)
    figures["import_check"] = rebuild_check(imported)
    figures["import_retention"] = import_retention(imported)
    figures["import_quality"] = import_quality.figures(imported, planned)
    figures["import_quality"]["hot"] = hot_figures(events, now)
    replay_mem = Memory(store, now=now)
    figures["readability"]["headless_bullets"] = import_quality.headless_bullets(replay_mem)[1]
    replay_mem.close()
    _log(f"{corpus.name}: probes after import")
    figures["import"] = evaluate(corpus, imported, events, probes, now, "import").summary()
    ceiling, recall_bound = import_ceilings(corpus, probes)
    figures["import"]["import_ceiling"] = ceiling
    figures["import"]["share_of_ceiling"] = (
        round(figures["import"]["tiermem"]["coverage_mean"] / ceiling, 4) if ceiling else None
    )
    figures["import"]["recall_ceiling"] = recall_bound
    return figures


def import_ceilings(corpus: Path, probes: list[Probe]) -> tuple[float, float]:
    """What all the text of `.squad/` at HEAD allows after an import: METRICS.md's import
    ceiling (the coverage a spawn of all of it would get) and the same bound for recall@5
    (the share of probes of which it still holds at least half the facts)."""
    from .facts import coverages
    from .probes import RECALL_SHARE, import_ceiling_text

    values = coverages([p.facts for p in probes], import_ceiling_text(corpus))
    if not values:
        return 0.0, 0.0
    recallable = sum(value >= RECALL_SHARE for value in values)
    return round(sum(values) / len(values), 4), round(recallable / len(values), 4)


def run_all(corpora: Path, out: Path, limit: int | None = None) -> dict[str, Any]:
    """Every corpus under `corpora`; results also written to out/results.json."""
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "commit": commit(),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {cpus()} cpus",
        "probe_limit": limit,
        "corpora": {},
    }
    for corpus in corpus_dirs(corpora):
        results["corpora"][corpus.name] = corpus_figures(corpus, out, limit)
        (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return results


def cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
