"""The team as Squad lays it out: `.squad/agents/{name}/` with each agent's charter.

Squad names folders as the team wrote the names (`agents/Rai/`); tiermem's agent names are
lower-case, so a folder is matched case-insensitively.
"""

from __future__ import annotations

from pathlib import Path

from .. import files
from ..context import Context
from ..errors import NotFoundError, ParseError


def _folders(ctx: Context) -> list[Path]:
    base = ctx.layout.squad / "agents"
    try:
        return sorted(p for p in base.iterdir() if p.is_dir())
    except OSError:  # no agents folder (or not a folder): no Squad team
        return []


def folder(ctx: Context, agent: str) -> Path:
    """An agent's Squad folder (as Squad spelled it, where it exists)."""
    exact = ctx.layout.squad / "agents" / agent
    if exact.is_dir():
        return exact
    return next((p for p in _folders(ctx) if p.name.lower() == agent), exact)


def folders(ctx: Context) -> list[str]:
    """The names of the agents Squad has folders for, lower-cased as tiermem names agents."""
    where = ctx.layout.squad / "agents"
    if not where.is_dir():
        return []
    return sorted({p.name.lower() for p in where.iterdir() if p.is_dir()})


def has_folder(ctx: Context, agent: str) -> bool:
    """Whether Squad has a folder for the agent."""
    return folder(ctx, agent).is_dir()


def names(ctx: Context) -> list[str]:
    """The names of Squad's agent folders, lower-cased as tiermem names agents."""
    return sorted({p.name.lower() for p in _folders(ctx)})


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
