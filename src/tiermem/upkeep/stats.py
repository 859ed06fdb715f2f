"""`tiermem stats`: what each agent's memory holds, against what a Squad spawn loads today.

`rows` is the one place the figures per agent and tier come from: `stats` prints them, the
report draws them, an import counts with them. An entry counts once however many parts a long
one was stored in, an archive record once however many chunks search reads it in; bytes are
those of their text as indexed, tokens the index's counts of the same text.
"""

from __future__ import annotations

from ..context import Context
from ..results.figures import Stats, TierRow, Totals
from ..storage.layout import TEAM


def collect(ctx: Context) -> Stats:
    """Per agent and tier: entries, bytes, tokens; plus the Squad comparison."""
    ctx.sync()
    tiers = rows(ctx)
    agents = sorted({row.agent for row in tiers if row.agent != TEAM})
    return Stats(tiers, totals_of(tiers), ctx.host.loads(agents))


def rows(ctx: Context) -> list[TierRow]:
    """Entries, bytes and tokens of every agent in every tier (the team's own as `team`,
    wiki entries nobody signed included)."""
    merged: dict[tuple[str, str], list[int]] = {}
    for agent, tier, n, size, tokens in ctx.index.totals():
        slot = merged.setdefault((agent or TEAM, tier), [0, 0, 0])
        slot[0], slot[1], slot[2] = slot[0] + n, slot[1] + size, slot[2] + tokens
    return [TierRow(a, t, *values) for (a, t), values in sorted(merged.items())]


def totals_of(tiers: list[TierRow]) -> dict[str, Totals]:
    """Entries, bytes and tokens per tier, all agents together."""
    sums: dict[str, list[int]] = {}
    for row in tiers:
        slot = sums.setdefault(row.tier, [0, 0, 0])
        slot[0], slot[1], slot[2] = slot[0] + row.entries, slot[1] + row.bytes, slot[2] + row.tokens
    return {tier: Totals(*values) for tier, values in sums.items()}


def tier_totals(ctx: Context) -> dict[str, Totals]:
    """Entries, bytes and tokens per tier, all agents together."""
    return totals_of(rows(ctx))
