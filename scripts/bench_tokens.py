"""Benchmark tiermem.index.o200k: fresh-process cost of short counts, and bulk throughput.

Fresh-process figures are medians over `python -c` runs, interleaved with the baselines so
that background load shifts all of them alike; CPU time (user + sys) is reported beside wall
time because it is far less disturbed by other work on the machine. Subprocesses get a
private bytecode cache (as an installed package has) unless --as-is is given.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
SIZES_KB = (1, 8, 64)

FALLBACK_MARKDOWN = """# Design notes — tiers

The **hot** tier keeps the last few turns; the *cold* tier keeps summaries. Don't page
anything in until it's asked for: `tiermem recall --since 2d`.

```python
def budget(tokens: int, reserve: float = 0.15) -> int:
    return int(tokens * (1 - reserve))
```

| tier | limit | notes |
|------|------:|-------|
| hot  | 8 000 | per agent |
| cold | 64 000 | shared, 日本語 ok 😀 |

"""

COUNT_SNIPPET = (
    "import sys\nfrom tiermem.index.o200k import count\n"
    "count(open(sys.argv[1], encoding='utf-8').read())\n"
)
CLI_IMPORTS = "import argparse, json, pathlib"
BULK_SNIPPET = (
    "import sys\nfrom tiermem.index import o200k\n"
    "o200k._Counter().bulk_counts([open(sys.argv[1], encoding='utf-8').read()])\n"
)


def sample_text(size_bytes: int) -> str:
    """About size_bytes of real markdown from the shared corpora (repeated if need be)."""
    files = sorted(CORPORA.rglob("*.md")) if CORPORA.is_dir() else []
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in files]
    parts: list[str] = []
    total = 0
    for text in itertools.cycle(texts or [FALLBACK_MARKDOWN]):
        parts.append(text)
        total += len(text.encode())
        if total >= size_bytes:
            break
    return "".join(parts).encode()[:size_bytes].decode("utf-8", errors="ignore")


def run_ms(args: list[str], env: dict[str, str]) -> float:
    """Wall time of one subprocess, in milliseconds."""
    return run_costs(args, env)[0]


def run_costs(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) milliseconds of one subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall * 1000, cpu * 1000


def interleaved_medians(
    commands: dict[str, list[str]], env: dict[str, str], runs: int
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU ms per command, running the commands round-robin."""
    costs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            costs[name].append(run_costs(args, env))
    return {name: medians_of(samples) for name, samples in costs.items()}


def medians_of(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """Median wall and median CPU of (wall, cpu) samples."""
    return (
        statistics.median(wall for wall, _ in samples),
        statistics.median(cpu for _, cpu in samples),
    )


def fresh_process_report(files: dict[int, Path], env: dict[str, str], runs: int) -> None:
    """Print fresh-process costs of counting each file, against interpreter baselines."""
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "import tiermem.index.o200k": [python, "-c", "import tiermem.index.o200k"],
    }
    for kb, path in files.items():
        commands[f"count {kb} KB"] = [python, "-c", COUNT_SNIPPET, str(path)]
    # What a CLI loads anyway (these pull in `re` too), alone and then counting 8 KB.
    commands[CLI_IMPORTS] = [python, "-c", CLI_IMPORTS]
    cli_count = f"{CLI_IMPORTS}\n{COUNT_SNIPPET}"
    commands["  + count 8 KB"] = [python, "-c", cli_count, str(files[8])]
    medians = interleaved_medians(commands, env, runs)
    bare, baseline = medians["python -c pass"], medians["import tiermem.index.o200k"]
    print(f"\nFresh process, warm cache: medians of {runs} runs (ms)")
    print(f"  {'':<32}{'------- wall -------':>28}{'------- cpu --------':>28}")
    print(f"  {'command':<32}" + f"{'median':>10}{'- import':>9}{'- bare':>9}" * 2)
    for name, costs in medians.items():
        cells = "".join(
            f"{cost:10.1f}{cost - baseline[i]:9.1f}{cost - bare[i]:9.1f}"
            for i, cost in enumerate(costs)
        )
        print(f"  {name:<32}{cells}")
    cli, with_count = medians[CLI_IMPORTS], medians["  + count 8 KB"]
    print(f"  counting 8 KB on top of {CLI_IMPORTS}: ", end="")
    print(f"{with_count[0] - cli[0]:.1f} ms wall, {with_count[1] - cli[1]:.1f} ms cpu")


def cold_cache_report(path: Path, env: dict[str, str]) -> None:
    """Print the one-time cost of building the cache, then the bulk path's fresh cost."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as empty:
        cold = {**env, "TIERMEM_CACHE_DIR": empty}
        build = run_ms([python, "-c", COUNT_SNIPPET, str(path)], cold)
        first_bulk = run_ms([python, "-c", BULK_SNIPPET, str(path)], cold)
        bulk = statistics.median(
            run_ms([python, "-c", BULK_SNIPPET, str(path)], cold) for _ in range(3)
        )
    print("\nOne-off and bulk-path costs in a fresh process (wall ms)")
    print(f"  first count with an empty cache (builds table)  {build:8.1f}")
    print(f"  first bulk count (writes tiktoken cache file)   {first_bulk:8.1f}")
    print(f"  bulk count, warm cache (median of 3)            {bulk:8.1f}")


def throughput_report(cache: str) -> None:
    """Print in-process throughput of both paths on a few MB of markdown."""
    os.environ["TIERMEM_CACHE_DIR"] = cache
    from tiermem.index import o200k

    text = sample_text(4 << 20)
    megabytes = len(text.encode()) / 1e6
    counter = o200k._Counter()
    encoding = counter.bulk_encoding()
    short = counter.short_counter()
    assert short is not None
    print(f"\nIn-process throughput on {megabytes:.1f} MB of markdown (best of 3)")
    rows: dict[str, Callable[[], object]] = {
        "bulk, one text": lambda: o200k._bulk_counts(encoding, [text]),
        "bulk, 1 KB texts": lambda: o200k._bulk_counts(encoding, chunks(text, 1024)),
        "bulk, 256 KB texts": lambda: o200k._bulk_counts(encoding, chunks(text, 1 << 18)),
        "short, cold piece cache": lambda: o200k._ShortCounter(short.table).count(text),
        "short, warm piece cache": lambda: short.count(text),
    }
    for name, work in rows.items():
        seconds = min(timed(work) for _ in range(3))
        print(f"  {name:<28}{megabytes / seconds:8.2f} MB/s")


def chunks(text: str, size: int) -> list[str]:
    """text cut into pieces of size characters."""
    return [text[at : at + size] for at in range(0, len(text), size)]


def timed(work: Callable[[], object]) -> float:
    """Seconds one call of work takes."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    """Run all benchmarks with a private cache directory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21, help="fresh-process runs per command")
    parser.add_argument(
        "--as-is", action="store_true", help="keep this environment's bytecode settings"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        cache = Path(workdir) / "cache"
        env = {**os.environ, "TIERMEM_CACHE_DIR": str(cache)}
        if not args.as_is:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(workdir) / "pycache")
        files: dict[int, Path] = {}
        for kb in SIZES_KB:
            files[kb] = Path(workdir) / f"sample-{kb}k.md"
            files[kb].write_text(sample_text(kb * 1024), encoding="utf-8")
        cold_cache_report(files[8], env)
        run_ms([sys.executable, "-c", COUNT_SNIPPET, str(files[1])], env)  # warm the cache
        fresh_process_report(files, env, args.runs)
        throughput_report(str(cache))


if __name__ == "__main__":
    main()
