"""A small run of the real benchmark harness on one real team, so the harness cannot rot."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

import corpora
from conftest import RunCli

CORPUS = corpora.CORPORA / "Thraka__SadConsole"

pytestmark = corpora.needs(CORPUS.name)


def test_replay_and_probes_on_one_team(tmp_path: Path, run_cli: RunCli) -> None:
    store = tmp_path / "replay"
    code, out, err = run_cli(
        "bench", "replay", str(CORPUS), "--out", str(store), "--format", "json"
    )
    assert code == 0, err
    replay = json.loads(out)
    assert replay["events"] == 75 and replay["sessions"] == 28
    assert not replay["skipped"]
    assert_scribe_compresses_and_keeps_facts(store)
    code, out, err = run_cli(
        "bench", "probes", str(CORPUS), "--store", str(store), "--limit", "12", "--format", "json"
    )
    assert code == 0, err
    figures = json.loads(out)
    assert figures["probes"] == 12
    ours, squad = figures["tiermem"], figures["squad_as_is"]
    assert ours["tokens_median"] < squad["tokens_median"]
    assert ours["coverage_mean"] >= 0.6
    assert ours["recall_at_5"] >= 0.8
    assert figures["full_history"]["coverage_mean"] == 1.0


def test_import_probes_on_one_team(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the store it keeps, cleaned up
    code, out, err = run_cli(
        "bench", "probes", str(CORPUS), "--import", "--limit", "8", "--format", "json"
    )
    assert code == 0, err
    figures = json.loads(out)
    assert figures["mode"] == "import" and figures["store"].startswith(str(tmp_path))
    assert figures["tiermem"]["tokens_median"] < figures["squad_as_is"]["tokens_median"]


def test_an_import_keeps_the_key_facts_of_what_it_read(tmp_path: Path) -> None:
    from tiermem.bench.imported import import_retention, import_snapshot, rebuild_check

    store = import_snapshot(CORPUS, tmp_path / "import")
    assert rebuild_check(store)["differ"] == 0
    kept = import_retention(store)
    # The team's decision log and inbox are filed in cold and the wiki; of its histories, the
    # latest sessions and each agent's Core Context (older sessions are in the archive).
    assert kept["imported_facts"] > 400 and kept["history_facts"] > 500
    assert kept["retention"] >= 0.85
    assert 0.3 <= kept["history_retention"] < kept["retention"]


def assert_scribe_compresses_and_keeps_facts(store: Path) -> None:
    from tiermem.bench.quality import compression
    from tiermem.memory import Memory

    mem = Memory(store)
    figures = compression(mem)
    mem.close()
    assert figures["over_2kb"] > 10
    assert figures["share_at_least_5"] == 1.0
    kept = [b["retention_median"] for b in figures["curve"] if b["retention_median"] is not None]
    assert kept and all(0.0 <= k <= 1.0 for k in kept)
    assert max(kept) >= 0.8


def test_all_prints_each_mode_against_its_bars(tmp_path: Path, run_cli: RunCli) -> None:
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / CORPUS.name).symlink_to(CORPUS)
    out = tmp_path / "out"
    code, text, err = run_cli(
        "bench", "all", "--corpora", str(corpora), "--out", str(out), "--limit", "6"
    )
    assert code == 0, err
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["replay", "coverage", "recall@5"]
    # replay, forward, import and the import's quality: one row each
    assert [ln.split()[0] for ln in lines if ln.startswith("Thraka")] == [CORPUS.name] * 4
    figures = json.loads((out / "results.json").read_text(encoding="utf-8"))
    imported = figures["corpora"][CORPUS.name]["import"]
    assert 0 < imported["oracle"]["coverage_mean"] <= imported["import_ceiling"]
    assert imported["tiermem"]["superseded_served"] == 0
    spawn = imported["squad_spawn"]
    assert spawn["after_median"] * 3 < spawn["before_median"]
    quality = figures["corpora"][CORPUS.name]["import_quality"]
    assert quality["decisions_as_status"] == quality["headless_bullets"] == 0
    assert quality["cold_bullets"] > 0 and quality["tool_pages"] == []
    assert quality["hot"]["writes"] == 6 and quality["hot"]["budget_ratio"] <= 1.2
    assert figures["corpora"][CORPUS.name]["readability"]["headless_bullets"] == 0


def test_shape_says_what_an_import_makes_of_a_team(run_cli: RunCli) -> None:
    code, out, err = run_cli("bench", "shape", str(CORPUS), "--format", "json")
    assert code == 0, err
    [figures] = json.loads(out)
    assert figures["corpus"] == CORPUS.name
    assert 0 < figures["max_page_bytes"] <= 32 * 1024
    assert figures["unnamed_pages"] == figures["personal_pages"] == []
    assert figures["from_history"] == figures["unstructured_entries"] == 0
    assert 0 < figures["wiki_share"] <= 0.4
    assert figures["dry_run_placed"] == figures["dry_run_sections"] > 100
    quality = figures["import_quality"]
    assert quality["decisions_as_status"] == quality["headless_bullets"] == 0
    assert quality["committed_bytes"] > quality["imported_bytes"] > 0
    assert 1.0 < quality["store_ratio"] < 2.0
    code, out, err = run_cli("bench", "shape", str(CORPUS))
    assert code == 0, err
    assert CORPUS.name in out and "targets:" in out and "import quality" in out


def test_import_scale_measures_an_import_as_a_process_of_its_own(run_cli: RunCli) -> None:
    # A small history: the harness itself, not the 50 MB run (`bench import-scale` does it).
    code, out, err = run_cli("bench", "import-scale", "--learnings", "400", "--format", "json")
    assert code == 0, err
    figures = json.loads(out)
    assert figures["learnings"] == 400 and 0.1 < figures["history_mb"] < 1
    assert figures["import_s"] > 0 and figures["import_cpu_s"] > 0
    assert figures["python_floor_peak_mb"] < figures["import_peak_mb"] < 300
    assert figures["archive_mb"] >= figures["history_mb"] and figures["index_mb"] > 0
    assert set(figures["reads"]) >= {"search", "spawn --auto", "stats", "report"}
    assert figures["read_peak_mb"] == max(r["peak_mb"] for r in figures["reads"].values())


def test_fresh_clone_times_the_first_commands_of_fresh_clones(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # A small store, in turns with a copy of this very tiermem: the harness, not the figures.
    import tiermem

    code, out, err = run_cli(
        "bench",
        "fresh-clone",
        "--entries",
        "300",
        "--runs",
        "1",
        "--store",
        str(tmp_path),
        "--against",
        str(Path(tiermem.__file__).parents[1]),
        "--format",
        "json",
    )
    assert code == 0, err
    figures = json.loads(out)
    assert (tmp_path / ".git").is_dir() and (tmp_path / ".squad" / "memory").is_dir()
    for version in ("this", "against"):
        steps = figures["versions"][version]
        assert steps["first_search"]["wall_s"] > 0 and steps["first_search"]["peak_mb"] > 0
        assert set(steps) == {
            "clone",
            "first_search",
            "next_search",
            "next_spawn",
            "stats",
            "first_spawn",
        }
    assert not [p for p in tmp_path.glob(".squad/memory/index.sqlite*")]  # clones, not the store
    code, _, err = run_cli("bench", "fresh-clone", "--runs", "0")
    assert code == 2 and "--runs" in err
