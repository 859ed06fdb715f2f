"""The commands' handlers: each calls `Memory` and prints what it returns. An operation's
command is one handler (`cmd_operation`) that hands its printer (`render.printers`) the
command line (`_Command`): the result, the flags, where a line said aside goes.

A handler imports what it runs when it runs, so that `tiermem hot show` starts in tens of
milliseconds; `main` reads the command line and hands it to one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from argparse import Namespace
    from typing import Any

    from ..memory import Memory
    from ..operations import Operation


def os_error(exc: OSError) -> str:
    """What the system refused, and where (a path shortened to stay readable)."""
    where = str(exc.filename or "")
    where = where if len(where) <= 120 else where[:60] + "..." + where[-40:]
    return f"{exc.strerror or exc}" + (f": {where}" if where else "")


def one_line(message: str) -> str:
    """An error message as one printable line: argparse and paths quote input as given."""
    from ..text.shown import printable

    return printable(message)


# The stores this command opened, and the lines they had to say (an input skipped, a
# fallback): main says them, and the audit lines a full disk refused, with the command's
# outcome, so that a failure is one line (a spawn's sync may skip a link before a damaged
# config.toml stops it).
_OPENED: list[Memory] = []
_HELD: list[str] = []


def _memory(args: Namespace, ends: bool = True) -> Memory:
    """The store a command works on; a command that `ends` says the audit lines a full disk
    refused with its outcome (a server says each when it happens)."""
    from ..memory import Memory

    return _opened(Memory(getattr(args, "root", None), now=getattr(args, "now", None)), ends)


def _opened(mem: Memory, ends: bool = True) -> Memory:
    if ends:
        mem.context.hold_unaudited = True
        mem.context.warn = _HELD.append
        _OPENED.append(mem)
    return mem


def take_held() -> list[str]:
    """The lines this command's stores had to say, in order (taken: said once)."""
    taken = list(_HELD)
    _HELD.clear()
    return taken


def unaudited() -> str:
    """The audit lines a full disk refused in this command, in a few words (or nothing)."""
    missed = [line for mem in _OPENED for line in mem.context.unaudited]
    if not missed:
        return ""
    return f"{len(missed)} audit line(s) not written ({missed[0]})"


def close_opened() -> None:
    """Close the stores this command opened. A command run in process (by a test, by a
    program embedding tiermem) that left them to the garbage collector would have SQLite
    fold the index's log into it at some later moment, under whatever runs then."""
    while _OPENED:
        _OPENED.pop().close()
    _HELD.clear()  # a failed command's, left unsaid


def _read_text(value: str, what: str) -> str:
    """TEXT arguments: '-' reads stdin; argv text with undecodable bytes is rejected."""
    from ..storage import validate

    if value == "-":
        return validate.decode(sys.stdin.buffer.read(validate.MAX_INPUT_BYTES + 1), what)
    return validate.text(value, what)


def _print_json(data: object) -> None:
    from ..text.shown import as_json  # only JSON output needs it: text commands do without

    print(as_json(data))


def _say(lines: Sequence[str]) -> None:
    for line in lines:
        print(line)


def _tell(line: str) -> None:
    """A line for stderr, said with the command's outcome (see `_HELD`)."""
    _HELD.append(line)


# --- handlers -------------------------------------------------------------------------


def cmd_init(args: Namespace) -> int:
    from ..memory import Memory

    root = getattr(args, "root", None) or os.environ.get("TIERMEM_ROOT") or _root_above()
    if args.merge_driver:
        from pathlib import Path

        from ..storage import merge

        top = merge.repository_top(Path(root))  # outside git: refused before anything is made
    mem, created = Memory.init(root, now=getattr(args, "now", None))
    lines = [f"created {c}" for c in created]
    if args.merge_driver:
        lines += merge.install(top, mem.layout.memory)
    _say(lines or [f"tiermem store already set up in {root}"])
    return 0


def _root_above() -> str:
    """Where `init` sets up without --root: the .squad/ above, as every command finds it,
    else the working directory."""
    from ..errors import StoreError
    from ..storage.layout import discover_root

    try:
        return str(discover_root())
    except StoreError:
        return os.getcwd()


def cmd_merge_file(args: Namespace) -> int:
    from pathlib import Path

    from ..storage import merge

    paths = [Path(p) for p in (args.base, args.ours, args.theirs)]
    for path in paths:
        if not path.is_file():
            raise _usage(f"no such file: {path}")
    if not merge.merge_file(*paths):
        _tell(f"warning: {args.ours} is not a tier file; merged line by line (union)")
    return 0


def cmd_operation(args: Namespace) -> int:
    """An operation's command (`operations.OPERATIONS`): its result, the answer to the request
    the command line gives, printed by the operation's printer (`render.printers`)."""
    from ..operations import operation
    from ..render import printers

    op = operation(args.door)
    return (op.prints or printers.own)(_Command(args, op))


class _Command:
    """One command line of an operation, as its printer asks of it (`printers.Command`)."""

    def __init__(self, args: Namespace, op: Operation) -> None:
        self.args, self.op = args, op
        self.format: str = getattr(args, "format", "text")
        self._given: dict[str, Any] | None = None
        self._mem: Memory | None = None

    def flag(self, name: str) -> Any:
        return getattr(self.args, name, None)

    def given(self, name: str) -> Any:
        from ..options import REQUIRED

        if self._given is None:  # read once: a field may come from stdin
            self._given = _request_values(self.args, self.op.request)
        found = self._given[name]
        return None if found is REQUIRED else found  # left out (`--all` stands for it)

    def memory(self) -> Memory:
        if self._mem is None:
            self._mem = _memory(self.args)
        return self._mem

    def result(self, setting_up: bool = False, **fields: Any) -> Any:
        from ..options import options_of, request_from

        mem = _memory_for_import(self.args) if setting_up else self.memory()
        asked = {name: self.given(name) for name, _, _ in options_of(self.op.request)}
        return mem.answer(self.op.door, request_from(self.op.request, asked | fields))

    def for_every_agent(self) -> tuple[list[Any], list[str]]:
        """The result for every agent, one at a time; one that fails (a damaged file it
        needs) is skipped and said, and the others go on all the same."""
        from ..errors import TiermemError

        results, skipped = [], []
        for agent in self.memory().agents():
            try:
                results.append(self.result(agent=agent))
            except TiermemError as exc:
                skipped.append(f"{agent}: {exc}")
        return results, skipped

    def tell(self, line: str) -> None:
        _tell(line)


def _memory_for_import(args: Namespace) -> Memory:
    from ..memory import Memory
    from ..storage.layout import discover_root

    root = discover_root(getattr(args, "root", None))
    if not args.dry_run:
        # Idempotent: finishes a broken init; and an import writes only under .squad/memory.
        Memory.init(root, now=getattr(args, "now", None), squad_files=False)
    return _opened(Memory(root, now=getattr(args, "now", None)))


def cmd_squad(args: Namespace) -> int:
    from ..squad.install import installer

    root = getattr(args, "root", None)
    if args.uninstall:
        if args.coordinator:
            raise _usage("--coordinator goes with an install or a --check, not with --uninstall")
        report = installer.uninstall(root)
    elif args.check:
        report = installer.check(root, coordinator=args.coordinator)
    else:
        report = installer.install(root, args.coordinator)
    if args.format == "json":
        _print_json({"action": report.action, "steps": [s.as_json() for s in report.steps]})
    else:
        _say(report.lines())
    return report.exit_code


def cmd_serve(args: Namespace) -> int:
    from ..server.mcp_server import serve

    serve(_memory(args, ends=False))
    return 0


def cmd_bench(args: Namespace) -> int:
    from ..bench.runners import run

    return run(args)


def cmd_demo(args: Namespace) -> int:
    from .demo import run

    return run(getattr(args, "root", None), keep=args.keep)


def _usage(message: str) -> Exception:
    from ..errors import UsageError

    return UsageError(message)


def _request_values(args: Namespace, request: type) -> dict[str, Any]:
    """The fields of a request from parsed flags: words joined, `-` read from stdin where a
    field says so."""
    from ..options import options_of, values

    found = values(request, vars(args))
    for name, item, default in options_of(request):
        value = found[name]
        if item.cli == "joined" and isinstance(value, tuple):
            value = value[0] if value == ("-",) else " ".join(value)
        if item.stdin and isinstance(value, str) and value is not default:
            value = _read_text(value, item.what or name)
        found[name] = value
    return found
