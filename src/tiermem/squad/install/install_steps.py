"""The steps of `tiermem squad install`: what each puts in place or takes out, its state, and
the report a command prints of them.

A check reports each step as `installed`, `missing` (never installed), `undone` (installed
once, gone now), `outdated` (there, not as this version writes it), `skipped` (left out, and
why), `edited` (tiermem's text that someone changed since, or a look-alike: left as it is) or
`left` (an instruction the install leaves on purpose, and why: a skill's own wording).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .install_record import Record

# States of a check that `install` would act on (exit status 1), and states of an install
# or uninstall that left the repository as it was.
NEEDS_INSTALL = frozenset({"missing", "undone", "outdated"})
UNCHANGED = frozenset({"installed", "unchanged", "skipped", "kept", "absent", "edited", "left"})


@dataclass(frozen=True)
class Step:
    """One thing an install puts in place (or an uninstall takes out), and its state."""

    path: str
    what: str
    state: str
    before: bytes | None = None
    after: bytes | None = None
    note: str = ""
    kind: str = "file"  # file | store | text (written with the other steps on its file)
    number: int = 0  # the line it is about, in a file an install changes line by line
    key: str = ""  # what the install record lists for it (default: its path)

    @property
    def writes(self) -> bool:
        """Whether applying this step changes the repository."""
        return self.before != self.after

    @property
    def recorded(self) -> str:
        """The name the install record lists this step under."""
        return self.key or self.path

    def line(self) -> str:
        """The step as one line of the command's report."""
        note = f" ({self.note})" if self.note else ""
        where = f"{self.path}:{self.number}" if self.number else self.path
        return f"{self.state:<9} {where}: {self.what}{note}"

    def as_json(self) -> dict[str, str | int]:
        """The step for --format json."""
        said: dict[str, str | int] = {"path": self.path, "what": self.what, "state": self.state}
        if self.number:
            said["line"] = self.number
        return {**said, "note": self.note}


@dataclass
class Report:
    """What an install, check or uninstall found or did, step by step."""

    action: str
    steps: list[Step] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when a check finds something that `install` would add or change."""
        return int(self.action == "check" and any(s.state in NEEDS_INSTALL for s in self.steps))

    def lines(self) -> list[str]:
        """The report for people: one line per step, then a verdict."""
        return [s.line() for s in self.steps] + [self._verdict()]

    def _verdict(self) -> str:
        if self.action == "check":
            todo = sum(s.state in NEEDS_INSTALL for s in self.steps)
            return f"{todo} item(s) need `tiermem squad install`" if todo else "all installed"
        changed = sum(s.state not in UNCHANGED for s in self.steps)
        done = {"install": "installed", "uninstall": "uninstalled"}[self.action]
        return f"{done}: {changed} change(s)" if changed else f"{done}: nothing to change"


def install_state(rel: str, done: bool, present: bool, record: Record) -> str:
    if done:
        return "installed"
    if present:
        return "outdated"
    return "undone" if rel in record.installed else "missing"


def install_step(
    rel: str, what: str, before: bytes | None, after: bytes, present: bool, record: Record
) -> Step:
    state = install_state(rel, before == after, present, record)
    note = ""
    if state == "undone" and rel.startswith(".squad/templates/"):
        note = "`squad upgrade` rewrites .squad/templates/"
    elif state == "undone":
        note = "removed since the install"
    return Step(rel, what, state, before, after, note)
