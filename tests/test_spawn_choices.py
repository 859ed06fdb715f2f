"""What a spawn chooses, held byte for byte: the prompts of several `--auto` spawns on a
generated store (the one `tiermem bench speed` measures, at 1,000 entries) are golden files.

What a process keeps from one spawn to the next (the index's reads of the policies and of
an agent's standing knowledge, the engine's cuts, counts and labels) must never change a
prompt: the same spawns asked again in one process, and in a new one, give the same bytes,
and a write between two spawns of one process is seen by the second. After a deliberate
change to what spawns choose, delete `tests/golden/spawn_auto/` and run this file once to
write the prompts again, and read them before committing them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiermem import Memory
from tiermem.bench.generated import NOW, generate, workload

GOLDEN = Path(__file__).parent / "golden" / "spawn_auto"
ENTRIES = 1_000
TASKS = 6


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    generate(root, ENTRIES, lambda _: None)
    return root


@pytest.fixture
def store(generated: Path, tmp_path: Path) -> Path:
    """A copy of the generated store of this test's own (a spawn records what it used)."""
    shutil.copytree(generated / ".squad", tmp_path / ".squad")
    return tmp_path


def tasks() -> list[tuple[str, str]]:
    return list(workload(ENTRIES, TASKS).tasks)


def spawned(mem: Memory, asked: list[tuple[str, str]]) -> list[str]:
    return [mem.spawn(agent, task, auto=True).prompt for agent, task in asked]


def golden(n: int, prompt: str) -> bytes:
    """The golden prompt of the n-th task (written when missing: see the module's help)."""
    path = GOLDEN / f"{n}.md"
    if not path.exists():
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_bytes(prompt.encode("utf-8"))
    return path.read_bytes()


def test_the_prompts_of_auto_spawns_are_held(store: Path) -> None:
    mem = Memory(store, now=NOW)
    try:
        prompts = spawned(mem, tasks())
    finally:
        mem.close()
    assert len(set(prompts)) == TASKS
    for n, prompt in enumerate(prompts):
        assert '<memory tier="recalled"' in prompt
        assert prompt.encode("utf-8") == golden(n, prompt)


def test_what_one_process_keeps_between_spawns_changes_no_prompt(store: Path) -> None:
    mem = Memory(store, now=NOW)
    try:
        first = spawned(mem, tasks())
        again = spawned(mem, tasks()[::-1])[::-1]
    finally:
        mem.close()
    fresh = Memory(store, now=NOW)
    try:
        anew = spawned(fresh, tasks())
    finally:
        fresh.close()
    assert first == again == anew
    assert [p.encode("utf-8") for p in first] == [golden(n, p) for n, p in enumerate(first)]


def test_a_write_between_two_spawns_of_one_process_is_seen(store: Path) -> None:
    agent, task = tasks()[0]
    mem = Memory(store, now=NOW)
    other = Memory(store, now=NOW)  # another writer: its own connection to the index
    try:
        before = mem.spawn(agent, task, auto=True).prompt
        # A policy the task names (its title's words are the task's): pinned first.
        rule = "**What:** Always ask the release lead before debugging a prerelease manifest."
        other.decide(f"### 2026-06-30: Prerelease manifest debugging rule\n{rule}", by="user")
        after = mem.spawn(agent, task, auto=True).prompt
    finally:
        other.close()
        mem.close()
    assert "release lead" not in before
    assert '<memory tier="policy" pinned="true">' in after and "release lead" in after
    fresh = Memory(store, now=NOW)
    try:
        assert fresh.spawn(agent, task, auto=True).prompt == after
    finally:
        fresh.close()
