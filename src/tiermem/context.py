"""The context every step of tiermem works in: handed in, never reached back for.

A step (a hot write, a session end, a search, a spawn...) gets one `Context`: where the store
is, what time it is, its settings, its index, how tokens are counted and results ranked, the
audit trail and redaction. `Memory` builds one per store; tests build one with fakes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from .errors import StoreError
from .storage import validate
from .storage.clock import Clock
from .storage.layout import Layout

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from typing import TypeVar

    from .host import Host, Keeper, Summarizer
    from .index.protocol import Index, IndexFactory, SyncReport
    from .index.tokens import TokenCounter
    from .relevance.ranking import Ranker
    from .storage.config import Config

    _Part = TypeVar("_Part")

Redactor = Callable[[str], tuple[str, list[str]]]
# The edges a step reaches through its context (see `host`), made for it by `Memory`.
HostFactory = Callable[["Context"], "Host"]
KeeperFactory = Callable[["Context"], "Keeper"]
SummarizerFactory = Callable[["Context"], "Summarizer"]


def _redact(text: str) -> tuple[str, list[str]]:
    from .text.redact import redact  # its patterns compile on first use, not at start-up

    return redact(text)


def _made(make: Callable[[Context], _Part] | None, ctx: Context, what: str) -> _Part:
    """A part of the context made by the function `Memory` handed in for it."""
    if make is None:
        raise StoreError(f"this context has no {what}: Memory hands it one")
    return make(ctx)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


class Context:
    """Layout, clock, config, index, token counter, ranker, summarizer, audit and redaction."""

    def __init__(
        self,
        layout: Layout,
        clock: Clock,
        *,
        tokens: TokenCounter | None = None,
        ranker: Ranker | None = None,
        index: IndexFactory | None = None,
        summarizer: Summarizer | None = None,
        host: HostFactory | None = None,
        keeper: KeeperFactory | None = None,
        summarizers: SummarizerFactory | None = None,
        redact: Redactor = _redact,
        warn: Callable[[str], None] = _stderr,
    ) -> None:
        self.layout = layout
        self.clock = clock
        self._tokens = tokens
        self._ranker = ranker
        self._open_index = index
        self._summarizer = summarizer
        self._make_host, self._make_keeper = host, keeper
        self._make_summarizer = summarizers
        self._host: Host | None = None
        self._keeper: Keeper | None = None
        self.redact = redact
        self.warn = warn
        self._config: Config | None = None
        self._index: Index | None = None
        self.notes: list[str] = []
        # Audit lines a full disk refused. A command line holds them to say them with its
        # outcome (its one line when it fails); everyone else hears of each at once.
        self.unaudited: list[str] = []
        self.hold_unaudited = False
        # A write door got this context: once its write is done, this clone's own state
        # leaves Squad's folder (`doors.answer`).
        self.wrote = False

    @property
    def config(self) -> Config:
        """The store's settings, read from config.toml when first needed.

        Reading the file is a parse of TOML; commands that need no setting (`hot show`,
        `search`) start faster without it.
        """
        if self._config is None:
            from .storage import config

            self._config = config.load(self.layout.config)
        return self._config

    @property
    def tokens(self) -> TokenCounter:
        """How tokens are counted: o200k_base, unless another counter was handed in (its
        module is loaded when first needed: writes to hot count bytes, not tokens)."""
        if self._tokens is None:
            from .index.tokens import O200K

            self._tokens = O200K
        return self._tokens

    @property
    def ranker(self) -> Ranker:
        """The order results are offered in (the default is loaded when first needed)."""
        if self._ranker is None:
            from .relevance.ranking import DEFAULT

            self._ranker = DEFAULT
        return self._ranker

    @property
    def index(self) -> Index:
        """The search index (opened on first use)."""
        if self._index is None:
            self.require_store()
            self._index = self._index_factory()(self.layout, self.tokens, note=self.note)
        return self._index

    def _index_factory(self) -> IndexFactory:
        if self._open_index is None:
            from .index.fts import FtsIndex  # SQLite loads on first search, not at start-up

            return FtsIndex
        return self._open_index

    def summarizer(self) -> Summarizer:
        """What summarizes a session: the one handed in, else the configured one, made anew
        for each session (a model that fell back is tried again next time)."""
        if self._summarizer is not None:
            return self._summarizer
        return _made(self._make_summarizer, self, "summarizer")

    @property
    def host(self) -> Host:
        """The team tool around the store (Squad's `.squad/`): agents, charters, its log."""
        if self._host is None:
            self._host = _made(self._make_host, self, "host")
        return self._host

    @property
    def keeper(self) -> Keeper:
        """Scribe, as a write to hot reaches it: queue or checkpoint what leaves hot."""
        if self._keeper is None:
            self._keeper = _made(self._make_keeper, self, "keeper")
        return self._keeper

    def moved(self, layout: Layout) -> Context:
        """A context over another store (a scratch copy) with the same parts and edges."""
        return Context(
            layout,
            self.clock,
            tokens=self._tokens,
            ranker=self._ranker,
            index=self._open_index,
            summarizer=self._summarizer,
            host=self._make_host,
            keeper=self._make_keeper,
            summarizers=self._make_summarizer,
            redact=self.redact,
            warn=self.warn,
        )

    def require_store(self) -> None:
        """Refuse to go on where there is no store to work in (or one reached by a link)."""
        from .storage import files

        files.check_store(self.layout)  # a link in place of a folder or file of the store
        if not files.is_folder(self.layout.memory):
            raise StoreError(f"no tiermem store in {self.layout.squad}; run `tiermem init`")

    def stamp(self) -> str:
        """Now, as the ISO-8601 time every record carries."""
        return self.clock.stamp()

    def sync(self) -> SyncReport:
        """Bring the index up to date; say which files could not be read."""
        report = self.index.sync()
        for error in report.errors:
            self.skipped(str(error))
        for conflict in report.conflicts:
            self.warn(f"tiermem: note: {conflict}")
        if report.stale:
            self.note(report.stale)
        return report

    def skipped(self, what: str) -> None:
        """One line on stderr for an input left out (every command says it the same way)."""
        self.warn(f"tiermem: skipped {what}")

    def note(self, line: str) -> None:
        """Something the user should know about a result (a fallback): said now on stderr,
        and kept for the result's `notes` (see `take_notes`)."""
        self.notes.append(line)
        self.warn(f"tiermem: note: {line}")

    def take_notes(self) -> list[str]:
        """The notes since the last call, which the result of a step then carries."""
        taken, self.notes = self.notes, []
        return taken

    def audit(
        self, action: str, ids: list[str], tiers: list[str], reason: str = "", **details: object
    ) -> None:
        """One line in the audit trail: what was done to which entries, never the content."""
        from .errors import UnsafePathError
        from .storage import audit  # writes only: reads start without the JSON encoder

        try:
            audit.append(self.layout, self.stamp(), action, ids, tiers, reason, **details)
        except UnsafePathError:
            raise
        except StoreError as exc:
            # The trail describes memory, it is not memory: a full disk that lets the memory
            # write through but not its audit line is said, not a failed command.
            self.unaudited.append(str(exc))
            if not self.hold_unaudited:
                self.warn(f"warning: audit line not written: {exc}")

    def clean(self, text: str, what: str) -> tuple[str, list[str]]:
        """Validate user text and replace credentials in it, before it is written anywhere."""
        return self.redact(validate.text(text, what))

    def audit_redactions(self, kinds: list[str], where: str) -> None:
        """After a write: say which kinds of credentials were replaced (never the values)."""
        if kinds:
            self.audit("redact", [], [where], "credential-shaped text replaced", kinds=kinds)

    def close(self) -> None:
        """Release the index."""
        if self._index is not None:
            self._index.close()
            self._index = None
