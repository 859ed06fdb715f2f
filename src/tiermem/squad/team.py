"""The team as Squad lays it out: `.squad/agents/{name}/` with each agent's charter."""

from __future__ import annotations

from pathlib import Path

from ..context import Context
from ..errors import NotFoundError


def folder(ctx: Context, agent: str) -> Path:
    """An agent's Squad folder."""
    return ctx.layout.squad / "agents" / agent


def folders(ctx: Context) -> list[str]:
    """The names of the agents Squad has folders for, lower-cased as tiermem names agents."""
    where = ctx.layout.squad / "agents"
    if not where.is_dir():
        return []
    return sorted({p.name.lower() for p in where.iterdir() if p.is_dir()})


def has_folder(ctx: Context, agent: str) -> bool:
    """Whether Squad has a folder for the agent."""
    return folder(ctx, agent).is_dir()


def charter(ctx: Context, agent: str) -> str:
    """The agent's charter, as Squad wrote it."""
    path = folder(ctx, agent) / "charter.md"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise NotFoundError(
            f"no readable charter for {agent} at {ctx.layout.relative(path)}"
        ) from None
