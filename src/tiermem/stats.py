"""`tiermem stats`: what each agent's memory holds, against what a Squad spawn loads today."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory import Memory


def _squad_spawns(mem: Memory, agents: list[str]) -> list[dict[str, Any]]:
    """Bytes and tokens of history.md + decisions.md per agent (Squad's spawn load)."""
    decisions = mem.layout.squad / "decisions.md"
    decisions_text = (
        decisions.read_bytes().decode("utf-8", "replace") if decisions.is_file() else ""
    )
    rows = []
    folder = mem.layout.squad / "agents"
    names = (
        sorted({p.name for p in folder.iterdir() if (p / "history.md").is_file()})
        if folder.is_dir()
        else []
    )
    for agent in sorted(set(names) | {a for a in agents if (folder / a / "history.md").is_file()}):
        history = (folder / agent / "history.md").read_bytes().decode("utf-8", "replace")
        text = history + "\n" + decisions_text
        rows.append(
            {
                "agent": agent,
                "bytes": len(text.encode("utf-8")),
                "tokens": mem.index.token_counts([text])[0],
            }
        )
    return rows


def collect(mem: Memory) -> dict[str, Any]:
    """Per agent and tier: entries, bytes, tokens; plus the Squad comparison."""
    mem.sync()
    rows = mem.index.totals()
    tiers = [
        {"agent": agent or "(team)", "tier": tier, "entries": n, "bytes": b, "tokens": t}
        for agent, tier, n, b, t in rows
    ]
    totals: dict[str, dict[str, int]] = {}
    for _, tier, n, b, t in rows:
        slot = totals.setdefault(tier, {"entries": 0, "bytes": 0, "tokens": 0})
        slot["entries"] += n
        slot["bytes"] += b
        slot["tokens"] += t
    agents = sorted({agent for agent, *_ in rows if agent})
    return {"tiers": tiers, "totals": totals, "squad_spawn": _squad_spawns(mem, agents)}


def render_table(report: dict[str, Any]) -> None:
    """Print the report as tables."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title="tiermem: memory per agent and tier")
    for column in ("agent", "tier", "entries", "bytes", "tokens"):
        table.add_column(
            column, justify="right" if column in ("entries", "bytes", "tokens") else "left"
        )
    for row in report["tiers"]:
        table.add_row(
            escape(row["agent"]),
            row["tier"],
            f"{row['entries']:,}",
            f"{row['bytes']:,}",
            f"{row['tokens']:,}",
        )
    for tier, slot in sorted(report["totals"].items()):
        table.add_row(
            "[b]all[/b]", tier, f"{slot['entries']:,}", f"{slot['bytes']:,}", f"{slot['tokens']:,}"
        )
    console.print(table)
    if report["squad_spawn"]:
        squad = Table(title="what a Squad spawn loads today (history.md + decisions.md)")
        for column in ("agent", "bytes", "tokens"):
            squad.add_column(column, justify="right" if column != "agent" else "left")
        for row in report["squad_spawn"]:
            squad.add_row(escape(row["agent"]), f"{row['bytes']:,}", f"{row['tokens']:,}")
        console.print(squad)
