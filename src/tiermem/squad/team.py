"""The team as Squad lays it out: `.squad/agents/{name}/` with each agent's charter."""

from __future__ import annotations

from pathlib import Path

from ..context import Context
from ..errors import NotFoundError


def folder(ctx: Context, agent: str) -> Path:
    """An agent's Squad folder."""
    return ctx.layout.squad / "agents" / agent


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
