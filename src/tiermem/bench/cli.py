"""`tiermem bench`: replay real teams, evaluate probes, time the hot paths."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .corpus import corpus_folder


def _emit(data: dict[str, Any], fmt: str, text: Callable[[dict[str, Any]], None]) -> None:
    if fmt == "json":
        print(json.dumps(data, indent=2))
    else:
        text(data)


def run(args: argparse.Namespace) -> int:
    """Run the bench command the arguments name."""
    return _COMMANDS[args.bench_action](args)


def _locomo(args: argparse.Namespace) -> int:
    from .locomo import command

    return command(args)


def _shape(args: argparse.Namespace) -> int:
    from .shape import command

    return command(args)


def _import_scale(args: argparse.Namespace) -> int:
    from .import_scale import command

    return command(args)


def _speed(args: argparse.Namespace) -> int:
    from .speed import run_speed

    return run_speed(args)


def _all(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from .full import run_all

    if not args.corpora:
        raise UsageError(f"bench all needs --corpora DIR (or {CORPORA_VARIABLE})")
    corpora = Path(args.corpora).expanduser().resolve()
    if not corpora.is_dir():
        raise UsageError(f"{args.corpora} is not a folder of corpora")
    out = Path(args.out).resolve()
    results = run_all(corpora, out, args.limit)
    if args.format == "json":
        print(json.dumps(results, indent=2))
    else:
        _print_all(results)
        print(f"every figure: {out / 'results.json'}")
    return 0


def _print_all(results: dict[str, Any]) -> None:
    """Per team: spawns and search after replay, then after import against what the import
    kept (ceilings), the best packing (oracle) and Squad's own spawn."""
    print(f"{'replay':<28}{'coverage':>9}{'recall@5':>9}{'grep':>7}{'tokens p50/p90':>16}")
    for name, figures in results["corpora"].items():
        f = figures["replay"]
        t = f["tiermem"]
        tokens = f"{t['tokens_median']:.0f}/{t['tokens_p90']:.0f}"
        print(
            f"{name:<28}{t['coverage_mean']:>9.3f}{t['recall_at_5']:>9.3f}"
            f"{f['grep']['recall_at_5']:>7.3f}{tokens:>16}"
        )
    print()
    print_forward([f["forward"] for f in results["corpora"].values() if "forward" in f])
    print()
    print(
        f"{'import':<28}{'coverage':>9}{'ceiling':>8}{'oracle':>7}{'squad':>7}"
        f"{'recall@5':>9}{'ceiling':>8}{'tokens p50/p90':>16}{'squad spawn before/after':>26}"
    )
    for name, figures in results["corpora"].items():
        f = figures["import"]
        t, spawn = f["tiermem"], f["squad_spawn"]
        tokens = f"{t['tokens_median']:.0f}/{t['tokens_p90']:.0f}"
        squad = f"{spawn['before_median']:.0f}/{spawn['after_median']:.0f}"
        print(
            f"{name:<28}{t['coverage_mean']:>9.3f}{f['import_ceiling']:>8.3f}"
            f"{f['oracle']['coverage_mean']:>7.3f}{f['squad_as_is']['coverage_mean']:>7.3f}"
            f"{t['recall_at_5']:>9.3f}{f['recall_ceiling']:>8.3f}{tokens:>16}{squad:>26}"
        )


def _forward(args: argparse.Namespace) -> int:
    from .forward import run_corpora

    corpora = [corpus_folder(c) for c in args.corpus]
    out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="tiermem-fwd-"))
    runs = run_corpora(corpora, out, args.limit, progress=args.format == "text")
    data = {"corpora": [r.summary() for r in runs], "out": str(out)}
    _emit(data, args.format, lambda d: print_forward(d["corpora"]))
    return 0


def print_forward(summaries: list[dict[str, Any]]) -> None:
    """Forward coverage per corpus: tiermem and each baseline at the spawn's own tokens."""
    print(
        f"{'forward':<28}{'probes':>7}{'tiermem':>8}{'recent':>7}{'bm25':>6}{'oracle':>7}"
        f"{'all':>6}{'ratio':>6}{'tokens p50/p90':>16}{'wins/losses':>12}"
    )
    for s in summaries:
        c = s["coverage"]
        tokens = f"{s['tokens_median']:.0f}/{s['tokens_p90']:.0f}"
        ratio = s["ratio_to_best_baseline"]
        print(
            f"{s['corpus']:<28}{s['probes']:>7}{c['tiermem']:>8.3f}{c['recent']:>7.3f}"
            f"{c['bm25']:>6.3f}{c['oracle']:>7.3f}{c['everything']:>6.3f}"
            f"{ratio if ratio is not None else '-':>6}{tokens:>16}"
            f"{s['wins']:>6}/{s['losses']:<5}"
        )
    print("ratio: tiermem's mean coverage over the better of recent and bm25 at the same tokens")


def _replay(args: argparse.Namespace) -> int:
    from .replay import replay

    corpus = corpus_folder(args.corpus)
    out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="tiermem-replay-"))
    summary = replay(corpus, out, progress=args.format == "text")
    _emit(summary.__dict__, args.format, _print_replay)
    return 0


def _print_replay(data: dict[str, Any]) -> None:
    print(
        f"replayed {data['corpus']}: {data['events']} events in {data['sessions']} sessions, "
        f"{data['seconds']} s; store left in {data['store']}"
    )
    run = data["run"]
    print(
        f"final Scribe run: {len(run['superseded'])} superseded, {run['promoted']} promoted, "
        f"{len(run['expired'])} expired, {len(run['over_budget'])} over cold budget"
    )
    for line in data["skipped"][:10]:
        print(f"tiermem: skipped {line}", file=sys.stderr)


def _probes(args: argparse.Namespace) -> int:
    from ..clock import format_time
    from .corpus import last_date, load_events
    from .evaluate import evaluate
    from .probes import build_probes

    corpus = corpus_folder(args.corpus)
    events = load_events(corpus)
    probes = build_probes(events)[: args.limit] if args.limit else build_probes(events)
    now = format_time(last_date(events))
    store, mode = _store_for(args, corpus)
    figures = evaluate(corpus, store, events, probes, now, mode, progress=args.format == "text")
    data = figures.summary()
    data["store"] = str(store)
    _emit(data, args.format, _print_probes)
    return 0


def _store_for(args: argparse.Namespace, corpus: Path) -> tuple[Path, str]:
    if args.store:
        return Path(args.store).resolve(), "import" if args.imported else "replay"
    out = Path(tempfile.mkdtemp(prefix="tiermem-probes-"))
    if args.imported:
        from .imported import import_snapshot

        import_snapshot(corpus, out)
        return out, "import"
    from .replay import replay

    replay(corpus, out, progress=args.format == "text")
    return out, "replay"


def _print_probes(data: dict[str, Any]) -> None:
    t, s, f, g = data["tiermem"], data["squad_as_is"], data["full_history"], data["grep"]
    print(f"{data['corpus']} ({data['mode']}), {data['probes']} probes")
    print(f"{'':<14}{'tokens p50':>11}{'tokens p90':>11}{'coverage':>10}{'recall@5':>10}")
    print(
        f"{'tiermem':<14}{t['tokens_median']:>11.0f}{t['tokens_p90']:>11.0f}"
        f"{t['coverage_mean']:>10.3f}{t['recall_at_5']:>10.3f}"
    )
    print(
        f"{'squad-as-is':<14}{s['tokens_median']:>11.0f}{s['tokens_p90']:>11.0f}{s['coverage_mean']:>10.3f}"
    )
    print(
        f"{'full history':<14}{f['tokens_median']:>11.0f}{f['tokens_p90']:>11.0f}"
        f"{f['coverage_mean']:>10.3f}"
    )
    print(f"{'grep':<14}{'':>11}{'':>11}{'':>10}{g['recall_at_5']:>10.3f}")
    print(f"tiermem tokens / squad-as-is: {data['token_ratio_vs_squad']:.3f}")


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "replay": _replay,
    "probes": _probes,
    "forward": _forward,
    "all": _all,
    "locomo": _locomo,
    "shape": _shape,
    "import-scale": _import_scale,
    "speed": _speed,
}

# --- the command line ---------------------------------------------------------------------

# Where `bench all` finds its corpora and `bench speed` its LoCoMo file when no flag names
# them: a benchmark reads nothing outside what the user names.
CORPORA_VARIABLE = "TIERMEM_CORPORA"
LOCOMO_VARIABLE = "TIERMEM_LOCOMO"
Add = Callable[[str, str], Any]  # a bench command's parser, by name and help


def register(add: Add) -> None:
    """Add the bench commands to `tiermem bench` (`add` makes each command's parser)."""
    _replay_parsers(add)
    _all_parser(add)
    _locomo_parser(add)
    _import_parsers(add)
    _speed_parser(add)


def _format(parser: Any, help_text: str | None = None) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help=help_text)


def _replay_parsers(add: Add) -> None:
    replay = add("replay", "replay a corpus session by session into a store")
    replay.add_argument(
        "corpus", metavar="CORPUS", help="folder holding sessions.jsonl and .squad/"
    )
    replay.add_argument(
        "--out", metavar="DIR", help="where to leave the store (default: a temp dir)"
    )
    _format(replay)
    probes = add("probes", "spawn coverage, tokens and recall@5 against baselines")
    probes.add_argument("corpus", metavar="CORPUS")
    probes.add_argument(
        "--store",
        metavar="DIR",
        help="a replayed store to evaluate (default: replay into a temp dir first)",
    )
    probes.add_argument(
        "--import",
        dest="imported",
        action="store_true",
        help="evaluate an import of the corpus's .squad/ snapshot instead of a replay",
    )
    probes.add_argument(
        "--limit", type=int, metavar="N", help="only the first N probes (quick runs)"
    )
    _format(probes)
    forward = add("forward", "does a spawn carry what the team knew and then used (METRICS.md)")
    forward.add_argument("corpus", nargs="+", metavar="CORPUS")
    forward.add_argument(
        "--out", metavar="DIR", help="where the replayed stores go (default: a temp dir)"
    )
    forward.add_argument(
        "--limit", type=int, metavar="N", help="only the first N probes per corpus (quick runs)"
    )
    _format(forward)


def _all_parser(add: Add) -> None:
    every = add("all", "every corpus replayed and imported, probed and measured")
    every.add_argument(
        "--corpora",
        default=os.environ.get(CORPORA_VARIABLE),
        metavar="DIR",
        help=f"folder of corpus folders (default: ${CORPORA_VARIABLE}; one of them is needed)",
    )
    every.add_argument(
        "--out",
        default="bench-out",
        metavar="DIR",
        help="where stores and results.json go (default: bench-out)",
    )
    every.add_argument("--limit", type=int, metavar="N", help="only the first N probes per corpus")
    _format(
        every, "text: a table per mode against the ceilings; json: every figure (default: text)"
    )


def _locomo_parser(add: Add) -> None:
    locomo = add("locomo", "search recall and spawn coverage on LoCoMo conversations")
    locomo.add_argument("file", metavar="FILE", help="a LoCoMo JSON file (e.g. locomo10.json)")
    locomo.add_argument("--out", metavar="DIR", help="stores and results (default: a temp dir)")
    _format(locomo)
    locomo.add_argument("--agents", choices=("conversation", "speaker"), default="conversation")
    locomo.add_argument("--turns-per-note", type=int, default=5, metavar="N")
    locomo.add_argument(
        "--dated", action=argparse.BooleanOptionalAction, default=True, help="date in each note"
    )
    locomo.add_argument("--budget", type=int, metavar="TOKENS", help="spawn budget")
    locomo.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="store setting"
    )
    locomo.add_argument("--workers", type=int, metavar="N", help="processes (default: cpus)")
    locomo.add_argument("--chart", metavar="PNG", help="draw the figures (plot extra)")


def _import_parsers(add: Add) -> None:
    """The bench commands of the import: the shape of memory it makes, and its scale."""
    shape = add("shape", "what an import makes of each corpus's memory")
    shape.add_argument("corpus", nargs="+", metavar="CORPUS")
    _format(shape)
    scale = add("import-scale", "import of one generated 50 MB history")
    scale.add_argument(
        "--learnings", type=int, default=98_640, help="sections of the history (default 98,640)"
    )
    scale.add_argument("--out", metavar="DIR", help="where the store goes (default: a temp dir)")
    _format(scale)


def _speed_parser(add: Add) -> None:
    speed = add("speed", "latency and throughput on generated stores")
    speed.add_argument("--sizes", default="1000,10000,100000", help="store sizes in entries")
    speed.add_argument("--runs", type=int, default=15, help="repetitions per figure (default 15)")
    speed.add_argument(
        "--locomo",
        default=os.environ.get(LOCOMO_VARIABLE, ""),
        metavar="FILE",
        help="LoCoMo conversations to write note by note (default: "
        f"${LOCOMO_VARIABLE}; none: they are left out)",
    )
    _format(speed)
