"""An uninstall racing a team's first write: `tiermem squad install --uninstall` and a
`tiermem hot note` started a few milliseconds apart, each in a process of its own, on a
store the install made and nobody wrote to yet (what an editor's MCP server still running
during an uninstall does).

A note is lost when its command said it was saved and the note is not in the hot tier after
both are done. tests/test_squad_uninstall_race.py runs a few trials; tests/stress.py
(`uninstall`) runs many.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from reliability import ROOT, child_env

# A command in a process of its own: it imports everything, says "ready", and runs when the
# file it waits for appears (so the two start within a millisecond of the chosen offset).
RACER = textwrap.dedent(
    """
    import os, sys, time
    from tiermem.cli.main import main
    from tiermem.hot import writes
    from tiermem.memory import Memory
    from tiermem.squad.install import installer
    go, argv = sys.argv[1], sys.argv[2:]
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.0005)
    sys.exit(main(argv))
    """
)
AGENT = "ralph"


def installed_team(root: Path) -> Path:
    """A hand-made Squad team with tiermem installed, its store unused."""
    sys.path.insert(0, str(ROOT / "tests"))
    from reliability import cli
    from test_squad_install import make_team

    make_team(root, vscode=True)
    code, _, err = cli(["squad", "install", "--root", str(root)])
    assert code == 0, err
    return root


def _racer(go: Path, argv: list[str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", RACER, str(go), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert proc.stdout is not None
    if proc.stdout.readline() != b"ready\n":
        raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "no ready")
    return proc


def trial(template: Path, work: Path, offset: float) -> dict[str, Any]:
    """One race: the uninstall starts, the note `offset` seconds later (before it, when
    negative); what each said and whether the note is where it was saved."""
    root = work / "repo"
    shutil.copytree(template, root, symlinks=True)
    mark = f"note-{work.name}-{random.getrandbits(32):08x}"
    starts = {"uninstall": work / "go-uninstall", "note": work / "go-note"}
    procs = {
        "uninstall": _racer(
            starts["uninstall"], ["squad", "install", "--uninstall", "--root", str(root)]
        ),
        "note": _racer(starts["note"], ["--root", str(root), "hot", "note", AGENT, mark]),
    }
    order = sorted(
        starts, key=lambda k: 0.0 if (k == "uninstall") == (offset >= 0) else abs(offset)
    )
    starts[order[0]].touch()
    time.sleep(abs(offset))
    starts[order[1]].touch()
    said = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        said[name] = {"code": proc.returncode, "out": out.decode()[-300:], "err": err.decode()}
    hot = root / ".squad/memory/hot" / f"{AGENT}.md"
    kept = hot.is_file() and mark in hot.read_text("utf-8")
    note = said["note"]
    return {
        "offset_ms": round(offset * 1000, 1),
        "note": note["code"],
        "uninstall": said["uninstall"]["code"],
        "kept": kept,
        "lost": note["code"] == 0 and not kept,
        "refused_in_one_line": note["code"] == 2 and note["err"].count("\n") == 1,
        "traceback": any("Traceback" in s["err"] for s in said.values()),
        "store_removed": not (root / ".squad/memory/config.toml").exists(),
        "err": note["err"].strip()[-200:],
    }


def race(work: Path, trials: int, seed: int = 20260301, spread: float = 0.15) -> dict[str, Any]:
    """`trials` races with the note started 0 to `spread` seconds after the uninstall (and a
    few before it); the counts."""
    rng = random.Random(seed)
    template = installed_team(work / "template")
    results = []
    for n in range(trials):
        folder = work / f"trial-{n:03d}"
        folder.mkdir()
        offset = rng.uniform(-0.02, spread)
        results.append(trial(template, folder, offset))
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "trials": trials,
        "lost": sum(r["lost"] for r in results),
        "saved_and_kept": sum(r["note"] == 0 and r["kept"] for r in results),
        "refused": sum(r["note"] != 0 for r in results),
        "refused_not_in_one_line": sum(
            r["note"] != 0 and not r["refused_in_one_line"] for r in results
        ),
        "store_removed": sum(r["store_removed"] for r in results),
        "uninstall_failed": sum(r["uninstall"] != 0 for r in results),
        "tracebacks": sum(r["traceback"] for r in results),
        "refusals": sorted({r["err"] for r in results if r["note"] != 0})[:3],
        "bad": [r for r in results if r["lost"] or r["traceback"] or r["uninstall"] != 0][:5],
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(race(Path(scratch), int(sys.argv[1]) if len(sys.argv) > 1 else 50)))
