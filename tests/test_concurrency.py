"""Many processes writing the same hot tiers at once: nothing lost, budgets kept, index exact.

Set TIERMEM_STRESS_WRITES=100 for the full 8 x 100 run (the suite runs 8 x 25).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.errors import StoreError
from tiermem.hot import tier as hot_tier
from tiermem.memory import Memory
from tiermem.storage import archive
from tiermem.storage import files as store_module
from tiermem.storage.entries import parse
from tiermem.storage.files import is_temp, locked

RunCli = Callable[..., tuple[int, str, str]]
PROCESSES = 8
WRITES = int(os.environ.get("TIERMEM_STRESS_WRITES", "25"))
AGENTS = ("ada", "bo")
BUDGET = 4096

# Each worker waits for a start file so that all of them write at the same time, then runs
# the real CLI entry point once per write.
WORKER = textwrap.dedent(
    """
    import os, sys, time
    from tiermem.cli.main import main

    root, worker, count, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    while not os.path.exists(start):
        time.sleep(0.005)
    for n in range(count):
        agent = ("ada", "bo")[(worker + n) % 2]
        verb = "action" if n % 3 == 0 else "note"
        filler = " ".join(["lorem"] * ((worker * 31 + n * 17) % 90))
        text = f"p{worker:02d}w{n:04d} {verb} for {agent} {filler}".rstrip()
        code = main(["hot", verb, agent, text, "--new-agent", "--root", root])
        if code != 0:
            sys.exit(f"write {n} of worker {worker} failed with {code}")
    """
)


def expected_texts(worker: int, count: int) -> list[str]:
    """The texts a worker writes (mirrors WORKER)."""
    texts = []
    for n in range(count):
        agent = AGENTS[(worker + n) % 2]
        verb = "action" if n % 3 == 0 else "note"
        filler = " ".join(["lorem"] * ((worker * 31 + n * 17) % 90))
        texts.append(f"p{worker:02d}w{n:04d} {verb} for {agent} {filler}".rstrip())
    return texts


def test_parallel_writers_lose_nothing(store: Memory, tmp_path: Path, run_cli: RunCli) -> None:
    start = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(store.root), str(w), str(WRITES), str(start)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for w in range(PROCESSES)
    ]
    start.touch()
    failures = []
    try:
        for proc in workers:
            _, err = proc.communicate(timeout=600)
            if proc.returncode != 0:
                failures.append(err.decode("utf-8", "replace"))
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert failures == []

    memory = store.layout.memory
    tier_files = {
        tier: sorted(p for p in (memory / tier).glob("*.md") if not is_temp(p))
        for tier in ("hot", "queue", "cold")
    }
    texts = []
    for tier, paths in tier_files.items():
        for path in paths:
            text = path.read_text(encoding="utf-8")
            parsed = parse(text, path)
            assert parsed.conflicts == [], f"{path} has conflicts"
            if tier == "hot":  # the budget counts the text a spawn loads, each write once
                assert hot_tier.size(parsed) <= BUDGET
            texts.append(text)
    records = archive.records(store.layout)
    for path in records:
        record = archive.read(store.layout, path.parent.name, path.stem)
        texts.append(record.text)
    everything = "\n".join(texts)

    written = [t for w in range(PROCESSES) for t in expected_texts(w, WRITES)]
    assert len(set(written)) == PROCESSES * WRITES
    lost = [t.split(" ")[0] for t in written if t not in everything]
    assert lost == []
    assert [p.stem for p in tier_files["hot"]] == list(AGENTS)
    # The run must have pushed text out of hot: the eviction paths ran under contention.
    assert records
    assert [p.stem for p in tier_files["cold"]] == list(AGENTS)

    leftovers = [p for p in memory.rglob("*") if is_temp(p)]
    assert leftovers == []
    audit_lines = (memory / "tiermem-audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["action"] for line in audit_lines)

    root = ("--root", str(store.root))
    code, _, err = run_cli("reindex", *root)
    assert (code, err) == (0, "")
    code, out, err = run_cli("reindex", "--check", *root)
    assert (code, out, err) == (0, "index matches the files\n", "")


def test_a_file_lock_excludes_other_threads(store: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    # With no waiting allowed, a contender must be refused while the lock is held.
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT_SECONDS", 0.0)
    path = store.layout.tier_file("hot", "ada")
    outcome: list[str] = []

    def contender() -> None:
        try:
            with locked(store.layout, path):
                outcome.append("entered")
        except StoreError:
            outcome.append("refused")

    thread = threading.Thread(target=contender)
    with locked(store.layout, path):
        thread.start()
        thread.join(timeout=30)
        seen_while_held = list(outcome)
    thread.join(timeout=30)
    assert seen_while_held in ([], ["refused"])


def test_a_file_lock_is_reentrant_in_one_thread(store: Memory) -> None:
    path = store.layout.tier_file("hot", "ada")
    with locked(store.layout, path), locked(store.layout, path):
        store.hot_add("ada", "note", "written while the lock is already held")
    assert "written while the lock is already held" in path.read_text(encoding="utf-8")
