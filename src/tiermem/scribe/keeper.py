"""Scribe as the `Context` reaches it (see `host`): the `Keeper` a hot write asks to queue or
checkpoint what leaves hot, and the summarizer `config.toml` names."""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..context import Context
    from ..errors import TiermemError
    from ..host import Summarizer
    from ..storage.archive import Record
    from ..storage.entries import Entry


class ScribeKeeper:
    """Queues what leaves hot for the session summary, or checkpoints it into cold."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def queue(self, agent: str, entries: Sequence[Entry], session: str) -> Record:
        """Archive entries leaving hot, then queue them for Scribe's next summary."""
        from .session import queue_entries

        return queue_entries(self.ctx, agent, entries, session)

    def checkpoint(
        self, agent: str, leaving: Sequence[Entry], session: str
    ) -> tuple[Record, list[str], TiermemError | None]:
        """What a full hot tier pushes out, compressed into cold at once."""
        from .session import checkpoint_leaving

        return checkpoint_leaving(self.ctx, agent, leaving, session)


def configured_summarizer(ctx: Context) -> Summarizer:
    """The summarizer `[summarizer] kind` names, made for one session."""
    from .summarize import configured

    return configured(ctx)
