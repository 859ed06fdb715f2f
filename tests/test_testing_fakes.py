"""The fakes `tiermem.testing` ships for code built on tiermem: each does what its docstring
promises, and a store run through `RecordingIndex` answers exactly as one on the real index,
whatever the operation, while keeping every query it was asked."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import copy_of
from tiermem import Memory
from tiermem.testing import ByScore, FirstWords, RecordingIndex, WordCounter

T1 = "2026-03-03T10:00:00Z"


# --- FirstWords: a session's first words within the budget ------------------------------------


@given(
    words=st.lists(st.text(alphabet="abcdé€😀", min_size=1, max_size=12), max_size=40),
    budget=st.integers(min_value=0, max_value=200),
)
def test_first_words_keeps_the_leading_words_that_fit(words: list[str], budget: int) -> None:
    text = " \n".join(words)
    summary = FirstWords().summarize(text, title="t", budget_bytes=budget)
    assert len(summary.encode("utf-8")) <= budget
    kept = summary.split()
    assert kept == words[: len(kept)]  # a prefix of the words, in order
    if len(kept) < len(words):  # the next word would not have fit
        assert len(" ".join(words[: len(kept) + 1]).encode("utf-8")) > budget


SESSION = "ReadBuffer.fill dropped the last chunk of every file. " + (
    "Walked through the reader's callers one at a time and noted each. " * 34
)


def test_a_session_summarized_with_first_words_keeps_them_in_cold(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=T1)
    mem.close()
    mem = Memory(tmp_path, now=T1, summarizer=FirstWords())
    try:
        mem.hot_set("ada", "Fix the flaky reader")
        # Over 2 KB: a shorter session goes to cold whole, and no summarizer is asked.
        mem.hot_add("ada", "note", SESSION)
        report = mem.end_session("ada")
        cold = mem.tier_text("cold", "ada")
    finally:
        mem.close()
    assert report.summarizer == "first-words" and len(report.cold) == 1
    body = cold.split("-->\n")[-1].split()
    # The task is the entry's title, not a line of its body again.
    assert body and body == SESSION.split()[: len(body)]  # the session's first words


# --- WordCounter and ByScore --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count"),
    [("", 0), ("one", 1), ("  two   words ", 2), ("tab\tand\nnewline", 3), ("ünï cödé 😀", 3)],
)
def test_word_counter_counts_whitespace_separated_words(text: str, count: int) -> None:
    assert WordCounter().count_many([text, text]) == [count, count]


def test_by_score_orders_by_score_alone_and_keeps_ties_in_order(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=T1)
    mem.hot_set("ada", "Fix the release")
    mem.hot_add("ada", "note", "The release script retries publish three times.")
    mem.hot_set("bo", "Fix the release")
    mem.hot_add("bo", "note", "The release script retries publish three times.")
    mem.close()
    hits = Memory(tmp_path, now=T1).search("release script retries publish", limit=10)
    ranked = ByScore().rank(list(reversed(hits)), agent="ada")
    scores = [h.score for h in ranked]
    assert scores == sorted(scores, reverse=True)
    ties = [h.id for h in reversed(hits) if h.score == ranked[0].score]
    assert [h.id for h in ranked[: len(ties)]] == ties  # stable: the order it was given


# --- RecordingIndex: the real index's answers, and the queries kept ---------------------------

Operation = Callable[[Memory], Any]


def _search(mem: Memory) -> Any:
    return [(h.id, h.tier, h.agent, round(h.score, 6)) for h in mem.search("login release")]


def _spawn(mem: Memory) -> Any:
    result = mem.spawn("flight", "Ship the login fix", auto=True)
    return result.prompt, result.tokens, [s.id for s in result.sources], result.left_out


def _stats(mem: Memory) -> Any:
    return mem.stats().to_json()


def _check(mem: Memory) -> Any:
    return mem.reindex(check=True)


def _read(mem: Memory) -> Any:
    hits = mem.search("reader chunk")
    return [mem.read_entry(h.id).text for h in hits]


def _forget(mem: Memory) -> Any:
    [hit] = [h for h in mem.search("ReadBuffer") if h.tier == "cold"]
    report = mem.forget(hit.id, reason="wrong")
    return report.ids, report.files, [h.tier for h in mem.search("ReadBuffer")]


def _doctor(mem: Memory) -> Any:
    report = mem.doctor()
    return [(f.kind, f.path, f.serious) for f in report.findings]


OPERATIONS = {
    "search": _search,
    "spawn": _spawn,
    "stats": _stats,
    "reindex --check": _check,
    "read": _read,
    "forget": _forget,
    "doctor": _doctor,
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_store_on_the_recording_index_answers_as_on_the_real_one(
    built_store: Path, tmp_path: Path, name: str
) -> None:
    operation = OPERATIONS[name]
    answers = []
    for folder, index in (("real", None), ("recorded", RecordingIndex)):
        (tmp_path / folder).mkdir()
        root = copy_of(built_store, tmp_path / folder)
        mem = Memory(root, now=T1, index=index)
        try:
            answers.append(operation(mem))
        finally:
            mem.close()
        shutil.rmtree(root / ".squad" / "memory" / "tiermem-local", ignore_errors=True)
    assert answers[0] == answers[1]


def test_the_recording_index_keeps_every_query_in_order(built_store: Path, tmp_path: Path) -> None:
    root = copy_of(built_store, tmp_path)
    mem = Memory(root, now=T1, index=RecordingIndex)
    try:
        mem.search("login fix")
        mem.search("release tag", tier="wiki")
        index = mem.context.index
        assert isinstance(index, RecordingIndex)
        assert index.queries == ["login fix", "release tag"]
        mem.spawn("flight", "Ship the login fix", auto=True)
        assert len(index.queries) > 2  # a spawn searches for its task
        assert all(isinstance(q, str) and q for q in index.queries)
    finally:
        mem.close()


def test_the_recording_index_rebuilds_and_counts_as_the_real_one(
    built_store: Path, tmp_path: Path
) -> None:
    root = copy_of(built_store, tmp_path)
    mem = Memory(root, now=T1, index=RecordingIndex)
    try:
        index = mem.context.index
        assert isinstance(index, RecordingIndex)
        report = index.rebuild()
        assert report.scanned > 0
        assert sum(row[2] for row in index.totals()) > 0
        assert index.check() == []
        assert index.token_counts(["one two", ""]) == mem.context.tokens.count_many(["one two", ""])
        newest = index.newest(["cold"], "eecom", 3)
        assert [d.agent for d in newest] == ["eecom"]
        assert index.by_ids([newest[0].id])[0].text == newest[0].text
    finally:
        mem.close()
