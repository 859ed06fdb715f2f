"""The command line of `tiermem bench`: each command's parser, registered by `register`
when the CLI builds `bench` (its runners are in `bench.runners`, imported when one runs)."""

from __future__ import annotations

import argparse
import os

TYPE_CHECKING = False  # typing is not imported to build the command line
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Add = Callable[[str, str], Any]  # a bench command's parser, by name and help

# Where `bench all` finds its corpora and `bench speed` its LoCoMo file when no flag names
# them: a benchmark reads nothing outside what the user names.
CORPORA_VARIABLE = "TIERMEM_CORPORA"
LOCOMO_VARIABLE = "TIERMEM_LOCOMO"


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
    forward.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="N probes per corpus drawn at random from all of them (all when fewer)",
    )
    forward.add_argument(
        "--seed", type=int, default=7, metavar="S", help="the draw of --sample (default: 7)"
    )
    forward.add_argument(
        "--prompts",
        metavar="DIR",
        help="write each probe's prompt, with the facts it carries, to DIR/CORPUS/",
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
    fresh = add("fresh-clone", "the first commands on fresh clones of a large store")
    fresh.add_argument(
        "--entries", type=int, default=100_000, help="entries in the store (default 100,000)"
    )
    fresh.add_argument("--runs", type=int, default=5, help="fresh clones measured (default 5)")
    fresh.add_argument(
        "--store",
        metavar="DIR",
        help="where the store's git repository is made, or reused (default: a temp dir)",
    )
    fresh.add_argument(
        "--against",
        metavar="DIR",
        help="another tiermem's src folder, run in turns with this one",
    )
    _format(fresh)
