"""What a Squad spawn loads today: the agent's whole `history.md` and the team's `decisions.md`."""

from __future__ import annotations

from pathlib import Path

from ...context import Context
from ...errors import ParseError
from ...results.figures import SquadLoad
from ...storage import files
from . import agent_folders


def _text(path: Path) -> str | None:
    """A Squad file's text as a spawn would load it; nothing through a link."""
    try:
        data = files.read_bytes(path)
    except ParseError:
        return None
    return data.decode("utf-8", "replace") if data is not None else None


def history_path(ctx: Context, agent: str) -> Path:
    """Where Squad keeps an agent's history."""
    return agent_folders.folder(ctx, agent) / "history.md"


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
    names = {a for a in agents if files.is_file(history_path(ctx, a))}
    if files.is_folder(folder):
        names |= {p.name for p in files.subfolders(folder) if files.is_file(p / "history.md")}
    rows = []
    for agent in sorted(names):
        text = (_text(history_path(ctx, agent)) or "") + "\n" + decisions
        tokens = ctx.index.token_counts([text])[0]
        rows.append(SquadLoad(agent, len(text.encode("utf-8")), tokens))
    return rows
