"""`tiermem bench`: replay real teams, evaluate probes, time the hot paths."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_parsers(sub: Any, add: Callable[..., argparse.ArgumentParser], parser_class: type) -> None:
    """Register the bench commands."""
    bench = add(sub, "bench", run, "benchmarks: replay a team, evaluate probes, measure speed")
    verbs = bench.add_subparsers(dest="bench_action", metavar="ACTION", required=True,
                                 parser_class=parser_class)
    replay = add(verbs, "replay", run, "replay a corpus session by session into a store")
    replay.add_argument("corpus", metavar="CORPUS", help="folder holding sessions.jsonl and .squad/")
    replay.add_argument("--out", metavar="DIR", help="where to leave the store (default: a temp dir)")
    replay.add_argument("--format", choices=("text", "json"), default="text")
    probes = add(verbs, "probes", run, "spawn coverage, tokens and recall@5 against baselines")
    probes.add_argument("corpus", metavar="CORPUS")
    probes.add_argument("--store", metavar="DIR", help="a replayed or imported store (default: replay now)")
    probes.add_argument("--format", choices=("text", "json"), default="text")
    speed = add(verbs, "speed", run, "latency and throughput on generated stores")
    speed.add_argument("--sizes", default="1000,10000,100000", help="store sizes in entries")
    speed.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    """Dispatch a bench command."""
    from ..errors import UsageError

    raise UsageError(f"bench {args.bench_action} is not available yet")
