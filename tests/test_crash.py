"""Crashes: kill -9 in the middle of Scribe, an import or an index sync, then recover.

Two kinds of test:
- real kills: a subprocess runs the operation and gets SIGKILL after a random delay; then
  the store must load (`hot show`, `search`, `stats` exit 0), every text written before is
  still in a tier or the archive, no `.tmp-*` file is indexed or parsed as memory, and
  running the operation again finishes the interrupted work and leaves the store exactly as
  an uninterrupted run does;
- crash points: a forked child runs the operation and dies (os._exit, as a kill -9 does)
  just before its N-th file-system change (rename, link, unlink, append), for every N in
  turn; after a re-run the store must be exactly what an uninterrupted run leaves (or what
  two uninterrupted runs leave, for a crash after the last change).

The scenarios and checks are in tests/crashes.py: the `crash` phase of tests/stress.py
runs them hundreds of times. The last test runs the mixed-operation contention phase of
tests/stress.py on a small scale (tests/test_concurrency.py covers hot writes alone).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crashes import (
    NOW1,
    OPERATIONS,
    crash_points,
    kill_after,
    load_problems,
    maintenance_scenario,
    run_through,
    sessions_scenario,
    squad_scenario,
    tier_state,
    unfinished,
)
from reliability import ROOT, cli, files_text

# --- real kills -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, set[str]]]:
    built = {}
    for name, (scenario, _) in OPERATIONS.items():
        root = tmp_path_factory.mktemp(f"template-{name}")
        built[name] = (root, scenario(root))
    return built


@pytest.fixture(scope="module")
def uninterrupted(
    templates: dict[str, tuple[Path, set[str]]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[float, list[dict[str, Any]]]]:
    """Each operation run through: how long it took (the range of the random delay), and
    the store after one run and after two (a kill after the last change is followed by a
    second run)."""
    out = {}
    for name, (template, _) in templates.items():
        root = tmp_path_factory.mktemp(f"timing-{name}")
        shutil.rmtree(root)
        shutil.copytree(template, root)
        seconds, code = run_through(root, OPERATIONS[name][1])
        assert code == 0, name
        once = tier_state(root)
        run_through(root, OPERATIONS[name][1])
        out[name] = (seconds, [once, tier_state(root)])
    return out


TRIALS = ["end-session", "scribe-run", "import", "index-sync", "end-session", "import"]


@pytest.mark.parametrize("trial", range(len(TRIALS)))
def test_kill_at_a_random_moment_then_recover(
    trial: int,
    templates: dict[str, tuple[Path, set[str]]],
    uninterrupted: dict[str, tuple[float, list[dict[str, Any]]]],
    tmp_path: Path,
) -> None:
    name = TRIALS[trial]
    template, marks = templates[name]
    duration, references = uninterrupted[name]
    root = tmp_path / "repo"
    shutil.copytree(template, root)
    seed = random.randrange(2**32)
    delay = random.Random(seed).uniform(0.0, duration)
    kill_after(root, OPERATIONS[name][1], delay)
    why = f"{name}: killed after {delay:.3f}s of {duration:.3f}s (seed {seed})"
    # Text written before is in a tier or the archive, or still where Squad keeps it (the
    # decision inbox, the agents' histories) when the operation had not taken it in yet.
    assert {m for m in marks if m not in files_text(root, ".squad")} == set(), why
    # Reads refresh last-use times: they run on a copy, so that the re-run's result can be
    # compared with an uninterrupted run's.
    probe = tmp_path / "probe"
    shutil.copytree(root, probe, symlinks=True)
    assert load_problems(probe, marks) == [], why
    code, _, err = cli(["--root", str(root), "--now", NOW1, *OPERATIONS[name][1]])
    assert code == 0, f"{why}: re-run failed: {err}"
    assert unfinished(name, root, marks) == [], why
    assert tier_state(root) in references, f"{why}: not what an uninterrupted run leaves"


# --- crash points ---------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="crash points need fork")
def test_every_crash_point_of_end_session_recovers_exactly(tmp_path: Path) -> None:
    template = tmp_path / "template"
    sessions_scenario(template, agents=3, queue=False)
    report = crash_points(template, tmp_path / "work", ["scribe", "end-session", "--all"])
    assert report["code"] == 0 and report["points"] >= 15
    assert report["bad"] == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="crash points need fork")
def test_every_crash_point_of_scribe_run_recovers_exactly(tmp_path: Path) -> None:
    template = tmp_path / "template"
    maintenance_scenario(template)
    report = crash_points(template, tmp_path / "work", ["scribe", "run"])
    assert report["code"] == 0 and report["points"] >= 15
    assert report["bad"] == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="crash points need fork")
def test_every_crash_point_of_end_session_with_a_queue_recovers_exactly(tmp_path: Path) -> None:
    template = tmp_path / "template"
    sessions_scenario(template, agents=1, queue=True)
    report = crash_points(template, tmp_path / "work", ["scribe", "end-session", "agent0"])
    assert report["code"] == 0
    assert report["bad"] == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="crash points need fork")
def test_every_crash_point_of_import_recovers_exactly(tmp_path: Path) -> None:
    template = tmp_path / "template"
    squad_scenario(template, agents=2, sections=3, decisions=4)
    argv = ["import", "squad", "--format", "json"]
    report = crash_points(template, tmp_path / "work", argv, stride=2)
    assert report["code"] == 0
    assert report["bad"] == []


# --- contention -----------------------------------------------------------------------


def test_mixed_operations_from_many_processes_lose_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "stress.py"),
            "concurrency",
            "--procs",
            "6",
            "--ops",
            "10",
            "--workdir",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        timeout=600,
        check=False,
    )
    said = proc.stderr.decode("utf-8", "replace")[-3000:]
    assert proc.returncode == 0, said + proc.stdout.decode("utf-8", "replace")[-3000:]
    result = json.loads(proc.stdout)["concurrency"]
    assert result["writes"] >= 40
    assert result["failed_ops"] == []
    assert result["lost"] == []
    assert result["hot_over_budget"] == []
    assert result["reindex_check"] == "index matches the files"
    assert result["temp_files"] == []
