"""What a spawn returns, and its log."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import NOTES, Result, about


@dataclass(slots=True)
class Loaded(Result):
    """An entry a spawn loaded, and why."""

    tier: str
    id: str
    path: str
    why: str = field(default="", metadata=about("Why the relevance engine chose it."))


@dataclass(slots=True)
class SpawnResult(Result):
    """The rendered prompt and what went into it."""

    agent: str
    situation: str = field(metadata=about("Why these tiers: the situation the task was read as."))
    reason: str
    tiers: list[str]
    prompt: str = field(metadata=about("The prompt to start the agent with."))
    tokens: dict[str, int] = field(metadata=about("Tokens per section and in total."))
    baseline_tokens: int | None = field(
        metadata=about(
            "Tokens of the agent's history.md plus decisions.md: what a Squad spawn loads today."
        )
    )
    sources: list[Loaded] = field(
        default_factory=list, metadata=about("Entries loaded: tier, id and path.")
    )
    left_out: list[str] = field(
        default_factory=list,
        metadata=about("Relevant entries the prompt shows nothing of: memory's room was spent."),
    )
    stale: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=about("Loaded entries citing repository paths git no longer tracks, by id."),
    )
    memory_room: int = field(
        default=0,
        metadata=about("Tokens memory's passages may take: the budget less the prompt's frame."),
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)


@dataclass(slots=True)
class SpawnRecord(Result):
    """One spawn as this clone's spawn log keeps it (`.squad/memory/spawns.jsonl`)."""

    time: str
    agent: str
    task: str = field(metadata=about("The task, as given (credentials redacted)."))
    situation: str
    entries: list[str] = field(
        default_factory=list, metadata=about("Ids of the entries the prompt loaded.")
    )
    left_out: list[str] = field(
        default_factory=list, metadata=about("Relevant entries that did not fit the budget.")
    )
    tokens: dict[str, int] = field(
        default_factory=dict, metadata=about("Tokens per section and in total.")
    )
    stale: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=about("Loaded entries citing repository paths git no longer tracks."),
    )
    why: dict[str, str] = field(
        default_factory=dict,
        metadata=about("Why the relevance engine chose each loaded entry, by id."),
    )


@dataclass(slots=True)
class SpawnLog(Result):
    """Spawns from this clone's log, newest first: what each got, or which got an entry."""

    spawns: list[SpawnRecord]
    agent: str = field(default="", metadata=about("Only spawns of this agent (empty: all)."))
    entry: str = field(
        default="", metadata=about("Only spawns that loaded this entry or a part of it.")
    )
    skipped: list[str] = field(
        default_factory=list,
        metadata=about("Lines of the log left out, as FILE:LINE: why (torn, damaged)."),
    )
