"""The team's agents: who has memory here, and who Squad says is on the team."""

from __future__ import annotations

from . import files, validate
from .context import Context
from .errors import UsageError
from .layout import TEAM
from .squad import team

_MEMORY_TIERS = ("hot", "cold", "queue")


def known(ctx: Context, agent: str) -> bool:
    """Whether the agent has memory in any tier, or a Squad agent folder."""
    if team.has_folder(ctx, agent):
        return True
    for tier in _MEMORY_TIERS:
        if (ctx.layout.tier_dir(tier) / f"{agent}.md").exists():
            return True
    return (ctx.layout.tier_dir("archive") / agent).is_dir()


def with_memory(ctx: Context) -> list[str]:
    """Every agent with memory in hot, cold or the archive."""
    found: set[str] = set()
    for tier in _MEMORY_TIERS:
        found.update(p.stem for p in ctx.layout.tier_dir(tier).glob("*.md") if not files.is_temp(p))
    archive_dir = ctx.layout.tier_dir("archive")
    if archive_dir.is_dir():
        found.update(p.name for p in archive_dir.iterdir() if p.is_dir())
    return sorted(a for a in found - {TEAM} if _valid_name(a))


def _valid_name(name: str) -> bool:
    """Whether a file stem found on disk is an agent name tiermem would accept."""
    try:
        return validate.name(name) == name
    except UsageError:
        return False
