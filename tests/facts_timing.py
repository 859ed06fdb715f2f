"""Time key_facts against the reference (tests/facts_reference.py) on the teams' real memory.

    python tests/facts_timing.py                     # the four corpora in ../shared/corpora
    python tests/facts_timing.py --corpus Thraka__SadConsole --runs 9
    python tests/facts_timing.py --before d87628f    # fact_surfaces and present_facts too,
                                                     # against tiermem.text.facts at that commit

The texts are a corpus's memory files (every .md under .squad/), its replayed writes (every
text of sessions.jsonl), those files of 8 to 12 KB, and every line of the files. The old and
the new function take turns on each text, --runs times, so that other work on a shared
machine slows both alike; a figure is the sum over the texts of each text's median time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import facts_reference
from tiermem.text import facts

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
Timed = Callable[[str], object]


def _corpus_texts(folders: list[Path]) -> dict[str, list[str]]:
    """Return the texts to time, by kind, from the given corpus folders."""
    paths = [path for folder in folders for path in sorted(folder.glob(".squad/**/*.md"))]
    files = [path.read_text(encoding="utf-8") for path in paths]
    writes = [
        json.loads(line)["text"]
        for folder in folders
        for line in (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return {
        "memory files (.md)": files,
        "replayed writes": writes,
        "files of 8-12 KB": [text for text in files if 8_000 <= len(text) <= 12_000],
        "lines of the files": [line for text in files for line in text.splitlines() if line],
    }


def _medians(old: Timed, new: Timed, texts: list[str], runs: int) -> tuple[float, float]:
    """Return the seconds old and new take over all texts: the sum of each text's median."""
    totals = [0.0, 0.0]
    for text in texts:
        spent: tuple[list[float], list[float]] = ([], [])
        for run in range(runs):
            # Who goes first swaps each run, so neither always finds the caches warm.
            for side in (0, 1) if run % 2 == 0 else (1, 0):
                function = (old, new)[side]
                started = time.perf_counter()
                function(text)
                spent[side].append(time.perf_counter() - started)
        # A median per text leaves out the runs that other work on the machine slowed.
        totals[0] += statistics.median(spent[0])
        totals[1] += statistics.median(spent[1])
    return totals[0], totals[1]


def _module_at(revision: str) -> ModuleType:
    """Load tiermem.text.facts as it was at a git revision of this checkout."""
    for where in ("src/tiermem/text/facts.py", "src/tiermem/facts.py"):  # before text/ was
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{revision}:{where}"],
            capture_output=True,
            text=True,
        )
        if shown.returncode == 0:
            break
    else:
        raise ValueError(f"no facts.py at {revision!r}: {shown.stderr.strip()}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "facts_before.py"
        path.write_text(shown.stdout, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("facts_before", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _comparisons(
    before: ModuleType | None, found: dict[str, set[str]]
) -> list[tuple[str, Timed, Timed]]:
    """Return (name, old, new) for each function to time; found holds each text's facts."""
    pairs: list[tuple[str, Timed, Timed]] = [
        ("key_facts", facts_reference.key_facts, facts.key_facts)
    ]
    if before is not None:
        pairs.append(("fact_surfaces", before.fact_surfaces, facts.fact_surfaces))
        # present_facts searches a text for facts; here, for the text's own.
        pairs.append(
            (
                "present_facts",
                lambda text: before.present_facts(found[text], text),
                lambda text: facts.present_facts(found[text], text),
            )
        )
    return pairs


def _report(texts: dict[str, list[str]], before: ModuleType | None, runs: int) -> None:
    """Print one row per function and kind of text."""
    print(f"Python {platform.python_version()}; ms: sums of each text's median of {runs} runs")
    print(f"{'function':14} {'texts':26} {'count':>7} {'characters':>11} {'old ms':>9} "
          f"{'new ms':>9} {'speed-up':>8}")  # fmt: skip
    found = {text: facts.key_facts(text) for batch in texts.values() for text in batch}
    for name, old, new in _comparisons(before, found):
        for kind, batch in texts.items():
            old_seconds, new_seconds = _medians(old, new, batch, runs)
            characters = sum(map(len, batch))
            print(
                f"{name:14} {kind:26} {len(batch):>7,} {characters:>11,} "
                f"{old_seconds * 1000:>9.1f} {new_seconds * 1000:>9.1f} "
                f"{old_seconds / new_seconds:>7.1f}x"
            )


def main(argv: list[str] | None = None) -> int:
    """Time the functions on the chosen corpora; 2 when there is nothing to time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", help="a folder of ../shared/corpora")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", help="a git revision whose tiermem.text.facts to time too")
    args = parser.parse_args(argv)
    folders = sorted(path.parent for path in CORPORA.glob("*/sessions.jsonl"))
    if args.corpus:
        folders = [folder for folder in folders if folder.name in args.corpus]
    if not folders or args.runs < 1:
        print(f"facts_timing: no corpus to time in {CORPORA} (or --runs below 1)", file=sys.stderr)
        return 2
    try:
        before = _module_at(args.before) if args.before else None
    except ValueError as error:
        print(f"facts_timing: {error}", file=sys.stderr)
        return 2
    print("corpora:", ", ".join(folder.name for folder in folders))
    _report(_corpus_texts(folders), before, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
