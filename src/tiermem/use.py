"""Last use: a spawn or search that uses a cold or wiki entry refreshes it (the TTL counts
from its last use)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from . import store
from .context import Context
from .errors import ParseError
from .index import Doc


def mark_used(ctx: Context, docs: Sequence[Doc]) -> None:
    """Move the last-use time of these cold/wiki entries to now (at most once a day)."""
    today = ctx.stamp()
    by_path: dict[str, set[str]] = {}
    for d in docs:
        if d.tier in ("cold", "wiki") and d.used[:10] < today[:10]:
            by_path.setdefault(d.path, set()).add(d.id)
    if not by_path:
        return  # the common case: already used today, nothing to write
    wrote = [_refresh(ctx, rel, ids, today) for rel, ids in sorted(by_path.items())]
    if any(wrote):
        ctx.index.sync()  # keep the index in step with what was just written


def _refresh(ctx: Context, rel: str, ids: set[str], today: str) -> bool:
    """Mark entries of one file used today; whether the file was rewritten."""
    path = ctx.layout.root / rel
    changed = False
    try:
        with store.update_existing(ctx.layout, path.parent.name, path) as tier_file:
            if tier_file is None:
                return False
            for entry in tier_file.entries:
                if entry.id in ids and entry.used < today:
                    tier_file.put(replace(entry, used=today))
                    changed = True
    except ParseError:
        # A file broken since it was indexed: the read that used its entries goes on (the
        # sync has warned about the file), and it is not rewritten.
        return False
    return changed
