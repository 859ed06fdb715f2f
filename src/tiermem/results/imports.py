"""What `import squad` returns: where each section went, and the sizes before and after."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Result, about
from .figures import Totals


@dataclass(slots=True)
class SectionPlacement(Result):
    """Where one section of a Squad file goes when it is imported (a row of the dry run)."""

    file: str = field(metadata=about("The Squad file, from the repository's root."))
    line: int = field(metadata=about("The line the section starts on."))
    section: str = field(metadata=about("The section's title (its kind when it has none)."))
    kind: str = field(
        metadata=about(
            "What it is: standing (an agent's Core Context), session, a decision's class "
            "(decision, policy, convention, contract), archived decision, session log, skill "
            "or text."
        )
    )
    agent: str = field(metadata=about("Whose it is: the agent, or team."))
    record: str = field(metadata=about("The archive record that holds its raw text."))
    entries: tuple[str, ...] = field(
        default=(), metadata=about("The entries made from it (none: the archive alone).")
    )
    tier: str = field(default="", metadata=about("Where it lands: cold, wiki or archive."))
    page: str = field(
        default="",
        metadata=about("Its file under .squad/memory/: cold/AGENT.md, wiki/TOPIC.md, a record."),
    )
    note: str = field(default="", metadata=about("What Scribe's pass did to it, if anything."))


@dataclass(slots=True)
class ImportReport(Result):
    """What an import read and wrote, and what each tier holds after Scribe's pass."""

    dry_run: bool
    files: int = field(metadata=about("Squad files read."))
    unchanged_files: int = field(metadata=about("Files whose exact content was imported before."))
    skipped: list[str] = field(
        metadata=about("Files that could not be read, with the line and why.")
    )
    entries_written: int
    classes: dict[str, dict[str, int]] = field(
        metadata=about("Entries per class and the tier they landed in.")
    )
    before: Totals = field(
        metadata=about("The Squad files read: bytes and tokens (entries: files).")
    )
    after: dict[str, Totals] = field(
        metadata=about("Entries, bytes and tokens per tier after the import.")
    )
    notes: list[str] = field(
        default_factory=list,
        metadata=about("Files imported with U+FFFD for bytes that are not UTF-8 (the line)."),
    )
    redacted: list[str] = field(
        default_factory=list,
        metadata=about(
            "Each credential replaced on the way to the archive, as `file:line: kind` "
            "(the kind names the family; the value is never said)."
        ),
    )
    sections: list[SectionPlacement] = field(
        default_factory=list,
        metadata=about("A dry run's rows: every section of every file read, and where it goes."),
    )
