"""Scribe never makes a session bigger than its source: small sessions are kept as they are.

A property over random small sessions (a task, maybe why, actions, decisions, blockers and
notes of random text): the summary Scribe writes under the cold entry's heading is never
longer than the session's text, and a session whose overview would be longer is kept whole.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiermem.memory import Memory
from tiermem.storage import store
from tiermem.storage.entries import Entry

NOW = "2026-03-02T10:00:00Z"
_WORDS = st.sampled_from(
    "fix the flaky reader release npm publish `ReadBuffer.fill` #233 src/io/reader.ts v1.4.2 "
    "decided retries off because CI tokens ship it again pinned é 日本 — - * ### Always".split()
)
_TEXT = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join)
_NOTE = st.lists(_TEXT, min_size=1, max_size=3).map("\n".join)
_SLOTS = st.lists(
    st.tuples(st.sampled_from(["action", "decision", "blocker", "note"]), _TEXT | _NOTE),
    max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task=_TEXT, why=st.none() | _TEXT, items=_SLOTS)
def test_a_session_summary_is_never_bigger_than_the_session(
    task: str, why: str | None, items: list[tuple[str, str]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        mem, _ = Memory.init(Path(folder), now=NOW)
        try:
            mem.hot_set("ada", task, why=why)
            for slot, text in items:
                mem.hot_add("ada", slot, text)
            report = mem.end_session("ada")
        finally:
            mem.close()
    assert report.summary_bytes <= report.raw_bytes


def test_a_small_session_is_kept_as_it_is(store: Memory) -> None:
    mem = Memory(store.root, now=NOW)
    mem.hot_add("lead", "note", "Tagged v0.9.")
    mem.hot_add("lead", "note", "Published it.")
    report = mem.end_session("lead")
    [entry] = [e for e in _cold(mem) if e.id in report.cold]
    assert entry.body == "Tagged v0.9.\n\nPublished it."
    assert report.summary_bytes == report.raw_bytes == len(entry.body)


def _cold(mem: Memory) -> list[Entry]:
    loaded = store.load(mem.layout, "cold", mem.layout.tier_file("cold", "lead"))
    assert loaded is not None
    return loaded.entries
