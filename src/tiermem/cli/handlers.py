"""The commands' handlers: each calls `Memory` and prints what it returns.

A handler imports what it runs when it runs, so that `tiermem hot show` starts in tens of
milliseconds; `main` reads the command line and hands it to one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from argparse import Namespace
    from typing import Any

    from ..memory import Memory
    from ..options import Operation
    from ..results import ImportReport, SearchHit, SessionReport


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


def _skipped(inputs: Sequence[str]) -> None:
    """Inputs a command left out, one line each on stderr, the same way for every command."""
    for what in inputs:
        _tell(f"tiermem: skipped {one_line(what)}")


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
    """An operation's command (`options.OPERATIONS`): its `Memory` method called with the
    request's fields, its result printed by its printer (`_PRINTERS`), else as it says."""
    from ..options import operation

    op = operation(args.door)
    return _PRINTERS.get(op.prints, _printed)(args, op)


def _called(
    args: Namespace, op: Operation, mem: Memory | None = None, given: dict[str, Any] | None = None
) -> Any:
    """What the operation's `Memory` method returns for the fields the command line gave
    (or `given`, read from it already)."""
    from ..options import door_values

    found = door_values(op.request, given or _request_values(args, op.request))
    return getattr(mem or _memory(args), op.door)(**found)


def _printed(args: Namespace, op: Operation) -> int:
    """A result (or a list of them) as JSON when asked, else its text, its own lines, or
    each one's JSON on a line."""
    result = _called(args, op)
    if getattr(args, "format", "text") == "json":
        _print_json([r.to_json() for r in result] if isinstance(result, list) else result.to_json())
    elif isinstance(result, str):
        sys.stdout.write(result)
    else:
        _say(
            [
                line
                for each in (result if isinstance(result, list) else [result])
                for line in _lines(each)
            ]
        )
    return 0


def _lines(result: Any) -> list[str]:
    """What a result says: its messages, its lines, or its JSON on one line."""
    if hasattr(result, "messages"):
        return list(result.messages)
    if hasattr(result, "lines"):
        return list(result.lines())
    import json

    return [json.dumps(result.to_json(), ensure_ascii=False)]


def _written(args: Namespace, op: Operation) -> int:
    """A hot write: what it did, and what it masked, on stderr."""
    report = _called(args, op)
    _say(report.messages)
    if report.redactions:
        _tell(f"redacted: {', '.join(report.redactions)}")
    return 0


def _markdown(args: Namespace, op: Operation) -> int:
    view = _called(args, op)
    if args.format == "json":
        _print_json(view.to_json())
    else:
        print(view.markdown)
    return 0


def _searched(args: Namespace, op: Operation) -> int:
    mem = _memory(args)
    given = _request_values(args, op.request)
    hits = _called(args, op, mem, given)
    query = given["query"]
    gone = mem.forgotten(query, hits)
    if args.format == "json":
        _print_json([h.to_json() for h in hits])
        for line in gone:  # the results' shape stays a list: what was forgotten is said aside
            print(f"tiermem: note: {line}", file=sys.stderr)
        return 0
    for line in gone:
        print(line)
    if not hits and not gone:
        print("no matches")
    from ..search.hits import entry_ids

    whole = bool(entry_ids(query))  # a query of ids reads those entries, as JSON does
    for h in hits:
        _print_hit(h, whole)
    return 0


def _print_hit(h: SearchHit, whole: bool) -> None:
    mark = "  (untrusted source)" if h.trust else ""
    print(f"{h.score:7.2f}  {h.tier:<7} {h.agent or '-':<12} {h.id}  {h.title[:70]}{mark}")
    if whole:
        print(f"         {h.path}")
        print(f"         from: {h.origin}")
        print(f"\n{h.text.rstrip()}\n")
        return
    print(f"         {h.path}: {' '.join(h.text.split())[:160]}")
    print(f"         from: {h.origin}")


def _reported(args: Namespace, op: Operation) -> int:
    result = _called(args, op)
    if args.format == "json":
        _print_json(result.to_json())
    else:
        where = "; local to this clone, git-ignored" if result.local else ""
        print(f"report: {result.path} ({result.bytes:,} bytes; {result.entries:,} entries{where})")
    if args.open:
        import webbrowser
        from pathlib import Path

        webbrowser.open(Path(result.path).as_uri())
    return 0


def _reindexed(args: Namespace, op: Operation) -> int:
    lines = _called(args, op)
    if args.check:
        _say(lines or ["index matches the files"])
        return 1 if lines else 0
    _say(lines)
    return 0


def _doctored(args: Namespace, op: Operation) -> int:
    report = _called(args, op)
    if args.format == "json":
        _print_json(report.to_json())
    else:
        _say([one_line(line) for line in report.lines()])
    return 1 if report.problems else 0


def _tabled(args: Namespace, op: Operation) -> int:
    """Stats and the spawn log: JSON, or their tables."""
    from ..render import tables

    found = _called(args, op)
    if args.format == "json":
        _print_json(found.to_json())
    elif op.door == "stats":
        tables.stats(found)
    else:
        _say(tables.spawn_log(found))
    _skipped(getattr(found, "skipped", []))
    return 0


def _sessions(args: Namespace, op: Operation) -> int:
    if bool(args.agent) == bool(args.all):
        raise _usage("give one AGENT or --all")
    skipped: list[str] = []
    if not args.all:
        results = [_called(args, op)]
    else:
        results, skipped = _end_each(_memory(args))
    if args.format == "json":
        _print_json([r.to_json() for r in results])
    else:
        _say([_session_line(r) for r in results])
    _skipped(skipped)
    return 1 if skipped else 0


def _session_line(r: SessionReport) -> str:
    if not r.cold:
        return f"{r.agent}: nothing in hot to end"
    return (
        f"{r.agent}: session -> cold {', '.join(r.cold)} ({r.raw_bytes} -> "
        f"{r.summary_bytes} bytes); {len(r.knowledge)} structured, "
        f"{len(r.decisions)} decision(s); {len(r.carried)} blocker(s) carried"
    )


def _scribe_ran(args: Namespace, op: Operation) -> int:
    report = _called(args, op)
    if args.format == "json":
        _print_json(report.to_json())
    else:
        _say(report.lines())
    _skipped([*report.inbox_skipped, *report.skipped])
    return 0


def _end_each(mem: Memory) -> tuple[list[SessionReport], list[str]]:
    """Every agent's session ended; one that cannot be (a damaged file it needs) is skipped
    and said, and the others end all the same."""
    from ..errors import TiermemError

    results, skipped = [], []
    for agent in mem.agents():
        try:
            results.append(mem.end_session(agent))
        except TiermemError as exc:
            skipped.append(f"{agent}: {exc}")
    return results, skipped


def _decided(args: Namespace, op: Operation) -> int:
    ids = _called(args, op)
    print(f"decision recorded: {', '.join(ids)} (cold/team.md and .squad/decisions.md)")
    return 0


def _wiki_entry(args: Namespace, op: Operation) -> int:
    entry = _called(args, op)
    print(f"wiki: {entry.id} written to {entry.path} ({entry.cls})")
    return 0


def _pages(args: Namespace, op: Operation) -> int:
    pages = _called(args, op)
    if args.format == "json":
        _print_json([p.to_json() for p in pages])
        return 0
    rows = [
        f"{p.topic:<24} {p.active:>4} active / {p.entries:>4} entries  {p.bytes:>8} bytes"
        for p in pages
    ]
    _say(rows or ["no wiki pages yet"])
    return 0


def _spawned(args: Namespace, op: Operation) -> int:
    result = _called(args, op)
    if args.format == "json":
        _print_json(result.to_json())
    else:
        sys.stdout.write(result.prompt)
    return 0


def _imported(args: Namespace, op: Operation) -> int:
    args.progress = args.format == "text" and sys.stderr.isatty()
    report = _called(args, op, _memory_for_import(args))
    if args.format == "json":
        _print_import_json(report)
    else:
        from ..render import tables

        tables.imported(report)
    _skipped(report.skipped)
    return 1 if report.skipped else 0


def _print_import_json(report: ImportReport) -> None:
    """An import's JSON, its sections written one by one: a dry run of a history of 100,000
    sections says where each goes without holding them all as JSON at once."""
    import dataclasses
    import json

    text = json.dumps(dataclasses.replace(report, sections=[]).to_json(), indent=2)
    head, empty, tail = text.rpartition('"sections": []')
    assert empty, "sections is the report's last field"
    sys.stdout.write(head + '"sections": [')
    for n, row in enumerate(report.sections):
        sys.stdout.write(("," if n else "") + "\n    " + json.dumps(row.to_json()))
    sys.stdout.write(("\n  ]" if report.sections else "]") + tail + "\n")


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


# How each operation's command prints its result (`options.Operation.prints`).
_PRINTERS: dict[str, Callable[[Namespace, Operation], int]] = {
    "written": _written,
    "markdown": _markdown,
    "search": _searched,
    "report": _reported,
    "reindex": _reindexed,
    "doctor": _doctored,
    "stats": _tabled,
    "log": _tabled,
    "sessions": _sessions,
    "scribe_run": _scribe_ran,
    "decided": _decided,
    "wiki_entry": _wiki_entry,
    "pages": _pages,
    "spawn": _spawned,
    "imported": _imported,
}
