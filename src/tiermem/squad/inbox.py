"""Squad's decision inbox, `.squad/decisions/inbox/*.md`: files agents drop for the log."""

from __future__ import annotations

from pathlib import Path

from ..context import Context


def folder(ctx: Context) -> Path:
    """Where Squad's agents drop decisions for the log."""
    return ctx.layout.squad / "decisions" / "inbox"


def read(ctx: Context) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, text) of every readable inbox file, and why the others were skipped."""
    where = folder(ctx)
    found = sorted(p for p in where.glob("*.md") if p.is_file()) if where.is_dir() else []
    inbox: list[tuple[str, str]] = []
    skipped: list[str] = []
    for item in found:
        try:
            inbox.append((item.name, item.read_bytes().decode("utf-8")))
        except (OSError, UnicodeDecodeError):
            skipped.append(f"{ctx.layout.relative(item)}: not readable as UTF-8")
    return inbox, skipped


def remove(ctx: Context, name: str) -> None:
    """Take a merged file out of the inbox."""
    (folder(ctx) / name).unlink(missing_ok=True)
