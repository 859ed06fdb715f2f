"""Squad's decision log, `.squad/decisions.md`: decisions recorded through tiermem go there too."""

from __future__ import annotations

from pathlib import Path

from ...context import Context
from ...storage import files
from ..reading import squad_markdown

EMPTY_LOG = "# Decisions\n"


def path(ctx: Context) -> Path:
    """Where Squad keeps its decision log."""
    return ctx.layout.squad / "decisions.md"


def check(ctx: Context) -> None:
    """Read the log as a write would, so a broken one stops the write before it starts."""
    files.read_text(ctx.layout, path(ctx))


def append(ctx: Context, text: str, by: str) -> None:
    """Add a decision to the log as Squad's inbox merge would (a repeat adds nothing)."""
    target = path(ctx)
    day = ctx.stamp()[:10]
    with files.locked(ctx.layout, target):
        current = files.read_text(ctx.layout, target) or EMPTY_LOG
        name = f"{by or 'tiermem'}-decision.md"
        if not any(s.kind == "decision" for s in squad_markdown.parse_decisions(text)):
            # Plain text: its first line is the title of Squad's canonical dated block.
            first, _, rest = text.strip("\n").partition("\n")
            text = squad_markdown.render_decision(day, first.lstrip("# "), rest)
        merged, _ = squad_markdown.merge_inbox(current, [(name, text)], day)
        if merged != current:
            files.atomic_write(target, merged)
