"""Fuzzed command lines for every command and option, on an intact store.

tests/hostile.py holds hand-picked hostile values; these are drawn widely: any command, any
option (known or not), values of every shape (huge numbers, NUL bytes, very long names,
paths that are files, links or missing), in any order. Each call must end with exit 0, 1 or
2, and a failure (2) with one line on stderr. tests/test_hostile_cli.py draws a few hundred;
tests/stress.py (`fuzz`) tens of thousands.
"""

from __future__ import annotations

import random
import traceback
from pathlib import Path

from reliability import cli

WORDS = ["login", "reader", "release", "flight", "eecom", "a-0123456789", "c-0123456789"]
NAMES = [
    "flight",
    "eecom",
    "release",
    "team",
    "con",
    "NUL",
    "com1.md",
    "..",
    "a/b",
    "x" * 64,
    "x" * 300,
    "é" * 100,
    "fl\x00ight",
    "-",
    "--",
    "",
    "\udcff",
    "lpt9",
]
NUMBERS = ["0", "1", "-1", "10", "4000", "99999999999999999999999", "1e9", "nan", "inf", "0x10"]
CLOCKS = ["2026-03-02T10:00:00Z", "0001-01-01", "9999-12-31T23:59:59Z", "2026-02-30", "now", ""]


def _value(rng: random.Random, base: Path) -> str:
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(NAMES)
    if roll < 0.45:
        return rng.choice(NUMBERS)
    if roll < 0.55:
        return rng.choice(CLOCKS)
    if roll < 0.7:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    if roll < 0.8:
        return rng.choice(_paths(base))
    alphabet = "ab -_./\\<>#*:\n\t\x00\x1b\u202e\u00e9%$`'\""
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))


def _paths(base: Path) -> list[str]:
    return [
        str(base),
        str(base / "missing"),
        str(base / ".squad" / "memory" / "config.toml"),
        str(base / ("y" * 300)),
        "/" + "z" * 5000,
        "/dev/null",
        "/proc/self/mem",
        "",
    ]


COMMANDS: list[tuple[list[str], list[str]]] = [
    (["hot", "set", "@"], ["--task", "--why", "--talking-to"]),
    (["hot", "note", "@", "@"], ["--source"]),
    (["hot", "action", "@", "@"], ["--source"]),
    (["hot", "decide", "@", "@"], ["--source"]),
    (["hot", "block", "@", "@"], ["--source"]),
    (["hot", "unblock", "@", "@"], []),
    (["hot", "show", "@"], ["--format"]),
    (["hot", "clear", "@"], []),
    (["search", "@"], ["--agent", "--tier", "--limit", "--format"]),
    (["reindex"], ["--check!"]),
    (["stats"], ["--format"]),
    (["scribe", "end-session", "@"], ["--all!", "--format"]),
    (["scribe", "run"], ["--dry-run!", "--format"]),
    (["decision", "add", "@"], ["--by"]),
    (["wiki", "write", "@", "@"], ["--by"]),
    (["wiki", "list"], ["--format"]),
    (["wiki", "show", "@"], []),
    (
        ["spawn", "@"],
        [
            "--task",
            "--why",
            "--criteria",
            "--include-cold!",
            "--include-wiki",
            "--auto!",
            "--budget",
            "--charter!",
            "--refs!",
            "--inline!",
            "--format",
        ],
    ),
    (["import", "squad"], ["--dry-run!", "--format"]),
    (["merge-file", "@", "@", "@"], []),
    (["doctor"], ["--repair!", "--format"]),
    (["squad", "install"], ["--check!"]),
    (["@"], []),
    ([], []),
]


def random_argv(rng: random.Random, base: Path) -> list[str]:
    """One command line: a command with its positionals, some options, maybe junk."""
    shape, options = rng.choice(COMMANDS)
    argv = [_value(rng, base) if part == "@" else part for part in shape]
    for option in rng.sample(options, k=rng.randint(0, len(options))):
        if option.endswith("!"):
            argv.append(option[:-1])
        else:
            argv += [option, _value(rng, base)]
    if rng.random() < 0.1:
        argv.insert(rng.randrange(len(argv) + 1), _value(rng, base))
    front: list[str] = []
    if rng.random() < 0.2:
        front += ["--now", rng.choice(CLOCKS)]
    if rng.random() < 0.05:
        front += ["--root", rng.choice(_paths(base))]
    else:
        front += ["--root", str(base)]
    return front + argv


def verdict(argv: list[str], stdin: bytes = b"") -> tuple[str, str]:
    """("ok" or what went wrong, the detail) for one call of the CLI in this process."""
    try:
        code, _, err = cli(argv, stdin)
    except BaseException as exc:  # SystemExit is handled by cli(); anything else is a bug
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"traceback: {type(exc).__name__}", traceback.format_exc()[-1500:]
    if code not in (0, 1, 2):
        return f"exit status {code}", err[-300:]
    if code == 2 and (err.count("\n") != 1 or not err.strip()):
        return "failure not in one line", err[-300:]
    return "ok", ""
