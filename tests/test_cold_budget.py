"""Scribe keeps each agent's cold tier within `cold.budget_bytes`: the oldest sessions leave
first, the newest stay, what leaves is still found in the archive, and a second run has nothing
more to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.storage import archive

BUDGET = 1024
DAYS = range(1, 9)
LAST = "2026-03-09T10:00:00Z"


def day(n: int) -> str:
    return f"2026-03-{n:02d}T10:00:00Z"


@pytest.fixture
def crowded(tmp_path: Path) -> Path:
    """ada's eight sessions in cold, together far over a cold budget of 1 KB."""
    Memory.init(tmp_path, now=day(1))[0].close()
    (tmp_path / ".squad" / "memory" / "config.toml").write_text(
        f"[cold]\nbudget_bytes = {BUDGET}\n", encoding="utf-8"
    )
    for n in DAYS:
        mem = Memory(tmp_path, now=day(n))
        mem.hot_set("ada", f"Task of day {n}")
        finding = f"Day {n} finding: parser cache {n} lives in src/cache{n}.ts, warmed at start. "
        mem.hot_add("ada", "note", finding * 2)
        mem.end_session("ada")
        mem.close()
    return tmp_path


def cold_file(root: Path) -> Path:
    return root / ".squad" / "memory" / "cold" / "ada.md"


def cold_titles(mem: Memory) -> list[str]:
    """The titles of ada's cold entries (each a dated session), oldest first."""
    text = mem.tier_text("cold", "ada")
    return sorted(line[3:] for line in text.splitlines() if line.startswith("## "))


def test_the_oldest_sessions_leave_until_cold_fits_its_budget(crowded: Path) -> None:
    assert cold_file(crowded).stat().st_size > 3 * BUDGET
    mem = Memory(crowded, now=LAST)
    try:
        before = cold_titles(mem)
        report = mem.scribe_run()
        after = cold_titles(mem)
    finally:
        mem.close()
    assert report.over_budget and report.expired == []
    assert cold_file(crowded).stat().st_size <= BUDGET
    assert after == before[len(before) - len(after) :]  # the newest sessions stay
    assert "Task of day 8" in after
    assert len(before) - len(after) == len(report.over_budget)


def test_what_leaves_cold_is_still_found_in_the_archive(crowded: Path) -> None:
    mem = Memory(crowded, now=LAST)
    try:
        mem.scribe_run()
        hits = mem.search("parser cache 1 lives in src/cache1.ts", limit=20)
    finally:
        mem.close()
    assert any(h.tier == "archive" and "src/cache1.ts" in h.text for h in hits)
    assert not any(h.tier == "cold" and "src/cache1.ts" in h.text for h in hits)


def test_the_run_is_audited_and_a_second_run_has_nothing_more_to_do(crowded: Path) -> None:
    mem = Memory(crowded, now=LAST)
    try:
        first = mem.scribe_run()
        kept = cold_file(crowded).read_bytes()
        second = mem.scribe_run()
    finally:
        mem.close()
    assert second.over_budget == [] and cold_file(crowded).read_bytes() == kept
    trail = (crowded / ".squad" / "memory" / "tiermem-audit.jsonl").read_text("utf-8")
    lines = [json.loads(x) for x in trail.splitlines()]
    [budget] = [x for x in lines if x["action"] == "cold-budget"]
    assert sorted(budget["ids"]) == sorted(first.over_budget)


def test_a_dry_run_names_the_same_sessions_and_writes_nothing(crowded: Path) -> None:
    mem = Memory(crowded, now=LAST)
    try:
        before = cold_file(crowded).read_bytes()
        planned = mem.scribe_run(dry_run=True)
        assert cold_file(crowded).read_bytes() == before
        done = mem.scribe_run()
    finally:
        mem.close()
    assert planned.over_budget == done.over_budget != []


def test_a_larger_budget_leaves_cold_as_it_is(crowded: Path) -> None:
    config = crowded / ".squad" / "memory" / "config.toml"
    config.write_text("[cold]\nbudget_bytes = 65536\n", encoding="utf-8")
    before = cold_file(crowded).read_bytes()
    mem = Memory(crowded, now=LAST)
    try:
        report = mem.scribe_run()
    finally:
        mem.close()
    assert report.over_budget == []
    assert cold_file(crowded).read_bytes() == before


def test_the_report_counts_the_cold_budget_as_scribe_does(tmp_path: Path) -> None:
    """A long Core Context (the agent's standing entry) is not a session: Scribe never
    archives it for the budget, so the report does not show that agent's cold over it."""
    history = tmp_path / ".squad" / "agents" / "ada" / "history.md"
    history.parent.mkdir(parents=True)
    context = "".join(
        f"- Ada owns module {n}: the parser cache in src/m{n}.ts.\n" for n in range(60)
    )
    history.write_text(
        f"# Ada\n\n## Core Context\n\n{context}\n## Learnings\n\n"
        "### 2026-03-08: Cache warm-up\n\nThe cache warms at start in src/cache.ts.\n",
        encoding="utf-8",
    )
    Memory.init(tmp_path, now=day(9))[0].close()
    (tmp_path / ".squad" / "memory" / "config.toml").write_text(
        f"[cold]\nbudget_bytes = {BUDGET}\n", encoding="utf-8"
    )
    mem = Memory(tmp_path, now=LAST)
    try:
        mem.import_squad()
        assert cold_file(tmp_path).stat().st_size > 2 * BUDGET  # the standing entry alone
        assert mem.scribe_run().over_budget == []
        page = Path(mem.report(out=tmp_path / "out").path).read_text(encoding="utf-8")
    finally:
        mem.close()
    assert "— over budget" not in page and "gauge over" not in page


def test_text_the_archive_holds_whole_is_not_archived_whole_again(tmp_path: Path) -> None:
    # A report of work done, recorded on the decision path: its raw text is archived first.
    Memory.init(tmp_path, now=day(1))[0].close()
    (tmp_path / ".squad" / "memory" / "config.toml").write_text(
        f"[cold]\nbudget_bytes = {BUDGET}\n", encoding="utf-8"
    )
    for n in DAYS:
        mem = Memory(tmp_path, now=day(n))
        report = f"Phase {n} of the parser rewrite landed in `src/parser/phase{n}.ts`. " * 6
        mem.decide(f"### 2026-03-{n:02d}: Parser phase {n} complete\n{report}", by="ada")
        mem.close()
    mem = Memory(tmp_path, now=LAST)
    try:
        left = mem.scribe_run().over_budget
        records = [archive.parse(p.read_bytes(), p) for p in archive.records(mem.layout, "team")]
    finally:
        mem.close()
    assert left
    leaving = [r for r in records if r.kind == "cold-budget"]
    assert len(leaving) == len(left)
    for record in leaving:
        # Its heading and metadata, and where the text is, never the text a second time.
        assert "landed in" not in record.text
        where = record.text.split("kept whole in ")[1].split(",")[0]
        kept = archive.at(mem.layout, where)
        assert kept is not None and record.title in kept.text
