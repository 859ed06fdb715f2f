"""The team's agents: who has memory here, who Squad says is on the team, and typos caught.

An agent is known when Squad has a folder for it (`.squad/agents/{name}/`, any case) or it has
memory in hot, cold, the queue or the archive. Reading an unknown agent is an error with the
nearest known names; so is writing to one, unless the caller says the agent is new (the CLI's
`--new-agent`, MCP's `new_agent`; the Python API checks only when asked, `new_agent=False`).
A store with no agents at all has nothing to mistype: its first write starts the team.
"""

from __future__ import annotations

from ..context import Context
from ..errors import NotFoundError, UsageError
from ..results.hot import AgentInfo
from ..storage import files, validate
from ..storage.layout import TEAM
from ..vocabulary import AGENT_FOLDERS

SHOWN = 8


def known(ctx: Context, agent: str) -> bool:
    """Whether the agent has memory in any tier, or a Squad agent folder."""
    if ctx.host.has_folder(agent):
        return True
    for tier in AGENT_FOLDERS:
        if (ctx.layout.tier_dir(tier) / f"{agent}.md").exists():
            return True
    return (ctx.layout.tier_dir("archive") / agent).is_dir()


def with_memory(ctx: Context) -> list[str]:
    """Every agent with memory in hot, cold or the archive."""
    return sorted(_memory_of(ctx))


def roster(ctx: Context) -> list[AgentInfo]:
    """Every agent of the team: Squad's agent folders and every agent with memory."""
    squad = {n for n in ctx.host.agent_folders() if _valid_name(n) and n != TEAM}
    memory = _memory_of(ctx)
    return [
        AgentInfo(name, name in squad, sorted(memory.get(name, ())))
        for name in sorted(squad | set(memory))
    ]


def require(ctx: Context, agent: str, even_alone: bool = False) -> None:
    """Refuse an agent the team does not know: reading it would only mislead.

    In a store with no agents at all there is nothing to mistype, so only `even_alone`
    refuses there (reading an agent's hot tier or ending its session needs its memory).
    """
    if known(ctx, agent):
        return
    names = [a.name for a in roster(ctx)]
    if names or even_alone:
        raise NotFoundError(_unknown(agent, names))


def require_for_write(ctx: Context, agent: str) -> None:
    """Refuse a write to an agent the team does not know (the first write of a store with no
    agents starts the team); the caller says when the agent is new instead."""
    if known(ctx, agent):
        return
    names = [a.name for a in roster(ctx)]
    if names:
        raise NotFoundError(
            _unknown(agent, names) + "; if it is a new agent, say so: --new-agent (new_agent "
            "in MCP and Python)"
        )


def _unknown(agent: str, names: list[str]) -> str:
    """One line: the agent is unknown, the nearest names, the team."""
    import difflib  # only a name that is not known needs it

    close = difflib.get_close_matches(agent, names, n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listed = ", ".join(names[:SHOWN]) + (
        f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    )
    team_line = f" (agents: {listed})" if names else " (the team has no agents yet)"
    return f"unknown agent {agent!r}{guess}{team_line}"


def _memory_of(ctx: Context) -> dict[str, set[str]]:
    """Agent -> the tiers holding its memory (hot, cold, queue, archive)."""
    found: dict[str, set[str]] = {}
    for tier in AGENT_FOLDERS:
        for p in files.memory_files(ctx.layout.tier_dir(tier)):
            found.setdefault(p.stem, set()).add(tier)
    for p in files.subfolders(ctx.layout.tier_dir("archive")):
        found.setdefault(p.name, set()).add("archive")
    return {a: t for a, t in found.items() if a != TEAM and _valid_name(a)}


def _valid_name(name: str) -> bool:
    """Whether a file stem found on disk is an agent name tiermem would accept."""
    try:
        return validate.name(name) == name
    except UsageError:
        return False
