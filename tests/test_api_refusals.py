"""The Python API refuses what the CLI refuses, with the same words: a `UsageError` for an
argument that cannot be taken, a `NotFoundError` for what is not there, a `StoreError` where
there is no store; each leaves every file as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reliability import snapshot
from tiermem import Memory, NotFoundError, StoreError, TiermemError, UsageError

T0 = "2026-03-02T10:00:00Z"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    made.hot_set("ada", "Fix the flaky reader")
    made.hot_add("ada", "blocker", "waiting for CI credentials")
    yield made
    made.close()


Call = Callable[[Memory], Any]

USAGE: list[tuple[str, Call, str]] = [
    ("search limit 0", lambda m: m.search("x", limit=0), "limit must be between 1 and 10000"),
    ("search limit", lambda m: m.search("x", limit=10001), "limit must be between 1 and 10000"),
    ("search tier", lambda m: m.search("x", tier="lukewarm"), "unknown tier 'lukewarm'"),
    ("search agent", lambda m: m.search("x", agent="Bad Name"), "did you mean 'bad-name'?"),
    ("search empty", lambda m: m.search("   "), "query is empty"),
    ("tier", lambda m: m.tier_text("archive", "ada"), "unknown tier 'archive'"),
    ("tier name", lambda m: m.tier_text("cold", "../x"), "must not contain path separators"),
    ("hot slot", lambda m: m.hot_add("ada", "memo", "x"), "unknown hot slot 'memo'"),
    ("hot source", lambda m: m.hot_add("ada", "note", "x", source="mail"), "unknown source"),
    ("hot empty", lambda m: m.hot_add("ada", "note", " \n "), "empty"),
    ("read id", lambda m: m.read_entry("not an id"), "'not an id' is not an entry id"),
    ("spawn budget", lambda m: m.spawn("ada", "x", budget=-1), "budget must be zero or more"),
    ("spawn task", lambda m: m.spawn("ada", "  "), "task is empty"),
    ("log limit", lambda m: m.log(limit=0), "limit must be between 1 and 10000"),
    ("log entry", lambda m: m.log(entry="zz"), "'zz' is not an entry id"),
    ("decide by", lambda m: m.decide("Use tags", by="Bad Name"), "did you mean 'bad-name'?"),
    ("wiki topic", lambda m: m.wiki_write("Bad Topic", "x"), "did you mean 'bad-topic'?"),
    ("forget id", lambda m: m.forget("x"), "'x' is not an entry id"),
    ("report", lambda m: m.report(task="x"), "needs both a task and an agent"),
    ("archive id", lambda m: m.read_archive("ada", "a-zz"), "is not an archive record id"),
]


@pytest.mark.parametrize(("name", "call", "said"), USAGE, ids=[u[0] for u in USAGE])
def test_an_argument_that_cannot_be_taken_is_a_usage_error(
    mem: Memory, name: str, call: Call, said: str
) -> None:
    before = snapshot(mem.root)
    with pytest.raises(UsageError) as caught:
        call(mem)
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 2
    assert snapshot(mem.root) == before


MISSING: list[tuple[str, Call, str]] = [
    ("cold file", lambda m: m.tier_text("cold", "ada"), "no cold file for 'ada'"),
    ("wiki page", lambda m: m.wiki_read("nothing"), "no wiki page 'nothing'"),
    ("entry", lambda m: m.read_entry("c-0123456789"), "no entry c-0123456789"),
    ("blocker", lambda m: m.hot_unblock("ada", "no such thing"), "no blocker of ada matches"),
    ("forget", lambda m: m.forget("c-0123456789"), "no entry c-0123456789"),
    ("record", lambda m: m.read_archive("ada", "a-0123456789"), "no archive record"),
    (
        "decision author",
        lambda m: m.decide("Use tags", by="adda", new_agent=False),
        "unknown agent 'adda'; did you mean 'ada'?",
    ),
]


@pytest.mark.parametrize(("name", "call", "said"), MISSING, ids=[u[0] for u in MISSING])
def test_what_is_not_there_is_a_not_found_error(
    mem: Memory, name: str, call: Call, said: str
) -> None:
    before = snapshot(mem.root)
    with pytest.raises(NotFoundError, match=said):
        call(mem)
    assert snapshot(mem.root) == before


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.search("x"),
        lambda m: m.hot_set("ada", "x"),
        lambda m: m.stats(),
        lambda m: m.spawn("ada", "x"),
        lambda m: m.wiki_pages(),
    ],
    ids=["search", "hot_set", "stats", "spawn", "wiki_pages"],
)
def test_a_folder_without_a_store_is_a_store_error_and_stays_empty(
    tmp_path: Path, call: Call
) -> None:
    mem = Memory(tmp_path)  # opened lazily: the first use finds no store
    with pytest.raises(StoreError, match=r"no tiermem store in .*; run `tiermem init`"):
        call(mem)
    assert list(tmp_path.iterdir()) == []


def test_every_refusal_is_a_tiermem_error_a_caller_can_catch_once(mem: Memory) -> None:
    for _, call, _ in USAGE + MISSING:
        with pytest.raises(TiermemError):
            call(mem)


def test_a_write_holding_a_secret_is_kept_without_it_and_says_so(mem: Memory) -> None:
    hot = mem.layout.tier_file("hot", "ada")
    before = hot.read_bytes()
    report = mem.hot_add("ada", "note", "deploy with password=hunter2hunter2x now")
    assert report.redactions == ["password"]
    text = hot.read_text(encoding="utf-8")
    assert "hunter2hunter2x" not in text and "[REDACTED:password]" in text
    assert hot.read_bytes() != before
