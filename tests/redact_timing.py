"""Time `redact` on a typical note and a long history file, and the cost of importing it.

    python tests/redact_timing.py                     # this checkout's tiermem.redact
    python tests/redact_timing.py --module pkg.redact --path /some/dir   # another copy

The note is the first 4 KB of an agent history and the history file 200 KB of them, taken
from the shared team-memory corpora when they are present (../shared/corpora), else built
from the ordinary texts of tests/redact_samples.py. Figures are medians over many runs.
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
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", default="tiermem.redact")
    parser.add_argument("--path", help="a folder to put first on sys.path")
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    print(json.dumps(measure(args.module, args.path, args.runs), indent=2))


if __name__ == "__main__":
    main()
