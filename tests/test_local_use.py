"""Reads write no tracked file: use is recorded in the clone's local state, and Scribe folds it
into the team's use ledger, never into the tier files.

`spawn`, `search`, `stats` and `hot show` on a committed store leave `git status` empty; two
branches that only read merge without a conflict; a day of spawns then `scribe run` changes
one tracked file (the ledger) and a second run none; two clones folding the same day's use
write the same bytes and merge by union; a reader's use protects an entry from the TTL
before any fold; and processes recording use at once lose no line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from merges import git, merge_both_ways, new_repository
from tiermem.index.protocol import Doc
from tiermem.memory import Memory
from tiermem.storage import store
from tiermem.team import use

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def cli(run_cli: RunCli, root: Path, now: str, *args: str) -> str:
    code, out, err = run_cli("--root", str(root), "--now", now, *args)
    assert code == 0, f"tiermem {' '.join(args)} -> {code}: {out}{err}"
    return out


def seeded(root: Path, run_cli: RunCli) -> None:
    """A store with a past session, a team decision and a wiki page, all committed."""
    cli(run_cli, root, T0, "init")
    cli(run_cli, root, T0, "hot", "set", "ada", "--task", "fix the flaky release workflow")
    cli(
        run_cli,
        root,
        T0,
        "hot",
        "note",
        "ada",
        "The publish job in .github/workflows/publish.yml retries npm publish; the flake "
        "comes from registry propagation (#412).",
    )
    cli(run_cli, root, T0, "scribe", "end-session", "ada")
    cli(run_cli, root, T0, "decision", "add", "--by", "ada", "Publish from CI only, never by hand")
    cli(run_cli, root, T0, "wiki", "write", "release", "Release tags\nTags are signed by CI.")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory")


def porcelain(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all").stdout


def reads(run_cli: RunCli, root: Path, now: str) -> None:
    """Every read a team runs between commits."""
    task = ("--task", "Resume the flaky npm publish release workflow")
    cli(run_cli, root, now, "spawn", "ada", *task, "--auto")
    cli(run_cli, root, now, "spawn", "ada", *task, "--include-cold", "--include-wiki")
    for hit in cli(run_cli, root, now, "search", "publish release workflow").split():
        if hit.startswith(("c-", "d-", "w-")):
            cli(run_cli, root, now, "search", hit)  # a query of ids reads the entry
    cli(run_cli, root, now, "search", "npm publish", "--agent", "ada")
    cli(run_cli, root, now, "stats")
    cli(run_cli, root, now, "stats", "--format", "json")
    cli(run_cli, root, now, "hot", "show", "ada")


def test_reads_leave_git_status_clean(tmp_path: Path, run_cli: RunCli) -> None:
    root = new_repository(tmp_path / "repo")
    seeded(root, run_cli)
    assert porcelain(root) == ""
    reads(run_cli, root, "2026-03-20T10:00:00Z")
    assert porcelain(root) == ""
    # ...yet the use was recorded, in this clone only.
    assert use.recorded(Memory(root).layout)


def test_use_survives_the_index_being_deleted(tmp_path: Path, run_cli: RunCli) -> None:
    root = new_repository(tmp_path / "repo")
    seeded(root, run_cli)
    reads(run_cli, root, "2026-03-20T10:00:00Z")
    layout = Memory(root).layout
    before = use.recorded(layout)
    for path in layout.memory.glob("index.sqlite*"):
        path.unlink()
    cli(run_cli, root, "2026-03-20T10:00:00Z", "reindex")
    assert use.recorded(layout) == before


def test_two_branches_that_spawn_merge_and_pass_the_index_check(
    tmp_path: Path, run_cli: RunCli
) -> None:
    origin = new_repository(tmp_path / "origin")
    seeded(origin, run_cli)
    clones = []
    for side, day in (("a", 10), ("b", 11)):
        git(tmp_path, "clone", "-q", str(origin), side)
        clone = tmp_path / side
        reads(run_cli, clone, f"2026-03-{day}T10:00:00Z")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "--allow-empty", "-m", f"spawned in {side}")
        clones.append(clone)
    into_a, into_b = merge_both_ways(*clones)
    assert into_a.returncode == into_b.returncode == 0, into_a.stderr + into_b.stderr
    for clone in clones:
        code, out, err = run_cli("--root", str(clone), "reindex", "--check")
        assert (code, out) == (0, "index matches the files\n"), err
        assert porcelain(clone) == ""


def test_a_day_of_spawns_changes_one_tracked_file_and_a_second_run_none(
    tmp_path: Path, run_cli: RunCli
) -> None:
    root = new_repository(tmp_path / "repo")
    seeded(root, run_cli)
    tiers = {p: p.read_bytes() for p in (root / ".squad/memory").glob("*/*.md")}
    reads(run_cli, root, "2026-03-03T10:00:00Z")
    out = cli(run_cli, root, "2026-03-03T18:00:00Z", "scribe", "run")
    assert "into .squad/memory/last-use.txt" in out
    assert porcelain(root) == "?? .squad/memory/last-use.txt\n"
    assert {p: p.read_bytes() for p in tiers} == tiers  # no tier file people review changed
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a day's use")
    cli(run_cli, root, "2026-03-03T19:00:00Z", "scribe", "run")
    assert porcelain(root) == ""
    # The next day's use changes the ledger's lines of the entries used again, nothing else.
    reads(run_cli, root, "2026-03-04T10:00:00Z")
    cli(run_cli, root, "2026-03-04T18:00:00Z", "scribe", "run")
    assert porcelain(root) == " M .squad/memory/last-use.txt\n"


def test_two_clones_folding_the_same_day_write_the_same_bytes(
    tmp_path: Path, run_cli: RunCli
) -> None:
    origin = new_repository(tmp_path / "origin")
    seeded(origin, run_cli)
    clones = []
    for side, hour in (("a", "08"), ("b", "17")):
        git(tmp_path, "clone", "-q", str(origin), side)
        clone = tmp_path / side
        reads(run_cli, clone, f"2026-03-20T{hour}:00:00Z")
        out = cli(run_cli, clone, f"2026-03-20T{hour}:30:00Z", "scribe", "run")
        assert "use: fold this clone's recorded use of 0 " not in out
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"scribe in {side}")
        clones.append(clone)
    a, b = clones
    ledger = a / ".squad/memory/last-use.txt"
    assert ledger.read_bytes() == (b / ".squad/memory/last-use.txt").read_bytes()
    assert " 2026-03-20\n" in ledger.read_text(encoding="utf-8")
    into_a, into_b = merge_both_ways(a, b)
    assert into_a.returncode == into_b.returncode == 0
    for clone in clones:
        cli(run_cli, clone, "2026-03-21T10:00:00Z", "stats")  # the merge touched the files
        code, out, _ = run_cli("--root", str(clone), "reindex", "--check")
        assert (code, out) == (0, "index matches the files\n")


def test_two_clones_using_an_entry_on_different_days_merge_to_the_later(
    tmp_path: Path, run_cli: RunCli
) -> None:
    origin = new_repository(tmp_path / "origin")
    seeded(origin, run_cli)
    clones = []
    for side, day in (("a", "10"), ("b", "12")):
        git(tmp_path, "clone", "-q", str(origin), side)
        clone = tmp_path / side
        reads(run_cli, clone, f"2026-03-{day}T10:00:00Z")
        cli(run_cli, clone, f"2026-03-{day}T18:00:00Z", "scribe", "run")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"scribe in {side}")
        clones.append(clone)
    into_a, into_b = merge_both_ways(*clones)
    assert into_a.returncode == into_b.returncode == 0, into_a.stderr + into_b.stderr
    for clone in clones:
        days = use.ledger(Memory(clone).layout)
        assert days and set(days.values()) == {"2026-03-12"}


def test_a_readers_use_protects_an_entry_before_any_fold(store: Memory) -> None:
    mem = Memory(store.root, now=T0)
    mem.hot_set("ada", "tune the websocket reconnect jitter")
    mem.hot_add("ada", "note", "Added jitter in src/net/socket.ts so clients stop reconnecting.")
    [entry_id] = mem.end_session("ada").cold
    Memory(store.root, now="2026-03-22T10:00:00Z").search("websocket reconnect jitter")
    path = mem.layout.tier_file("cold", "ada")
    written = path.read_bytes()
    # 31 days after it was written, 9 after the search: the TTL (30) counts from the use.
    dry = Memory(store.root, now="2026-04-02T10:00:00Z").scribe_run(dry_run=True)
    assert (dry.expired, dry.refreshed) == ([], [entry_id])
    assert path.read_bytes() == written
    report = Memory(store.root, now="2026-04-02T10:00:00Z").scribe_run()
    assert (report.expired, report.refreshed) == ([], [entry_id])
    assert path.read_bytes() == written  # the tier file is not where use goes
    assert use.ledger(mem.layout) == {entry_id: "2026-03-22"}
    # Folded: the record stays (compacted) and a second run moves nothing.
    assert use.recorded(mem.layout) == {entry_id: "2026-03-22"}
    assert Memory(store.root, now="2026-04-02T11:00:00Z").scribe_run().refreshed == []
    # Another clone (this one's record gone) still ages it from the ledger.
    mem.layout.used.unlink()
    assert use.recorded(mem.layout) == {entry_id: "2026-03-22"}


def store_entries(mem: Memory, agent: str) -> dict[str, str]:
    loaded = store.load(mem.layout, "cold", mem.layout.tier_file("cold", agent))
    assert loaded is not None
    return {e.id: e.used for e in loaded.entries}


def test_a_torn_or_foreign_line_is_skipped(store: Memory) -> None:
    store.layout.used.parent.mkdir(parents=True, exist_ok=True)
    store.layout.used.write_text(
        "2026-03-02 c-0123456789\nnot a line\n2026-03-01 c-0123456789\n2026-03-0", "utf-8"
    )
    assert use.recorded(store.layout) == {"c-0123456789": "2026-03-02"}


def _docs(ids: list[str]) -> list[Doc]:
    return [Doc(i, "cold", "ada", "cold/ada.md", "t", "t") for i in ids]


def test_the_record_is_compacted_and_keeps_the_latest_day(store: Memory) -> None:
    ids = [f"c-{n:010x}" for n in range(20)]
    for day in range(1, 29):
        ctx = Memory(store.root, now=f"2026-03-{day:02d}T10:00:00Z").context
        use.mark_used(ctx, _docs(ids))
        use.mark_used(ctx, _docs(ids))  # twice a day writes once
    lines = store.layout.used.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 2 * len(ids) + 200 + len(ids)
    assert use.recorded(store.layout) == dict.fromkeys(ids, "2026-03-28")


def test_entries_known_recorded_today_are_not_read_for_again(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[Path] = []
    read = use._read
    monkeypatch.setattr(use, "_read", lambda path: reads.append(path) or read(path))
    ids = [f"c-{n:010x}" for n in range(3)]
    ctx = Memory(store.root, now="2026-03-05T10:00:00Z").context
    use.mark_used(ctx, _docs(ids[:2]))
    use.mark_used(ctx, _docs(ids[:2]))  # known: no read
    use.mark_used(ctx, _docs(ids))  # one new: read, and written
    assert len(reads) == 2
    later = Memory(store.root, now="2026-03-06T10:00:00Z").context
    use.mark_used(later, _docs(ids))  # a new day: read, and written again
    assert len(reads) == 3
    assert use.recorded(store.layout) == dict.fromkeys(ids, "2026-03-06")


WORKER = textwrap.dedent(
    """
    import sys
    from tiermem.team import use
    from tiermem.index.protocol import Doc
    from tiermem.memory import Memory

    root, worker, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for n in range(rounds):
        day = 1 + n % 28
        ctx = Memory(root, now=f"2026-03-{day:02d}T10:00:00Z").context
        ids = [f"c-{worker:04x}{k:06x}" for k in range(n * 3, n * 3 + 3)]
        use.mark_used(ctx, [Doc(i, "cold", "ada", "cold/ada.md", "t", "t") for i in ids])
    """
)


def test_processes_recording_use_at_once_lose_no_line(store: Memory) -> None:
    workers, rounds = 4, 40
    env = dict(os.environ)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(store.root), str(w), str(rounds)], env=env
        )
        for w in range(workers)
    ]
    assert [c.wait(timeout=120) for c in children] == [0] * workers
    recorded = use.recorded(store.layout)
    assert len(recorded) == workers * rounds * 3
    text = store.layout.used.read_text(encoding="utf-8")
    assert text.endswith("\n") and all(len(line.split()) == 2 for line in text.splitlines())
