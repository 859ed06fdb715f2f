"""What `forget` and `doctor` return."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Result, about


@dataclass(slots=True)
class ForgetReport(Result):
    """What forgetting an entry did: the tiers it left, where its text is kept (or purged)."""

    id: str = field(metadata=about("The id asked for."))
    ids: list[str] = field(
        default_factory=list, metadata=about("Entries retired: the entry, or all its parts.")
    )
    purged: bool = field(default=False, metadata=about("Whether the text was deleted too."))
    files: list[str] = field(default_factory=list, metadata=about("Tier files it left."))
    archived: str = field(
        default="", metadata=about("The archive record keeping its text (not after a purge).")
    )
    records: list[str] = field(
        default_factory=list, metadata=about("Archive records rewritten without the text.")
    )
    tombstone: str = field(
        default="", metadata=about("The record saying what was purged, when and why.")
    )
    still_in: list[str] = field(
        default_factory=list, metadata=about("Other entries still holding some of the text.")
    )
    elsewhere: list[str] = field(
        default_factory=list,
        metadata=about("Squad's own files (outside the store) holding some of the text."),
    )
    messages: list[str] = field(default_factory=list, metadata=about("What happened, in words."))

    def lines(self) -> list[str]:
        """What happened, in words (`messages`)."""
        kept = [f"its text is kept in {self.archived}"] if self.archived else []
        if not self.purged and not self.files:  # a passage of archived text
            return [f"retired {self.id} from search and spawns: {', '.join(self.ids)}", *kept]
        if not self.purged:
            return [f"forgot {self.id}: {', '.join(self.ids)} left {', '.join(self.files)}", *kept]
        left = f" left {', '.join(self.files)}" if self.files else ""
        said = [
            f"purged {self.id}: {', '.join(self.ids)}{left}",
            *kept,
            f"archive records rewritten: {', '.join(self.records) or 'none'}",
            f"tombstone: {self.tombstone}",
        ]
        if self.still_in:
            said.append(f"still holding some of the text: {', '.join(self.still_in)}")
        if self.elsewhere:
            said.append(f"Squad's files holding some of the text: {', '.join(self.elsewhere)}")
        return said


@dataclass(slots=True)
class Finding(Result):
    """One thing `tiermem doctor` found in a store, and what it did about it."""

    kind: str = field(
        metadata=about(
            "link, store, name, temp, file, ids, malformed, sessions, archive, citation, index, "
            "queue: what it is about"
        )
    )
    path: str = field(metadata=about("The file or folder, relative to the root."))
    problem: str = field(metadata=about("What is wrong (or, for a note, what is going on)."))
    serious: bool = field(
        default=True, metadata=about("A problem (true), or a note about a store that is fine.")
    )
    repaired: str = field(default="", metadata=about("What the repair did; empty if nothing."))


@dataclass(slots=True)
class DoctorReport(Result):
    """What `tiermem doctor` checked, found and (with --repair) repaired."""

    repair: bool
    checked: dict[str, int] = field(
        default_factory=dict, metadata=about("How many of each thing were looked at.")
    )
    findings: list[Finding] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        """The problems that remain (not notes, not repaired)."""
        return [f for f in self.findings if f.serious and not f.repaired]

    def lines(self) -> list[str]:
        """The report in words, one line per finding."""
        checked = ", ".join(f"{n} {what}" for what, n in sorted(self.checked.items()))
        out = [f"doctor: checked {checked or 'the store'}"]
        for f in self.findings:
            label = "repaired" if f.repaired else "problem" if f.serious else "note"
            out.append(
                f"{label}: {f.path}: {f.problem}" + (f"; {f.repaired}" if f.repaired else "")
            )
        left = len(self.problems)
        out.append(f"doctor: {left} problem(s) left" if left else "doctor: no problems left")
        return out
