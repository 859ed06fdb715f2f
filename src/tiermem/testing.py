"""Fakes of the parts `Memory` is handed, for tests of code built on tiermem.

Each stands in for one constructor argument of `Memory` and is simple enough that a test
can say exactly what it will do:

- `WordCounter` (`tokens=`): one token per whitespace-separated word, so a budget can be
  checked by counting words;
- `ByScore` (`ranker=`): the index's scores as they are, with no preference for the asking
  agent's own memory;
- `FirstWords` (`summarizer=`): a session's first words up to the budget, named "first-words";
- `RecordingIndex` (`index=`): the real index, keeping every query it was asked.

    from tiermem import Memory
    from tiermem.testing import ByScore, WordCounter

    mem = Memory(root, tokens=WordCounter(), ranker=ByScore())
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .index.protocol import Doc, Hit, Index, Scope, SyncReport
from .index.tokens import TokenCounter
from .storage.layout import Layout

__all__ = ["ByScore", "FirstWords", "RecordingIndex", "WordCounter"]


class WordCounter:
    """A fake token counter: one token per whitespace-separated word."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The number of words in each text."""
        return [len(text.split()) for text in texts]


class ByScore:
    """A fake ranker: the index's scores as they are, best first."""

    def rank(self, hits: Sequence[Hit], agent: str | None) -> list[Hit]:
        """Hits sorted by score alone (stable: ties keep their order)."""
        return sorted(hits, key=lambda h: -h.score)


class FirstWords:
    """A fake summarizer: the text's first words, as many as fit the budget."""

    name = "first-words"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """The leading words of `text` within `budget_bytes` UTF-8 bytes."""
        kept: list[str] = []
        size = -1
        for word in text.split():
            size += len(word.encode("utf-8")) + 1
            if size > budget_bytes:
                break
            kept.append(word)
        return " ".join(kept)


class RecordingIndex:
    """The shipped index (or one made by `inner`), keeping the queries it was asked.

    `Memory(root, index=RecordingIndex)` opens it; `mem.context.index.queries` is then
    every text searched, in order, by `search` and `search_each`.
    """

    def __init__(
        self,
        layout: Layout,
        counter: TokenCounter,
        note: Callable[[str], None] | None = None,
        inner: Callable[..., Index] | None = None,
    ) -> None:
        if inner is None:
            from .index.fts import FtsIndex

            inner = FtsIndex
        self.inner = inner(layout, counter, note=note)
        self.queries: list[str] = []

    def sync(self) -> SyncReport:
        """The inner index brought up to date."""
        return self.inner.sync()

    def rebuild(self) -> SyncReport:
        """The inner index built again."""
        return self.inner.rebuild()

    def scrub(self) -> None:
        """The inner index's deleted text scrubbed."""
        self.inner.scrub()

    def check(self) -> list[str]:
        """The inner index's differences from the files."""
        return self.inner.check()

    def search(self, query: str, *args: Any, **kwargs: Any) -> list[Hit]:
        """The inner index's matches, the query kept."""
        self.queries.append(query)
        return self.inner.search(query, *args, **kwargs)

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The inner index's matches per scope, the query kept."""
        self.queries.append(query)
        return self.inner.search_each(query, scopes, limit)

    def docs(self, *args: Any, **kwargs: Any) -> list[Doc]:
        """The inner index's documents."""
        return self.inner.docs(*args, **kwargs)

    def by_ids(self, ids: Sequence[str], *args: Any, **kwargs: Any) -> list[Doc]:
        """The inner index's documents with these ids."""
        return self.inner.by_ids(ids, *args, **kwargs)

    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The inner index's newest documents."""
        return self.inner.newest(tiers, agent, limit)

    def parts(self, parent: str) -> list[Doc]:
        """The inner index's parts of one entry."""
        return self.inner.parts(parent)

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """The inner index's totals."""
        return self.inner.totals()

    def documents(self) -> int:
        """How many documents the inner index holds."""
        return self.inner.documents()

    def entry_totals(self) -> list[tuple[str, str, int, int, int]]:
        """The inner index's totals by whole entry."""
        return self.inner.entry_totals()

    def token_counts(self, texts: list[str]) -> list[int]:
        """The inner index's token counts."""
        return self.inner.token_counts(texts)

    def close(self) -> None:
        """The inner index released."""
        self.inner.close()
