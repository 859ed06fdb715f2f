"""How a command prints its operation's result. Each printer is named by the operation that
prints with it (`operations.Operation.prints`, the function itself) and handed the command
(`Command`): the result it asks for, the flags the command line gave, and where a line said
aside goes. A result that says it all itself (its text, its `lines()` or its JSON) prints
with `own`. A printer returns the command's exit status.

What a printer needs of the store it asks of the command, so that this module imports no
step and nothing at start-up: a command line builds only what it runs.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Protocol

    class Command(Protocol):
        """What a printer is handed: one command line and the operation it runs."""

        format: str  # the output format asked for ("text" when the command has no --format)

        def flag(self, name: str) -> Any:
            """A flag of the command line that is no field of the request (`--all`)."""

        def given(self, name: str) -> Any:
            """A field of the request, as the command line gave it."""

        def result(self, setting_up: bool = False, **fields: Any) -> Any:
            """The operation's result, some fields set by the printer; `setting_up`: in a
            store set up first if the repository has none (an import)."""

        def for_every_agent(self) -> tuple[list[Any], list[str]]:
            """The result for each agent, and a line for each agent it failed for."""

        def tell(self, line: str) -> None:
            """A line for stderr, said with the command's outcome."""


def own(command: Command) -> int:
    """A result (or a list of them) as JSON when asked, else its text, its own lines, or
    each one's JSON on a line."""
    result = command.result()
    if command.format == "json":
        _json([r.to_json() for r in result] if isinstance(result, list) else result.to_json())
    elif isinstance(result, str):
        sys.stdout.write(result)
    else:
        _say([line for each in _each(result) for line in _lines(each)])
    return 0


def written(command: Command) -> int:
    """A hot write: what it did, and what it masked, on stderr."""
    report = command.result()
    _say(report.messages)
    if report.redactions:
        command.tell(f"redacted: {', '.join(report.redactions)}")
    return 0


def markdown(command: Command) -> int:
    """A view as JSON, or its markdown."""
    view = command.result()
    if command.format == "json":
        _json(view.to_json())
    else:
        print(view.markdown)
        if getattr(view, "hint", ""):  # a hot view's word on the blockers it carries
            print(f"\n{view.hint}")
    return 0


def searched(command: Command) -> int:
    """Search results: JSON (what was forgotten said aside), or a few lines each."""
    hits = command.result()
    if command.format == "json":
        _json([h.to_json() for h in hits])
        for line in hits.forgotten:  # the results' shape stays a list: this is said aside
            print(f"tiermem: note: {line}", file=sys.stderr)
        return 0
    for line in hits.forgotten:
        print(line)
    if not hits and not hits.forgotten:
        print("no matches")
    for hit in hits:
        _hit(hit)
    return 0


def _hit(h: Any) -> None:
    mark = "  (untrusted source)" if h.trust else ""
    print(f"{h.score:7.2f}  {h.tier:<7} {h.agent or '-':<12} {h.id}  {h.title[:70]}{mark}")
    if h.whole:  # read by its id: its text is all of it
        print(f"         {h.path}")
        print(f"         from: {h.origin}")
        print(f"\n{h.text.rstrip()}\n")
        return
    print(f"         {h.path}: {' '.join(h.text.split())[:160]}")
    print(f"         from: {h.origin}")


def reported(command: Command) -> int:
    """Where the report was written, and the page opened when asked."""
    result = command.result()
    if command.format == "json":
        _json(result.to_json())
    else:
        where = "; local to this clone, git-ignored" if result.local else ""
        print(f"report: {result.path} ({result.bytes:,} bytes; {result.entries:,} entries{where})")
    if command.flag("open"):
        import webbrowser
        from pathlib import Path

        webbrowser.open(Path(result.path).as_uri())
    return 0


def reindexed(command: Command) -> int:
    """A rebuild's lines; a check's drift, exit status 1 if any."""
    lines = command.result()
    if command.given("check"):
        _say(lines or ["index matches the files"])
        return 1 if lines else 0
    _say(lines)
    return 0


def doctored(command: Command) -> int:
    """A check of the store; exit status 1 while problems remain."""
    from ..text.shown import printable

    report = command.result()
    if command.format == "json":
        _json(report.to_json())
    else:
        _say([printable(line) for line in report.lines()])
    return 1 if report.problems else 0


def stats(command: Command) -> int:
    """Entries, bytes and tokens per agent and tier: JSON, or their table."""
    from . import tables

    found = command.result()
    if command.format == "json":
        _json(found.to_json())
    else:
        tables.stats(found)
    return 0


def spawn_log(command: Command) -> int:
    """Which spawns got what: JSON, or its table."""
    from . import tables

    found = command.result()
    if command.format == "json":
        _json(found.to_json())
    else:
        _say(tables.spawn_log(found))
    _skipped(command, found.skipped)  # log lines it could not read
    return 0


def sessions(command: Command) -> int:
    """Sessions ended, one agent's or every agent's (`--all`)."""
    from ..errors import UsageError

    if bool(command.given("agent")) == bool(command.flag("all")):
        raise UsageError("give one AGENT or --all")
    skipped: list[str] = []
    if command.flag("all"):
        results, skipped = command.for_every_agent()
    else:
        results = [command.result()]
    if command.format == "json":
        _json([r.to_json() for r in results])
    else:
        _say([_session(r) for r in results])
    _skipped(command, skipped)
    return 1 if skipped else 0


def _session(r: Any) -> str:
    if not r.cold:
        return f"{r.agent}: nothing in hot to end"
    return (
        f"{r.agent}: session -> cold {', '.join(r.cold)} ({r.raw_bytes} -> "
        f"{r.summary_bytes} bytes); {len(r.knowledge)} structured, "
        f"{len(r.decisions)} decision(s); {len(r.carried)} blocker(s) carried"
    )


def scribe_ran(command: Command) -> int:
    """Scribe's maintenance, and the inputs it skipped."""
    report = command.result()
    if command.format == "json":
        _json(report.to_json())
    else:
        _say(report.lines())
    _skipped(command, [*report.inbox_skipped, *report.skipped])
    return 0


def decided(command: Command) -> int:
    """The ids a decision was recorded under."""
    ids = command.result()
    print(f"decision recorded: {', '.join(ids)} (cold/team.md and .squad/decisions.md)")
    return 0


def wiki_entry(command: Command) -> int:
    """The wiki entry a request produced."""
    entry = command.result()
    print(f"wiki: {entry.id} written to {entry.path} ({entry.cls})")
    return 0


def pages(command: Command) -> int:
    """The wiki's pages: JSON, or a row each."""
    found = command.result()
    if command.format == "json":
        _json([p.to_json() for p in found])
        return 0
    rows = [
        f"{p.topic:<24} {p.active:>4} active / {p.entries:>4} entries  {p.bytes:>8} bytes"
        for p in found
    ]
    _say(rows or ["no wiki pages yet"])
    return 0


def spawned(command: Command) -> int:
    """A spawn's prompt, or its JSON."""
    result = command.result()
    if command.format == "json":
        _json(result.to_json())
    else:
        sys.stdout.write(result.prompt)
    return 0


def imported(command: Command) -> int:
    """An import of Squad's memory, into a store set up first: its table or its JSON."""
    progress = command.format == "text" and sys.stderr.isatty()
    report = command.result(setting_up=True, progress=progress)
    if command.format == "json":
        _import_json(report)
    else:
        from . import tables

        tables.imported(report)
    _skipped(command, report.skipped)
    return 1 if report.skipped else 0


def _import_json(report: Any) -> None:
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


def _each(result: Any) -> list[Any]:
    return result if isinstance(result, list) else [result]


def _lines(result: Any) -> list[str]:
    """What a result says: its messages, its lines, or its JSON on one line."""
    if hasattr(result, "messages"):
        return list(result.messages)
    if hasattr(result, "lines"):
        return list(result.lines())
    import json

    return [json.dumps(result.to_json(), ensure_ascii=False)]


def _json(data: object) -> None:
    from ..text.shown import as_json  # only JSON output needs it: text commands do without

    print(as_json(data))


def _say(lines: Sequence[str]) -> None:
    for line in lines:
        print(line)


def _skipped(command: Command, inputs: Sequence[str]) -> None:
    """Inputs a command left out, one line each on stderr, the same way for every command."""
    from ..text.shown import printable

    for what in inputs:
        command.tell(f"tiermem: skipped {printable(what)}")
