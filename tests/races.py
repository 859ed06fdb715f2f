"""Processes racing on one store's index: a fresh clone opened by many at once, files that
vanish while a sync reads them, a rebuild under readers.

tests/test_index.py runs each race a few times; tests/stress.py (`index`) many times.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from reliability import ROOT, child_env
from tiermem.index import database
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"

OPENER = textwrap.dedent(
    """
    import json, os, sys, time, traceback
    sys.path.insert(0, sys.argv[4])
    from reliability import cli
    root, start, what = sys.argv[1], sys.argv[2], sys.argv[3]
    while not os.path.exists(start):
        time.sleep(0.001)
    argv = {
        "search": ["search", "reader buffer"],
        "stats": ["stats"],
        "reindex": ["reindex"],
        "end": ["scribe", "end-session", "--all"],
        "note": ["hot", "note", "eecom", "a note " + str(os.getpid())],
    }[what]
    try:
        code, out, err = cli(["--root", root, "--now", "2026-03-03T10:00:00Z", *argv])
    except Exception:
        code, err = 99, traceback.format_exc()
    print(json.dumps({"what": what, "code": code, "err": err[-400:]}))
    """
)


def fresh_clone(root: Path, agents: int = 6) -> Path:
    """A store as a clone brings it: every tier, no index (it is never committed)."""
    root.mkdir(parents=True, exist_ok=True)
    mem, _ = Memory.init(root, now=T0)
    for n in range(agents):
        mem.hot_set(f"agent{n}", f"Fix the reader buffer {n}", why="releases wait")
        mem.hot_add(f"agent{n}", "note", f"ReadBuffer.fill dropped chunk {n}")
        mem.end_session(f"agent{n}")
        mem.hot_add(f"agent{n}", "note", f"Open note {n}")
    mem.hot_add("eecom", "note", "eecom note")
    mem.close()
    memory = root / ".squad" / "memory"
    for path in memory.glob("index.sqlite*"):
        path.unlink()
    return root


def open_at_once(root: Path, kinds: list[str]) -> list[dict[str, object]]:
    """Start one process per kind, let them all go at the same moment; their outcomes."""
    start = root.parent / f"{root.name}-go"
    start.unlink(missing_ok=True)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(root), str(start), kind, str(ROOT / "tests")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        for kind in kinds
    ]
    time.sleep(0.3)
    start.touch()
    results: list[dict[str, object]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        lines = [x for x in out.decode().splitlines() if x.startswith("{")]
        if lines:
            results.append(json.loads(lines[-1]))
        else:
            results.append({"what": "?", "code": proc.returncode, "err": err.decode()[-400:]})
    start.unlink(missing_ok=True)
    return results


# What a process that needs the index says when another builds it for longer than it waits
# (`database.BUILD_WAIT_SECONDS`): an answer, not a failure; it wrote nothing.
BUILDING = f"tiermem: error: {database.BUILDING_ELSEWHERE}"


def failures(results: list[dict[str, object]]) -> list[str]:
    """Outcomes that are neither a clean success nor the word that another process is
    building the index; and, when none succeeded, that."""
    bad = []
    for r in results:
        if r["code"] != 0 and not (r["code"] == 2 and str(r["err"]).strip() == BUILDING):
            bad.append(f"{r['what']}: exit {r['code']}: {str(r['err']).strip()[-200:]}")
    if not any(r["code"] == 0 for r in results):
        bad.append("no process succeeded")
    return bad
