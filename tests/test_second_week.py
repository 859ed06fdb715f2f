"""A team's second week: the hot tier dated by its newest session, and a blocker carried
since day one shown with its age and how to clear it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tiermem.memory import Memory

RunCli = Callable[..., tuple[int, str, str]]
DAY_ONE = "2026-03-02T09:00:00Z"
DAY_NINE = "2026-03-10T09:00:00Z"
BLOCKER = "waiting on the npm token rotation"


def second_week(root: Path) -> None:
    """flight's first session leaves a blocker open; a week later a new session starts."""
    mem, _ = Memory.init(root, now=DAY_ONE)
    mem.hot_set("flight", "ship the publish fix")
    mem.hot_add("flight", "blocker", BLOCKER)
    mem.end_session("flight")
    mem.close()
    later = Memory(root, now=DAY_NINE)
    later.hot_add("flight", "note", "the publish fix is merged; the release waits")
    later.close()


def test_the_hot_tier_is_as_of_its_newest_session(tmp_path: Path) -> None:
    second_week(tmp_path)
    mem = Memory(tmp_path, now=DAY_NINE)
    view = mem.hot_view("flight")
    assert view.started[:10] == "2026-03-10"
    prompt = mem.spawn("flight", task="ship the release").prompt
    assert 'agent="flight" as-of="2026-03-10"' in prompt
    assert 'as-of="2026-03-02"' not in prompt
    mem.close()


def test_a_carried_blocker_shows_its_age_and_how_to_clear_it(
    tmp_path: Path, run_cli: RunCli
) -> None:
    second_week(tmp_path)
    code, out, err = run_cli("--root", str(tmp_path), "--now", DAY_NINE, "hot", "show", "flight")
    assert (code, err) == (0, "")
    assert f"- (open since 2026-03-02) {BLOCKER}" in out
    assert "8 day(s) ago" in out
    assert 'tiermem hot unblock flight "TEXT"' in out
    # The age is shown, not stored: the blocker's own text is unblocked as written.
    code, out, err = run_cli(
        "--root", str(tmp_path), "--now", DAY_NINE, "hot", "unblock", "flight", "npm token"
    )
    assert (code, err) == (0, "")
    code, out, _ = run_cli("--root", str(tmp_path), "--now", DAY_NINE, "hot", "show", "flight")
    assert "open since" not in out and "hot unblock" not in out


def test_a_blocker_of_this_session_shows_no_age(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=DAY_ONE)
    mem.hot_add("flight", "blocker", BLOCKER)
    view = mem.hot_view("flight")
    assert f"- {BLOCKER}" in view.markdown and view.hint == ""
    mem.close()
