"""Write docs/benchmarks.md and its charts from the JSON that the benchmarks print.

    tiermem bench all --corpora ../shared/corpora --out bench-out
    tiermem bench speed --locomo ../shared/benchmarks/locomo/locomo-dev.json --format json \
        > bench-out/speed.json
    python scripts/report_benchmarks.py bench-out/results.json bench-out/speed.json

Charts need the `plot` extra (`pip install -e '.[plot]'`); without it the tables are still
written and the charts are skipped with a note.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
IMG = DOCS / "img"
SHORT = {
    "Thraka__SadConsole": "SadConsole",
    "bradygaster__squad": "squad",
    "dkirby-ms__primal-grid": "primal-grid",
    "jguadagno__jjgnet-broadcast": "jjgnet-broadcast",
}


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: list[str], rows: Iterable[list[Any]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def _retention(kept: dict[str, Any]) -> str:
    """Retention of the team's current record, then of the histories (older ones archived)."""
    text = f"{_pct(kept['retention'])} of {kept['imported_facts']:,} facts"
    if "history_retention" in kept:
        text += f"; {_pct(kept['history_retention'])} of {kept['history_facts']:,}"
    return text


def _pct(value: float) -> str:
    return f"{value:.3f}"


def _probe_table(results: dict[str, Any], mode: str) -> list[str]:
    header = [
        "corpus",
        "probes",
        "tiermem tokens p50 / p90",
        "squad-as-is tokens p50 / p90",
        "ratio",
        "tiermem coverage",
        "squad-as-is coverage",
        "full history coverage",
        "recall@5",
        "grep recall@5",
        "superseded text served",
    ]
    rows = []
    for name, figures in results["corpora"].items():
        f = figures[mode]
        t, s, full = f["tiermem"], f["squad_as_is"], f["full_history"]
        rows.append(
            [
                SHORT.get(name, name),
                f["probes"],
                f"{t['tokens_median']:.0f} / {t['tokens_p90']:.0f}",
                f"{s['tokens_median']:.0f} / {s['tokens_p90']:.0f}",
                f"{f['token_ratio_vs_squad']:.2f}",
                _pct(t["coverage_mean"]),
                _pct(s["coverage_mean"]),
                _pct(full["coverage_mean"]),
                _pct(t["recall_at_5"]),
                _pct(f["grep"]["recall_at_5"]),
                _pct(t.get("superseded_served", 0.0)),
            ]
        )
    return _table(header, rows)


def _forward_table(results: dict[str, Any]) -> list[str]:
    """Forward coverage carried in prose (METRICS.md), raw beside tiermem's, with the prompts'
    fact-list lines and fragments."""
    header = [
        "corpus",
        "probes",
        "tiermem raw / in prose",
        "recent",
        "bm25",
        "oracle",
        "all",
        "ratio",
        "fact-list lines / fragments",
        "tokens p50 / p90",
        "all tokens p50",
        "wins / losses",
    ]
    rows = []
    for name, figures in results["corpora"].items():
        f = figures.get("forward")
        if not f:
            continue
        raw, prose = f["coverage"], f["coverage_in_prose"]
        rows.append(
            [
                SHORT.get(name, name),
                f["probes"],
                f"{_pct(raw['tiermem'])} / {_pct(prose['tiermem'])}",
                *(_pct(prose[k]) for k in ("recent", "bm25", "oracle", "everything")),
                f"{f['ratio_to_best_baseline']:.2f}",
                f"{f['fact_list_lines']:.1%} / {f['fragments']:.1%}",
                f"{f['tokens_median']:.0f} / {f['tokens_p90']:.0f}",
                f"{f['everything_tokens_median']:,.0f}",
                f"{f['wins']} / {f['losses']}",
            ]
        )
    return _table(header, rows)


def _ceiling_table(results: dict[str, Any]) -> list[str]:
    header = [
        "corpus",
        "import ceiling",
        "oracle",
        "coverage after import",
        "share of ceiling",
        "recall ceiling",
        "recall@5 after import",
        "cold + wiki fact retention (decision log and inbox; histories)",
    ]
    rows = []
    for name, figures in results["corpora"].items():
        f, kept = figures["import"], figures.get("import_retention")
        rows.append(
            [
                SHORT.get(name, name),
                _pct(f["import_ceiling"]),
                _pct(f["oracle"]["coverage_mean"]) if "oracle" in f else "",
                _pct(f["tiermem"]["coverage_mean"]),
                f"{f['share_of_ceiling']:.0%}",
                _pct(f["recall_ceiling"]) if "recall_ceiling" in f else "",
                _pct(f["tiermem"]["recall_at_5"]),
                _retention(kept) if kept else "",
            ]
        )
    return _table(header, rows)


def _adoption_table(results: dict[str, Any]) -> list[str]:
    header = [
        "corpus",
        "Squad as is: tokens p50 / p90",
        "after install --coordinator: tokens p50 / p90",
        "ratio of medians",
    ]
    rows = []
    for name, figures in results["corpora"].items():
        spawn = figures["import"].get("squad_spawn")
        if spawn:
            rows.append(
                [
                    SHORT.get(name, name),
                    f"{spawn['before_median']:,.0f} / {spawn['before_p90']:,.0f}",
                    f"{spawn['after_median']:,.0f} / {spawn['after_p90']:,.0f}",
                    f"{spawn['ratio_median']:.2f}",
                ]
            )
    return _table(header, rows)


def _size_range(text: str) -> str:
    low, high = text.split("-")
    return f"{int(low):,} to {int(high):,}" if high else f"over {int(low):,}"


def _curve_table(results: dict[str, Any]) -> list[str]:
    header = ["corpus", "raw session size (bytes)", "sessions", "ratio p50", "retention p50"]
    rows = []
    for name, f in results["corpora"].items():
        for bucket in f["compression"]["curve"]:
            kept = bucket.get("retention_median")
            rows.append(
                [
                    SHORT.get(name, name),
                    _size_range(bucket["raw_bytes"]),
                    bucket["sessions"],
                    bucket["ratio_median"],
                    "" if kept is None else f"{_pct(kept)} ({bucket['retention_sessions']})",
                ]
            )
    return _table(header, rows)


def _scribe_table(results: dict[str, Any]) -> list[str]:
    header = [
        "corpus",
        "events / sessions",
        "replay s",
        "summaries > 2 KB",
        "ratio min / median",
        "retention vs sources",
        "retention vs all raw",
        "policies kept (after +400 d)",
        "scribe run s",
        "import s",
        "import rebuild",
    ]
    rows = []
    for name, f in results["corpora"].items():
        c, r, p, check = f["compression"], f["retention"], f["policy"], f["import_check"]
        rows.append(
            [
                SHORT.get(name, name),
                f"{f['events']} / {f['sessions']}",
                f["replay_seconds"],
                c["over_2kb"],
                f"{c['ratio_over_2kb_min']} / {c['ratio_over_2kb_median']}",
                _pct(r["retention_vs_sources"]),
                _pct(r["retention_vs_all_raw"]),
                f"{p['retention']:.0%} ({p['retention_after_jump']:.0%}) of {p['policies']}",
                f["scribe_run_seconds"],
                f["import_seconds"],
                f"{check['exact'] + check['redacted']}/{check['files']} files",
            ]
        )
    return _table(header, rows)


def _readability_table(results: dict[str, Any]) -> list[str]:
    """What Scribe wrote, read as an agent reads it (METRICS.md, "Scribe quality")."""
    header = [
        "corpus",
        "cold + wiki lines",
        "fact-list lines",
        "titles",
        "title defects",
        "summaries",
        "retention raw / in prose (median)",
        "greedy cover of whole sentences (median)",
    ]
    rows = []
    for name, f in results["corpora"].items():
        r = f.get("readability")
        if not r:
            continue
        rows.append(
            [
                SHORT.get(name, name),
                r["lines"],
                r["fact_list_lines"],
                r["titles"],
                r["title_defects"],
                r["summaries"],
                f"{_pct(r['retention_median'])} / {_pct(r['retention_in_prose_median'])}",
                _pct(r["greedy_cover_median"]),
            ]
        )
    return _table(header, rows)


def _speed_table(speed: dict[str, Any]) -> list[str]:
    keys = [
        ("search_p50_ms", "search p50 ms"),
        ("search_p95_ms", "search p95 ms"),
        ("spawn_p50_ms", "spawn p50 ms"),
        ("spawn_p95_ms", "spawn p95 ms"),
        ("sync_noop_p50_ms", "no-op sync ms"),
        ("cli_hot_show_ms", "`hot show` ms"),
        ("cli_search_ms", "`search` ms"),
        ("cli_spawn_ms", "`spawn` ms"),
        ("cli_baseline_ms", "`python -c pass` ms"),
        ("build_docs_per_s", "index build docs/s"),
    ]
    stores = speed["stores"]
    return _table(
        ["figure", *[f"{s['entries']:,} entries" for s in stores]],
        ([label, *[f"{s.get(key, float('nan')):.1f}" for s in stores]] for key, label in keys),
    )


def _speed_headline(speed: dict[str, Any]) -> list[str]:
    """The headline figures as `bench speed` prints them (runs before they were printed have
    none)."""
    from tiermem.bench import headline

    found = speed.get("headline") or []
    if not found:
        return ["(the headline figures were not measured in this run)"]
    first, *rest = headline.lines(found)
    return [first.capitalize(), "", *(f"- {line.strip()}" for line in rest)]


def _charts(results: dict[str, Any], speed: dict[str, Any] | None) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(charts skipped: install the plot extra to draw them)"]
    IMG.mkdir(parents=True, exist_ok=True)
    names = [SHORT.get(n, n) for n in results["corpora"]]
    corpora = list(results["corpora"].values())
    x = range(len(names))

    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.27
    ax.bar(
        [i - width for i in x],
        [c["replay"]["tiermem"]["tokens_median"] for c in corpora],
        width,
        label="tiermem (replay)",
    )
    ax.bar(
        list(x),
        [c["import"]["tiermem"]["tokens_median"] for c in corpora],
        width,
        label="tiermem (import)",
    )
    ax.bar(
        [i + width for i in x],
        [c["replay"]["squad_as_is"]["tokens_median"] for c in corpora],
        width,
        label="squad-as-is",
    )
    ax.set_yscale("log")
    ax.set_xticks(list(x), names)
    ax.set_ylabel("tokens per spawn (median)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(IMG / "tokens.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    series = [
        ("tiermem (replay)", [c["replay"]["tiermem"]["coverage_mean"] for c in corpora]),
        ("tiermem (import)", [c["import"]["tiermem"]["coverage_mean"] for c in corpora]),
        ("squad-as-is", [c["replay"]["squad_as_is"]["coverage_mean"] for c in corpora]),
    ]
    for n, (label, values) in enumerate(series):
        ax.bar([i + (n - 1) * width for i in x], values, width, label=label)
    ax.axhline(0.85, color="grey", linestyle="--", linewidth=0.8)  # the bar after replay
    ax.set_xticks(list(x), names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("spawn coverage of probe facts")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3)
    fig.tight_layout()
    fig.savefig(IMG / "coverage.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for c, name in zip(corpora, names, strict=True):
        points = [b for b in c["compression"]["curve"] if b.get("retention_median") is not None]
        ax.plot(
            [b["ratio_median"] for b in points],
            [b["retention_median"] for b in points],
            marker="o",
            label=name,
        )
    ax.axhline(0.8, color="grey", linestyle="--", linewidth=0.8)
    ax.axvline(5, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("compression ratio of the session summary (median per session size)")
    ax.set_ylabel("key-fact retention of the session")
    widest = max((b["ratio_median"] for c in corpora for b in c["compression"]["curve"]), default=8)
    ax.set_xlim(0, max(8, widest + 1))
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(IMG / "compression.png", dpi=110)
    plt.close(fig)
    made = [
        "![tokens per spawn](img/tokens.png)",
        "![coverage](img/coverage.png)",
        "![compression against retention](img/compression.png)",
    ]

    if speed:
        sizes = [s["entries"] for s in speed["stores"]]
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for key, label in (
            ("search_p50_ms", "search p50"),
            ("search_p95_ms", "search p95"),
            ("spawn_p50_ms", "spawn p50"),
            ("spawn_p95_ms", "spawn p95"),
        ):
            ax.plot(sizes, [s[key] for s in speed["stores"]], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("store size (entries)")
        ax.set_ylabel("in-process latency (ms)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(IMG / "latency.png", dpi=110)
        plt.close(fig)
        made.append("![latency against store size](img/latency.png)")
    return made


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    results = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    speed = json.loads(Path(argv[1]).read_text(encoding="utf-8")) if len(argv) > 1 else None
    template = (DOCS / "benchmarks.template.md").read_text(encoding="utf-8")
    text = template.format(
        commit=results["commit"],
        machine=results["machine"],
        python=results["python"],
        replay_table="\n".join(_probe_table(results, "replay")),
        forward_table="\n".join(_forward_table(results)),
        import_table="\n".join(_probe_table(results, "import")),
        ceiling_table="\n".join(_ceiling_table(results)),
        adoption_table="\n".join(_adoption_table(results)),
        scribe_table="\n".join(_scribe_table(results)),
        readability_table="\n".join(_readability_table(results)),
        curve_table="\n".join(_curve_table(results)),
        speed_table="\n".join(_speed_table(speed)) if speed else "(not measured)",
        speed_headline="\n".join(_speed_headline(speed)) if speed else "(not measured)",
        speed_load=(
            f"load average {speed['machine']['load_before']} before, "
            f"{speed['machine']['load_after']} after"
            if speed
            else ""
        ),
        charts="\n\n".join(_charts(results, speed)),
    )
    (DOCS / "benchmarks.md").write_text(text, encoding="utf-8")
    print(f"wrote {DOCS / 'benchmarks.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
