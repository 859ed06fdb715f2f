#!/usr/bin/env python3
"""Stress tiermem: contention, kill -9 crashes, git merges, hostile input, secret canaries.

    python tests/stress.py                         # every phase, full counts
    python tests/stress.py concurrency --procs 16 --ops 40
    python tests/stress.py crash --crash-trials 200
    python tests/stress.py merge --merges 20 [--merge-driver]
    python tests/stress.py hostile --hostile 2000
    python tests/stress.py attacks
    python tests/stress.py index --index-rounds 20
    python tests/stress.py failures --disk-writes 6
    python tests/stress.py fuzz --fuzz 20000
    python tests/stress.py canaries
    python tests/stress.py retire --retire-trials 50

Phases:
  concurrency  N real processes mix hot writes, `decision add`, session ends, wiki requests,
               `scribe run` and searches on shared agents; then every text written must be
               found under .squad/memory, hot files must fit the budget, and
               `tiermem reindex` then `tiermem reindex --check` must be clean.
  crash        kill -9 after a random delay during `scribe end-session`, `scribe run`,
               `import squad` and an index rebuild; then the store must load, nothing written
               before may be missing, no temp file may be indexed, and a re-run must finish
               the work. "exact" counts trials whose store then equals an uninterrupted run's.
               Then every crash point (a forked child dies before its N-th file-system
               change) of each operation, compared with an uninterrupted run.
  merge        two clones of one repository work on memory, commit, and merge both ways;
               the origin leaves shared sessions open, which each clone notes into, ends,
               clears or checkpoints at random: clean merge (no CONFLICT), no conflict
               markers, store loads, no id twice in search or spawn, nothing lost, every
               archive record whole, every text found by search (none hidden), and the same
               entries whichever way the merge went; with --merge-driver the clones merge
               tier files entry by entry.
  hostile      random arguments, texts, stdin bytes and damaged store files through the CLI
               (in process): no traceback, exit 2 with one stderr line on failure, nothing
               written by a refused command on an intact store, damaged files never rewritten.
  attacks      every committed link (tests/attacks.py: hot/, cold/, wiki/, archive/, .locks/,
               audit.jsonl, .squad/decisions/, ...) and every hostile name or metadata (an
               agent= that climbs out, an inbox file named like a command, agent folders
               tiermem cannot name) against every command, each in a fresh copy: no write
               outside .squad/memory (but Squad's decision log and inbox), no traceback,
               no outside text shown or read into memory.
  index        fresh clones (no index) opened by many processes at once, with a rebuild and
               a session end among them: no failure, and no drift after the next read.
  failures     the disk full at the 1st, 2nd, ... write of every write command: one line,
               exit 2, no temp file left, the store loads, a re-run finishes, nothing lost.
  fuzz         command lines drawn from every command and option (tests/fuzz.py) on an
               intact store, in parallel: no traceback, every failure one line.
  canaries     every credential shape of tests/canaries.py through every write path (CLI,
               Python API, MCP tools, import squad, model summaries from a loopback server),
               then a byte grep of every file under .squad/memory.
  retire       eight passages of one archived record retired at once, by eight real
               `tiermem forget` processes, then by eight calls shared by two real MCP
               servers: every one says "retired", and none of the eight is served again.

Prints one summary per phase (or, with --json, one JSON object); exit status 1 when a check
failed. Known bugs (see docs/reliability.md) show up as failures, with their reason.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
# The stress run is the suite's own scenarios at full counts: they live beside it.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import attacks
import canary_paths
import crashes
import failures
import fuzz
import hazards
import hostile
import merges
import races
import retirements
from canaries import CANARIES
from reliability import child_env, cli, files_text, snapshot

NOW0 = "2026-03-01T10:00:00Z"
HOT_BUDGET = 4096


def _hot_bytes(path: Path) -> int:
    """What the hot budget counts of a hot file (its bytes when it does not parse)."""
    from tiermem.errors import TiermemError
    from tiermem.hot import tier as hot_tier
    from tiermem.storage import entries

    try:
        return hot_tier.size(entries.parse(path.read_text(encoding="utf-8"), path))
    except (TiermemError, ValueError, OSError):
        return path.stat().st_size


# --- shared helpers -------------------------------------------------------------------


def tiermem_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "tiermem", "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )


def mark() -> str:
    return "mark-" + uuid.uuid4().hex


# --- phase: concurrency ---------------------------------------------------------------

WORDS = [
    "reader",
    "buffer",
    "retry",
    "login",
    "cookie",
    "token",
    "release",
    "pipeline",
    "cache",
    "registry",
    "widget",
    "module",
    "backoff",
    "flaky",
    "lint",
    "schema",
    "contract",
    "deploy",
    "config",
    "session",
]
# Weights out of about 400: `reindex` and `doctor` read the whole store (`reindex` under the
# index lock), so on a store that has grown to thousands of records they are rare, as in a
# team's day.
OPS = [
    ("note", 136),
    ("action", 56),
    ("set", 20),
    ("decide", 32),
    ("block", 12),
    ("decision", 40),
    ("end", 40),
    ("wiki", 24),
    ("run", 20),
    ("search", 20),
    ("clear", 8),
    ("reindex", 1),
    ("doctor", 1),
]


def _op_argv(rng: random.Random, op: str, agent: str, marker: str) -> list[str]:
    filler = " ".join(rng.choice(WORDS) for _ in range(rng.choice((0, 5, 40, 150, 300))))
    text = f"{marker} {op} for {agent}: {filler}".strip()
    if op in ("note", "action", "decide", "block"):
        verb = {"note": "note", "action": "action", "decide": "decide", "block": "block"}[op]
        source = ["--source", "web"] if rng.random() < 0.1 else []
        return ["hot", verb, agent, text, "--new-agent", *source]
    if op == "set":
        return ["hot", "set", agent, "--new-agent", "--task", text, "--why", f"because {marker}"]
    if op == "decision":
        day = rng.randint(1, 28)
        return [
            "decision",
            "add",
            "--by",
            agent,
            f"### 2026-03-{day:02d}: Decision {marker}\n**What:** {text}\n**Why:** {filler[:80]}",
            "--new-agent",
        ]
    if op == "end":
        return ["scribe", "end-session", agent]
    if op == "wiki":
        topic = rng.choice(("release", "testing", "ci"))
        return ["wiki", "write", topic, f"Rule {marker}\n{text}", "--by", agent, "--new-agent"]
    if op == "run":
        return ["scribe", "run"]
    if op in ("clear", "reindex", "doctor"):
        return {"clear": ["hot", "clear", agent], "reindex": ["reindex"], "doctor": ["doctor"]}[op]
    return ["search", rng.choice(WORDS) + " " + rng.choice(WORDS), "--agent", agent]


def concurrency_worker(
    root: str, worker: int, ops: int, agents: int, seed: int, start: str
) -> None:
    """One of the contending processes: logs one JSON line per operation on stdout."""
    rng = random.Random(seed * 1000 + worker)
    names, weights = zip(*OPS, strict=True)
    while not os.path.exists(start):
        time.sleep(0.002)
    for n in range(ops):
        op = rng.choices(names, weights)[0]
        agent = f"agent{rng.randrange(agents)}"
        marker = mark()
        argv = ["--root", root, *_op_argv(rng, op, agent, marker)]
        try:
            code, _, err = cli(argv)
        except Exception:
            code, err = 99, traceback.format_exc()
        writes = op not in ("end", "run", "search", "clear", "reindex", "doctor")
        line = {"worker": worker, "n": n, "op": op, "code": code, "err": err[-500:]}
        line["marker"] = marker if writes else ""
        print(json.dumps(line), flush=True)


def phase_concurrency(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tiermem.memory import Memory
    from tiermem.storage import entries, store

    root = work / "concurrency"
    root.mkdir(parents=True)
    Memory.init(root)
    start = work / "concurrency-go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "_worker",
                str(root),
                str(w),
                str(args.ops),
                str(args.agents),
                str(args.seed),
                str(start),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        for w in range(args.procs)
    ]
    time.sleep(0.5)
    began = time.monotonic()
    start.touch()
    lines: list[dict[str, Any]] = []
    crashed = []
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        lines += [json.loads(x) for x in out.decode().splitlines() if x.strip()]
        if proc.returncode != 0:
            crashed.append(err.decode("utf-8", "replace")[-1000:])
    seconds = time.monotonic() - began
    # Ending, clearing or searching as an agent that has written nothing yet is refused, as
    # it should be; doctor says 1 while another process's write is not yet in the index.
    failed = [
        x
        for x in lines
        if x["code"] != 0
        and not (x["op"] in ("end", "search", "clear") and "unknown agent" in x["err"])
        and not (x["op"] == "clear" and "has no hot tier" in x["err"])
        and not (x["op"] == "doctor" and x["code"] == 1)
    ]
    tracebacks = [x for x in lines if x["code"] == 99]
    written = {x["marker"] for x in lines if x["code"] == 0 and x["marker"]}
    text = files_text(root)
    lost = sorted(m for m in written if m not in text)
    memory = root / ".squad" / "memory"
    over = [  # the budget counts the text a spawn loads (`hot.tier.size`), not the metadata
        f"{p.name}: {size}"
        for p in sorted((memory / "hot").glob("*.md"))
        if (size := _hot_bytes(p)) > HOT_BUDGET
    ]
    temp = [p.relative_to(root).as_posix() for p in memory.rglob(".tmp-*")]
    unreadable, conflicts = [], 0
    for tier in ("hot", "cold", "wiki", "queue"):
        for path in sorted((memory / tier).glob("*.md")):
            try:
                conflicts += len(entries.parse(path.read_text(encoding="utf-8"), path).conflicts)
            except Exception as exc:
                unreadable.append(f"{path.name}: {exc}")
    audit_bad = 0
    for raw in (memory / "tiermem-audit.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            json.loads(raw)
        except json.JSONDecodeError:
            audit_bad += 1
    rebuilt = tiermem_process(root, "reindex")
    check = tiermem_process(root, "reindex", "--check")
    layout = store.Layout(root)
    return {
        "processes": args.procs,
        "operations": len(lines),
        "by_op": dict(Counter(x["op"] for x in lines)),
        "writes": len(written),
        "seconds": round(seconds, 1),
        "failed_ops": [f"{x['op']}: {x['err'].strip()[-300:]}" for x in failed][:20],
        "failed_count": len(failed),
        "tracebacks": len(tracebacks),
        "crashed_workers": crashed,
        "lost": lost,
        "hot_over_budget": over,
        "temp_files": temp,
        "unreadable": unreadable,
        "merge_conflicts": conflicts,
        "audit_torn_lines": audit_bad,
        "archive_records": sum(1 for _ in (layout.tier_dir("archive")).rglob("a-*.md")),
        "reindex": rebuilt.returncode,
        "reindex_check": (check.stdout + check.stderr).strip(),
        "ok": not (failed or crashed or lost or over or temp or unreadable or audit_bad)
        and rebuilt.returncode == 0
        and check.returncode == 0,
    }


# --- phase: crash ---------------------------------------------------------------------


def _crash_trial(
    name: str, template: str, work: str, duration: float, seed: int, refs: list[Any]
) -> dict[str, Any]:
    """One kill -9 trial (runs in a pool process)."""
    _, argv = crashes.OPERATIONS[name]
    marks = set(json.loads((Path(template) / "marks.json").read_text()))
    root = Path(work)
    shutil.copytree(template, root, ignore=shutil.ignore_patterns("marks.json"))
    delay = random.Random(seed).uniform(0.0, duration)
    completed = crashes.kill_after(root, argv, delay)
    problems = [f"lost before re-run: {m}" for m in marks if m not in files_text(root, ".squad")]
    # Reading refreshes last-use times: the reads run on a copy, so that the re-run's result
    # can be compared byte for byte with an uninterrupted run's.
    probe = Path(work + "-probe")
    shutil.copytree(root, probe, symlinks=True)
    problems += crashes.load_problems(probe, marks)
    code, _, err = cli(["--root", str(root), "--now", crashes.NOW1, *argv])
    got = crashes.tier_state(root) if code == 0 else {}
    exact = code == 0 and got in refs
    differs = sorted(k for k in set(got) | set(refs[0]) if got.get(k) != refs[0].get(k))
    if code != 0:
        problems.append(f"re-run exit {code}: {err.strip()[:200]}")
    else:
        problems += crashes.unfinished(name, root, marks)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(probe, ignore_errors=True)
    return {
        "op": name,
        "delay": round(delay, 3),
        "completed_before_kill": completed,
        "problems": problems[:5],
        "exact": exact,
        "differs": [] if exact else differs[:4],
    }


def phase_crash(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    templates: dict[str, Path] = {}
    durations: dict[str, float] = {}
    refs: dict[str, list[Any]] = {}
    for name, (scenario, argv) in crashes.OPERATIONS.items():
        template = work / f"template-{name}"
        marks = scenario(template)
        (template / "marks.json").write_text(json.dumps(sorted(marks)))
        templates[name] = template
        ref = work / f"reference-{name}"
        shutil.copytree(template, ref, ignore=shutil.ignore_patterns("marks.json"))
        durations[name], _ = crashes.run_through(ref, argv)
        once = crashes.tier_state(ref)
        cli(["--root", str(ref), "--now", crashes.NOW1, *argv])
        refs[name] = [once, crashes.tier_state(ref)]
    rng = random.Random(args.seed)
    names = list(crashes.OPERATIONS)
    jobs = [
        (names[n % len(names)], rng.randrange(2**32), work / f"trial-{n}")
        for n in range(args.crash_trials)
    ]
    results: list[dict[str, Any]] = []
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        futures = [
            pool.submit(
                _crash_trial,
                name,
                str(templates[name]),
                str(trial),
                durations[name],
                seed,
                refs[name],
            )
            for name, seed, trial in jobs
        ]
        for future in concurrent.futures.as_completed(futures):
            results.append(future.result())
    per_op: dict[str, dict[str, int]] = {}
    for r in results:
        slot = per_op.setdefault(r["op"], {"trials": 0, "survived": 0, "exact": 0, "mid_op": 0})
        slot["trials"] += 1
        slot["survived"] += not r["problems"]
        slot["exact"] += r["exact"]
        slot["mid_op"] += not r["completed_before_kill"]
    points: dict[str, Any] = {}
    if not args.no_crash_points:
        small: dict[str, tuple[Callable[[Path], set[str]], list[str]]] = {
            "end-session": (
                lambda r: crashes.sessions_scenario(r, agents=3, queue=False),
                ["scribe", "end-session", "--all"],
            ),
            "end-session-with-queue": (
                lambda r: crashes.sessions_scenario(r, agents=1, queue=True),
                ["scribe", "end-session", "agent0"],
            ),
            "scribe-run": (crashes.maintenance_scenario, ["scribe", "run"]),
            "import": (
                lambda r: crashes.squad_scenario(r, agents=2, sections=3, decisions=4),
                ["import", "squad", "--format", "json"],
            ),
        }
        for name, (scenario, argv) in small.items():
            template = work / f"points-template-{name}"
            scenario(template)
            try:
                report = crashes.crash_points(template, work / f"points-{name}", argv, timeout=3600)
            except RuntimeError as exc:
                report = {"error": str(exc)[-1500:]}
            points[name] = {
                "points": report.get("points"),
                "tried": report.get("tried"),
                "recovered_exactly": (report.get("tried") or 0) - len(report.get("bad", [])),
                "first_failures": report.get("bad", [])[:3],
                **({"error": report["error"]} if "error" in report else {}),
            }
    failures = [r for r in results if r["problems"]]
    return {
        "trials": len(results),
        "survived": len(results) - len(failures),
        "failed": len(failures),
        "exact_recovery": sum(r["exact"] for r in results),
        "killed_mid_operation": sum(not r["completed_before_kill"] for r in results),
        "per_operation": per_op,
        "operation_seconds": {k: round(v, 2) for k, v in durations.items()},
        "first_failures": failures[:5],
        "first_inexact": [r for r in results if not r["exact"]][:5],
        "crash_points": points,
        "ok": not failures,
    }


# --- phase: merge ---------------------------------------------------------------------


def _must(root: Path, now: str, *argv: str) -> str:
    code, out, err = cli(["--root", str(root), "--now", now, *argv])
    if code != 0:
        raise RuntimeError(f"tiermem {' '.join(argv)}: {err.strip()}")
    return out


def _merge_session(rng: random.Random, root: Path, side: str, day: int, marks: set[str]) -> None:
    """A random day of work in one clone; every text carries a new marker."""
    now = f"2026-03-{day:02d}T10:00:00Z"
    later = f"2026-03-{day:02d}T11:00:00Z"
    for agent in rng.sample(["flight", "eecom", "fido", f"own-{side}"], k=rng.randint(1, 3)):
        m = [mark() for _ in range(4)]
        marks.update(m)
        _must(root, now, "hot", "set", agent, "--new-agent", "--task", f"Task {m[0]}")
        _must(root, now, "hot", "note", agent, f"Note {m[1]} " + " ".join(rng.sample(WORDS, 6)))
        for k in range(rng.randint(0, 8)):
            a = mark()
            marks.add(a)
            _must(root, now, "hot", "action", agent, f"step {k} {a}")
        if rng.random() < 0.5:
            _must(root, now, "hot", "decide", agent, f"Decided {m[2]}")
        else:
            marks.discard(m[2])
        _must(root, later, "scribe", "end-session", agent)
        if rng.random() < 0.5:
            _must(root, now, "decision", "add", "--by", agent, f"Adopt {m[3]}\nbecause it helps")
        else:
            marks.discard(m[3])
    if rng.random() < 0.5:
        w = mark()
        marks.add(w)
        _must(root, now, "wiki", "write", rng.choice(("release", "ci")), f"Rule {w}\nkeep it")
    _must(root, later, "search", " ".join(rng.sample(WORDS, 3)))
    if rng.random() < 0.6:
        _must(root, f"2026-03-{day + rng.randint(1, 12):02d}T12:00:00Z", "scribe", "run")
    if rng.random() < 0.5:  # a session of its own agent left open at commit time
        o = mark()
        marks.add(o)
        _must(root, later, "hot", "note", f"own-{side}", f"Open {o}", "--new-agent")


SHARED_OPEN = ("guido", "kara")  # sessions the origin leaves open for both clones


def _open_shared(rng: random.Random, origin: Path, marks: set[str]) -> None:
    """Sessions of shared agents left open in the origin: both clones will touch them."""
    for agent in SHARED_OPEN:
        m = [mark() for _ in range(2)]
        marks.update(m)
        _must(origin, NOW0, "hot", "set", agent, "--task", f"Shared task {m[0]}", "--new-agent")
        for k in range(rng.randint(1, 4)):
            n = mark()
            marks.add(n)
            _must(origin, NOW0, "hot", "note", agent, f"Shared note {k} {n} on the reader")
        if rng.random() < 0.5:
            _must(origin, NOW0, "hot", "block", agent, f"Waiting on keys {m[1]}")
        else:
            marks.discard(m[1])


def _touch_shared(rng: random.Random, root: Path, day: int, marks: set[str]) -> list[str]:
    """What a clone does to the shared open sessions: the hazards of tests/hazards.py, at
    random (a note while the other clone ends, clears or checkpoints, or both ending)."""
    done = []
    now = f"2026-03-{day:02d}T09:{rng.randint(0, 59):02d}:00Z"
    for agent in SHARED_OPEN:
        what = rng.choice(("note", "end", "clear", "queue", "note-then-end", "nothing"))
        done.append(f"{agent}:{what}")
        if what in ("note", "note-then-end"):
            n = mark()
            marks.add(n)
            _must(root, now, "hot", "note", agent, f"Clone note {n}")
        if what == "queue":
            for k in range(7):
                a = mark()
                marks.add(a)
                _must(root, now, "hot", "action", agent, f"shared step {k} {a}")
            _must(root, now, "scribe", "run")
        if what == "clear":
            _must(root, now, "hot", "clear", agent)
        if what in ("end", "note-then-end", "queue"):
            _must(root, now, "scribe", "end-session", agent)
    return done


def _merged_problems(root: Path, marks: set[str]) -> list[str]:
    problems = []
    if merges.git(root, "status", "--porcelain").stdout.strip():
        problems.append("merge: unmerged paths")
    for path in merges.conflict_markers(root):
        problems.append(f"markers: conflict markers in {path.name}")
    at = ["--root", str(root), "--now", "2026-04-20T10:00:00Z"]
    known = SHARED_OPEN[0]  # every round's origin gives this agent a session
    for argv in (["stats"], ["hot", "show", known], ["reindex"]):
        code, _, err = cli([*at, *argv])
        if code != 0:
            problems.append(f"loads: {argv[0]} exit {code}: {err.strip()[:120]}")
    for query in ("task note rule step decided adopt", *sorted(marks)[:5]):
        code, out, err = cli([*at, "search", query, "--format", "json", "--limit", "300"])
        ids = [h["id"] for h in json.loads(out)] if code == 0 else []
        if code != 0:
            problems.append(f"loads: search exit {code}: {err.strip()[:120]}")
        elif len(ids) != len(set(ids)):
            problems.append(f"unique ids: an id twice in search results for {query[:20]!r}")
    spawn = ["spawn", known, "--task", "task note rule", "--include-cold", "--include-wiki"]
    code, out, err = cli([*at, *spawn, "--format", "json"])
    if code != 0:
        problems.append(f"loads: spawn exit {code}: {err.strip()[:120]}")
    else:
        ids = [s["id"] for s in json.loads(out)["sources"]]
        if len(ids) != len(set(ids)):
            problems.append("unique ids: an id twice in the spawn prompt")
    text = files_text(root)
    lost = [m for m in marks if m not in text]
    if lost:
        problems.append(f"nothing lost: {len(lost)} texts lost")
    return problems


def phase_merge(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    rng = random.Random(args.seed + 1)
    rounds = []
    for n in range(args.merges):
        base = work / f"merge-{n}"
        origin = merges.new_repository(base / "origin")
        marks: set[str] = set()
        _must(origin, NOW0, "init")
        _merge_session(rng, origin, "base", 1, marks)
        _open_shared(rng, origin, marks)
        merges.git(origin, "add", "-A")
        merges.git(origin, "commit", "-q", "-m", "base")
        clones = {}
        shared: dict[str, list[str]] = {}
        for side, day in (("a", 2), ("b", 3)):
            merges.git(base, "clone", "-q", str(origin), side)
            clones[side] = base / side
            if args.merge_driver:
                _must(clones[side], NOW0, "init", "--merge-driver")
            shared[side] = _touch_shared(rng, clones[side], day, marks)
            _merge_session(rng, clones[side], side, day, marks)
            merges.git(clones[side], "add", "-A")
            merges.git(clones[side], "commit", "-q", "-m", f"work {side}")
        a, b = clones["a"], clones["b"]
        merged = merges.merge_both_ways(a, b)
        problems = [
            f"merge: exit {m.returncode}: {m.stdout[-200:]}" for m in merged if m.returncode
        ]
        conflicts = sum(m.stdout.count("CONFLICT") for m in merged)
        problems += [f"conflicts: git reported {conflicts} conflict(s)"] if conflicts else []
        in_a, in_b = merges.entries_by_file(a), merges.entries_by_file(b)
        differ = sorted(k for k in set(in_a) | set(in_b) if in_a.get(k) != in_b.get(k))
        if differ:
            problems.append(f"same both ways: {', '.join(differ)} differ by merge direction")
        for c in (a, b):
            problems += [f"{c.name}: {p}" for p in _merged_problems(c, marks)]
            problems += [f"{c.name}: records: {r}" for r in hazards.broken_records(c)]
            hidden = hazards.hidden(c, marks, "2026-04-20T10:00:00Z")
            problems += (
                [f"{c.name}: hidden: {len(hidden)} texts not found by search"] if hidden else []
            )
        rounds.append({"round": n, "texts": len(marks), "shared": shared, "problems": problems})
        if not (problems and args.keep):
            shutil.rmtree(base, ignore_errors=True)
    bad = [r for r in rounds if r["problems"]]
    checks = (
        "merge",
        "conflicts",
        "markers",
        "loads",
        "same both ways",
        "unique ids",
        "nothing lost",
        "records",
        "hidden",
    )
    held = {
        check: sum(
            not any(p.startswith(check + ":") or f": {check}:" in p for p in r["problems"])
            for r in rounds
        )
        for check in checks
    }
    return {
        "merges": len(rounds),
        "merge_driver": args.merge_driver,
        "clean": len(rounds) - len(bad),
        "checks_held": held,
        "texts_checked": sum(r["texts"] for r in rounds),
        "first_failures": bad[:5],
        "ok": not bad,
    }


# --- phase: hostile -------------------------------------------------------------------


def _random_text(rng: random.Random) -> str:
    if rng.random() < 0.35:
        return rng.choice(["Ship the login fix", "Use pnpm", "reader retry", "release tag"])
    if rng.random() < 0.6:
        return rng.choice(hostile.TEXTS)
    alphabet = "abc \n\t<>-#*:/\\.\x00\x1b\u00e9\u202e\ud800"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def _random_argv(rng: random.Random) -> list[str]:
    roll = rng.random()
    agent = (
        rng.choice(["flight", "eecom"])
        if roll < 0.4
        else rng.choice(hostile.AGENTS)
        if roll < 0.8
        else _random_text(rng)[:10]
    )
    text = _random_text(rng)
    forms = [
        ["hot", rng.choice(["note", "action", "decide", "block"]), agent, text],
        ["hot", rng.choice(["note", "decide"]), agent, text, "--source", rng.choice(["web", "x"])],
        ["hot", "set", agent, "--task", text, "--why", _random_text(rng)],
        ["hot", "show", agent, "--format", rng.choice(["json", "text", "yaml"])],
        ["hot", "clear", agent],
        ["hot", "unblock", agent, text],
        ["decision", "add", "--by", agent, text],
        ["wiki", "write", agent, text, "--by", rng.choice(hostile.AGENTS)],
        ["wiki", "show", agent],
        ["search", text, "--agent", agent, "--limit", str(rng.randint(-2, 40))],
        ["spawn", agent, "--task", text, "--budget", str(rng.randint(-5, 4000))],
        ["scribe", "end-session", agent],
        ["scribe", "run"],
        ["stats"],
        ["reindex", "--check"],
        [_random_text(rng)[:8] for _ in range(rng.randint(0, 3))],
    ]
    now = rng.choice(hostile.CLOCKS) if rng.random() < 0.3 else ["--now", hostile.T0]
    return [*now, *rng.choice(forms)]


def _random_damage(rng: random.Random) -> list[tuple[str, str | bytes]]:
    """Half the inputs meet a damaged store: one or two broken files, or links out of it."""
    if rng.random() >= 0.5:
        return []
    damage: list[tuple[str, str | bytes]] = []
    for _ in range(rng.randint(1, 2)):
        target = rng.choice(hostile.TARGETS)
        kind = "symlink-out" if rng.random() < 0.15 else rng.choice(sorted(hostile.DAMAGE))
        damage.append((target, kind))
    return damage


def phase_hostile(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    rng = random.Random(args.seed + 2)
    template = work / "hostile-template"
    template.mkdir(parents=True)
    hostile.build_template(template)
    outside = hostile.write_outside(work / "outside.md")
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for _ in range(args.hostile):
        root = work / "hostile-run"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(template, root, symlinks=True)
        damaged = hostile.as_placed(hostile.place(root, outside, _random_damage(rng)))
        argv = ["--root", str(root), *_random_argv(rng)]
        stdin = rng.choice(hostile.STDIN)
        before = snapshot(root)
        counts["inputs"] += 1
        try:
            code, out, err = cli(argv, stdin)
        except Exception as exc:
            kind = f"traceback: {type(exc).__name__}: {str(exc)[:80]}"
            counts[kind] += 1
            examples.setdefault(kind, repr(argv)[:300])
            continue
        verdict = []
        if code not in (0, 1, 2) or (code == 1 and "reindex" not in argv):
            verdict.append(f"exit status {code}")
        if code == 2:
            counts["refused"] += 1
            lines = err.splitlines()
            if len(lines) != 1 or ": error: " not in lines[0]:
                verdict.append("failure not one stderr line")
            if not damaged and snapshot(root) != before:
                verdict.append("refused command wrote (intact store)")
        verdict += hostile.overwritten(damaged)
        if hostile.OUTSIDE_MARK in out + err:
            verdict.append("text from outside the store shown")
        for v in verdict:
            counts[v] += 1
            examples.setdefault(v, repr(argv)[:300])
        counts["ok" if not verdict else "bad"] += 1
    shutil.rmtree(work / "hostile-run", ignore_errors=True)
    problems = {k: v for k, v in counts.items() if k not in ("inputs", "ok", "refused", "bad")}
    return {
        "inputs": counts["inputs"],
        "refused_cleanly": counts["refused"],
        "problems": problems,
        "examples": examples,
        "ok": not problems,
    }


# --- phase: attacks -------------------------------------------------------------------

# Files outside .squad/memory/ that a command may write on its own: Squad's decision log
# (decision add, the inbox merge) and the inbox files the merge takes in.
_SQUAD_WRITES = (".squad/decisions.md", ".squad/decisions/inbox/")


def _outside_memory(root: Path) -> dict[str, str]:
    """Everything in the repository but .squad/memory/ and what tiermem writes there."""
    found = attacks.fingerprint(root)
    return {
        k: v
        for k, v in found.items()
        if not k.startswith(".squad/memory") and not k.startswith(_SQUAD_WRITES)
    }


def _attack_case(
    template: Path, work: Path, kind: str, name: str, argv: list[str]
) -> dict[str, Any]:
    """One command against one committed link or hostile name, in a fresh copy."""
    root = work / "repo"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(template, root, symlinks=True)
    outside = attacks.outside_tree(work / "outside")
    if kind == "link":
        attacks.plant_link(root, outside, name)
    else:
        attacks.HOSTILE_NAMES[name](root)
    before_outside = attacks.fingerprint(outside)
    before_repo = _outside_memory(root)
    above = sorted(p.name for p in work.iterdir())
    outcome = attacks.run(root, argv)
    found = attacks.problems(outcome, before_outside, outside)
    changed = sorted(
        k
        for k in set(before_repo) | set(_outside_memory(root))
        if before_repo.get(k) != _outside_memory(root).get(k)
    )
    if changed:
        found.append(f"wrote outside .squad/memory: {', '.join(changed[:3])}")
    if sorted(p.name for p in work.iterdir()) != above:
        found.append("wrote next to the repository")
    if attacks.pwned(root) or (work / attacks.PWNED).exists():
        found.append("a name ran as a command")
    if kind == "link" and attacks.memory_holds_outside_text(root):
        found.append("outside text read into memory")
    return {"case": f"{kind} {name}: {' '.join(argv)}", "code": outcome.code, "problems": found}


def phase_attacks(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    template = work / "template"
    template.mkdir(parents=True)
    attacks.build_store(template)
    cases = [("link", name) for name in sorted(attacks.LINKS)]
    cases += [("hostile", name) for name in sorted(attacks.HOSTILE_NAMES)]
    results = []
    for n, (kind, name) in enumerate(cases):
        for argv in attacks.COMMANDS:
            results.append(_attack_case(template, work / f"case-{n}", kind, name, argv))
        shutil.rmtree(work / f"case-{n}", ignore_errors=True)
    bad = [r for r in results if r["problems"]]
    kinds = Counter(p.split(":")[0] for r in bad for p in r["problems"])
    return {
        "links": len(attacks.LINKS),
        "hostile_names": len(attacks.HOSTILE_NAMES),
        "commands": len(attacks.COMMANDS),
        "cases": len(results),
        "refused": sum(r["code"] == 2 for r in results),
        "writes_outside_memory": sum(
            any(p.startswith(("wrote", "a name ran")) for p in r["problems"]) for r in results
        ),
        "problems": dict(kinds),
        "first_failures": bad[:5],
        "ok": not bad,
    }


# --- phase: index ---------------------------------------------------------------------


def phase_index(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    kinds = ["search", "stats", "search", "end", "search", "note", "reindex", "search"]
    opens, failed, drift = 0, [], 0
    for n in range(args.index_rounds):
        root = races.fresh_clone(work / f"clone-{n}")
        results = races.open_at_once(root, kinds[: args.index_procs])
        opens += len(results)
        failed += races.failures(results)
        cli(["--root", str(root), "search", "reader"])
        code, _, _ = cli(["--root", str(root), "reindex", "--check"])
        drift += code != 0
        shutil.rmtree(root, ignore_errors=True)
    return {
        "rounds": args.index_rounds,
        "opens": opens,
        "failed": len(failed),
        "drift_after_a_read": drift,
        "first_failures": failed[:5],
        "ok": not failed and not drift,
    }


# --- phase: failures ------------------------------------------------------------------


def phase_failures(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    template = work / "template"
    template.mkdir(parents=True)
    attacks.build_store(template)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for argv in failures.WRITES:
        for fail_at in range(1, args.disk_writes + 1):
            root = work / "run"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(template, root, symlinks=True)
            texts = files_text(root, ".squad")
            result = failures.full_disk(root, argv, fail_at)
            counts["runs"] += 1
            problems = []
            if result["code"] == 2:
                counts["refused"] += 1
                err = str(result["err"])
                if err.count("\n") != 1 or "No space left on device" not in err:
                    problems.append("failure not in one line")
            elif result["code"] not in (0, 1):
                problems.append(f"exit {result['code']}")
            if failures.temp_files(root):
                problems.append("temp file left")
            for read in (["hot", "show", "flight"], ["search", "login"]):
                if cli(["--root", str(root), *read])[0] != 0:
                    problems.append("store does not load")
            if cli(["--root", str(root), *argv])[0] not in (0, 1):
                problems.append("re-run fails")
            if any(m not in files_text(root, ".squad") for m in _marks_in(texts)):
                problems.append("text lost")
            for problem in problems:
                counts[problem] += 1
                examples.setdefault(problem, f"{argv} at write {fail_at}: {result}"[:400])
    problems = {k: v for k, v in counts.items() if k not in ("runs", "refused")}
    return {
        "runs": counts["runs"],
        "refused_in_one_line": counts["refused"],
        "problems": problems,
        "examples": examples,
        "ok": not problems,
    }


def _marks_in(text: str) -> set[str]:
    return set(re.findall(r"mark-[0-9a-z-]+", text))


# --- phase: fuzz ----------------------------------------------------------------------


def _fuzz_chunk(template: str, work: str, seed: int, calls: int) -> dict[str, Any]:
    """`calls` fuzzed command lines (in a pool process), on fresh copies of an intact store."""
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    root = Path(work) / "repo"
    os.chdir(work)  # a relative --root lands here, never in the checkout
    for n in range(calls):
        if n % 40 == 0:
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(template, root, symlinks=True)
        argv = fuzz.random_argv(rng, root)
        verdict, detail = fuzz.verdict(argv)
        counts[verdict] += 1
        if verdict != "ok":
            examples.setdefault(verdict, f"{argv!r}: {detail[-600:]}")
    shutil.rmtree(root, ignore_errors=True)
    return {"counts": dict(counts), "examples": examples}


def phase_fuzz(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    template = work / "template"
    template.mkdir(parents=True)
    hostile.build_template(template)
    chunks = max(1, args.fuzz // 500)
    sizes = [args.fuzz // chunks + (1 if n < args.fuzz % chunks else 0) for n in range(chunks)]
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        futures = []
        for n, size in enumerate(sizes):
            folder = work / f"chunk-{n}"
            folder.mkdir()
            futures.append(
                pool.submit(_fuzz_chunk, str(template), str(folder), args.seed + n, size)
            )
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            counts.update(result["counts"])
            for k, v in result["examples"].items():
                examples.setdefault(k, v)
    problems = {k: v for k, v in counts.items() if k != "ok"}
    return {
        "calls": sum(counts.values()),
        "tracebacks": sum(v for k, v in counts.items() if k.startswith("traceback")),
        "problems": problems,
        "examples": examples,
        "ok": not problems,
    }


# --- phase: canaries ------------------------------------------------------------------


def _import_squad(root: Path) -> None:
    canary_paths.squad_with_canaries(root)
    code, _, err = cli(["--root", str(root), "--now", canary_paths.T0, "import", "squad"])
    if code != 0:
        raise RuntimeError(err)


def _model_summaries(root: Path) -> None:
    waiting = [line for _, _, line in CANARIES]
    os.environ[canary_paths.KEY_ENV] = "sk-local-stress"
    with canary_paths.model_summaries(root, canary_paths.whole_lines(waiting)):
        canary_paths.summarize_until_said(root, waiting)
    if waiting:
        raise RuntimeError(f"{len(waiting)} canaries never reached a summary")


# Each write path, by its name in the report: it writes every canary into the store at root.
CANARY_PATHS: dict[str, Callable[[Path], object]] = {
    **{
        f"cli {name}": functools.partial(canary_paths.write_by_cli, argv=argv)
        for name, argv in canary_paths.CLI_WRITES.items()
    },
    "python api": canary_paths.write_by_api,
    "mcp tools": canary_paths.write_by_mcp,
    "inbox merge": canary_paths.write_by_inbox,
    "import squad": _import_squad,
    "model summaries": _model_summaries,
}


def phase_canaries(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tiermem.memory import Memory

    results = {}
    total_leaks = 0
    for name, write in CANARY_PATHS.items():
        root = work / f"canaries-{len(results)}"
        root.mkdir(parents=True)
        Memory.init(root, now=canary_paths.T0)
        error = ""
        try:
            write(root)
            canary_paths.move_everything(root)
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
        log = (root / canary_paths.DECISION_LOG,) if name in canary_paths.WRITE_THE_LOG else ()
        found = [f"{kind} in {Path(p).name}" for kind, p in canary_paths.leaks(root, log)]
        total_leaks += len(found)
        results[name] = {
            "leaks": found[:5],
            "kinds_not_audited": sorted(
                canary_paths.KINDS - canary_paths.redacted_kinds(canary_paths.audit_lines(root))
            ),
            **({"error": error} if error else {}),
        }
    bad = {k: v for k, v in results.items() if v["leaks"] or v["kinds_not_audited"] or "error" in v}
    return {
        "canaries": len(CANARIES),
        "kinds": len(canary_paths.KINDS),
        "write_paths": len(CANARY_PATHS),
        "writes": len(CANARIES) * len(CANARY_PATHS),
        "leaks": total_leaks,
        "problems": bad,
        "ok": not bad,
    }


# --- phase: retire ---------------------------------------------------------------------


def phase_retire(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    eight = list(range(1, 9))
    result: dict[str, Any] = {"trials": args.retire_trials, "problems": []}
    for way in ("cli", "mcp"):
        said = lost = 0
        for n in range(args.retire_trials):
            root = work / f"{way}-{n}"
            record = retirements.record_store(root)
            if way == "cli":
                said += retirements.said_retired(retirements.retire_at_once(root, record, eight))
            else:
                answers = retirements.retire_over_servers(root, record, eight)
                said += sum(a.startswith("retired ") for a in answers)
            served = retirements.served(root, eight)
            lost += len(served)
            if served:
                result["problems"].append(f"{way} trial {n}: still served {served}")
            shutil.rmtree(root, ignore_errors=True)
        result[way] = {"retirements": 8 * args.retire_trials, "said_retired": said, "lost": lost}
    result["ok"] = all(
        result[w]["said_retired"] == result[w]["retirements"] and not result[w]["lost"]
        for w in ("cli", "mcp")
    )
    return result


# --- main -----------------------------------------------------------------------------

PHASES: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "concurrency": phase_concurrency,
    "crash": phase_crash,
    "merge": phase_merge,
    "hostile": phase_hostile,
    "attacks": phase_attacks,
    "index": phase_index,
    "failures": phase_failures,
    "fuzz": phase_fuzz,
    "canaries": phase_canaries,
    "retire": phase_retire,
}


def _summary(name: str, result: dict[str, Any]) -> list[str]:
    status = "ok" if result.get("ok") else "FAILED"
    if name == "concurrency":
        lines = [
            f"concurrency: {result['processes']} processes, {result['operations']} operations, "
            f"{result['writes']} texts written, {len(result['lost'])} lost, "
            f"{result['failed_count']} failed operations, {result['tracebacks']} tracebacks, "
            f"{result['seconds']} s [{status}]",
            f"  hot files over {HOT_BUDGET} bytes: {len(result['hot_over_budget'])}; temp files "
            f"left: {len(result['temp_files'])}; reindex --check: {result['reindex_check']}",
        ]
    elif name == "crash":
        lines = [
            f"crash: {result['trials']} kill -9 trials, {result['survived']} survived, "
            f"{result['failed']} failed, {result['exact_recovery']} recovered exactly, "
            f"{result['killed_mid_operation']} killed mid-operation [{status}]"
        ]
        for op, slot in sorted(result["per_operation"].items()):
            lines.append(
                f"  {op}: {slot['survived']}/{slot['trials']} survived, "
                f"{slot['exact']} exact, {slot['mid_op']} killed mid-operation"
            )
        for op, slot in sorted(result["crash_points"].items()):
            lines.append(
                f"  crash points {op}: {slot.get('recovered_exactly')}/{slot.get('tried')} "
                "recovered exactly"
            )
    elif name == "merge":
        driver = "per-entry driver" if result["merge_driver"] else "union"
        lines = [
            f"merge ({driver}): {result['merges']} merges (both directions), {result['clean']} "
            f"passed every check, {result['texts_checked']} texts checked [{status}]",
            "  rounds where the check held: "
            + ", ".join(f"{k} {v}/{result['merges']}" for k, v in result["checks_held"].items()),
        ]
    elif name == "hostile":
        lines = [
            f"hostile: {result['inputs']} inputs, {result['refused_cleanly']} refused, "
            f"problems: {result['problems'] or 'none'} [{status}]"
        ]
    elif name == "attacks":
        lines = [
            f"attacks: {result['links']} committed links and {result['hostile_names']} hostile "
            f"names x {result['commands']} commands = {result['cases']} cases, "
            f"{result['refused']} refused, {result['writes_outside_memory']} wrote outside "
            f".squad/memory, problems: {result['problems'] or 'none'} [{status}]"
        ]
    elif name == "index":
        lines = [
            f"index: {result['rounds']} fresh clones, {result['opens']} processes opening at "
            f"once, {result['failed']} failed, {result['drift_after_a_read']} drifting "
            f"after a read [{status}]"
        ]
    elif name == "failures":
        lines = [
            f"failures: {result['runs']} runs with the disk full at one write, "
            f"{result['refused_in_one_line']} refused in one line, problems: "
            f"{result['problems'] or 'none'} [{status}]"
        ]
    elif name == "fuzz":
        lines = [
            f"fuzz: {result['calls']} fuzzed command lines, {result['tracebacks']} tracebacks, "
            f"problems: {result['problems'] or 'none'} [{status}]"
        ]
    elif name == "retire":
        lines = [
            f"retire: {result['trials']} trials of eight retirements at once: "
            + "; ".join(
                f"{way} {result[way]['said_retired']}/{result[way]['retirements']} said "
                f"retired, {result[way]['lost']} lost"
                for way in ("cli", "mcp")
            )
            + f" [{status}]"
        ]
    else:
        lines = [
            f"canaries: {result['canaries']} canaries ({result['kinds']} kinds) x "
            f"{result['write_paths']} write paths, {result['leaks']} leaked [{status}]"
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phases", nargs="*", choices=[[], *PHASES], default=[])
    parser.add_argument("--procs", type=int, default=16, help="contending processes")
    parser.add_argument("--ops", type=int, default=40, help="operations per process")
    parser.add_argument("--agents", type=int, default=4, help="shared agents")
    parser.add_argument("--crash-trials", type=int, default=200, help="kill -9 trials")
    parser.add_argument("--no-crash-points", action="store_true", help="skip crash points")
    parser.add_argument("--merges", type=int, default=20, help="merge rounds")
    parser.add_argument(
        "--merge-driver",
        action="store_true",
        help="clones merge tier files entry by entry (tiermem init --merge-driver)",
    )
    parser.add_argument("--hostile", type=int, default=2000, help="hostile inputs")
    parser.add_argument("--fuzz", type=int, default=2000, help="fuzzed command lines")
    parser.add_argument("--index-rounds", type=int, default=20, help="fresh clones opened")
    parser.add_argument("--index-procs", type=int, default=8, help="processes per clone")
    parser.add_argument("--disk-writes", type=int, default=6, help="full disk at writes 1..N")
    parser.add_argument("--jobs", type=int, default=2, help="parallel crash trials")
    parser.add_argument(
        "--retire-trials", type=int, default=50, help="trials of eight retirements at once"
    )
    parser.add_argument("--seed", type=int, default=20260301)
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    phases = [p for p in args.phases if p] or list(PHASES)
    scratch = args.workdir or Path(tempfile.mkdtemp(prefix="tiermem-stress-"))
    scratch.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {}
    try:
        for name in phases:
            began = time.monotonic()
            work = scratch / name
            work.mkdir()
            report[name] = PHASES[name](args, work)
            report[name]["phase_seconds"] = round(time.monotonic() - began, 1)
            summary = "\n".join(_summary(name, report[name]))
            print(summary, file=sys.stderr if args.json else sys.stdout, flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    elif not all(r.get("ok") for r in report.values()):
        for name, result in report.items():
            if not result.get("ok"):
                detail = {k: v for k, v in result.items() if "fail" in k or k in ("problems",)}
                print(f"{name} details: {json.dumps(detail, default=str)[:3000]}")
    return 0 if all(r.get("ok") for r in report.values()) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        root, worker, ops, agents, seed, start = sys.argv[2:8]
        concurrency_worker(root, int(worker), int(ops), int(agents), int(seed), start)
        sys.exit(0)
    sys.exit(main())
