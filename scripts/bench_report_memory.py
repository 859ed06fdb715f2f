"""Peak memory of `tiermem report` on a generated store (100,000 entries by default).

The speed benchmark's generator writes the store once (kept with --keep, reused with
--store); `tiermem report` then runs as a whole process, --runs times, and the figure is the
peak resident set size of each run (the kernel's count for a child process), with the
page's size and the run's wall time. `tiermem stats` runs the same way beside it, as the
baseline of a command that reads the same store without drawing a page.

    python scripts/bench_report_memory.py [--entries 100000] [--runs 3] [--store DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tiermem.bench.generated import NOW, generate


def peak(args: list[str], root: Path) -> tuple[float, float]:
    """Run `tiermem ARGS` in a child process of its own; (peak RSS in MB, seconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERMEM_")}
    env["TIERMEM_NOW"] = NOW
    # A fresh interpreter per run: RUSAGE_CHILDREN keeps the largest child seen so far, so
    # the measuring is done by a child that runs exactly one report.
    probe = (
        "import resource, subprocess, sys, time; start = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
        "time.perf_counter() - start)"
    )
    command = [sys.executable, "-c", probe, sys.executable, "-m", "tiermem", *args]
    done = subprocess.run(command, cwd=root, env=env, check=True, capture_output=True, text=True)
    kilobytes, seconds = done.stdout.split()
    return int(kilobytes) / 1024, float(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--store", type=Path, help="a store generated before (else a new one)")
    parser.add_argument("--keep", action="store_true", help="keep the generated store")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tiermem-report-memory-"))
    root = args.store or scratch / "store"
    if args.store is None:
        root.mkdir()
        started = time.perf_counter()
        generate(root, args.entries, lambda _: None)
        print(f"generated {args.entries:,} entries in {time.perf_counter() - started:.0f} s")
    peak(["stats"], root)  # the first command builds the index: not measured
    for label, command in (("stats", ["stats"]), ("report", ["report"])):
        runs = [peak(command, root) for _ in range(args.runs)]
        rss = [r for r, _ in runs]
        seconds = [s for _, s in runs]
        print(
            f"tiermem {label:<6} peak RSS median {statistics.median(rss):,.0f} MB "
            f"(max {max(rss):,.0f} MB); {statistics.median(seconds):.1f} s per run"
        )
    page = root / ".squad" / "memory" / "local" / "report" / "report.html"
    if not page.exists():
        page = root / "tiermem-report" / "report.html"
    print(f"page: {page.stat().st_size / 1e6:.1f} MB ({page.relative_to(root)})")
    print(f"store: {root}" if args.keep or args.store else "store removed")
    if not (args.keep or args.store):
        import shutil

        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
