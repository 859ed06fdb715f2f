"""Time `redact` on a typical note and a long history file, and the cost of importing it.

    python tests/redact_timing.py                     # this checkout's tiermem.text.redact
    python tests/redact_timing.py --module pkg.redact --path /some/dir   # another copy
    python tests/redact_timing.py --against pkg.redact --path /some/dir  # both, interleaved

The note is the first 4 KB of an agent history and the history file 200 KB of them, taken
from the shared team-memory corpora when they are present (../shared/corpora), else built
from the ordinary texts of tests/redact_samples.py. Figures are medians over many runs.
With --against, the two modules take turns in one process (calls) and in alternating
fresh processes (imports), so that a machine busy with other work slows both alike and
the ratios hold.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parents[1] / "shared" / "corpora"
NOTE_CHARS, HISTORY_CHARS = 4096, 200_000


def _corpus_text() -> tuple[str, str]:
    """Return every agent history of the corpora joined, and where it came from."""
    paths = sorted(CORPORA.glob("*/.squad/agents/*/history.md"))
    if paths:
        return "\n".join(p.read_text(encoding="utf-8") for p in paths), "corpora histories"
    sys.path.insert(0, str(HERE))
    from redact_samples import ordinary_texts

    return "\n\n".join(ordinary_texts()), "generated ordinary texts"


def _texts() -> tuple[str, str, str]:
    """Return the note, the history file and their source."""
    text, source = _corpus_text()
    while len(text) < HISTORY_CHARS:
        text += "\n" + text
    return text[:NOTE_CHARS], text[:HISTORY_CHARS], source


def _median_ms(call: Callable[[], object], runs: int) -> float:
    """Return the median wall time of one call, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _import_ms(module: str, path: str | None, runs: int) -> dict[str, float]:
    """Return median milliseconds of a fresh interpreter importing the module.

    `process_ms` is the whole `python -c "import module"`; `module_ms` is the module's own
    share as `-X importtime` reports it (its body, regex compilation included, without the
    modules it imports).
    """
    prefix = f"import sys; sys.path.insert(0, {path!r}); " if path else ""
    command = [sys.executable, "-X", "importtime", "-c", f"{prefix}import {module}"]
    # As an installed package runs: byte code cached, written by a first, untimed run.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, check=True, capture_output=True, env=env)
    process, own = [], []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
        process.append(time.perf_counter() - start)
        line = next(ln for ln in done.stderr.splitlines() if ln.endswith(f"| {module}"))
        own.append(int(line.split("|")[0].split(":")[1]) / 1e6)
    return {
        "process_ms": statistics.median(process) * 1000,
        "module_ms": statistics.median(own) * 1000,
    }


# A fresh interpreter that has what the CLI has loaded by then, imports the module and
# redacts one note: what a write pays once per process, patterns compiled on first use.
_FIRST_USE = """
import sys, time
sys.path[:0] = {paths!r}
import dataclasses, functools, re, {parent}
from redact_timing import _texts
note = _texts()[0]
start = time.perf_counter()
import {module} as redaction
redaction.redact(note)
print(time.perf_counter() - start)
"""


def _first_use_ms(module: str, path: str | None, runs: int) -> float:
    """Return the median milliseconds a fresh process spends importing and first calling."""
    paths = [p for p in (path, str(HERE)) if p]
    code = _FIRST_USE.format(paths=paths, parent=module.rpartition(".")[0], module=module)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    spent = [
        float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True, env=env).stdout)
        for _ in range(runs)
    ]  # fmt: skip
    return statistics.median(spent) * 1000


def measure(module: str, path: str | None, runs: int) -> dict[str, object]:
    """Return the timing figures of one redact module."""
    if path:
        sys.path.insert(0, path)
    note, history, source = _texts()
    started = time.perf_counter()
    redact = importlib.import_module(module).redact
    imported = time.perf_counter()
    redact(note)
    first_call = time.perf_counter() - imported
    return {
        "module": module,
        "texts": source,
        "import_in_process_ms": (imported - started) * 1000,
        "first_call_ms": first_call * 1000,
        "note_4k_ms": _median_ms(lambda: redact(note), runs * 10),
        "history_200k_ms": _median_ms(lambda: redact(history), runs),
        **_import_ms(module, path, max(runs // 2, 5)),
        "import_and_first_call_ms": _first_use_ms(module, path, max(runs // 2, 5)),
    }


def _call_medians(
    calls: dict[str, Callable[[str], object]], text: str, rounds: int
) -> dict[str, float]:
    """Time each call on the text, in turns; return each one's median milliseconds."""
    times: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(rounds):
        for label, call in calls.items():
            start = time.perf_counter()
            call(text)
            times[label].append(time.perf_counter() - start)
    return {label: statistics.median(spent) * 1000 for label, spent in times.items()}


def _process_medians(
    labels: list[str], path: str | None, rounds: int
) -> dict[str, dict[str, float]]:
    """Measure imports in fresh processes, the modules in turns; return each one's medians."""
    samples: dict[str, dict[str, list[float]]] = {label: {} for label in labels}
    for _ in range(rounds):
        for label in labels:
            figures = {
                **_import_ms(label, path, 1),
                "import_and_first_call_ms": _first_use_ms(label, path, 1),
            }
            for key, value in figures.items():
                samples[label].setdefault(key, []).append(value)
    return {
        label: {k: statistics.median(v) for k, v in keys.items()} for label, keys in samples.items()
    }


def compare(module: str, other: str, path: str | None, runs: int) -> dict[str, object]:
    """Return both modules' figures, measured in turns, and this one's ratio to the other's."""
    if path:
        sys.path.insert(0, path)
    note, history, source = _texts()
    calls = {label: importlib.import_module(label).redact for label in (module, other)}
    notes, histories = _call_medians(calls, note, runs * 10), _call_medians(calls, history, runs)
    processes = _process_medians([module, other], path, max(runs // 4, 5))
    figures = {
        label: {"note_4k_ms": notes[label], "history_200k_ms": histories[label], **processes[label]}
        for label in calls
    }
    ratio = {key: figures[module][key] / figures[other][key] for key in figures[module]}
    return {"texts": source, **figures, "ratio": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", default="tiermem.text.redact")
    parser.add_argument("--against", help="another redact module to measure in turns with it")
    parser.add_argument("--path", help="a folder to put first on sys.path")
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    if args.against:
        result = compare(args.module, args.against, args.path, args.runs)
    else:
        result = measure(args.module, args.path, args.runs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
