"""Token counting, behind one method: `TokenCounter.count_many`.

Budgets are in o200k_base tokens, counted offline by `O200kCounter`. Entries are counted
once, by the index (when it takes them in, or for entries indexed in bulk when a read first
returns them), and their counts are stored: a spawn adds up stored counts and only counts
the text around them. `tiermem.testing.WordCounter` is the fake for tests where a budget,
not a tokenizer, is under test.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator, Sequence
from typing import Protocol, runtime_checkable

# A text longer than this is counted in pieces, each cut after a line break that neither
# white space nor a slash follows: o200k_base splits a text into words before it merges their
# bytes, and none of its words runs across such a cut, so the pieces' counts add up to the
# whole's. Counted whole, a 50 MB history became a list of 13 million tokens (about 450 MB)
# only to be measured; a piece's list is a few MB.
PIECE_CHARS = 1_000_000
_CUT = re.compile(r"\n(?=[^\s/])")


@runtime_checkable
class TokenCounter(Hashable, Protocol):
    """Counts the tokens of texts (hashable, so counts can be cached per counter)."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, in order."""
        ...


class O200kCounter:
    """Exact o200k_base counts: a cheap encoder for short texts, tiktoken for bulk."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The o200k_base token count of each text (a long one a piece at a time)."""
        from . import o200k  # its tables load on first use, not at start-up

        counts = o200k.count_many([t if len(t) <= PIECE_CHARS else "" for t in texts])
        for n, text in enumerate(texts):
            if len(text) > PIECE_CHARS:
                counts[n] = sum(o200k.count(piece) for piece in pieces(text, PIECE_CHARS))
        return counts


def pieces(text: str, size: int) -> Iterator[str]:
    """A text in pieces of more than `size` characters, each cut where no o200k_base word
    can run across (see PIECE_CHARS); a text with no such place stays whole."""
    start = 0
    while len(text) - start > size:
        cut = _CUT.search(text, start + size)
        if cut is None:
            break
        yield text[start : cut.end()]
        start = cut.end()
    yield text[start:]


def count(counter: TokenCounter, text: str) -> int:
    """The token count of one text."""
    return counter.count_many([text])[0]


O200K = O200kCounter()
