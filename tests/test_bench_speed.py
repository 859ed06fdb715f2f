"""Tests of `tiermem bench speed`: a small run end to end, and the store it generates."""

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tiermem import archive, store
from tiermem.bench.generated import Prose, generate, plan
from tiermem.bench.speed import GROWTH_FIGURES, ROWS, TARGETS, StoreReport, growth, percentile
from tiermem.cli import main
from tiermem.errors import UsageError
from tiermem.layout import Layout
from tiermem.memory import Memory


@pytest.fixture(scope="module")
def speed_report() -> dict[str, Any]:
    """One small run of the whole command, as JSON."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["bench", "speed", "--sizes", "300", "--runs", "3", "--format", "json"])
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
    for name in ("search", "spawn"):
        assert figures[f"{name}_p95_ms"] >= figures[f"{name}_p50_ms"] > 0


def test_whole_commands_are_compared_with_an_empty_python(speed_report: dict[str, Any]) -> None:
    (figures,) = speed_report["stores"]
    for name in ("hot_show", "search", "spawn"):
        ratio = figures[f"cli_{name}_ms"] / figures["cli_baseline_ms"]
        assert figures[f"cli_{name}_ratio"] == pytest.approx(ratio)


def test_every_target_is_checked(speed_report: dict[str, Any]) -> None:
    checked = {c["figure"] for c in speed_report["checks"]}
    assert checked == {t.figure for t in TARGETS}
    assert all(c["met"] == (c["value"] < c["limit_ms"]) for c in speed_report["checks"])
    assert speed_report["growth"] == []  # one size: nothing to compare


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
