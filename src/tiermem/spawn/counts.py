"""A spawn's token counts: exact, and made without the encoding when they are known already.

A spawn counts its prompt's frame, the headings of its pinned policies and its whole prompt
(its task only when it may be too long, `task.fitted`). It takes the counts the index keeps
by text (`Index.token_counts`), and counts, and keeps, only the texts no process counted
before. So a spawn asked again as it was (the same task, on memory that has not changed)
loads no encoding, which costs a new process about 0.35 s and 80 MB; a new task is counted
as before, once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..context import Context


def counts(ctx: Context, texts: Sequence[str]) -> list[int]:
    """The exact token count of each text, in order."""
    return ctx.index.token_counts(list(texts))


def count(ctx: Context, text: str) -> int:
    """The exact token count of one text."""
    return counts(ctx, [text])[0]
