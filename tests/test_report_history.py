"""The report's history of Scribe's work: sessions fall in day, week, month or year buckets,
whichever keeps the chart readable, and none is left off the chart however long the trail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.report.html_page import collect


def sessions_at(root: Path, times: list[str]) -> Memory:
    """A store where ada ended one session at each time; opened at the last one."""
    Memory.init(root, now=times[0])[0].close()
    for when in times:
        mem = Memory(root, now=when)
        mem.hot_set("ada", f"Task of {when[:10]}")
        # Over 2 KB: a shorter session goes to cold whole, at 1:1.
        mem.hot_add("ada", "note", "The release script retries three times. " * 60)
        mem.end_session("ada")
        mem.close()
    return Memory(root, now=times[-1])


@pytest.mark.parametrize(
    ("times", "buckets", "filled", "first", "last"),
    [
        # Within 45 days: one bar a day.
        (
            ["2026-03-02T10:00:00Z", "2026-03-02T18:00:00Z", "2026-03-05T09:00:00Z"],
            4,
            {"2026-03-02: 2", "2026-03-05: 1"},
            "2026-03-02",
            "2026-03-05",
        ),
        # Within two years: weeks from Monday (Wednesday and Thursday are one week).
        (
            ["2026-01-07T10:00:00Z", "2026-01-08T10:00:00Z", "2026-03-20T10:00:00Z"],
            11,
            {"2026-01-05: 2", "2026-03-16: 1"},
            "2026-01-05",
            "2026-03-16",
        ),
        # Within 30 years: months.
        (
            ["2023-05-02T10:00:00Z", "2026-03-02T10:00:00Z"],
            35,
            {"2023-05: 1", "2026-03: 1"},
            "2023-05",
            "2026-03",
        ),
        # Longer: years, and the newest session is still on the chart.
        (
            ["1975-05-02T10:00:00Z", "2026-03-02T10:00:00Z"],
            52,
            {"1975: 1", "2026: 1"},
            "1975",
            "2026",
        ),
    ],
    ids=["days", "weeks", "months", "years"],
)
def test_sessions_fall_in_buckets_that_cover_the_whole_trail(
    tmp_path: Path, times: list[str], buckets: int, filled: set[str], first: str, last: str
) -> None:
    mem = sessions_at(tmp_path, times)
    try:
        page = collect(mem.context)
    finally:
        mem.close()
    sessions = page.history[0]
    assert sessions.title == "sessions compressed into cold"
    assert len(sessions.shapes) == buckets
    assert {s.hover for s in sessions.shapes if s.height > 0} == filled
    axis = [t.text for t in sessions.ticks if t.x > 0 and t.y == sessions.height - 6]
    assert axis == [first, last]  # the time axis, first bucket to last
    assert page.history_totals == {"end-session": len(times)}


def test_every_session_has_a_dot_of_its_compression_ratio(tmp_path: Path) -> None:
    times = ["2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z"]
    mem = sessions_at(tmp_path, times)
    try:
        page = collect(mem.context)
    finally:
        mem.close()
    ratios = page.history[-1]
    assert ratios.kind == "dots" and len(ratios.shapes) == 2
    for dot in ratios.shapes:
        day, _, ratio = dot.hover.partition(": ")
        assert day in ("2026-03-02", "2026-03-03")
        assert ratio.endswith(":1") and float(ratio.removesuffix(":1")) > 1


def test_a_store_with_no_audit_line_draws_no_history(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now="2026-03-02T10:00:00Z")
    mem.layout.audit.write_text("", encoding="utf-8")
    try:
        page = collect(mem.context)
    finally:
        mem.close()
    assert page.history == [] and page.history_totals == {}
