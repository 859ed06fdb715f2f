"""`tiermem bench`: replay real teams, evaluate probes, time the hot paths."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .arguments import CORPORA_VARIABLE
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


def _fresh_clone(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from .fresh_clone import command

    if args.entries < 1 or args.runs < 1:
        raise UsageError("--entries and --runs must be at least 1")
    if args.against and not (Path(args.against) / "tiermem" / "__init__.py").is_file():
        raise UsageError(f"--against {args.against}: no tiermem package in that folder")
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
    from .import_quality import table

    print()
    corpora = results["corpora"].items()
    for line in table([(n, f["import_quality"]) for n, f in corpora if "import_quality" in f]):
        print(line)


def _forward(args: argparse.Namespace) -> int:
    from .forward import run_corpora

    corpora = [corpus_folder(c) for c in args.corpus]
    out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="tiermem-fwd-"))
    runs = run_corpora(
        corpora, out, args.limit, args.format == "text", sample=args.sample, seed=args.seed
    )
    if args.prompts:
        for forward in runs:
            forward.write_prompts(Path(args.prompts) / forward.corpus)
    data = {"corpora": [r.summary() for r in runs], "out": str(out)}
    _emit(data, args.format, lambda d: print_forward(d["corpora"]))
    return 0


def print_forward(summaries: list[dict[str, Any]]) -> None:
    """Forward coverage per corpus, raw / in prose: tiermem and each baseline at the spawn's
    own tokens, and the share of the prompts' memory lines that are fact lists or fragments."""
    print(
        f"{'forward (raw / in prose)':<26}{'probes':>7}{'tiermem':>14}{'recent':>14}"
        f"{'bm25':>14}{'lines':>14}{'oracle':>14}{'all':>14}{'ratio':>6}{'tokens p50/p90':>15}"
        f"{'wins/losses':>12}{'lists':>7}{'frags':>7}{'room':>6}{'left out (least room)':>23}"
    )
    for s in summaries:
        raw, read = s["coverage"], s["coverage_in_prose"]
        pairs = "".join(
            f"{f'{raw[k]:.3f} / {read[k]:.3f}':>14}"
            for k in ("tiermem", "recent", "bm25", "lines", "oracle", "everything")
        )
        tokens = f"{s['tokens_median']:.0f}/{s['tokens_p90']:.0f}"
        ratio = s["ratio_to_best_baseline"]
        print(
            f"{s['corpus']:<26}{s['probes']:>7}{pairs}{ratio if ratio is not None else '-':>6}"
            f"{tokens:>15}{s['wins']:>6}/{s['losses']:<5}"
            f"{s['fact_list_lines']:>7.1%}{s['fragments']:>7.1%}{s['room_used_median']:>6.0%}"
            f"{_left_out(s):>23}"
        )
    print(
        "ratio: tiermem's mean coverage in prose over the better of recent and bm25 in prose, "
        "at the same tokens; lines: the line packer of METRICS.md; lists, frags: fact-list "
        "lines and fragments among the prompts' memory lines; room: the median prompt's "
        "tokens over its budget; left out: the share of prompts listing memory as left out for "
        "room, and the least room such a prompt used (METRICS.md)"
    )


def _left_out(summary: dict[str, Any]) -> str:
    least = summary["left_out_room_used_min"]
    return f"{summary['left_out_share']:.0%} ({least:.0%})" if least is not None else "0%"


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
    from ..storage.clock import format_time
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
    "fresh-clone": _fresh_clone,
}
