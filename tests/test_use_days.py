"""A day of use that cannot be true never keeps an entry: a line of the use ledger
(`last-use.txt`) or of this clone's record dated `9999-12-31` (a clone with a wrong clock, a
hand edit) or `2026-99-99` (no date) is ignored by ageing, named by `doctor` and dropped by
`doctor --repair`. A day after today that is no later than the repository's latest commit
still counts: that clone's clock runs ahead of this one's, not wrong.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tiermem.memory import Memory
from tiermem.team import use

DAYS = ["2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"]
FUTURE = "2090-06-01"  # after today by every clock, no later than the latest commit


def _summary(root: Path) -> str:
    """A store whose flight summary of the first day ages out within two days of work."""
    mem, _ = Memory.init(root, now=DAYS[0])
    mem.close()
    (root / ".squad/memory/config.toml").write_text("[cold]\nttl_days = 1\n", encoding="utf-8")
    mem = Memory(root, now=DAYS[0])
    mem.hot_set("flight", "Fix the reader")
    mem.hot_add("flight", "note", "The reader drops the last chunk of a stream")
    [summary] = mem.end_session("flight").cold
    mem.close()
    return summary


def _work_days(root: Path) -> list[str]:
    """Two more days of work, then Scribe's run: what expired."""
    for now in DAYS[1:]:
        mem = Memory(root, now=now)
        mem.hot_set("ada", f"Other work on {now[:10]}")
        mem.end_session("ada")
        mem.close()
    mem = Memory(root, now=DAYS[-1])
    expired = mem.scribe_run().expired
    mem.close()
    return expired


@pytest.mark.parametrize("day", ["9999-12-31", "2026-99-99", "2026-02-30", "2026-13-01"])
@pytest.mark.parametrize("where", ["ledger", "local"])
def test_a_day_that_cannot_be_true_does_not_pin_an_entry(
    tmp_path: Path, day: str, where: str
) -> None:
    summary = _summary(tmp_path)
    layout = Memory(tmp_path).layout
    if where == "ledger":
        use.ledger_path(layout).write_text(f"{summary} {day}\n", encoding="utf-8")
    else:
        layout.used.parent.mkdir(parents=True, exist_ok=True)
        layout.used.write_text(f"{day} {summary}\n", encoding="utf-8")
    assert summary in _work_days(tmp_path)


def test_a_true_day_of_use_still_keeps_the_entry(tmp_path: Path) -> None:
    summary = _summary(tmp_path)
    path = use.ledger_path(Memory(tmp_path).layout)
    path.write_text(f"{summary} 9999-12-31\n{summary} {DAYS[-1][:10]}\n", encoding="utf-8")
    assert summary not in _work_days(tmp_path)


def _git(root: Path, *args: str, when: str = "") -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if when:
        env |= {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def test_a_day_no_later_than_the_latest_commit_counts(tmp_path: Path) -> None:
    """Another clone's clock is ahead of this one's: its days are no later than its commit."""
    summary = _summary(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(
        tmp_path,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "memory",
        when=f"{FUTURE}T09:00:00+00:00",
    )
    layout = Memory(tmp_path).layout
    assert use.latest_commit_day(tmp_path) == FUTURE
    use.ledger_path(layout).write_text(f"{summary} {FUTURE}\n", encoding="utf-8")
    assert summary not in _work_days(tmp_path)
    assert use.ledger(layout, use.plausible(layout, DAYS[-1][:10])) == {summary: FUTURE}


def test_doctor_names_them_and_repair_drops_only_them(tmp_path: Path, run_cli: Any) -> None:
    summary = _summary(tmp_path)
    layout = Memory(tmp_path).layout
    ledger = use.ledger_path(layout)
    good = f"{summary} 2026-03-02"
    ledger.write_text(f"{good}\n{summary} 9999-12-31\nc-0123456789 2026-99-99\n", encoding="utf-8")
    layout.used.parent.mkdir(parents=True, exist_ok=True)
    layout.used.write_text(f"2026-03-02 {summary}\n3000-01-01 {summary}\n", encoding="utf-8")
    cli = ("--root", str(tmp_path), "--now", DAYS[-1])
    code, out, err = run_cli(*cli, "doctor")
    assert code == 1, (out, err)
    assert "last-use.txt" in out and "line 2: 9999-12-31" in out and "line 3: 2026-99-99" in out
    assert "line 2: 3000-01-01" in out
    assert ledger.read_text(encoding="utf-8").count("\n") == 3  # a check changes nothing
    code, out, err = run_cli(*cli, "doctor", "--repair")
    assert "dropped 2 line(s)" in out and "dropped 1 line(s)" in out, out
    assert ledger.read_text(encoding="utf-8") == f"{good}\n"
    assert layout.used.read_text(encoding="utf-8") == f"2026-03-02 {summary}\n"
    code, out, err = run_cli(*cli, "doctor")
    assert "cannot be true" not in out


def test_a_fold_writes_no_day_that_cannot_be_true(tmp_path: Path) -> None:
    summary = _summary(tmp_path)
    layout = Memory(tmp_path).layout
    use.ledger_path(layout).write_text(f"{summary} 9999-12-31\n", encoding="utf-8")
    mem = Memory(tmp_path, now=DAYS[1])
    assert mem.search("reader drops the last chunk", tier="cold")  # used today: recorded
    mem.scribe_run()
    mem.close()
    text = use.ledger_path(layout).read_text(encoding="utf-8")
    assert text == f"{summary} {DAYS[1][:10]}\n"
