"""What `stats` returns: entries, bytes and tokens per agent and tier, and Squad's load."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Result


@dataclass(slots=True)
class TierRow(Result):
    """Entries, bytes and tokens of one agent in one tier."""

    agent: str
    tier: str
    entries: int
    bytes: int
    tokens: int


@dataclass(slots=True)
class Totals(Result):
    """Entries, bytes and tokens of one tier, all agents together."""

    entries: int
    bytes: int
    tokens: int


@dataclass(slots=True)
class SquadLoad(Result):
    """What a Squad spawn of one agent loads today: its history.md and decisions.md."""

    agent: str
    bytes: int
    tokens: int


@dataclass(slots=True)
class Stats(Result):
    """What each agent's memory holds, against what a Squad spawn loads today."""

    tiers: list[TierRow]
    totals: dict[str, Totals]
    squad_spawn: list[SquadLoad]
