"""`tiermem bench speed`: latency and throughput on generated stores of 1 K to 100 K entries.

Each store (see `generated`) is measured five ways: the first search of a fresh clone and
its index build, calls in process, the same calls through the MCP server (`mcp_speed`),
whole `tiermem` commands (against `python -c pass` in the same run, and where their
start-up goes: figures, not goals), and writes (see `write_speed`). LoCoMo conversations
written note by note are timed once a run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..errors import StoreError, UsageError
from ..index.fts import FtsIndex
from ..memory import Memory
from ..storage.layout import Layout
from . import headline, mcp_speed, startup, write_speed
from .generated import NOW, TARGET_SIZE, Workload, generate, workload
from .import_scale import measured
from .write_speed import percentile


@dataclass(frozen=True)
class Target:
    """A speed goal: a figure that should stay at or under a limit, on a store of one size
    (or of every size)."""

    figure: str
    limit: float
    entries: int | None = TARGET_SIZE  # None: every size measured
    unit: str = "ms"  # "x": a ratio to `python -c pass` in the same run

    def applies(self, entries: int) -> bool:
        """Whether the goal is set for a store of this size."""
        return self.entries is None or self.entries == entries

    def shown(self) -> str:
        """The goal as the report prints it."""
        where = "any size" if self.entries is None else f"{self.entries:,}"
        limit = f"{self.limit:g}x" if self.unit == "x" else f"{self.limit:g} {self.unit}"
        return f"<= {limit} ({where})"


# What an agent waits on: calls in process and through the MCP server, whole commands (as
# ratios to `python -c pass` in the same run: a busy machine stretches both alike), and the
# first reads of a large fresh clone.
TARGETS = (
    Target("cli_spawn_ratio", 12.0, unit="x"),
    Target("cli_search_ratio", 6.0, unit="x"),
    Target("cli_hot_show_ratio", 3.0, unit="x"),
    Target("cli_hot_note_ratio", 3.0, unit="x"),
    Target("search_p95_ms", 5.0),
    Target("search_p95_ms", 15.0, entries=100_000),
    Target("spawn_p95_ms", 25.0),
    Target("spawn_p95_ms", 50.0, entries=100_000),
    Target("mcp_first_answer_ms", 800.0),
    Target("mcp_spawn_p95_ms", 50.0),
    Target("note_empty_p95_ms", 5.0, entries=None),
    Target("note_full_p95_ms", 5.0, entries=None),
    Target("search_fresh_ms", 5000.0, entries=100_000),
    Target("clone_first_search_s", 5.0, entries=100_000, unit="s"),
    Target("clone_next_search_s", 1.0, entries=100_000, unit="s"),
)
LOCOMO_TARGET_S = 3.0  # a conversation written one turn per note

# (figure, label, decimals): the rows of the report, in order.
ROWS: tuple[tuple[str, str, int], ...] = (
    ("documents", "documents indexed", 0),
    ("files", "memory files", 0),
    ("store_mb", "store size (MB, markdown)", 1),
    ("generate_s", "generate store (s)", 2),
    ("search_fresh_ms", "`search` on a fresh clone (ms)", 0),
    ("search_next_ms", "  the `search` after it (ms)", 0),
    ("clone_first_search_s", "first `search` of a git clone (s)", 2),
    ("clone_first_search_cpu_s", "  its CPU, workers too (s)", 2),
    ("clone_first_search_mb", "  its peak (MB)", 0),
    ("clone_next_search_s", "  the `search` after it (s)", 2),
    ("build_s", "first index build (s)", 2),
    ("build_docs_per_s", "build throughput (docs/s)", 0),
    ("sync_noop_p50_ms", "no-op sync p50 (ms)", 2),
    ("search_first_ms", "search, first use, median (ms)", 2),
    ("search_p50_ms", "search p50 (ms)", 2),
    ("search_p95_ms", "search p95 (ms)", 2),
    ("search_hits_mean", "search hits per query (limit 5)", 1),
    ("spawn_first_ms", "spawn, first use, median (ms)", 1),
    ("spawn_p50_ms", "spawn assembly p50 (ms)", 1),
    ("spawn_p95_ms", "spawn assembly p95 (ms)", 1),
    ("spawn_tokens_p50", "spawn prompt tokens p50", 0),
    ("mcp_first_answer_ms", "MCP server start to first answer (ms)", 0),
    ("mcp_sdk_import_ms", "  `python -c 'import mcp'` beside it (ms)", 0),
    ("mcp_search_p50_ms", "MCP search round trip p50 (ms)", 2),
    ("mcp_search_p95_ms", "MCP search round trip p95 (ms)", 2),
    ("mcp_spawn_p50_ms", "MCP spawn round trip p50 (ms)", 1),
    ("mcp_spawn_p95_ms", "MCP spawn round trip p95 (ms)", 1),
    ("note_empty_p50_ms", "hot note, empty tier, p50 (ms)", 2),
    ("note_empty_p95_ms", "hot note, empty tier, p95 (ms)", 2),
    ("note_empty_cpu_p50_ms", "hot note, empty tier, CPU p50 (ms)", 2),
    ("note_empty_fsyncs", "hot note, empty tier, fsyncs", 1),
    ("note_empty_kb", "hot note, empty tier, KB written", 1),
    ("note_empty_disk_p50_ms", "  the disk's bare write beside it, p50", 2),
    ("note_empty_disk_p95_ms", "  the disk's bare write beside it, p95", 2),
    ("note_full_p50_ms", "hot note, full tier, p50 (ms)", 2),
    ("note_full_p95_ms", "hot note, full tier, p95 (ms)", 2),
    ("note_full_cpu_p50_ms", "hot note, full tier, CPU p50 (ms)", 2),
    ("note_full_fsyncs", "hot note, full tier, fsyncs", 1),
    ("note_full_kb", "hot note, full tier, KB written", 1),
    ("note_full_checkpointed", "full-tier notes that checkpointed", 2),
    ("note_full_disk_p50_ms", "  the disk's bare write beside it, p50", 2),
    ("note_full_disk_p95_ms", "  the disk's bare write beside it, p95", 2),
    ("cli_baseline_ms", "`python -c pass` median (ms)", 1),
    ("cli_hot_show_ms", "`tiermem hot show` median (ms)", 1),
    ("cli_hot_note_ms", "`tiermem hot note` median (ms)", 1),
    ("cli_search_ms", "`tiermem search` median (ms)", 1),
    ("cli_spawn_ms", "`tiermem spawn --auto` median (ms)", 1),
    ("cli_hot_show_ratio", "`hot show` / baseline", 2),
    ("cli_hot_note_ratio", "`hot note` / baseline", 2),
    ("cli_search_ratio", "`search` / baseline", 2),
    ("cli_spawn_ratio", "`spawn` / baseline", 2),
    ("cli_hot_show_cpu_ratio", "`hot show` / baseline, CPU time", 2),
    ("cli_hot_note_cpu_ratio", "`hot note` / baseline, CPU time", 2),
    ("cli_search_cpu_ratio", "`search` / baseline, CPU time", 2),
    ("cli_spawn_cpu_ratio", "`spawn` / baseline, CPU time", 2),
    ("cli_baseline_mb", "`python -c pass` peak (MB)", 0),
    ("cli_hot_show_mb", "`hot show` peak (MB)", 0),
    ("cli_hot_note_mb", "`hot note` peak (MB)", 0),
    ("cli_search_mb", "`search` peak (MB)", 0),
    ("cli_spawn_mb", "`spawn --auto` peak (MB)", 0),
)
# Counts and the baseline say what was measured; growth is about the costs.
GROWTH_FIGURES = tuple(
    key
    for key, _, _ in ROWS
    if key
    not in (
        "documents",
        "files",
        "store_mb",
        "search_hits_mean",
        "cli_baseline_ms",
        "note_full_checkpointed",
        # The disk's own write is a baseline, as `python -c pass` is for whole commands.
        "note_empty_disk_p50_ms",
        "note_empty_disk_p95_ms",
        "note_full_disk_p50_ms",
        "note_full_disk_p95_ms",
    )
)
COMMANDS = ("hot_show", "hot_note", "search", "spawn")
FRESH_RUNS = 3  # first searches of a fresh clone per store (each builds the whole index)
CLONE_RUNS = 2  # git clones of the largest store, each read first by a search
# A decisions.md of 1.6 MB, as Squad's grows when nothing archives it: parsed once a run.
DECISIONS = 3_700
IMPORT_RUNS = 5  # runs under `-X importtime` per command

STEADY_NOTE = (
    f"Clock fixed at {NOW}. Search and spawn refresh the last-use time of what they return "
    "(a file write and a re-index): each query and task ran once untimed first ('first use'), "
    "so the timed runs are the steady state and write nothing. Whole commands ran once untimed "
    "first, with TIERMEM_NOW set to the same time and a private bytecode cache; `hot note` "
    "writes to an agent of its own, and its runs come last in each round. Their CPU time "
    "(user + system, of the child) moves less with the load than their wall time."
)


# --- measuring ------------------------------------------------------------------------


def _ms(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _latency(
    name: str, calls: Sequence[Callable[[], object]], settle: Callable[[], object]
) -> dict[str, float]:
    """Each call once untimed (first use), then again timed: the steady state."""
    first = [_ms(call) for call in calls]
    settle()  # the last untimed call's refresh is re-indexed by the next sync: not timed
    steady = [_ms(call) for call in calls]
    return {
        f"{name}_first_ms": statistics.median(first),
        f"{name}_p50_ms": percentile(steady, 50),
        f"{name}_p95_ms": percentile(steady, 95),
    }


def _build(root: Path) -> tuple[float, int]:
    """Seconds of the first index build, and how many documents it indexed."""
    mem = Memory(root, now=NOW)
    try:
        start = time.perf_counter()
        mem.sync()
        seconds = time.perf_counter() - start
        index = mem.context.index
        documents = index.documents() if isinstance(index, FtsIndex) else len(index.docs())
    finally:
        mem.close()
    return seconds, documents


def in_process(root: Path, work: Workload, runs: int) -> dict[str, float]:
    """Sync, search and spawn latency, calling `Memory` directly."""
    mem = Memory(root, now=NOW)
    hits: list[int] = []
    prompt_tokens: list[int] = []

    def search(agent: str, query: str) -> Callable[[], object]:
        return lambda: hits.append(len(mem.search(query, agent=agent, limit=5)))

    def spawn(agent: str, task: str) -> Callable[[], object]:
        return lambda: prompt_tokens.append(mem.spawn(agent, task, auto=True).tokens["total"])

    try:
        sync = [_ms(mem.sync) for _ in range(runs + 1)][1:]
        figures = {"sync_noop_p50_ms": percentile(sync, 50)}
        figures |= _latency("search", [search(a, q) for a, q in work.queries], mem.sync)
        figures |= _latency("spawn", [spawn(a, t) for a, t in work.tasks], mem.sync)
    finally:
        mem.close()
    figures["search_hits_mean"] = statistics.fmean(hits)
    figures["spawn_tokens_p50"] = percentile(prompt_tokens, 50)
    return figures


def tiermem_command() -> list[str]:
    """How to start the CLI in a new process."""
    if (Path(__file__).resolve().parents[1] / "__main__.py").exists():
        return [sys.executable, "-m", "tiermem"]
    return [str(Path(sys.executable).with_name("tiermem"))]


def _environment(root: Path) -> dict[str, str]:
    """The store and clock for a child process, with a bytecode cache of its own.

    Without it, a stale `__pycache__` that may not be rewritten (PYTHONDONTWRITEBYTECODE,
    a read-only install) would be compiled again in every timed run.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "TIERMEM_ROOT": str(root),
        "TIERMEM_NOW": NOW,
        "PYTHONPYCACHEPREFIX": str(root / ".pycache"),
    }
    return env


def _cpu_ms() -> float:
    """CPU time (user and system) of this process's ended children so far, in ms."""
    try:
        import resource
    except ImportError:
        return 0.0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def _run(argv: Sequence[str], root: Path) -> tuple[float, float]:
    """Wall and CPU time of one command, in ms."""
    env = _environment(root)
    cpu, start = _cpu_ms(), time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip()
        raise StoreError(f"`{' '.join(argv)}` exited {done.returncode}: {error}")
    return elapsed, _cpu_ms() - cpu


def _settle(root: Path) -> None:
    """Index what the untimed runs wrote, so no timed run pays for it."""
    mem = Memory(root, now=NOW)
    try:
        mem.sync()
    finally:
        mem.close()


# The agent `hot note` writes to: a store's own agents keep what searches and spawns read.
NOTE_AGENT = "speedbench"


def _commands(work: Workload) -> dict[str, list[str]]:
    """The whole commands timed, and `python -c pass` first."""
    cli = tiermem_command()
    (agent, query), (spawn_agent, task) = work.queries[0], work.tasks[0]
    note = [*cli, "hot", "note", NOTE_AGENT, "--new-agent", f"A note while {query}"]
    return {
        "baseline": [sys.executable, "-c", "pass"],
        "hot_show": [*cli, "hot", "show", agent],
        "search": [*cli, "search", query],
        "spawn": [*cli, "spawn", spawn_agent, "--task", task, "--auto"],
        "hot_note": note,
    }


def whole_commands(root: Path, work: Workload, runs: int) -> dict[str, float]:
    """Median wall and CPU time of whole `tiermem` processes, and of an empty Python."""
    commands = _commands(work)
    for argv in commands.values():
        _run(argv, root)  # bytecode and page caches, and the last-use refresh it writes
    _settle(root)
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # interleaved, so drift in the machine hits every command alike
        for name, argv in commands.items():
            took, used = _run(argv, root)
            wall[name].append(took)
            cpu[name].append(used)
        _settle(root)  # the note is indexed untimed: the next round's reads find it done
    figures: dict[str, float] = {}
    for name, argv in commands.items():
        figures[f"cli_{name}_ms"] = statistics.median(wall[name])
        figures[f"cli_{name}_cpu_ms"] = statistics.median(cpu[name])
        figures[f"cli_{name}_mb"] = measured(argv, _environment(root)).peak_mb
    for name in COMMANDS:
        for kind in ("", "_cpu"):
            base = figures[f"cli_baseline{kind}_ms"]
            figures[f"cli_{name}{kind}_ratio"] = figures[f"cli_{name}{kind}_ms"] / base
    return figures


def over_mcp(root: Path, work: Workload) -> dict[str, float]:
    """The workload's searches and spawns as an agent's MCP client asks them."""
    searches = [("search", {"query": q, "agent": a, "limit": 5}) for a, q in work.queries]
    spawns = [("spawn", {"agent": a, "task": t, "auto": True}) for a, t in work.tasks]
    command = [*tiermem_command(), "serve"]
    figures = mcp_speed.latency(command, _environment(root), searches, spawns)
    # What the MCP SDK's import alone takes, in the same run: a floor under the first answer.
    sdk = [_run([sys.executable, "-c", "import mcp"], root)[0] for _ in range(3)]
    return figures | {"mcp_sdk_import_ms": statistics.median(sdk)}


def start_up(root: Path, work: Workload, runs: int) -> dict[str, Any]:
    """What each command's imports cost, and what `python -c pass` imports."""
    env, cwd = _environment(root), str(root)
    commands = _commands(work)
    costs = [
        startup.import_costs(name, argv[1:], env, cwd, runs)
        for name, argv in commands.items()
        if name != "baseline" and argv[0] == sys.executable  # `python -m tiermem ...`
    ]
    baseline = startup.import_costs("baseline", ["-c", "pass"], env, cwd, runs)
    return {
        "baseline_ms": baseline.total_ms,
        "commands": [c.as_json() for c in costs],
        "lines": startup.lines(costs, baseline.total_ms),
    }


def _footprint(root: Path) -> tuple[int, int]:
    """Markdown files of the store and their bytes."""
    files = size = 0
    for folder, _, names in os.walk(Layout(root).memory):
        for name in names:
            if name.endswith(".md"):
                files += 1
                size += os.stat(os.path.join(folder, name)).st_size
    return files, size


@dataclass
class StoreReport:
    """Every figure of one generated store (and, for one store, where start-up goes)."""

    entries: int
    figures: dict[str, float] = field(default_factory=dict)
    start_up: dict[str, Any] | None = None


def _written_earlier(root: Path, seconds: float = 60.0) -> None:
    """Date the generated files a minute back, as a store a user reads was written earlier:
    the index reads a file changed within the last two seconds again on every sync (its
    mtime cannot tell two writes in one tick apart), which would time a just-written store."""
    then = time.time() - seconds
    for folder, _, names in os.walk(root / ".squad"):
        for name in names:
            os.utime(os.path.join(folder, name), (then, then))
        os.utime(folder, (then, then))


def _cloned(root: Path, entries: int, runs: int) -> dict[str, float]:
    """The first search of git clones of the store, and the one after (`fresh_clone`)."""
    from .fresh_clone import committed, first_reads

    committed(root)
    with tempfile.TemporaryDirectory(prefix="tiermem-speed-clone-") as scratch:
        return first_reads(root, Path(scratch), entries, runs)


def measure_store(
    entries: int, runs: int, say: Callable[[str], None], imports: bool = False, clones: int = 0
) -> StoreReport:
    """Generate, index and time one store (with `imports`, where start-up goes; with
    `clones`, the first searches of as many git clones of it); the store is deleted
    afterwards."""
    report = StoreReport(entries)
    work = workload(entries, runs)
    with tempfile.TemporaryDirectory(prefix=f"tiermem-speed-{entries}-") as folder:
        root = Path(folder)
        say(f"[{entries:,}] generating store")
        start = time.perf_counter()
        generate(root, entries, say)
        report.figures["generate_s"] = time.perf_counter() - start
        files, size = _footprint(root)
        report.figures |= {"files": files, "store_mb": size / 1e6}
        _written_earlier(root)
        say(f"[{entries:,}] generated in {report.figures['generate_s']:.1f} s; fresh clone")
        search = [*tiermem_command(), "search", work.queries[0][1]]
        after = [*tiermem_command(), "search", work.queries[1 % len(work.queries)][1]]
        fresh = write_speed.first_search(
            lambda: _run(search, root)[0], root, FRESH_RUNS, lambda: _run(after, root)[0]
        )
        report.figures |= fresh
        say(f"[{entries:,}] first search {fresh['search_fresh_ms']:,.0f} ms; first index build")
        if clones:
            say(f"[{entries:,}] first searches of {clones} git clones")
            report.figures |= _cloned(root, entries, clones)
        write_speed.drop_index(root)
        build_s, documents = _build(root)
        report.figures |= {
            "build_s": build_s,
            "documents": documents,
            "build_docs_per_s": documents / build_s,
        }
        say(f"[{entries:,}] indexed {documents:,} documents in {build_s:.1f} s; in process")
        report.figures |= in_process(root, work, runs)
        say(f"[{entries:,}] whole commands ({runs} runs each)")
        report.figures |= whole_commands(root, work, runs)
        say(f"[{entries:,}] MCP round trips ({runs} runs each)")
        report.figures |= over_mcp(root, work)
        if imports:
            report.start_up = start_up(root, work, IMPORT_RUNS)
        say(f"[{entries:,}] hot notes on an empty and a full tier ({runs} each)")
        os.sync()  # what the earlier steps wrote is flushed before writes are timed
        report.figures |= write_speed.hot_notes(root, entries, runs)
    return report


def growth(reports: Sequence[StoreReport]) -> list[dict[str, Any]]:
    """For each pair of consecutive sizes, how much each cost grew."""
    steps = []
    for small, large in pairwise(reports):
        ratios = {
            key: large.figures[key] / small.figures[key]
            for key in GROWTH_FIGURES
            if small.figures.get(key) and key in large.figures
        }
        steps.append(
            {
                "from": small.entries,
                "to": large.entries,
                "size_ratio": large.entries / small.entries,
                "ratios": ratios,
            }
        )
    return steps


def checks(reports: Sequence[StoreReport]) -> list[dict[str, Any]]:
    """Every target against the sizes it is set for (every size, or one)."""
    return [
        {
            "figure": t.figure,
            "limit": t.limit,
            "entries": r.entries,
            "value": r.figures[t.figure],
            "met": r.figures[t.figure] <= t.limit,
        }
        for t in TARGETS
        for r in reports
        if t.applies(r.entries) and t.figure in r.figures
    ]


# --- reporting ------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--sizes takes comma-separated entry counts, not {text!r}") from None
    if not sizes:
        raise UsageError("--sizes needs at least one size")
    return sorted(set(sizes))


def _missed(report: StoreReport, key: str) -> bool:
    value = report.figures.get(key)
    return value is not None and any(
        t.figure == key and t.applies(report.entries) and value > t.limit for t in TARGETS
    )


def _cell(report: StoreReport, key: str, decimals: int) -> str:
    value = report.figures.get(key)
    if value is None:
        return "-"
    return f"{value:,.{decimals}f}" + (" *" if _missed(report, key) else "  ")


def _targets_of(key: str) -> str:
    return "; ".join(t.shown() for t in TARGETS if t.figure == key)


def print_text(data: dict[str, Any], reports: Sequence[StoreReport]) -> None:
    """The report as tables for people."""
    machine = data["machine"]
    print(
        f"tiermem bench speed: {data['runs']} runs per figure, sizes in index documents; "
        f"{machine['cpus']} CPUs, load {machine['load_before']} before, "
        f"{machine['load_after']} after"
    )
    print(STEADY_NOTE)
    print()
    for line in headline.lines(data["headline"]):
        print(line)
    print()
    header = "".join(f"{r.entries:>14,}" for r in reports)
    print(f"{'figure':<38}{header}   target")
    for key, label, decimals in ROWS:
        cells = "".join(f"{_cell(r, key, decimals):>14}" for r in reports)
        print(f"{label:<38}{cells}   {_targets_of(key)}")
    print("* misses its target")
    for step in data["growth"]:
        print()
        print(f"growth {step['from']:,} -> {step['to']:,} entries (x{step['size_ratio']:.3g} size)")
        labels = {key: label for key, label, _ in ROWS}
        for key, ratio in step["ratios"].items():
            print(f"  {labels[key]:<38}x{ratio:.2f}")
    for part in (data.get("start_up"), data.get("locomo"), data.get("decisions")):
        if part:
            print()
            for line in part["lines"]:
                print(line)
    missed = [f"{c['figure']} at {c['entries']:,}" for c in data["checks"] if not c["met"]]
    print()
    print(
        f"targets: {len(data['checks']) - len(missed)} of {len(data['checks'])} met"
        + (f"; missed: {', '.join(missed)}" if missed else "")
    )


def _load() -> float:
    """The one-minute load average (0 where the system does not tell)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def _peak_rss_mb() -> float:
    """The most memory this process held, in MB (0 where the system does not tell)."""
    try:
        import resource
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1e6 if sys.platform == "darwin" else 1e3), 1)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _locomo(path: str) -> dict[str, Any] | None:
    """LoCoMo conversations written note by note, when the file is there (else None)."""
    file = Path(path).expanduser()
    if not path or not file.is_file():
        _say(f"[locomo] {path or 'no file'}: not found, left out")
        return None
    figures = write_speed.locomo_ingest(file, _say)
    lines = [f"LoCoMo conversations written note by note ({figures['locomo_conversations']:.0f}"]
    lines[0] += f" of {file.name}; target <= {LOCOMO_TARGET_S:g} s one turn per note):"
    for turns in write_speed.TURNS_PER_NOTE:
        median, most = figures[f"locomo_{turns}_median_s"], figures[f"locomo_{turns}_max_s"]
        lines.append(f"  {turns} turn(s) per note: median {median:.2f} s, slowest {most:.2f} s")
    return {"file": str(file), **figures, "lines": lines}


def decisions_text(count: int) -> str:
    """A decisions.md of `count` decisions as Squad writes them (a heading, By, What and Why,
    a details section with code, a rule)."""
    entry = (
        "### 2026-03-{day:02d}: Decision number {n}\n**By:** Agent {n}\n**What:** {what}\n"
        "**Why:** because.\n\n#### Details\n\n```\n# code\n```\n\n---\n\n"
    )
    what = "a fairly long explanation of the change " * 8
    parts = [entry.format(day=n % 28 + 1, n=n, what=what) for n in range(count)]
    return "# Decisions\n\n" + "".join(parts)


def decisions_parse(runs: int) -> dict[str, Any]:
    """Milliseconds to parse a large decisions.md (the median of `runs`), as an import or a
    Scribe inbox merge reads it."""
    from ..squad.reading.squad_markdown import parse_decisions

    text = decisions_text(DECISIONS)
    times = [_ms(lambda: parse_decisions(text)) for _ in range(runs)]
    figures = {"decisions": DECISIONS, "mb": len(text.encode()) / 1e6}
    figures["median_ms"] = statistics.median(times)
    line = f"decisions.md of {figures['mb']:.1f} MB ({DECISIONS:,} decisions) parsed"
    return figures | {"lines": [f"{line}: median {figures['median_ms']:.0f} ms"]}


def run_speed(args: argparse.Namespace) -> int:
    """Measure every size and print the figures (text or JSON)."""
    sizes = _sizes(args.sizes)
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    load_before = _load()
    imports = TARGET_SIZE if TARGET_SIZE in sizes else sizes[0]
    reports = [
        measure_store(n, args.runs, _say, n == imports, CLONE_RUNS if n == sizes[-1] else 0)
        for n in sizes
    ]
    locomo = _locomo(args.locomo)
    decisions = decisions_parse(args.runs)
    costs = next(r.start_up for r in reports if r.start_up is not None)
    data: dict[str, Any] = {
        "runs": args.runs,
        # Wall times depend on what else the machine runs; say how busy it was.
        "machine": {
            "cpus": os.cpu_count() or 0,
            "load_before": load_before,
            "load_after": _load(),
            "peak_rss_mb": _peak_rss_mb(),
        },
        "now": NOW,
        "note": STEADY_NOTE,
        "command": tiermem_command(),
        "targets": [t.__dict__ for t in TARGETS],
        "stores": [{"entries": r.entries, **r.figures} for r in reports],
        "growth": growth(reports),
        "checks": checks(reports),
        "headline": headline.rows([{"entries": r.entries, **r.figures} for r in reports], TARGETS),
        "start_up": costs | {"entries": imports},
        "locomo": locomo,
        "decisions": decisions,
    }
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print_text(data, reports)
    return 0
