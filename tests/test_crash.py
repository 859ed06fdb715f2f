"""Crashes: kill -9 in the middle of Scribe, an import or an index sync, then recover.

Two kinds of test:
- real kills: a subprocess runs the operation and gets SIGKILL after a random delay; then
  the store must load (`hot show`, `search`, `stats` exit 0), every text written before is
  still in a tier or the archive, no `.tmp-*` file is indexed or parsed as memory, and
  running the operation again finishes the interrupted work;
- crash points: a forked child runs the operation and dies (os._exit, as a kill -9 does)
  just before its N-th file-system change (rename, link, unlink, append), for every N in
  turn; after a re-run the store must be exactly what an uninterrupted run leaves (or what
  two uninterrupted runs leave, for a crash after the last change).

The last test runs the mixed-operation contention phase of scripts/stress.py on a small
scale (tests/test_concurrency.py covers hot writes alone).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tiermem import store
from tiermem.memory import Memory
from tiermem.scribe import end_session

RunCli = Callable[..., tuple[int, str, str]]

NOW0 = "2026-03-01T10:00:00Z"
NOW1 = "2026-03-20T11:00:00Z"  # the interrupted operation runs here: promotions are due
ROOT = Path(__file__).resolve().parents[1]


def mark(*parts: object) -> str:
    """A unique token that redaction and summaries leave whole."""
    return "mark-" + hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


# --- scenarios ------------------------------------------------------------------------


def sessions_scenario(root: Path, agents: int = 6, queue: bool = True) -> set[str]:
    """Agents mid-session: task, notes (one structured), decisions, actions, a blocker."""
    marks: set[str] = set()
    root.mkdir(parents=True, exist_ok=True)
    mem, _ = Memory.init(root, now=NOW0)
    for n in range(agents):
        agent = f"agent{n}"
        m = [mark(agent, k) for k in range(6)]
        marks.update(m[:5])
        mem.hot_set(agent, f"Fix the reader {m[0]}", why=f"releases wait {m[1]}")
        mem.hot_add(agent, "note", f"Root cause found in ReadBuffer.fill {m[2]}")
        mem.hot_add(
            agent,
            "note",
            f"### Convention: run the linter before commit in {agent}\n"
            f"**What:** ruff and mypy run before every commit in every package {m[3]}\n"
            "**Why:** CI catches it later, and that costs a whole pipeline run",
        )
        mem.hot_add(agent, "decision", f"Keep retries off in {agent} reader {m[4]}")
        for k in range(7 if queue else 4):  # more than 5 actions: the oldest go to the queue
            mem.hot_add(agent, "action", f"step {k} {mark(agent, 'action', k)}")
            marks.add(mark(agent, "action", k))
        if n % 3 == 0:
            mem.hot_add(agent, "blocker", f"Waiting on staging keys {m[5]}")
            marks.add(m[5])
    mem.close()
    return marks


def maintenance_scenario(root: Path) -> set[str]:
    """Ended sessions (structured, old), queued text, and a Squad decision inbox."""
    marks = sessions_scenario(root, agents=4)
    mem = Memory(root, now="2026-03-01T11:00:00Z")
    for agent in mem.agents():
        end_session(mem, agent)
    for agent in ("agent1", "agent2"):
        for k in range(7):
            mem.hot_add(agent, "action", f"later step {k} {mark(agent, 'later', k)}")
            marks.add(mark(agent, "later", k))
    mem.close()
    inbox = root / ".squad" / "decisions" / "inbox"
    inbox.mkdir(parents=True)
    for k, tool in enumerate(("pnpm", "vitest", "biome")):
        m = mark("inbox", k)
        marks.add(m)
        (inbox / f"agent{k}-{tool}.md").write_text(
            f"### 2026-03-0{k + 2}: Use {tool} for the monorepo\n**By:** Agent{k}\n"
            f"**What:** use {tool} everywhere {m}\n**Why:** one tool, fewer surprises\n",
            encoding="utf-8",
        )
    return marks


def squad_scenario(
    root: Path, agents: int = 6, sections: int = 25, decisions: int = 30
) -> set[str]:
    """A Squad team folder in its usual shapes (no tiermem store yet)."""
    marks: set[str] = set()
    squad = root / ".squad"
    squad.mkdir(parents=True, exist_ok=True)
    for n in range(agents):
        folder = squad / "agents" / f"agent{n}"
        folder.mkdir(parents=True)
        parts = [f"# Agent{n}\n\n## Core Context\n\nOwns module {n} {mark('core', n)}.\n"]
        marks.add(mark("core", n))
        parts.append("\n## Learnings\n")
        for k in range(sections):
            m = mark("history", n, k)
            marks.add(m)
            date = f"2026-02-{k % 27 + 1:02d}"
            parts.append(
                f"\n### {date}: Widget {k} retries\n\nWidget {k} broke when module {n} "
                f"retried {m}. Fixed by adding backoff in `src/m{n}/w{k}.ts` (#{100 + k}).\n"
            )
        (folder / "history.md").write_text("".join(parts), encoding="utf-8")
        (folder / "charter.md").write_text(f"# Agent{n}\nOwns module {n}.\n", encoding="utf-8")
    blocks = ["# Decisions\n"]
    for k in range(decisions):
        m = mark("decision", k)
        marks.add(m)
        blocks.append(
            f"\n### 2026-01-{k % 27 + 1:02d}: Use tool {k} for builds\n**By:** Agent{k % agents}"
            f"\n**What:** always build with tool {k} {m}.\n**Why:** it is faster.\n"
        )
    (squad / "decisions.md").write_text("".join(blocks), encoding="utf-8")
    inbox = squad / "decisions" / "inbox"
    inbox.mkdir(parents=True)
    m = mark("inbox")
    marks.add(m)
    (inbox / "agent0-cache.md").write_text(
        f"### 2026-03-01: Cache the registry\n**By:** Agent0\n**What:** cache it {m}\n"
        "**Why:** speed\n",
        encoding="utf-8",
    )
    return marks


def big_store_scenario(root: Path) -> set[str]:
    """An imported team: many tier files and archive records for the index to read."""
    marks = squad_scenario(root, agents=5, sections=15, decisions=20)
    mem, _ = Memory.init(root, now=NOW0)
    from tiermem.squad_import import plan, write

    write(mem, plan(mem, dry_run=False))
    mem.close()
    (root / ".squad" / "memory" / "index.sqlite").unlink(missing_ok=True)
    return marks


OPERATIONS: dict[str, tuple[Callable[[Path], set[str]], list[str]]] = {
    "end-session": (sessions_scenario, ["scribe", "end-session", "--all"]),
    "scribe-run": (maintenance_scenario, ["scribe", "run"]),
    "import": (
        lambda root: squad_scenario(root, agents=4, sections=12, decisions=12),
        ["import", "squad", "--format", "json"],
    ),
    "index-sync": (big_store_scenario, ["reindex"]),
}


# --- checks ---------------------------------------------------------------------------


def files_text(root: Path, folder: str = ".squad/memory") -> str:
    """Every file under a folder as text, but the index (markdown is the truth)."""
    parts = []
    for path in sorted((root / folder).rglob("*")):
        if path.is_file() and not path.name.startswith("index.sqlite"):
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def state(root: Path) -> dict[str, Any]:
    """What a store holds: parsed entries of each tier file, archive records, Squad files."""
    out: dict[str, Any] = {}
    layout = store.Layout(root)
    for path in sorted((root / ".squad").rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or store.is_temp(path) or ".locks" in path.parts:
            continue
        if path.name.startswith("index.sqlite") or path.name == "audit.jsonl":
            continue
        tier = path.parent.name
        if path.parent.parent == layout.memory and tier in ("hot", "cold", "wiki", "queue"):
            parsed = store.load(layout, tier, path)
            assert parsed is not None
            out[rel] = sorted(repr(e) for e in parsed.entries)
        else:
            out[rel] = path.read_bytes()
    return out


def store_loads(root: Path, run_cli: RunCli, marks: set[str]) -> None:
    """hot show, search and stats work; the search index holds no temp file."""
    if not (root / ".squad" / "memory").exists():
        return  # an import killed before it created the store: nothing was written
    base = ("--root", str(root), "--now", NOW1)
    # Writes in flight leave `.tmp-*` files behind; plant some that look like memory.
    planted = "mark-planted-temp-file"
    for folder in ("hot", "cold", "wiki", "archive/agent0"):
        for name in (".tmp-k3j2h1", ".tmp-k3j2h1.md"):
            path = root / ".squad" / "memory" / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                f"# agent0: cold memory\n<!-- tiermem-file tier=cold agent=agent0 -->\n\n"
                f"## {planted}\n<!-- tiermem id=c-0000000000 class=learning -->\n{planted}\n",
                encoding="utf-8",
            )
    hot = sorted((root / ".squad/memory/cold").glob("agent*.md")) + sorted(
        p for p in (root / ".squad/memory/hot").glob("*.md") if not store.is_temp(p)
    )
    if hot:
        code, _, err = run_cli(*base, "hot", "show", hot[0].stem)
        assert code == 0, err
    for query in ("reader widget decision", sorted(marks)[0], planted):
        code, out, err = run_cli(*base, "search", query, "--format", "json", "--limit", "50")
        assert code == 0, err
        assert not any("/.tmp-" in hit["path"] for hit in json.loads(out))
        assert planted not in out
    code, _, err = run_cli(*base, "stats", "--format", "json")
    assert code == 0, err
    with sqlite3.connect(root / ".squad" / "memory" / "index.sqlite") as db:
        paths = [row[0] for row in db.execute("SELECT path FROM files")]
    db.close()
    assert not any("/.tmp-" in p for p in paths)


# --- real kills -----------------------------------------------------------------------

# Imports everything first, says "ready", then runs the command: the delay before the kill
# then falls in the operation itself rather than in interpreter start-up.
WRAPPER = textwrap.dedent(
    """
    import sys
    from tiermem import cli, decisions, index, memory, scribe, squad_import, summarize, wiki
    print("ready", flush=True)
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def start(root: Path, argv: list[str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, "--root", str(root), "--now", NOW1, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    return proc


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, set[str]]]:
    built = {}
    for name, (scenario, _) in OPERATIONS.items():
        root = tmp_path_factory.mktemp(f"template-{name}")
        built[name] = (root, scenario(root))
    return built


@pytest.fixture(scope="module")
def durations(
    templates: dict[str, tuple[Path, set[str]]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, float]:
    """How long each operation runs uninterrupted (the range of the random delay)."""
    out = {}
    for name, (template, _) in templates.items():
        root = tmp_path_factory.mktemp(f"timing-{name}")
        shutil.rmtree(root)
        shutil.copytree(template, root)
        proc = start(root, OPERATIONS[name][1])
        began = time.monotonic()
        proc.communicate(timeout=300)
        out[name] = time.monotonic() - began
        assert proc.returncode == 0, name
    return out


def finished(name: str, root: Path, run_cli: RunCli, marks: set[str]) -> None:
    """The operation's work is complete after the re-run."""
    memory = root / ".squad" / "memory"
    if name == "end-session":
        for path in sorted(p for p in (memory / "hot").glob("*.md") if not store.is_temp(p)):
            left = store.load(store.Layout(root), "hot", path)
            assert left is not None and {e.slot for e in left.entries} <= {"blocker"}, path
        assert not [p for p in (memory / "queue").glob("*.md") if not store.is_temp(p)]
        assert {p.stem for p in (memory / "cold").glob("agent*.md")} == {
            f"agent{n}" for n in range(6)
        }
    elif name == "scribe-run":
        assert not [p for p in (memory / "queue").glob("*.md") if not store.is_temp(p)]
        assert not list((root / ".squad" / "decisions" / "inbox").glob("*.md"))
        code, out, err = run_cli("--root", str(root), "--now", NOW1, "scribe", "run", "--dry-run")
        assert code == 0, err
        assert "promote: would move 0 entr" in out and "compress 0 queued" in out
    elif name == "import":
        assert {p.stem for p in (memory / "cold").glob("agent*.md")}
    else:
        code, out, _ = run_cli("--root", str(root), "reindex", "--check")
        assert (code, out) == (0, "index matches the files\n")
    assert {m for m in marks if m not in files_text(root)} == set()


TRIALS = ["end-session", "scribe-run", "import", "index-sync", "end-session", "import"]


@pytest.mark.parametrize("trial", range(len(TRIALS)))
def test_kill_at_a_random_moment_then_recover(
    trial: int,
    templates: dict[str, tuple[Path, set[str]]],
    durations: dict[str, float],
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    name = TRIALS[trial]
    template, marks = templates[name]
    root = tmp_path / "repo"
    shutil.copytree(template, root)
    seed = random.randrange(2**32)
    delay = random.Random(seed).uniform(0.0, durations[name])
    proc = start(root, OPERATIONS[name][1])
    time.sleep(delay)
    proc.kill()
    proc.communicate()
    why = f"{name}: killed after {delay:.3f}s of {durations[name]:.3f}s (seed {seed})"
    # Text written before is in a tier or the archive, or still where Squad keeps it (the
    # decision inbox, the agents' histories) when the operation had not taken it in yet.
    assert {m for m in marks if m not in files_text(root, ".squad")} == set(), why
    store_loads(root, run_cli, marks)
    code, _, err = run_cli("--root", str(root), "--now", NOW1, *OPERATIONS[name][1])
    assert code == 0, f"{why}: re-run failed: {err}"
    finished(name, root, run_cli, marks)


# --- crash points ---------------------------------------------------------------------

# For each N: copy the template, fork a child that dies just before its N-th file-system
# change, check the store still parses, re-run the operation to completion in another
# child, and compare the store with one (or two) uninterrupted runs.
CRASHER = textwrap.dedent(
    """
    import json, os, shutil, sys
    from pathlib import Path

    from tiermem import entries, store
    from tiermem.cli import main

    template, work, now = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    argv, stride = json.loads(sys.argv[4]), int(sys.argv[5])
    real = {name: getattr(os, name) for name in ("replace", "rename", "link", "unlink", "write")}

    def child(root, crash_at):
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reader)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            seen = [0]

            def patched(name):
                def call(*args, **kwargs):
                    seen[0] += 1
                    if seen[0] == crash_at:
                        os._exit(137)
                    return real[name](*args, **kwargs)
                return call

            for name in real:
                setattr(os, name, patched(name))
            # A killed process loses nothing that reached the page cache: fsync only
            # matters for power loss, so it is skipped to keep each crash point fast.
            os.fsync = lambda fd: None
            try:
                code = main(["--root", str(root), "--now", now, *argv])
            except BaseException as exc:
                code = f"{type(exc).__name__}: {exc}"
            real["write"](writer, json.dumps({"code": code, "points": seen[0]}).encode())
            os._exit(0)
        os.close(writer)
        data = b""
        while chunk := os.read(reader, 65536):
            data += chunk
        os.close(reader)
        os.waitpid(pid, 0)
        return json.loads(data) if data else {"crashed": True}

    def state(root):
        layout = store.Layout(root)
        out = {}
        for path in sorted((root / ".squad").rglob("*")):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or store.is_temp(path) or ".locks" in path.parts:
                continue
            if path.name.startswith("index.sqlite") or path.name == "audit.jsonl":
                continue
            tier = path.parent.name
            if path.parent.parent == layout.memory and tier in ("hot", "cold", "wiki", "queue"):
                out[rel] = sorted(repr(e) for e in store.load(layout, tier, path).entries)
            else:
                out[rel] = path.read_bytes().decode("utf-8", "replace")
        return out

    def fresh(name):
        root = work / name
        shutil.copytree(template, root)
        return root

    # Run once in this process first: the children then fork with every module imported
    # and every pattern compiled, and each crash point costs milliseconds.
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        main(["--root", str(fresh("warm-up")), "--now", now, *argv])
    finally:
        sys.stdout.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    ref_root = fresh("reference")
    first = child(ref_root, 0)
    once = state(ref_root)
    child(ref_root, 0)
    twice = state(ref_root)
    report = {"points": first["points"], "code": first["code"], "bad": []}
    for n in range(1, first["points"] + 1, stride):
        root = fresh(f"crash-{n}")
        crashed = child(root, n)
        try:
            state(root)  # every tier file still parses right after the crash
        except Exception as exc:
            report["bad"].append({"point": n, "unreadable": str(exc)})
            continue
        again = child(root, 0)
        got = state(root)
        if again.get("code") != first["code"] or got not in (once, twice):
            diff = sorted(k for k in set(got) | set(once) if got.get(k) != once.get(k))
            report["bad"].append({"point": n, "rerun": again, "differs": diff[:5]})
        shutil.rmtree(root)
    print(json.dumps(report))
    """
)


def crash_points(template: Path, work: Path, argv: list[str], stride: int = 1) -> dict[str, Any]:
    """Crash before every stride-th file-system change of the command; the report."""
    work.mkdir()
    args = [str(template), str(work), NOW1, json.dumps(argv), str(stride)]
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, *args],
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-3000:]
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


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
def test_crash_between_hot_reset_and_queue_removal_recovers_exactly(tmp_path: Path) -> None:
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
            str(ROOT / "scripts" / "stress.py"),
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
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-3000:]
    result = json.loads(proc.stdout)["concurrency"]
    assert result["writes"] >= 40
    assert result["failed_ops"] == []
    assert result["lost"] == []
    assert result["hot_over_budget"] == []
    assert result["reindex_check"] == "index matches the files"
    assert result["temp_files"] == []
