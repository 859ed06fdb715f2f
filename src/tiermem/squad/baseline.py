"""What a Squad spawn loads today: the agent's whole `history.md` and the team's `decisions.md`."""

from __future__ import annotations

from pathlib import Path

from ..context import Context
from ..results import SquadLoad
from . import team


def _text(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8", "replace") if path.is_file() else None


def history_path(ctx: Context, agent: str) -> Path:
    """Where Squad keeps an agent's history."""
    return team.folder(ctx, agent) / "history.md"


def load_tokens(ctx: Context, agent: str) -> int | None:
    """Tokens a Squad spawn of the agent loads today (None: it has neither file)."""
    texts = [_text(history_path(ctx, agent)), _text(ctx.layout.squad / "decisions.md")]
    present = [t for t in texts if t is not None]
    if not present:
        return None
    return ctx.index.token_counts(["\n".join(present)])[0]


def loads(ctx: Context, agents: list[str]) -> list[SquadLoad]:
    """What a Squad spawn of each agent with a history.md loads today."""
    decisions = _text(ctx.layout.squad / "decisions.md") or ""
    folder = ctx.layout.squad / "agents"
    names = {a for a in agents if history_path(ctx, a).is_file()}
    if folder.is_dir():
        names |= {p.name for p in folder.iterdir() if (p / "history.md").is_file()}
    rows = []
    for agent in sorted(names):
        text = (_text(history_path(ctx, agent)) or "") + "\n" + decisions
        tokens = ctx.index.token_counts([text])[0]
        rows.append(SquadLoad(agent, len(text.encode("utf-8")), tokens))
    return rows
