"""What Scribe's session ends and maintenance runs return."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import NOTES, Result, about, count


@dataclass(slots=True)
class SessionReport(Result):
    """What ending one agent's session produced."""

    agent: str
    cold: list[str] = field(default_factory=list, metadata=about("The dated cold entries written."))
    knowledge: list[str] = field(
        default_factory=list, metadata=about("Structured entries (policy, convention...) kept.")
    )
    decisions: list[str] = field(default_factory=list, metadata=about("Decisions recorded."))
    archived: list[str] = field(
        default_factory=list, metadata=about("Archive records holding the raw session text.")
    )
    carried: list[str] = field(
        default_factory=list, metadata=about("Blockers carried into the next session's hot.")
    )
    raw_bytes: int = 0
    summary_bytes: int = field(
        default=0, metadata=about("Bytes of the summary under the cold entry's heading.")
    )
    summarizer: str = field(
        default="extractive", metadata=about("What wrote the summary (a model only if called).")
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)


@dataclass(slots=True)
class RunReport(Result):
    """What a maintenance run did (or, dry, would do)."""

    dry_run: bool
    checkpoints: list[str] = field(default_factory=list)
    inbox_merged: list[str] = field(
        default_factory=list,
        metadata=about("Squad's inbox files merged into its decision log, then deleted."),
    )
    inbox_lines: int = field(
        default=0, metadata=about("Lines the inbox merge added to Squad's decision log.")
    )
    inbox_skipped: list[str] = field(default_factory=list)
    followed: list[str] | None = field(
        default=None,
        metadata=about(
            "Squad's files imported again since the last import (None: the store never "
            "imported the team's files, so follows none)."
        ),
    )
    follow_written: int = field(default=0, metadata=about("Entries the files followed brought in."))
    follow_replaced: list[str] = field(
        default_factory=list,
        metadata=about("Entries of sections that grew since, replaced (their text archived)."),
    )
    superseded: list[tuple[str, str]] = field(default_factory=list)
    promoted: dict[str, list[str]] = field(default_factory=dict)
    expired: list[str] = field(default_factory=list)
    over_budget: list[str] = field(default_factory=list)
    refreshed: list[str] = field(
        default_factory=list,
        metadata=about(
            "Entries whose last use, recorded in this clone, was folded into the team's use "
            "ledger (.squad/memory/last-use.txt)."
        ),
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)
    skipped: list[str] = field(
        default_factory=list,
        metadata=about("What was left alone because a file it needs cannot be read, and why."),
    )

    def lines(self) -> list[str]:
        """The report in words."""
        verb = "would " if self.dry_run else ""
        moved = sum(len(v) for v in self.promoted.values())
        out = [
            self._inbox(verb),
            *self._follow(verb),
            f"checkpoints: {verb}compress {count(len(self.checkpoints), 'queued agent')}",
            f"supersede: {verb}mark {count(len(self.superseded), 'older entry')} superseded",
            f"promote: {verb}move {count(moved, 'entry')} to "
            f"{count(len(self.promoted), 'wiki page')}",
            f"expire: {verb}archive {count(len(self.expired), 'cold entry')} unused for the TTL",
            f"cold budget: {verb}archive {count(len(self.over_budget), 'oldest entry')} over "
            "budget",
            f"use: {verb}fold this clone's recorded use of {count(len(self.refreshed), 'entry')} "
            "into .squad/memory/last-use.txt",
        ]
        return out  # skipped inbox files are said on stderr, as every command says them

    def _follow(self, verb: str) -> list[str]:
        """What came in from Squad's files since the last import (nothing to say for a store
        that never imported them)."""
        if self.followed is None:
            return []
        changed = count(len(self.followed), "Squad file")
        files = f"{verb}import {changed} changed since the last import"
        if self.dry_run or not self.followed:
            return [f"follow: {files}"]
        replaced = count(len(self.follow_replaced), "entry")
        return [
            f"follow: {files}: {count(self.follow_written, 'entry')} written, "
            f"{replaced} of sections that grew replaced (their text archived)"
        ]

    def _inbox(self, verb: str) -> str:
        """What the run did to Squad's own files: the inbox merged into its decision log."""
        merged = f"{verb}merge {count(len(self.inbox_merged), 'file')} into .squad/decisions.md"
        if not self.inbox_merged:
            return f"inbox: {merged}"
        lines = count(self.inbox_lines, "line")
        added = f"adding {lines}" if verb else f"{lines} added"
        delete = "delete" if verb else "deleted"
        return (
            f"inbox: {merged} ({added}) and {delete} them from .squad/decisions/inbox/: "
            + ", ".join(self.inbox_merged)
        )
