"""The team as Squad lays it out: `.squad/agents/{name}/` with each agent's charter."""

from __future__ import annotations

from pathlib import Path

from .. import files
from ..context import Context
from ..errors import NotFoundError, ParseError


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
        text = files.read_text(ctx.layout, path)  # never through a link
    except ParseError:
        text = None
    if text is None:
        raise NotFoundError(f"no readable charter for {agent} at {ctx.layout.relative(path)}")
    return text
