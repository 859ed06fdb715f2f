"""Scribe's promotion when the page it would write to cannot be read: the entry stays in cold,
the run says why, the page is never rewritten, and the next run after a person mends the page
promotes it; a run with nothing to promote writes no page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"
LATER = "2026-03-12T10:00:00Z"  # past the seven days a structured entry waits
CONTRACT = (
    "### 2026-03-02: Storage API contract\n**By:** ada\n"
    "**What:** StorageProvider exposes read(key) and write(key, value).\n"
    "**Why:** adapters need one interface."
)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    made.decide(CONTRACT, by="ada")
    yield made
    made.close()


def planned_topic(mem: Memory) -> tuple[str, str]:
    """(topic, entry id) the next run would promote the decision to."""
    plan = Memory(mem.root, now=LATER).scribe_run(dry_run=True)
    [(topic, [entry_id])] = plan.promoted.items()
    return topic, entry_id


def team_cold(mem: Memory) -> str:
    return mem.layout.tier_file("cold", "team").read_text(encoding="utf-8")


def run(run_cli: RunCli, mem: Memory) -> dict[str, object]:
    code, out, err = run_cli(
        "scribe", "run", "--format", "json", "--root", str(mem.root), "--now", LATER
    )
    assert code in (0, 1) and "Traceback" not in err, err
    report: dict[str, object] = json.loads(out)
    return report


def test_a_page_that_cannot_be_read_takes_nothing_and_the_run_says_why(
    mem: Memory, run_cli: RunCli
) -> None:
    topic, entry_id = planned_topic(mem)
    page = mem.layout.tier_file("wiki", topic)
    damaged = "# hand edit\n## x\n<!-- tiermem id=w-1 class=bogus -->\nbody\n"
    page.write_text(damaged, encoding="utf-8")
    report = run(run_cli, mem)
    assert report["promoted"] == {}
    skipped = report["skipped"]
    assert isinstance(skipped, list)
    assert any(str(s).startswith(f"promotion to wiki/{topic}.md: ") for s in skipped)
    assert page.read_text(encoding="utf-8") == damaged
    assert f"id={entry_id} " in team_cold(mem)


def test_the_run_after_the_page_is_mended_promotes_the_entry(mem: Memory, run_cli: RunCli) -> None:
    topic, entry_id = planned_topic(mem)
    page = mem.layout.tier_file("wiki", topic)
    page.write_text("## x\n<!-- tiermem id=w-1 class=bogus -->\nbody\n", encoding="utf-8")
    run(run_cli, mem)
    page.unlink()  # a person removes the hand edit
    report = run(run_cli, mem)
    assert report["promoted"] == {topic: [entry_id]}
    assert f"id={entry_id} " not in team_cold(mem)
    assert f"tiermem id={entry_id} " in mem.wiki_read(topic)


def test_a_dry_run_over_a_damaged_page_writes_nothing(mem: Memory, run_cli: RunCli) -> None:
    topic, _ = planned_topic(mem)
    page = mem.layout.tier_file("wiki", topic)
    page.write_text("## x\n<!-- tiermem id=\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in mem.layout.memory.rglob("*.md")}
    code, _, err = run_cli("scribe", "run", "--dry-run", "--root", str(mem.root), "--now", LATER)
    assert code in (0, 1) and "Traceback" not in err
    assert {p: p.read_bytes() for p in mem.layout.memory.rglob("*.md")} == before


def test_a_run_before_the_entry_is_due_promotes_nothing_and_writes_no_page(
    mem: Memory, run_cli: RunCli
) -> None:
    code, out, err = run_cli(
        "scribe", "run", "--format", "json", "--root", str(mem.root), "--now", T0
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["promoted"] == {}
    assert list(mem.layout.tier_dir("wiki").glob("*.md")) == []
