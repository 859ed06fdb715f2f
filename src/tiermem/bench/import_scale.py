"""`tiermem bench import-scale`: one agent's `history.md` of 50 MB (98,640 learnings) imported.

The history is generated (seeded: the same text every run) in the shapes of a real one: a
title, a Core Context, then dated `###` learnings over two years. `tiermem import squad`
runs on it as a process of its own, measured from outside: wall time, and peak resident
memory from the kernel's accounting of that process; `python -c pass` in the same run gives
the floor of any Python process. Then what the import left: the store's markdown (cold,
wiki), its archive and its index, against the history's own size; a first `tiermem search`
on it, which brings nothing up to date (the import left the index current); and each read a
user runs on it (`READS`), each the first of its kind: the index is put back as the import
left it before each (a read keeps what it derives, so only the first one pays; a copy of the
store would not do, its index sealed by another clone), with its peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..storage.clock import format_time, parse_time
from ..vocabulary import FILE_FOLDERS
from .generated import SESSION_TITLES, TASKS, prose_for

NOW = "2026-04-01T00:00:00Z"
AGENT = "flight"
HISTORY_DAYS = 730
TARGET_SECONDS = 120.0
TARGET_PEAK_MB = 300.0
TARGET_READ_PEAK_MB = 200.0
# The reads measured on the store the import left (`{out}`: a folder for what one writes).
TASK = "Fix the publish retries in the registry"
READS = {
    "search": ("search", "publish retries registry", "--limit", "5"),
    "spawn --auto": ("spawn", AGENT, "--task", TASK, "--auto"),
    "spawn --include-cold": ("spawn", AGENT, "--task", TASK, "--include-cold"),
    "stats": ("stats",),
    "hot show": ("hot", "show", AGENT),
    "log": ("log",),
    "doctor": ("doctor",),
    "reindex --check": ("reindex", "--check"),
    "report": ("report", "--out", "{out}"),
}


def write_history(root: Path, learnings: int) -> Path:
    """A Squad team folder with one agent whose history holds `learnings` dated sections."""
    prose = prose_for(learnings)
    start = parse_time(NOW) - timedelta(days=HISTORY_DAYS)
    path = root / ".squad" / "agents" / AGENT / "history.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.write(
            f"# {AGENT.title()}\n\n## Core Context\n\nI lead the publish pipeline and own "
            "`packages/squad-cli` and `.github/workflows/publish.yml`.\n\n## Learnings\n\n"
        )
        for n in range(learnings):
            when = format_time(start + timedelta(seconds=n * HISTORY_DAYS * 86400 // learnings))
            topic = prose.topic()
            title = prose.fill(prose.rng.choice(SESSION_TITLES), topic, when).replace("`", "")
            lines = [f"### {when[:10]}: {title}", prose.fill(prose.rng.choice(TASKS), topic)]
            lines += [f"- {s}" for s in prose.findings(topic, 5, 7)]
            out.write("\n".join(lines) + "\n\n")
    return path


@dataclass(frozen=True)
class Run:
    """A command run as a process of its own: wall seconds, CPU seconds (what a busy machine
    does not stretch), peak resident MB, exit status."""

    seconds: float
    cpu_seconds: float
    peak_mb: float
    status: int


# Runs a command and says what the kernel accounted to it. The command is started from this
# small process, not from the benchmark: Linux counts the memory of the process that forked
# it into the child's peak, and the benchmark holds the generator and its text.
_LAUNCHER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss,
                  usage.ru_utime + usage.ru_stime]))
"""


def measured(argv: list[str], env: dict[str, str] | None = None, check: bool = True) -> Run:
    """Run a command; its own peak memory and CPU time come from the kernel (wait4). A
    command that fails raises, unless it need not succeed (`check`)."""
    with tempfile.TemporaryFile() as errors:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, *argv],
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            check=False,
        )
        seconds = time.perf_counter() - began
        status, maxrss, cpu = json.loads(done.stdout)
        if status and check:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip()
            raise RuntimeError(f"{' '.join(argv[2:5])}... exited {status}: {said}")
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return Run(seconds, cpu, maxrss * scale / 2**20, status)


def _tiermem(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tiermem", "--root", str(root), "--now", NOW, *args]


def _bytes(folder: Path, pattern: str = "*") -> int:
    return sum(p.stat().st_size for p in folder.rglob(pattern) if p.is_file())


def store_size(root: Path) -> dict[str, float]:
    """What the import left, in MB: tier markdown, archive records, the index."""
    memory = root / ".squad" / "memory"
    tiers = sum(_bytes(memory / tier) for tier in FILE_FOLDERS)
    return {
        "tiers_mb": tiers / 2**20,
        "archive_mb": _bytes(memory / "archive") / 2**20,
        "index_mb": _bytes(memory, "index.sqlite*") / 2**20,
        "store_mb": _bytes(memory) / 2**20,
    }


def measure(root: Path, learnings: int, say: Any = print) -> dict[str, Any]:
    """Generate the history, import it, and measure the import and what it left."""
    began = time.perf_counter()
    history = write_history(root, learnings)
    say(f"history: {history.stat().st_size / 2**20:.1f} MB, {learnings:,} learnings")
    generated = time.perf_counter() - began
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    floor = measured([sys.executable, "-c", "pass"], env)
    subprocess.run(_tiermem(root, "init"), check=True, stdout=subprocess.DEVNULL, env=env)
    imported = measured(_tiermem(root, "import", "squad", "--format", "json"), env)
    search = measured(_tiermem(root, "search", "publish retries registry", "--limit", "5"), env)
    reads = first_reads(root, env, say)
    history_mb = history.stat().st_size / 2**20
    return {
        "learnings": learnings,
        "history_mb": history_mb,
        "generate_s": generated,
        "import_s": imported.seconds,
        "import_cpu_s": imported.cpu_seconds,
        "import_mb_per_s": history_mb / imported.seconds,
        "import_peak_mb": imported.peak_mb,
        "python_floor_peak_mb": floor.peak_mb,
        "search_first_s": search.seconds,
        "search_peak_mb": search.peak_mb,
        **store_size(root),
        "reads": reads,
        "read_peak_mb": max(r["peak_mb"] for r in reads.values()),
        "targets": {
            "import_s": TARGET_SECONDS,
            "import_peak_mb": TARGET_PEAK_MB,
            "read_peak_mb": TARGET_READ_PEAK_MB,
        },
    }


def first_reads(root: Path, env: dict[str, str], say: Any) -> dict[str, dict[str, float]]:
    """Each read of `READS` on the store, its index as the import left it before each."""
    found = {}
    index = root / ".squad" / "memory" / "index.sqlite"
    with tempfile.TemporaryDirectory(prefix="tiermem-reads-") as folder:
        kept = Path(folder) / "index.sqlite"
        shutil.copyfile(index, kept)  # no process has it open: its log is in it
        for name, args in READS.items():
            for side in ("-wal", "-shm"):
                Path(f"{index}{side}").unlink(missing_ok=True)
            shutil.copyfile(kept, index)
            argv = _tiermem(root, *(a.format(out=Path(folder) / "out") for a in args))
            run = measured(argv, env, check=False)
            found[name] = {"s": run.seconds, "cpu_s": run.cpu_seconds, "peak_mb": run.peak_mb}
            say(f"{name}: {run.seconds:.2f} s, peak {run.peak_mb:.0f} MB")
    return found


def progress(args: argparse.Namespace) -> Callable[[str], None]:
    """How a measurement says what it is doing: on stderr, unless its figures are asked for as
    JSON (then stdout holds the JSON alone and stderr stays quiet)."""

    def say(line: str) -> None:
        if args.format != "json":
            print(line, file=sys.stderr)

    return say


def command(args: argparse.Namespace) -> int:
    """Run the measurement and print it (text, or every figure as JSON)."""
    quiet = args.format == "json"
    say = progress(args)
    if args.out:
        figures = measure(Path(args.out).resolve(), args.learnings, say)
    else:
        with tempfile.TemporaryDirectory(prefix="tiermem-import-scale-") as folder:
            figures = measure(Path(folder), args.learnings, say)
    if quiet:
        print(json.dumps(figures, indent=2))
        return 0
    for line in report(figures):
        print(line)
    return 0


def report(f: dict[str, Any]) -> list[str]:
    """The figures in words, each against its target."""
    ok_time = "ok" if f["import_s"] < TARGET_SECONDS else "MISSED"
    ok_mem = "ok" if f["import_peak_mb"] < TARGET_PEAK_MB else "MISSED"
    return [
        f"history.md: {f['history_mb']:.1f} MB, {f['learnings']:,} learnings",
        f"import: {f['import_s']:.1f} s ({f['import_mb_per_s']:.2f} MB/s; CPU "
        f"{f['import_cpu_s']:.1f} s), target < {TARGET_SECONDS:.0f} s: {ok_time}",
        f"import peak memory: {f['import_peak_mb']:.0f} MB (python -c pass: "
        f"{f['python_floor_peak_mb']:.0f} MB), target < {TARGET_PEAK_MB:.0f} MB: {ok_mem}",
        f"store: {f['store_mb']:.1f} MB = archive {f['archive_mb']:.1f} + index "
        f"{f['index_mb']:.1f} + tiers {f['tiers_mb']:.2f} (history {f['history_mb']:.1f})",
        f"first search after it: {f['search_first_s']:.2f} s, peak {f['search_peak_mb']:.0f} MB",
        "first reads of each kind on it: "
        + ", ".join(f"{n} {r['s']:.1f} s {r['peak_mb']:.0f} MB" for n, r in f["reads"].items()),
        f"peak of any read: {f['read_peak_mb']:.0f} MB, target < {TARGET_READ_PEAK_MB:.0f} MB: "
        + ("ok" if f["read_peak_mb"] < TARGET_READ_PEAK_MB else "MISSED"),
    ]
