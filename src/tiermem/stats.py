"""`tiermem stats`: what each agent's memory holds, against what a Squad spawn loads today."""

from __future__ import annotations

from .context import Context
from .results import Stats, TierRow, Totals
from .squad import baseline


def collect(ctx: Context) -> Stats:
    """Per agent and tier: entries, bytes, tokens; plus the Squad comparison."""
    ctx.sync()
    rows = [TierRow(a or "(team)", t, n, b, k) for a, t, n, b, k in ctx.index.totals()]
    totals = tier_totals(ctx)
    agents = sorted({row.agent for row in rows if row.agent != "(team)"})
    return Stats(rows, totals, baseline.loads(ctx, agents))


def tier_totals(ctx: Context) -> dict[str, Totals]:
    """Entries, bytes and tokens per tier, all agents together."""
    sums: dict[str, list[int]] = {}
    for _, tier, n, size, tokens in ctx.index.totals():
        slot = sums.setdefault(tier, [0, 0, 0])
        slot[0], slot[1], slot[2] = slot[0] + n, slot[1] + size, slot[2] + tokens
    return {tier: Totals(*values) for tier, values in sums.items()}
