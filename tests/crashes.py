"""Crashes: the stores an operation is killed in, the kill itself, and what must hold after.

tests/test_crash.py kills each operation a few times; tests/stress.py (`crash`) does the
same hundreds of times, with these very scenarios and checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reliability import ROOT, child_env, cli, files_text, is_index
from tiermem.memory import Memory
from tiermem.squad.importer.squad_import import plan, write
from tiermem.storage import files, store
from tiermem.storage.layout import Layout

NOW0 = "2026-03-01T10:00:00Z"
NOW1 = "2026-03-20T11:00:00Z"  # the interrupted operation runs here: promotions are due
SESSIONS = 6  # agents mid-session when `scribe end-session --all` is killed


def mark(*parts: object) -> str:
    """A unique token that redaction and summaries leave whole."""
    return "mark-" + hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


# --- scenarios ------------------------------------------------------------------------


def sessions_scenario(root: Path, agents: int = SESSIONS, queue: bool = True) -> set[str]:
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
        mem.end_session(agent)
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
    root: Path, agents: int = 4, sections: int = 12, decisions: int = 12
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
    write(mem.context, plan(mem.context))
    mem.close()
    (root / ".squad" / "memory" / "index.sqlite").unlink(missing_ok=True)
    return marks


# Each operation that gets killed: the store it starts from, and its command line.
OPERATIONS: dict[str, tuple[Callable[[Path], set[str]], list[str]]] = {
    "end-session": (sessions_scenario, ["scribe", "end-session", "--all"]),
    "scribe-run": (maintenance_scenario, ["scribe", "run"]),
    "import": (squad_scenario, ["import", "squad", "--format", "json"]),
    "index-sync": (big_store_scenario, ["reindex"]),
}


# --- real kills -----------------------------------------------------------------------

# Imports everything first, says "ready", then runs the command: the delay before the kill
# then falls in the operation itself rather than in interpreter start-up.
WRAPPER = textwrap.dedent(
    """
    import sys
    from tiermem import memory
    from tiermem.cli import main as cli
    from tiermem.index import fts
    from tiermem.scribe import maintenance, session, summarize
    from tiermem.search import hits
    from tiermem.spawn import assemble
    from tiermem.squad.importer import squad_import
    from tiermem.team import decisions, wiki
    print("ready", flush=True)
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def start(root: Path, argv: list[str]) -> subprocess.Popen[bytes]:
    """The operation in a process of its own, once that process is ready."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, "--root", str(root), "--now", NOW1, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert proc.stdout is not None
    if proc.stdout.readline() != b"ready\n":
        raise RuntimeError("the operation did not start")
    return proc


def run_through(root: Path, argv: list[str]) -> tuple[float, int]:
    """The operation uninterrupted: how long it ran (the range of a kill's delay), its exit."""
    proc = start(root, argv)
    began = time.monotonic()
    proc.communicate(timeout=600)
    return time.monotonic() - began, proc.returncode


def kill_after(root: Path, argv: list[str], delay: float) -> bool:
    """Run the operation and kill -9 it after `delay` seconds; whether it finished first."""
    proc = start(root, argv)
    time.sleep(delay)
    proc.kill()
    proc.communicate()
    return proc.returncode == 0


# --- checks ---------------------------------------------------------------------------


def tier_state(root: Path) -> dict[str, Any]:
    """What a store holds: parsed entries per tier file, archive records, Squad files."""
    layout = Layout(root)
    out: dict[str, Any] = {}
    for path in sorted((root / ".squad").rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or files.is_temp(path) or ".locks" in path.parts:
            continue
        if is_index(path) or path.name == "tiermem-audit.jsonl":
            continue
        tier = path.parent.name
        if path.parent.parent == layout.memory and tier in ("hot", "cold", "wiki", "queue"):
            loaded = store.load(layout, tier, path)
            out[rel] = sorted(repr(e) for e in loaded.entries) if loaded else None
        else:
            out[rel] = path.read_bytes().decode("utf-8", "replace")
    return out


def load_problems(root: Path, marks: set[str]) -> list[str]:
    """Problems reading the store right after the kill (empty: it loads, no temp file shows)."""
    problems: list[str] = []
    if not (root / ".squad" / "memory").exists():
        return problems  # an import killed before it created the store: nothing was written
    base = ["--root", str(root), "--now", NOW1]
    agents = sorted(p.stem for p in (root / ".squad/memory/cold").glob("agent*.md"))
    agents += sorted(p.stem for p in (root / ".squad/memory/hot").glob("agent*.md"))
    # Writes in flight leave `.tmp-*` files behind; plant some that look like memory.
    planted = "mark-planted-temp-file"
    for folder in ("hot", "cold", "wiki", "archive/agent0"):
        for name in (".tmp-k3j2h1", ".tmp-k3j2h1.md"):
            path = root / ".squad" / "memory" / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "# agent0: cold memory\n<!-- tiermem-file tier=cold agent=agent0 -->\n\n"
                f"## {planted}\n<!-- tiermem id=c-0000000000 class=learning -->\n{planted}\n",
                encoding="utf-8",
            )
    checks = [["stats", "--format", "json"]]
    if agents:
        checks.append(["hot", "show", agents[0]])
    for query in ("reader widget decision", sorted(marks)[0], planted):
        checks.append(["search", query, "--format", "json", "--limit", "50"])
    for argv in checks:
        code, out, err = cli([*base, *argv])
        if code != 0:
            problems.append(f"{argv[0]} exit {code}: {err.strip()[:200]}")
        elif argv[0] == "search" and (
            planted in out or any("/.tmp-" in h["path"] for h in json.loads(out))
        ):
            problems.append("a temp file is in search results")
    index = root / ".squad" / "memory" / "index.sqlite"
    if index.exists():
        with contextlib.closing(sqlite3.connect(index)) as db:
            paths = [r[0] for r in db.execute("SELECT path FROM files")]
        if any("/.tmp-" in p for p in paths):
            problems.append("a temp file is indexed")
    return problems


def _tier_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if not files.is_temp(p))


def _queued(folder: Path) -> list[Path]:
    """Queue files that still hold text (a session end or checkpoint empties, not deletes)."""
    return [
        p
        for p in _tier_files(folder)
        if (q := store.load(Layout(folder.parents[2]), "queue", p)) and q.entries
    ]


def unfinished(name: str, root: Path, marks: set[str]) -> list[str]:
    """What the re-run of operation `name` left undone (empty: the work is complete)."""
    problems = []
    memory = root / ".squad" / "memory"
    if name == "end-session":
        for path in _tier_files(memory / "hot"):
            left = store.load(Layout(root), "hot", path)
            if left is None or {e.slot for e in left.entries} - {"blocker"}:
                problems.append(f"hot not reset: {path.name}")
        if _queued(memory / "queue"):
            problems.append("queue not empty")
        ended = {p.stem for p in (memory / "cold").glob("agent*.md")}
        if ended != {f"agent{n}" for n in range(SESSIONS)}:
            problems.append(f"sessions not ended: {len(ended)} of {SESSIONS} in cold")
    elif name == "scribe-run":
        if _queued(memory / "queue"):
            problems.append("queue not empty")
        if list((root / ".squad" / "decisions" / "inbox").glob("*.md")):
            problems.append("inbox not merged")
        code, out, _ = cli(["--root", str(root), "--now", NOW1, "scribe", "run", "--dry-run"])
        if code != 0 or "promote: would move 0 entr" not in out:
            problems.append("promotions left to do")
        elif "compress 0 queued" not in out:
            problems.append("queued text left to compress")
    elif name == "import":
        if not list((memory / "cold").glob("agent*.md")):
            problems.append("nothing imported")
    elif name == "index-sync":
        code, out, _ = cli(["--root", str(root), "reindex", "--check"])
        if (code, out) != (0, "index matches the files\n"):
            problems.append("index drift: " + out.strip()[:200])
    missing = [m for m in marks if m not in files_text(root)]
    if missing:
        problems.append(f"{len(missing)} texts not in the store")
    return problems


# --- crash points ---------------------------------------------------------------------

# For each N: copy the template, fork a child that dies just before its N-th file-system
# change, check the store still parses, re-run the operation to completion in another
# child, and compare the store with one (or two) uninterrupted runs.
CRASHER = textwrap.dedent(
    """
    import json, os, shutil, sys
    from pathlib import Path

    sys.path.insert(0, sys.argv[6])
    from crashes import tier_state
    from tiermem.cli.main import main

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

    def fresh(name):
        root = work / name
        shutil.copytree(template, root, ignore=shutil.ignore_patterns("marks.json"))
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
    ref = fresh("reference")
    first = child(ref, 0)
    once = tier_state(ref)
    child(ref, 0)
    twice = tier_state(ref)
    report = {"points": first["points"], "code": first["code"], "tried": 0, "bad": []}
    for n in range(1, first["points"] + 1, stride):
        report["tried"] += 1
        root = fresh(f"crash-{n}")
        child(root, n)
        try:
            tier_state(root)  # every tier file still parses right after the crash
        except Exception as exc:
            report["bad"].append({"point": n, "unreadable": str(exc)[:200]})
            continue
        again = child(root, 0)
        got = tier_state(root)
        if again.get("code") != first["code"] or got not in (once, twice):
            diff = sorted(k for k in set(got) | set(once) if got.get(k) != once.get(k))
            report["bad"].append({"point": n, "rerun": again.get("code"), "differs": diff[:4]})
        shutil.rmtree(root)
    print(json.dumps(report))
    """
)


def crash_points(
    template: Path, work: Path, argv: list[str], stride: int = 1, timeout: float = 600
) -> dict[str, Any]:
    """Crash before every stride-th file-system change of the command; the report."""
    work.mkdir(parents=True)
    args = [str(template), str(work), NOW1, json.dumps(argv), str(stride), str(ROOT / "tests")]
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, *args],
        capture_output=True,
        timeout=timeout,
        check=False,
        env=child_env(),
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode("utf-8", "replace")[-3000:])
    report: dict[str, Any] = json.loads(proc.stdout)
    return report
