"""What the hot tier's reads and writes return, and the team's listing."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import NOTES, Result, about


@dataclass(slots=True)
class HotEntry(Result):
    """One entry of a hot tier."""

    id: str
    slot: str = field(metadata=about("task, why, talking-to, decision, blocker, action or note."))
    cls: str = field(metadata=about("The entry's class, e.g. decision or status.", json="class"))
    created: str = ""
    title: str = ""
    body: str = ""
    trust: str = field(default="", metadata=about("'untrusted' for text from tools or the web."))

    @property
    def text(self) -> str:
        """Title and body as one text, as the index holds it."""
        return f"{self.title}\n{self.body}" if self.body else self.title


@dataclass(slots=True)
class HotView(Result):
    """An agent's hot tier: the current session."""

    agent: str
    session: str = field(metadata=about("Session id; empty when the agent has no hot tier yet."))
    bytes: int = field(
        metadata=about("Bytes of its text as a spawn loads it, which its budget bounds.")
    )
    markdown: str = field(metadata=about("The hot tier as it is loaded into a spawn prompt."))
    entries: tuple[HotEntry, ...] = ()
    started: str = field(
        default="", metadata=about("When the current session started: the hot tier's as-of.")
    )
    hint: str = field(
        default="",
        metadata=about("How to clear blockers carried from earlier sessions ('' for none)."),
    )


@dataclass(slots=True)
class WriteReport(Result):
    """What a write did, in words for the user and ids for programs."""

    agent: str
    ids: list[str] = field(default_factory=list, metadata=about("Ids of the entries written."))
    messages: list[str] = field(default_factory=list, metadata=about("What happened, in words."))
    archived: list[str] = field(
        default_factory=list, metadata=about("Archive records that older text moved into.")
    )
    cold: list[str] = field(
        default_factory=list, metadata=about("Cold entries Scribe wrote to keep hot within budget.")
    )
    redactions: list[str] = field(
        default_factory=list, metadata=about("Kinds of credential-shaped text replaced.")
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)
    change: str = field(
        default="",
        metadata=about("What was written: set, the slot of an entry added, unblock or clear."),
    )
    bytes: int = field(default=0, metadata=about("Size of the hot file after the write."))
    budget: int = field(default=0, metadata=about("The hot budget, in bytes."))
    overflow: int = field(
        default=0, metadata=about("Bytes moved out of hot to keep it within its budget.")
    )
    left: int = field(
        default=0,
        metadata=about("Items that left hot: replaced, past the action limit, or cleared."),
    )

    def lines(self) -> list[str]:
        """What happened, in words (`messages`)."""
        if self.change == "clear":
            queued = f"{self.left} item(s) archived and queued for Scribe"
            return [f"hot: {self.agent} cleared; {queued}"]
        said = [f"hot: {self.agent} {self.change} saved ({self.bytes} bytes)"]
        if self.overflow:
            said.append(
                f"hot budget {self.budget} bytes: {self.overflow} bytes moved out; raw "
                f"text archived in {self.archived[-1]}; Scribe checkpointed it to cold "
                f"({', '.join(self.cold) or 'queued'})"
            )
        elif self.left:
            said.append(
                f"{self.left} older item(s) left hot; archived in {self.archived[-1]} and "
                "queued for the session summary"
            )
        return said


@dataclass(slots=True)
class AgentInfo(Result):
    """An agent of the team: whether Squad lists it, and where it has memory."""

    name: str
    squad: bool = field(metadata=about("Whether Squad has a folder for it (.squad/agents/)."))
    memory: list[str] = field(
        default_factory=list, metadata=about("The tiers holding its memory: hot, cold, ...")
    )
