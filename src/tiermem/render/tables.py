"""Tables for people: the CLI's text output of `stats` and `import squad`."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..results.figures import Stats, Totals
from ..results.imports import ImportReport, SectionPlacement
from ..results.spawn import SpawnLog
from ..vocabulary import RECALL_TIERS

_NUMBERS = ("entries", "bytes", "tokens")


def _counts(totals: Totals) -> tuple[str, str, str]:
    return f"{totals.entries:,}", f"{totals.bytes:,}", f"{totals.tokens:,}"


class _Console(Console):
    """rich's console, but a reader that stopped early ends the command as every command
    ends then (quietly, status 0) instead of rich's exit status 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def stats(report: Stats) -> None:
    """Memory per agent and tier, then what a Squad spawn loads today."""
    console = _Console()
    table = Table(title="tiermem: memory per agent and tier")
    for column in ("agent", "tier", *_NUMBERS):
        table.add_column(column, justify="right" if column in _NUMBERS else "left")
    for row in report.tiers:
        table.add_row(
            escape(row.agent), row.tier, f"{row.entries:,}", f"{row.bytes:,}", f"{row.tokens:,}"
        )
    for tier, totals in sorted(report.totals.items()):
        table.add_row("[b]all[/b]", tier, *_counts(totals))
    console.print(table)
    if report.squad_spawn:
        squad = Table(title="what a Squad spawn loads today (history.md + decisions.md)")
        for column in ("agent", "bytes", "tokens"):
            squad.add_column(column, justify="right" if column != "agent" else "left")
        for load in report.squad_spawn:
            squad.add_row(escape(load.agent), f"{load.bytes:,}", f"{load.tokens:,}")
        console.print(squad)


def placements(rows: Sequence[SectionPlacement]) -> Iterator[str]:
    """A dry run's rows in words: each file, then each section with where it goes."""
    last = ""
    for row in rows:
        if row.file != last:
            yield _printable(row.file)
            last = row.file
        title = _printable(row.section)
        title = title if len(title) <= 48 else title[:47] + "…"
        what = f"{row.kind}, {row.note}" if row.note else row.kind
        yield (
            f"  L{row.line:<6} {title:<48} {row.tier:<8} {_printable(row.agent):<12} "
            f"{_printable(row.page)}  ({what})"
        )


def _printable(text: str) -> str:
    """Text from a Squad file, with control characters (an escape sequence) shown as `?`."""
    return "".join("?" if unicodedata.category(ch)[0] == "C" else ch for ch in text)


def imported(report: ImportReport) -> None:
    """The end-of-import tables: entries per class and tier, sizes before and after; a dry
    run first says where each section of each file goes."""
    if report.sections:
        print("where each section goes: line, section, tier, agent, page (what it is)")
        for line in placements(report.sections):
            print(line)
    console = _Console()
    verb = "would import" if report.dry_run else "imported"
    console.print(
        f"{verb} {report.files} files ({report.unchanged_files} unchanged since the "
        f"last import, {len(report.skipped)} skipped)"
    )
    table = Table(title="entries per class and tier")
    tiers: tuple[str, ...] = RECALL_TIERS
    table.add_column("class")
    for tier in tiers:
        table.add_column(tier, justify="right")
    for cls, row in report.classes.items():
        table.add_row(cls, *(str(row.get(t, 0)) for t in tiers))
    console.print(table)
    sizes = Table(title="before and after")
    for column in ("", *_NUMBERS):
        sizes.add_column(column, justify="right" if column else "left")
    before = report.before
    sizes.add_row("Squad files (before)", "", f"{before.bytes:,}", f"{before.tokens:,}")
    for tier, totals in sorted(report.after.items()):
        sizes.add_row(f"{tier} (after)", *_counts(totals))
    console.print(sizes)
    if report.redacted:
        said = "would be replaced" if report.dry_run else "replaced"
        print(f"credentials {said} by [REDACTED:kind] on the way in ({len(report.redacted)}):")
        for where in report.redacted:
            print(f"  {_printable(where)}")


def spawn_log(found: SpawnLog) -> list[str]:
    """Logged spawns in words, newest first."""
    if not found.spawns:
        return ["no spawns logged" + (f" that loaded {found.entry}" if found.entry else "")]
    lines: list[str] = []
    for spawn in found.spawns:
        total = spawn.tokens.get("total", 0)
        lines.append(f"{spawn.time}  {spawn.agent}  {total:,} tokens  {spawn.task[:80]!r}")
        lines.append(f"  situation: {spawn.situation}")
        lines.append(f"  loaded: {', '.join(spawn.entries) or '(no cold, wiki or policy entry)'}")
        lines.extend(f"    {entry_id}: {why}" for entry_id, why in spawn.why.items())
        if spawn.left_out:
            lines.append(f"  left out: {', '.join(spawn.left_out)}")
        for entry_id, paths in spawn.stale.items():
            lines.append(f"  stale: {entry_id} cites {', '.join(paths)} (no longer tracked)")
    return lines
