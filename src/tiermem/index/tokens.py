"""Token counting, behind one method: `TokenCounter.count_many`.

Budgets are in o200k_base tokens, counted offline by `O200kCounter`. Entries are counted
once, by the index (when it takes them in, or for entries indexed in bulk when a read first
returns them), and their counts are stored: a spawn adds up stored counts and only counts
the text around them. `tiermem.testing.WordCounter` is the fake for tests where a budget,
not a tokenizer, is under test.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Hashable, Protocol):
    """Counts the tokens of texts (hashable, so counts can be cached per counter)."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, in order."""
        ...


class O200kCounter:
    """Exact o200k_base counts: a cheap encoder for short texts, tiktoken for bulk."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The o200k_base token count of each text."""
        from . import o200k  # its tables load on first use, not at start-up

        return o200k.count_many(texts)


def count(counter: TokenCounter, text: str) -> int:
    """The token count of one text."""
    return counter.count_many([text])[0]


O200K = O200kCounter()
