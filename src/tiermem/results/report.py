"""What the HTML report returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Result, about


@dataclass(slots=True)
class ReportResult(Result):
    """The report page written, and what it holds."""

    path: str = field(metadata=about("The HTML file: one page, no server or network needed."))
    bytes: int
    entries: int = field(metadata=about("Entries of hot, cold and the wiki (parts joined)."))
    records: int = field(metadata=about("Archive records."))
    agents: int
    stale: int = field(metadata=about("Entries citing repository paths git no longer tracks."))
    superseded: int
    preview: bool = field(metadata=about("Whether the page holds a spawn preview (--task)."))
    local: bool = field(
        default=False,
        metadata=about("Whether the page is in the default folder: this clone's, git-ignored."),
    )
