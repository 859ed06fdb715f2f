"""Where a command's start-up goes: each whole command under `python -X importtime`, what
its imports cost in all, the modules that cost most (their own time, not their imports'),
and the modules from outside tiermem that tiermem's code imports, with all they bring in
(`dataclasses` is little in itself, and brought `inspect`, `ast`, `dis` and `tokenize`)."""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TOP = 6  # modules named per command


@dataclass(frozen=True)
class ImportCosts:
    """One command's imports: their time in all (ms), how many modules, the costliest."""

    command: str
    total_ms: float
    modules: int
    top: tuple[tuple[str, float], ...]  # (module, its own ms), costliest first
    # (module, ms with what it imports): what tiermem's code imports from outside itself
    outside: tuple[tuple[str, float], ...] = ()

    def as_json(self) -> dict[str, object]:
        """The figures as JSON values."""
        return {
            "command": self.command,
            "total_ms": self.total_ms,
            "modules": self.modules,
            "top": [{"module": m, "ms": ms} for m, ms in self.top],
            "outside": [{"module": m, "ms": ms} for m, ms in self.outside],
        }


def own_times(stderr: str) -> dict[str, float]:
    """Module -> its own import time in ms, from what `-X importtime` printed."""
    found: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        own, _, name = line[len("import time:") :].split("|", 2)
        if own.strip().isdigit():
            found[name.strip()] = int(own) / 1000
    return found


def outside_times(stderr: str) -> dict[str, float]:
    """Module -> its import time with all it imports (ms), for each module from outside
    tiermem that a tiermem module is the first to import, from what `-X importtime` printed.

    Python prints a module after what it imports, one level deeper: the modules waiting at
    a level below a line are the ones that line imported.
    """
    found: dict[str, float] = {}
    waiting: dict[int, list[tuple[str, float]]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        _, total, shown = line[len("import time:") :].split("|", 2)
        if not total.strip().isdigit():
            continue
        name, depth = shown.strip(), (len(shown) - len(shown.lstrip()) - 1) // 2
        imported = waiting.pop(depth + 1, [])
        if name.split(".")[0] == "tiermem":
            found.update((m, ms) for m, ms in imported if m.split(".")[0] != "tiermem")
        waiting.setdefault(depth, []).append((name, int(total) / 1000))
    return found


def import_costs(
    name: str, argv: Sequence[str], env: Mapping[str, str], cwd: str, runs: int
) -> ImportCosts:
    """The median import costs of `python -X importtime ARGV` over `runs` runs."""
    samples, outside = [], []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *argv],
            env=dict(env),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        samples.append(own_times(done.stderr))
        outside.append(outside_times(done.stderr))
    modules = sorted({m for sample in samples for m in sample})
    total = statistics.median(sum(sample.values()) for sample in samples)
    return ImportCosts(name, total, len(modules), _costliest(samples), _costliest(outside))


def _costliest(samples: Sequence[Mapping[str, float]]) -> tuple[tuple[str, float], ...]:
    """The TOP modules of the largest median times over the samples, largest first."""
    modules = {m for sample in samples for m in sample}
    medians = {m: statistics.median(s.get(m, 0.0) for s in samples) for m in modules}
    return tuple(sorted(medians.items(), key=lambda item: -item[1])[:TOP])


def lines(costs: Sequence[ImportCosts], baseline_ms: float) -> list[str]:
    """The costs as text: one line a command, its costliest modules below it."""
    out = [f"imports under `python -X importtime` (`python -c pass`: {baseline_ms:.1f} ms):"]
    for c in costs:
        out.append(f"  {c.command:<16} {c.total_ms:6.1f} ms in {c.modules} modules; costliest:")
        out.append("    " + ", ".join(f"{m} {ms:.1f}" for m, ms in c.top))
        if c.outside:
            shown = ", ".join(f"{m} {ms:.1f}" for m, ms in c.outside)
            out.append(f"    from outside tiermem, with what each imports: {shown}")
    return out
