"""The `tiermem` command: reads the command line, runs its handler (`handlers`), and turns
what fails into one line on stderr and an exit status.

The commands users run most are read without argparse (`plain`); any other line builds the
parser of its command alone (`parser`), so that `tiermem hot show` starts in tens of
milliseconds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..operations import OPERATIONS, Operation
from ..options import REQUIRED, options_of
from . import plain
from .handlers import (
    close_opened,
    cmd_operation,
    one_line,
    os_error,
    take_held,
    unaudited,
)

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace


def build_parser(argv: Sequence[str] | None = None) -> ArgumentParser:
    """The command line's parser; given the arguments, only what they run is built."""
    from .parser import build_parser as build

    return build(argv)


# The command lines read without argparse: hot tier reads and notes, and searches.
_PLAIN_COMMANDS = {
    *(("hot", v) for v in ("show", "unblock", "clear", "action", "decide", "block", "note")),
    ("search",),
}


def _plain_forms() -> dict[tuple[str, ...], plain.Form]:
    """The plain forms of `_PLAIN_COMMANDS`, read from their operations' requests."""
    forms: dict[tuple[str, ...], plain.Form] = {}
    for op in OPERATIONS:
        for words, fixed in _command_lines(op):
            if words in _PLAIN_COMMANDS:
                forms[words] = _form(op, words, fixed)
    return forms


def _command_lines(op: Operation) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """Each command line of an operation: its words, and the field its verb sets."""
    verbs = [(n, i) for n, i, _ in options_of(op.request) if i.cli == "verb"]
    if not verbs:
        return [(op.command, {})]
    name, item = verbs[0]
    return [((*op.command, verb), {name: value}) for verb, value, _ in item.verbs]


def _form(op: Operation, words: tuple[str, ...], fixed: dict[str, str]) -> plain.Form:
    """A command line of an operation, as `plain` reads it: as argparse holds it."""
    held = {"command": words[0], "door": op.door, **fixed}
    if len(words) > 1:
        held[f"{words[0]}_action"] = words[1]
    positionals: list[str] = []
    options: dict[str, plain.Takes] = {}
    defaults: dict[str, object] = {}
    hints = op.request.__dict__.get("__annotations__", {})  # noqa: RUF063 (as `parser`)
    for name, item, default in options_of(op.request):
        if item.cli in ("positional", "joined"):
            positionals.append(name + ("..." if item.cli == "joined" else ""))
        elif item.cli == "flag":
            flag = "--" + name.replace("_", "-")
            options[flag] = _takes(item.choices, hints[name])
            if not any(default is unsaid for unsaid in (REQUIRED, None, False)):  # 0 is said
                defaults[flag] = default
    if op.formats:
        options["--format"], defaults["--format"] = op.formats, op.formats[0]
    return plain.Form(held, positionals, options, cmd_operation, defaults)


def _takes(choices: tuple[str, ...] | None, hint: str) -> plain.Takes:
    if choices:
        return choices
    return {"bool": plain.SWITCH, "int": plain.INT}.get(hint, plain.ANY)


_PLAIN = _plain_forms()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run one command, map user errors to exit status 2.

    A reader that stops early (`tiermem log | head -1`) ends any command quietly with status
    0: what it wanted was printed, and the rest has nowhere to go.
    """
    from ..text.shown import Terminal

    stdout = sys.stdout
    sys.stdout = Terminal(stdout)  # memory text is shown, not run
    try:
        try:
            code = _main(argv)
        finally:  # here, not at exit, so that a closed pipe is seen as one (help exits too)
            sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return 0
    finally:
        sys.stdout = stdout
    return code


def _main(argv: Sequence[str] | None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = plain.parse(arguments, _PLAIN) or build_parser(arguments).parse_args(arguments)
    try:
        return _run(args)
    finally:
        close_opened()


def _run(args: Namespace) -> int:
    """The command's handler, its failures said in one line."""
    from ..errors import TiermemError

    try:
        code: int = args.handler(args)
    except TiermemError as exc:
        _fail(str(exc))
        return exc.exit_code
    except BrokenPipeError:
        raise
    except OSError as exc:  # a path the system refuses (too long, not allowed), a full disk
        _fail(os_error(exc))
        return 2
    except KeyboardInterrupt:
        print("tiermem: interrupted", file=sys.stderr)
        return 130
    for line in take_held():
        print(line, file=sys.stderr)
    if missed := unaudited():
        print(f"tiermem: warning: {missed}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    """Point standard output at /dev/null: the interpreter's last flush at exit then has
    nowhere to fail (it would print a warning and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout replaced by something without a descriptor
        pass


def _fail(reason: str) -> None:
    """A failed command's one line, with the audit lines it could not write, if any."""
    missed = unaudited()
    said = f"{reason}; {missed}" if missed else reason
    print(f"tiermem: error: {one_line(said)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
