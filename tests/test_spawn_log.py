"""The spawn log: every spawn is logged in this clone only, and `tiermem log` reads it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest.mock import ANY

import pytest

from tiermem.errors import UsageError
from tiermem.memory import Memory
from tiermem.spawn import log as spawn_log
from tiermem.storage import store
from tiermem.storage.entries import Entry, TierFile, split_entry

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"


def put(mem: Memory, tier: str, name: str, *entries: Entry) -> None:
    path = mem.layout.tier_file(tier, name)
    store.save(mem.layout, path, TierFile(f"{name}: {tier}", {"tier": tier}, entries=[*entries]))


def cold(entry_id: str, title: str, body: str) -> Entry:
    return Entry(entry_id, "learning", title, body, agent="ada", created=T0, used=T0)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    made.hot_set("ada", "Fix the release workflow")
    put(
        made,
        "cold",
        "ada",
        cold("c-000000000a", "Release workflow retries", "publish.yml retries npm publish."),
        cold("c-000000000b", "Parser cache", "The parser cache lives in src/parse/cache.ts."),
    )
    yield made
    made.close()


def test_every_spawn_is_logged_with_what_it_loaded(mem: Memory) -> None:
    result = mem.spawn("ada", "release workflow retries", include_cold=True)
    logged = spawn_log.read(mem.layout)
    assert len(logged) == 1
    line = logged[0]
    assert (line.time, line.agent, line.task) == (T0, "ada", "release workflow retries")
    assert line.entries == [s.id for s in result.sources] == ["c-000000000a"]
    assert line.tokens == result.tokens and line.situation == result.situation
    # Why each was loaded, in the relevance engine's words.
    assert line.why == {s.id: s.why for s in result.sources} == {"c-000000000a": ANY}
    assert line.why["c-000000000a"] == "the task names it"  # its title is the task


def test_log_answers_which_spawns_got_an_entry_and_what_a_spawn_got(mem: Memory) -> None:
    mem.spawn("ada", "release workflow retries", include_cold=True)
    later = Memory(mem.root, now="2026-03-02T11:00:00Z")
    later.spawn("ada", "parser cache", include_cold=True)
    later.hot_set("bo", "read the parser")
    later.spawn("bo", "parser cache", include_cold=True)
    assert [s.task for s in later.log().spawns] == [
        "parser cache",
        "parser cache",
        "release workflow retries",
    ]
    got = later.log(entry="c-000000000a")
    assert [s.task for s in got.spawns] == ["release workflow retries"]
    assert got.entry == "c-000000000a"
    assert [s.agent for s in later.log(agent="bo").spawns] == ["bo"]
    assert len(later.log(limit=1).spawns) == 1
    assert later.log(entry="c-00000000ff").spawns == []
    later.close()


def test_the_parts_of_a_long_entry_answer_for_it(mem: Memory) -> None:
    body = "\n\n".join(f"## Step {n}\nRelease step {n} " + "word " * 200 for n in range(3))
    whole = cold("c-00000000cc", "Release runbook", body)
    parts = split_entry(whole)
    assert len(parts) > 1
    put(mem, "cold", "ada", *parts)
    result = mem.spawn("ada", "release runbook step", include_cold=True)
    assert {s.id for s in result.sources} & {p.id for p in parts}
    assert len(mem.log(entry="c-00000000cc").spawns) == 1


def test_a_task_holding_a_credential_is_logged_redacted(mem: Memory) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    mem.spawn("ada", f"rotate the token {secret}")
    raw = spawn_log.path_of(mem.layout).read_text(encoding="utf-8")
    assert secret not in raw and "[REDACTED:" in raw


def test_a_refused_spawn_logs_nothing(mem: Memory) -> None:
    with pytest.raises(UsageError):
        mem.spawn("ada", "x", budget=-1)
    assert not spawn_log.path_of(mem.layout).exists()


def test_bad_filters_are_refused(mem: Memory) -> None:
    for bad in ({"entry": "not-an-id"}, {"entry": "c-000000000a c-000000000b"}, {"limit": 0}):
        with pytest.raises(UsageError):
            mem.log(**bad)  # type: ignore[arg-type]


def test_a_torn_or_foreign_line_is_skipped(mem: Memory) -> None:
    mem.spawn("ada", "parser cache", include_cold=True)
    with spawn_log.path_of(mem.layout).open("a", encoding="utf-8") as log:
        log.write('[1, 2]\n{"agent": "x"}\n{"time": "t", "agent": "ada", "tok')
    assert [s.task for s in mem.log().spawns] == ["parser cache"]


def test_the_log_is_ignored_by_git_and_tracked_files_stay_as_they_were(mem: Memory) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(mem.root)], check=True, env=env)
    mem.spawn("ada", "parser cache", include_cold=True)
    ignored = subprocess.run(
        ["git", "-C", str(mem.root), "check-ignore", ".squad/memory/spawns.jsonl"],
        capture_output=True,
        env=env,
    )
    assert ignored.returncode == 0


def test_loaded_entries_citing_untracked_paths_are_logged_stale(mem: Memory) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    (mem.root / "src" / "parse").mkdir(parents=True)
    (mem.root / "src" / "parse" / "index.ts").write_text("x")
    subprocess.run(["git", "init", "-q", str(mem.root)], check=True, env=env)
    subprocess.run(["git", "-C", str(mem.root), "add", "src"], check=True, env=env)
    mem.spawn("ada", "parser cache", include_cold=True)
    assert mem.log().spawns[0].stale == {"c-000000000b": ["src/parse/cache.ts"]}


def test_cli_log(mem: Memory, run_cli: RunCli) -> None:
    mem.spawn("ada", "parser cache", include_cold=True)
    root = str(mem.root)
    code, out, err = run_cli("log", "--root", root, "--entry", "c-000000000b", "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["entry"] == "c-000000000b"
    assert [s["entries"] for s in data["spawns"]] == [["c-000000000b"]]
    code, out, _ = run_cli("log", "--root", root, "--agent", "ada")
    assert code == 0 and "parser cache" in out and "loaded: c-000000000b" in out
    assert "c-000000000b: the task names it" in out  # the engine's reason, as logged
    code, out, _ = run_cli("log", "--root", root, "--entry", "c-00000000ff")
    assert code == 0 and "no spawns logged that loaded c-00000000ff" in out
    code, _, err = run_cli("log", "--root", root, "--entry", "../x")
    assert code == 2 and "not an entry id" in err
