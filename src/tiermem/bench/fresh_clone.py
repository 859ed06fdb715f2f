"""`tiermem bench fresh-clone`: a large store cloned afresh, and the first commands on it.

The speed benchmark's generated store (100,000 entries unless told) is committed to a git
repository once. Each run clones it anew, as a teammate does: every file just written, no
index (it is git-ignored). On that clone it times the first `tiermem search`, which builds
the index, then the command after it (another search), a `spawn --auto` and `stats`; on a
second fresh clone, a first `spawn --auto`. Each is a process of its own, measured from
outside: wall time, CPU time (with the worker processes it forks) and peak memory.

With `--against DIR`, each run does the same with the tiermem found in DIR (a `src` folder
of another checkout), in turns with this one: two versions compared in one run, on the same
machine under the same load, as medians and as ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .generated import NOW, generate, workload
from .import_scale import Run, measured, progress

DEFAULT_ENTRIES = 100_000
DEFAULT_RUNS = 5
# The targets, on 2 cores: the first search of a fresh clone, and the command after.
TARGETS = {"first_search": 5.0, "next_search": 1.0}
STEPS = ("clone", "first_search", "next_search", "next_spawn", "stats", "first_spawn")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def _git(*args: str, cwd: Path) -> None:
    subprocess.run([*_GIT, *args], cwd=cwd, check=True, capture_output=True)


def repository(folder: Path, entries: int, say: Any) -> Path:
    """The generated store as a git repository, made once in `folder` (reused after)."""
    if (folder / ".git").is_dir() and (folder / ".squad").is_dir():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    say(f"generating a store of {entries:,} entries in {folder}")
    generate(folder, entries, say)
    return committed(folder)


def committed(folder: Path) -> Path:
    """A store's folder made a git repository of it, as a team commits its memory (the
    index and this clone's own state stay out, as `init` sets git to)."""
    _git("init", "-q", cwd=folder)
    _git("add", "-A", cwd=folder)
    _git("commit", "-q", "-m", "the team's memory", cwd=folder)
    return folder


def _clone(source: Path, target: Path) -> float:
    """Seconds to clone the repository afresh into `target`."""
    shutil.rmtree(target, ignore_errors=True)
    began = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True)
    return time.perf_counter() - began


def _tiermem(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tiermem", "--root", str(root), "--now", NOW, *args]


def one_run(source: Path, scratch: Path, env: dict[str, str], entries: int) -> dict[str, Run]:
    """The first commands on two fresh clones of the repository."""
    work = workload(entries, 2)
    (_, query), (_, other) = work.queries[:2]
    agent, task = work.tasks[0]
    clone = scratch / "clone"
    found = {"clone": Run(_clone(source, clone), 0.0, 0.0, 0)}
    found["first_search"] = measured(_tiermem(clone, "search", query), env)
    found["next_search"] = measured(_tiermem(clone, "search", other), env)
    found["next_spawn"] = measured(_tiermem(clone, "spawn", agent, "--task", task, "--auto"), env)
    found["stats"] = measured(_tiermem(clone, "stats"), env)
    _clone(source, clone)
    found["first_spawn"] = measured(_tiermem(clone, "spawn", agent, "--task", task, "--auto"), env)
    shutil.rmtree(clone, ignore_errors=True)
    return found


def first_reads(source: Path, scratch: Path, entries: int, runs: int) -> dict[str, float]:
    """The first search on fresh clones of a repository and the search after it (medians
    of `runs` clones): wall seconds, CPU seconds (with the workers it forks), peak MB; what
    `bench speed` reports for its largest store."""
    work = workload(entries, 2)
    (_, query), (_, other) = work.queries[:2]
    clone = scratch / "clone"
    found: dict[str, list[Run]] = {"first_search": [], "next_search": []}
    for _ in range(runs):
        _clone(source, clone)
        found["first_search"].append(measured(_tiermem(clone, "search", query)))
        found["next_search"].append(measured(_tiermem(clone, "search", other)))
    shutil.rmtree(clone, ignore_errors=True)
    figures = {}
    for step, got in found.items():
        figures[f"clone_{step}_s"] = statistics.median(r.seconds for r in got)
        figures[f"clone_{step}_cpu_s"] = statistics.median(r.cpu_seconds for r in got)
        figures[f"clone_{step}_mb"] = statistics.median(r.peak_mb for r in got)
    return figures


def _medians(runs: list[dict[str, Run]]) -> dict[str, dict[str, float]]:
    """Per step: median, least and most wall seconds, median CPU seconds and peak MB."""
    figures = {}
    for step in STEPS:
        walls = [r[step].seconds for r in runs]
        figures[step] = {
            "wall_s": statistics.median(walls),
            "wall_min_s": min(walls),
            "wall_max_s": max(walls),
            "cpu_s": statistics.median(r[step].cpu_seconds for r in runs),
            "peak_mb": statistics.median(r[step].peak_mb for r in runs),
        }
    return figures


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def measure(source: Path, entries: int, runs: int, against: str | None, say: Any) -> dict[str, Any]:
    """Each run on fresh clones, in turns with the other version when there is one."""
    versions = {"this": dict(os.environ)}
    if against:
        versions["against"] = {**os.environ, "PYTHONPATH": str(Path(against).resolve())}
    found: dict[str, list[dict[str, Run]]] = {name: [] for name in versions}
    loads = [_load()]
    with tempfile.TemporaryDirectory(prefix="tiermem-fresh-clone-") as folder:
        for n in range(runs):
            for name, env in versions.items():
                run = one_run(source, Path(folder), env, entries)
                found[name].append(run)
                say(
                    f"run {n + 1}/{runs} ({name}): "
                    + ", ".join(f"{step} {run[step].seconds:.2f} s" for step in STEPS)
                )
            loads.append(_load())
    return {
        "entries": entries,
        "runs": runs,
        "cores": os.cpu_count(),
        "load_average": {"least": min(loads), "most": max(loads)},
        "against": against,
        "targets_s": TARGETS,
        "versions": {name: _medians(runs_of) for name, runs_of in found.items()},
    }


def report(figures: dict[str, Any]) -> list[str]:
    """The medians in words, each against its target, and against the other version."""
    load = figures["load_average"]
    lines = [
        f"fresh clones of {figures['entries']:,} entries, {figures['runs']} runs, "
        f"{figures['cores']} cores, load average {load['least']:.1f} to {load['most']:.1f}",
        "step: median wall s (least-most), CPU s, peak MB"
        + (", against" if figures["against"] else ""),
    ]
    this = figures["versions"]["this"]
    other = figures["versions"].get("against")
    for step in STEPS:
        f = this[step]
        line = (
            f"  {step}: {f['wall_s']:.2f} s ({f['wall_min_s']:.2f}-{f['wall_max_s']:.2f}), "
            f"CPU {f['cpu_s']:.2f} s, peak {f['peak_mb']:.0f} MB"
        )
        if other is not None:
            o = other[step]
            ratio = f["wall_s"] / o["wall_s"] if o["wall_s"] else 0.0
            line += f"; against {o['wall_s']:.2f} s, CPU {o['cpu_s']:.2f} s ({ratio:.2f}x)"
        if step in TARGETS:
            line += f"; target {TARGETS[step]:.0f} s: " + (
                "ok" if f["wall_s"] <= TARGETS[step] else "MISSED"
            )
        lines.append(line)
    return lines


def command(args: argparse.Namespace) -> int:
    """Make (or reuse) the repository, run, and print the medians (text, or JSON)."""
    quiet = args.format == "json"
    say = progress(args)
    with tempfile.TemporaryDirectory(prefix="tiermem-fresh-source-") as temp:
        folder = Path(args.store).resolve() if args.store else Path(temp) / "repo"
        source = repository(folder, args.entries, say)
        figures = measure(source, args.entries, args.runs, args.against, say)
    if quiet:
        print(json.dumps(figures, indent=2))
    else:
        print("\n".join(report(figures)))
    return 0
