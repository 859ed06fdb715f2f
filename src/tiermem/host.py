"""What the core asks of the edges it is handed through the `Context`.

`Host` is the team tool whose folder holds the store (Squad: `.squad/agents/`, charters,
`decisions.md` and its inbox); `squad.adapter.squad_host.SquadHost` is the one tiermem ships.
`Keeper` is Scribe as a hot write needs it: what leaves a full hot tier is queued for the
session's summary or checkpointed into cold at once (`scribe.keeper.ScribeKeeper`).
`Summarizer` writes a session's summary (`scribe.summarize`). The core imports neither
package: `Memory`, the composition root, hands both to the `Context`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .errors import TiermemError
    from .results.figures import SquadLoad
    from .storage.archive import Record
    from .storage.entries import Entry


@dataclass
class InboxReport:
    """What merging the host's decision inbox did."""

    merged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    lines_added: int = 0  # lines the merge added to the decision log


@dataclass
class FollowReport:
    """What following the host's files did: the files imported again since the last import,
    the entries written, and those of sections that grew, replaced."""

    followed: bool = False  # False: the store never imported the host's files
    files: list[str] = field(default_factory=list)
    written: int = 0
    replaced: list[str] = field(default_factory=list)


class Host(Protocol):
    """The team tool around the store: its agents, their charters, its decision log."""

    def agent_folders(self) -> list[str]:
        """The agents the host has folders for, named as tiermem names agents."""
        ...

    def has_folder(self, agent: str) -> bool:
        """Whether the host has a folder for the agent."""
        ...

    def people(self) -> set[str]:
        """The words of every person's name the team's files give."""
        ...

    def name_words(self, text: str) -> set[str]:
        """The lower-cased words of a name as a file writes it."""
        ...

    def tool_words(self) -> set[str]:
        """Words that name the host's own files and roles (not what the team works on):
        no wiki page is named by them."""
        ...

    def charter(self, agent: str) -> str:
        """The agent's charter, as the host wrote it (NotFoundError when there is none)."""
        ...

    def load_tokens(self, agent: str) -> int | None:
        """Tokens the host's own spawn of the agent loads (None: it loads nothing)."""
        ...

    def loads(self, agents: list[str]) -> list[SquadLoad]:
        """What the host's own spawn of each agent loads."""
        ...

    def decision_entries(
        self, text: str, *, by: str, stamp: str, session: str, source: str, inbox_file: str
    ) -> list[Entry]:
        """The team entries of decision text, one a decision block (`inbox_file` names the
        inbox file it came from, whose name and front matter give dates)."""
        ...

    def check_writable(self) -> None:
        """Refuse a write where the host keeps the team's state off this working tree."""
        ...

    def check_decision_log(self) -> None:
        """Refuse to go on when the host's decision log cannot take a decision."""
        ...

    def append_decision(self, text: str, by: str) -> None:
        """Add a decision to the host's decision log."""
        ...

    def merge_inbox(self, dry_run: bool) -> InboxReport:
        """Merge the host's decision inbox into its log and the team's tier."""
        ...

    def follow(self, dry_run: bool) -> FollowReport:
        """Bring in what the team wrote in the host's files since they were imported."""
        ...


class Summarizer(Protocol):
    """Turns raw session text into a short summary."""

    @property
    def name(self) -> str:
        """What made the summary (shown in audit lines)."""
        ...

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """A summary of text in at most about budget_bytes UTF-8 bytes."""
        ...


class Keeper(Protocol):
    """Scribe, as a write to hot needs it."""

    def queue(self, agent: str, entries: Sequence[Entry], session: str) -> Record:
        """Archive entries leaving hot, and queue them for the session's summary."""
        ...

    def checkpoint(
        self, agent: str, leaving: Sequence[Entry], session: str
    ) -> tuple[Record, list[str], TiermemError | None]:
        """Entries a full hot tier pushes out, compressed into cold at once: (their archive
        record, the cold entries written, a failure)."""
        ...
