"""Measure the stale-citation check of a spawn on a repository of 10,000 tracked files.

Builds a git repository whose index tracks 10,000 files (half the paths the store's entries
cite, the rest filler: the other half of the cited paths are "gone"), generates the speed
benchmark's store of 10,000 entries inside it, runs spawns, and times the check of every
entry each spawn loaded:
- warm: the tracked set already read by this process (a server, a long-lived agent);
- new process: the set read from `.squad/memory/citations.cache`;
- after a commit: git's index changed, so `git ls-files` runs and the cache is rewritten.

    python scripts/bench_citations.py [--files 10000] [--entries 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tiermem.bench.generated import QUERIES, generate
from tiermem.index.protocol import Doc, Hit, Scope
from tiermem.memory import Memory
from tiermem.storage.layout import TEAM
from tiermem.team import citations

SPAWNS = 20
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def git(repo: Path, *args: str, stdin: bytes | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, check=True, env=env, capture_output=True
    )


def track(repo: Path, paths: list[str]) -> None:
    """Put paths in git's index without writing the files (all as the empty blob)."""
    git(repo, "hash-object", "-w", "--stdin", stdin=b"")
    lines = "".join(f"100644 {EMPTY_BLOB}\t{p}\n" for p in paths)
    git(repo, "update-index", "--add", "--index-info", stdin=lines.encode())


def cited(mem: Memory) -> list[str]:
    found: dict[str, None] = {}
    for doc in mem.context.index.docs():
        for path in citations.cited_paths(f"{doc.title}\n{doc.text}"):
            found.setdefault(path, None)
    return list(found)


def spawned_docs(mem: Memory) -> list[list[Doc]]:
    """The entries each benchmark spawn loaded."""
    loads = []
    for n in range(SPAWNS):
        query = QUERIES[n % len(QUERIES)]
        result = mem.spawn(_agent(mem, n), query, auto=True)
        ids = [s.id for s in result.sources]
        loads.append(mem.context.index.by_ids(ids) if ids else [])
    return loads


def candidates(mem: Memory) -> list[list[Hit]]:
    """What each benchmark spawn ranks before packing: its cold and wiki matches (as spawn
    finds them: 60 per scope), for `citations.fresh_first`."""
    found = []
    for n in range(SPAWNS):
        agent, query = _agent(mem, n), QUERIES[n % len(QUERIES)]
        scopes = [
            Scope(tiers=("cold",), agents=(agent, TEAM), active_only=True),
            Scope(tiers=("wiki",), active_only=True),
        ]
        cold, wiki = mem.context.index.search_each(query, scopes, limit=60)
        found.append(mem.context.ranker.rank([*cold, *wiki], agent))
    return found


def _agent(mem: Memory, n: int) -> str:
    agents = mem.agents()
    return agents[n % len(agents)]


def timed(
    runs: int, loads: list[list[Doc]], before: Callable[[], None], check: Callable[[Doc], object]
) -> list[float]:
    """Milliseconds to check the entries of one spawn, for every spawn, `runs` times."""
    times = []
    for _ in range(runs):
        for load in loads:
            before()
            start = time.perf_counter()
            for doc in load:
                check(doc)
            times.append((time.perf_counter() - start) * 1000)
    return times


def ranking(
    runs: int, ranked: list[list[Hit]], before: Callable[[], None], ctx: object
) -> list[float]:
    """Milliseconds of `fresh_first` over each spawn's candidates, `runs` times."""
    times = []
    for _ in range(runs):
        for hits in ranked:
            before()
            start = time.perf_counter()
            citations.fresh_first(ctx, hits)  # type: ignore[arg-type]
            times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tiermem-citations-") as folder:
        repo = Path(folder)
        git(repo, "init", "-q")
        generate(repo, args.entries, lambda line: print(line, file=sys.stderr))
        mem = Memory(repo, now="2026-06-30T18:00:00Z")
        mem.sync()
        paths = cited(mem)
        kept = paths[::2]
        filler = [f"src/filler/f{n:05d}.py" for n in range(max(0, args.files - len(kept)))]
        track(repo, kept + filler)
        loads = spawned_docs(mem)
        entries = sum(len(load) for load in loads)
        ctx = mem.context

        def check(doc: Doc) -> object:
            return citations.stale_paths(ctx, doc)

        def as_new_process() -> None:
            citations._SEEN.clear()

        def after_commit() -> None:
            citations._SEEN.clear()
            os.utime(repo / ".git" / "index")

        citations.tracked(ctx.layout)
        stale = sum(1 for load in loads for doc in load if citations.stale_paths(ctx, doc))
        spawns = len(loads)
        ranked = candidates(mem)
        results = {
            "warm": timed(args.runs, loads, lambda: None, check),
            "new process": timed(args.runs, loads, as_new_process, check),
            "after a commit": timed(args.runs, loads, after_commit, check),
            "fresh_first, warm": ranking(args.runs, ranked, lambda: None, ctx),
            "fresh_first, new": ranking(args.runs, ranked, as_new_process, ctx),
        }
        mem.close()
    print(
        f"{args.files:,} tracked files, {len(paths):,} distinct cited paths ({len(kept):,} "
        f"tracked); {spawns} spawns loading {entries} entries ({stale} stale), ranking "
        f"{sum(len(r) for r in ranked) / spawns:.0f} candidates each on average"
    )
    for name, times in results.items():
        p95 = statistics.quantiles(times, n=20)[-1]
        print(
            f"{name:>17}: per spawn median {statistics.median(times):.3f} ms, "
            f"p95 {p95:.3f} ms, max {max(times):.3f} ms ({len(times)} checks)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
