"""Tests of `tiermem bench speed`: a small run end to end, and the store it generates."""

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from test_bench_locomo import write_fixture
from tiermem.bench import headline
from tiermem.bench.generated import Prose, generate, plan
from tiermem.bench.speed import GROWTH_FIGURES, ROWS, TARGETS, StoreReport, growth, percentile
from tiermem.bench.startup import outside_times, own_times
from tiermem.bench.write_speed import locomo_ingest
from tiermem.cli.main import main
from tiermem.errors import UsageError
from tiermem.memory import Memory
from tiermem.storage import archive, store
from tiermem.storage.layout import Layout


@pytest.fixture(scope="module")
def speed_report() -> dict[str, Any]:
    """One small run of the whole command, as JSON."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        argv = ["bench", "speed", "--sizes", "300", "--runs", "3", "--locomo", ""]
        code = main([*argv, "--format", "json"])
    assert code == 0
    data: dict[str, Any] = json.loads(buffer.getvalue())
    return data


def test_every_figure_is_reported_with_a_sane_value(speed_report: dict[str, Any]) -> None:
    (figures,) = speed_report["stores"]
    assert figures["entries"] == 300
    for key, _, _ in ROWS:
        assert figures[key] > 0, key


def test_the_store_has_as_many_documents_as_entries_asked_for(
    speed_report: dict[str, Any],
) -> None:
    (figures,) = speed_report["stores"]
    assert figures["documents"] == 300
    assert figures["build_docs_per_s"] == pytest.approx(300 / figures["build_s"])


def test_tail_latency_is_never_below_the_median(speed_report: dict[str, Any]) -> None:
    (figures,) = speed_report["stores"]
    for name in ("search", "spawn", "note_empty", "note_full"):
        assert figures[f"{name}_p95_ms"] >= figures[f"{name}_p50_ms"] > 0


def test_whole_commands_are_compared_with_an_empty_python(speed_report: dict[str, Any]) -> None:
    (figures,) = speed_report["stores"]
    for name in ("hot_show", "hot_note", "search", "spawn"):
        ratio = figures[f"cli_{name}_ms"] / figures["cli_baseline_ms"]
        assert figures[f"cli_{name}_ratio"] == pytest.approx(ratio)
        cpu = figures[f"cli_{name}_cpu_ms"] / figures["cli_baseline_cpu_ms"]
        assert figures[f"cli_{name}_cpu_ratio"] == pytest.approx(cpu)


def test_notes_on_a_full_tier_checkpoint_and_on_an_empty_one_do_not(
    speed_report: dict[str, Any],
) -> None:
    (figures,) = speed_report["stores"]
    # A checkpoint frees half the tier: some notes in a row on a full tier checkpoint, not all.
    assert 0 < figures["note_full_checkpointed"] < 0.5
    assert figures["note_empty_checkpointed"] == 0.0
    # A checkpoint archives, appends to cold and saves hot: more fsyncs than a plain note.
    assert figures["note_full_fsyncs"] > figures["note_empty_fsyncs"] >= 1


def test_where_start_up_goes_is_said_per_command(speed_report: dict[str, Any]) -> None:
    costs = speed_report["start_up"]
    assert costs["entries"] == 300 and costs["baseline_ms"] > 0
    named = {c["command"] for c in costs["commands"]}
    assert named == {"hot_show", "hot_note", "search", "spawn"}
    for command in costs["commands"]:
        assert command["total_ms"] > costs["baseline_ms"]
        own = [t["ms"] for t in command["top"]]
        assert own and own == sorted(own, reverse=True)


def test_a_large_decisions_file_is_timed_as_it_is_parsed(speed_report: dict[str, Any]) -> None:
    decisions = speed_report["decisions"]
    assert decisions["decisions"] == 3_700 and decisions["mb"] > 1.6
    assert decisions["median_ms"] > 0
    assert decisions["lines"][0].startswith("decisions.md of 1.")


def test_import_times_are_read_as_python_prints_them() -> None:
    printed = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |     errno\n"
        "import time:      2500 |       2620 |   tiermem.storage.files\n"
        "some other line\n"
    )
    assert own_times(printed) == {"errno": 0.12, "tiermem.storage.files": 2.5}


def test_what_tiermem_imports_from_outside_is_timed_with_what_it_brings() -> None:
    printed = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |        100 |   _io\n"  # Python's own start-up
        "import time:       300 |        400 | site\n"
        "import time:       200 |        200 |       ast\n"
        "import time:       900 |       1100 |     inspect\n"
        "import time:       400 |       1500 |   dataclasses\n"
        "import time:        50 |         50 |     tiermem.results\n"
        "import time:       700 |        700 |     hashlib\n"
        "import time:       250 |       1000 |   tiermem.storage\n"
        "import time:       100 |       2600 | tiermem\n"
        "import time:        80 |         80 | json\n"  # imported by no tiermem module
    )
    assert outside_times(printed) == {"dataclasses": 1.5, "hashlib": 0.7}


def test_locomo_conversations_are_timed_at_each_number_of_turns_per_note(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locomo-tiny.json"
    write_fixture(path)
    said: list[str] = []
    figures = locomo_ingest(path, said.append)
    assert figures["locomo_conversations"] == 2
    for turns in (1, 5):
        assert 0 < figures[f"locomo_{turns}_median_s"] <= figures[f"locomo_{turns}_max_s"]
    said_of = [line.split(":")[0] for line in said]
    assert said_of == ["[locomo] 1 turn(s) per note", "[locomo] 5 turn(s) per note"]


def test_targets_are_checked_at_the_sizes_they_are_set_for(speed_report: dict[str, Any]) -> None:
    checked = {c["figure"] for c in speed_report["checks"]}
    assert checked == {t.figure for t in TARGETS if t.applies(300)}
    assert checked == {"note_empty_p95_ms", "note_full_p95_ms"}  # set for every size
    assert all(c["met"] == (c["value"] <= c["limit"]) for c in speed_report["checks"])
    assert speed_report["growth"] == []  # one size: nothing to compare
    assert speed_report["locomo"] is None  # no file given


def test_growth_is_the_ratio_between_consecutive_sizes() -> None:
    small = StoreReport(1000, {key: 2.0 for key in GROWTH_FIGURES})
    large = StoreReport(10_000, {key: 5.0 for key in GROWTH_FIGURES})
    (step,) = growth([small, large])
    assert (step["from"], step["to"], step["size_ratio"]) == (1000, 10_000, 10.0)
    assert step["ratios"] == {key: 2.5 for key in GROWTH_FIGURES}


def test_plan_splits_a_size_into_tiers() -> None:
    sizes = plan(10_000)
    assert sizes.hot_per_agent * 20 + sizes.cold + sizes.wiki + sizes.archive == 10_000
    assert sizes.cold == pytest.approx(0.4 * 10_000, rel=0.02)
    assert sizes.wiki == pytest.approx(0.2 * 10_000, rel=0.02)
    with pytest.raises(UsageError):
        plan(50)


def test_percentile_uses_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]
    assert (percentile(values, 50), percentile(values, 95)) == (10.0, 19.0)
    assert percentile([3.0], 95) == 3.0


def test_prose_is_the_same_for_the_same_seed() -> None:
    first, second = Prose("seed"), Prose("seed")
    assert [first.task() for _ in range(5)] == [second.task() for _ in range(5)]


def test_generated_store_reads_back_in_every_tier(tmp_path: Path) -> None:
    sizes = generate(tmp_path, 400, lambda line: None)
    layout = Layout(tmp_path)
    cold = store.load(layout, "cold", layout.tier_file("cold", "team"))
    assert cold is not None and cold.entries
    assert len(archive.records(layout)) == sizes.archive
    pages = [store.load(layout, "wiki", p) for p in layout.tier_dir("wiki").glob("*.md")]
    assert {"decision", "convention"} <= {e.cls for page in pages if page for e in page.entries}
    mem = Memory(tmp_path)
    try:
        assert mem.hot_view("ada").entries
        assert mem.search("the", limit=3)
    finally:
        mem.close()


def test_headline_figures_are_each_said_against_python_in_the_same_run() -> None:
    keys = [k for line in headline.HEADLINES for k in (*line.keys, *line.also)]
    small = {"entries": 10_000, "cli_baseline_ms": 10.0, "cli_spawn_mb": 40.0}
    small |= {k: 20.0 for k in keys} | {"cli_spawn_ratio": 2.0, "cli_search_ratio": 9.0}
    large = {"entries": 100_000, "cli_baseline_ms": 20.0, "clone_first_search_mb": 150.0}
    large |= {k: 4.0 if k.endswith("_s") else 40.0 for k in keys}
    found = headline.rows([small, large], TARGETS)
    said = {(row["label"], row["entries"]) for row in found}
    assert ("`spawn --auto`, whole process", 10_000) in said
    assert ("git clone: first `search` / the next", 100_000) in said
    for row in found:
        base = 10.0 if row["entries"] == 10_000 else 20.0
        assert row["ratios"] == [pytest.approx(ms / base) for ms in row["ms"]]
    spawn, search = found[0], found[1]
    assert spawn["peak_mb"] == 40.0 and spawn["goals"][0]["met"]  # 2x against 12x
    assert not search["goals"][0]["met"]  # 9x against 6x
    clone = next(row for row in found if row["label"].startswith("git clone"))
    assert clone["ms"] == [4000.0, 4000.0]  # seconds shown as milliseconds
    verdicts = {g["figure"]: g["met"] for g in clone["goals"]}
    assert verdicts == {"clone_first_search_s": True, "clone_next_search_s": False}
    text = headline.lines(found)
    assert text[0].startswith("headline figures") and len(text) == len(found) + 1
    assert "MISSED" in text[2] and "mcp sdk import" in "\n".join(text)


def test_the_headline_table_is_in_the_report(speed_report: dict[str, Any]) -> None:
    found = speed_report["headline"]  # one store of 300: the lines of the largest store
    assert {row["entries"] for row in found} == {300}
    clone = next(row for row in found if row["figures"][0] == "clone_first_search_s")
    assert clone["peak_mb"] > 0 and all(r > 1 for r in clone["ratios"])
