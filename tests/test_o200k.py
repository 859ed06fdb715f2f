"""Token counts agree with tiktoken's o200k_base on every path, offline and under races."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import regex
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken import Encoding

from tiermem.index import o200k

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"

MARKDOWN = """# Release notes

Some *emphasis*, a [link](https://example.com/a/b?c=d), and `inline code`.

```python
def count(text: str) -> int:
    return len(text.split())  # naive!
```

| col | value |
|-----|------:|
| a   | 1,234 |

- [ ] todo item
- [x] done — with an em dash and “curly quotes”
"""

SAMPLES = {
    "empty": "",
    "ascii prose": "The quick brown fox jumps over the lazy dog. It's 9:30, isn't it?",
    "markdown with code": MARKDOWN,
    "emoji and cjk": "日本語のテキスト、中文文本 와 한국어 😀👍🏽👨‍👩‍👧 naïve café Ünïcödé",
    "whitespace runs": "a" + " " * 37 + "b\n\n\n\n  \t \n" + "\r\n" * 9 + " " * 200 + "\n" * 64,
    "trailing whitespace": "end of text   \t  ",
    "numbers": "1 12 123 1234 12345 3.14159 1e-9 0x1F 2,147,483,647 ٣٤٥ ²³ Ⅻ",
    "special token text": "<|endoftext|> and <|endofprompt|> are <|fim_prefix|> ordinary here",
    "contractions": "I'm you're he's we've they'll I'd IT'S THEY'RE It'Ll it'ſ don't",
    "near contractions": "o'clock rock'n'roll it'x we'vE'd 'tis l'été '' 'S 'sa x''s",
    "casing": "HTMLParser iPhone ABCdef DEF camelCase SHOUT Ǆemal ǅemal",
    "marks": "\u0301\u0302a\u0303 e\u0301 ٍ।ॊ 1\u0301 x\u20dd",
    "control and unicode spaces": "\x00\x1c\x1d\x1e\x1f a\x85b\xa0c\u2028d\u3000e\u200bf\ufeff",
    "slashes and punctuation": "a/b//c ///\n... --- ==== !!! ?!/\r\n/// }}",
    "long single piece": "x" * 5000,
    "long repetitive pairs": "ab" * 3000,
    "long punctuation run": "-=" * 2000 + "\n",
}

# Characters that sit on the pattern's class boundaries, for targeted random text.
TRICKY = list(" \n\r\t\x0b\xa0\u3000'sSſtTrReEvVmMlLdDaxZ19٣²Ⅻ中ゃǅʰ\u0301\u0903/.-😀\u200d<|_")


@pytest.fixture(scope="module", autouse=True)
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One empty cache directory for this module, so its tests never touch ~/.cache."""
    root = tmp_path_factory.mktemp("tiermem-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIERMEM_CACHE_DIR", str(root))
        yield root


@pytest.fixture(scope="module")
def reference(cache_root: Path) -> Encoding:
    """tiktoken's own o200k_base Encoding (tiktoken checks the vocabulary's sha256)."""
    return o200k._Counter().bulk_encoding()


@pytest.fixture(scope="module")
def short(cache_root: Path) -> o200k._ShortCounter:
    """The short path, with its table built in the module's cache."""
    counter = o200k._Counter().short_counter()
    assert counter is not None
    return counter


def expected(reference: Encoding, text: str) -> int:
    """What tiktoken says, special-token text treated as ordinary."""
    return len(reference.encode_ordinary(text))


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_short_path_matches_tiktoken(
    short: o200k._ShortCounter, reference: Encoding, text: str
) -> None:
    assert short.count(text) == expected(reference, text)


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_bulk_path_matches_tiktoken(reference: Encoding, text: str) -> None:
    assert o200k._bulk_counts(reference, [text]) == [expected(reference, text)]


def test_public_api_counts_in_order(reference: Encoding) -> None:
    texts = list(SAMPLES.values())
    assert o200k.count_many(texts) == [expected(reference, text) for text in texts]
    assert o200k.count(MARKDOWN) == expected(reference, MARKDOWN)
    assert o200k.count_many([]) == []


def test_batched_bulk_counts_keep_order(reference: Encoding) -> None:
    texts = list(SAMPLES.values())
    assert o200k._bulk_counts(reference, texts) == [expected(reference, t) for t in texts]


@pytest.mark.parametrize("text", ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d"])
def test_surrogates_are_repaired_like_tiktoken(
    short: o200k._ShortCounter, reference: Encoding, text: str
) -> None:
    assert short.count(text) == expected(reference, text)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(max_size=60))
def test_random_unicode_matches_tiktoken(
    short: o200k._ShortCounter, reference: Encoding, text: str
) -> None:
    assert short.count(text) == expected(reference, text)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=80))
def test_class_boundaries_match_tiktoken(
    short: o200k._ShortCounter, reference: Encoding, text: str
) -> None:
    assert short.count(text) == expected(reference, text)


def test_class_runs_match_tiktoken(short: o200k._ShortCounter, reference: Encoding) -> None:
    # Both ends of every run of same-class code points, plus a sparse sweep between them,
    # each in contexts where its class decides how the text splits.
    starts = list(short.table.starts)
    edges = {*starts, *(start - 1 for start in starts[1:]), 0x10FFFF, *range(0x80, 0x110000, 331)}
    points = sorted(p for p in edges if not 0xD800 <= p < 0xE000)
    chunk = 2048
    for at in range(0, len(points), chunk):
        text = "".join(f"{c}a{c}A'S {c}1{c}.{c}\n" for c in map(chr, points[at : at + chunk]))
        assert short.count(text) == expected(reference, text), hex(points[at])


# What each shadow character stands for, as a whole general-category pattern: a different
# probe from the build's overlapping pattern classes, so the two check each other.
SHADOW_CATEGORIES = {
    o200k.SHADOW_UPPER: r"[\p{Lu}\p{Lt}]",
    o200k.SHADOW_LOWER: r"\p{Ll}",
    o200k.SHADOW_OTHER_LETTER: r"[\p{Lm}\p{Lo}]",
    o200k.SHADOW_MARK: r"\p{M}",
    o200k.SHADOW_NUMBER: r"\p{N}",
    o200k.SHADOW_SPACE: r"\s",
    o200k.SHADOW_OTHER: r"[^\p{L}\p{M}\p{N}\s]",
    o200k.SHADOW_LONG_S: r"(?i:s)",
}
# A long-assigned character of each shadow class, on whose properties every Unicode-aware
# engine agrees, so that the `regex` module can stand in for tiktoken's engine.
SHADOW_SAMPLES = str.maketrans(
    {
        o200k.SHADOW_UPPER: "À",
        o200k.SHADOW_LOWER: "à",
        o200k.SHADOW_OTHER_LETTER: "ª",
        o200k.SHADOW_MARK: "\u0300",
        o200k.SHADOW_NUMBER: "²",
        o200k.SHADOW_SPACE: "\xa0",
        o200k.SHADOW_OTHER: "§",
        o200k.SHADOW_LONG_S: "ſ",
    }
)


def test_every_code_point_shadows_to_its_category(short: o200k._ShortCounter) -> None:
    members: dict[int, list[str]] = {code: [] for code in SHADOW_CATEGORIES}
    starts = list(short.table.starts)
    for start, end in zip(starts, [*starts[1:], 0x110000], strict=True):
        code = short.table.shadow(start)
        assert short.table.shadow(end - 1) == code
        members[code].extend(chr(p) for p in range(start, end) if not 0xD800 <= p < 0xE000)
    for code, category in SHADOW_CATEGORIES.items():
        chars = "".join(members[code])
        assert o200k._engine_matches(category, chars) == chars, hex(code)


@pytest.fixture(scope="module")
def tiktoken_split(reference: Encoding) -> regex.Pattern[str]:
    """tiktoken's own o200k_base split pattern, compiled by the `regex` module."""
    return regex.compile(reference._pat_str)


def shadow_split(
    short: o200k._ShortCounter, split: regex.Pattern[str], text: str
) -> tuple[list[str], list[str]]:
    """Pieces of a shadowed text per the short path's `re` pattern and per tiktoken's pattern."""
    shadowed = text.translate({ord(c): short.table.shadow(ord(c)) for c in set(text) if c > "\x7f"})
    sampled = shadowed.translate(SHADOW_SAMPLES)
    ours = [piece.translate(SHADOW_SAMPLES) for piece in short.pattern.findall(shadowed)]
    return ours, split.findall(sampled)


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_samples_split_like_tiktoken(
    short: o200k._ShortCounter, tiktoken_split: regex.Pattern[str], text: str
) -> None:
    ours, theirs = shadow_split(short, tiktoken_split, text)
    assert ours == theirs


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(exclude_categories=["Cs"])))
def test_shadow_split_matches_tiktoken_pattern(
    short: o200k._ShortCounter, tiktoken_split: regex.Pattern[str], text: str
) -> None:
    ours, theirs = shadow_split(short, tiktoken_split, text)
    assert ours == theirs


def corpus_markdown() -> list[Path]:
    """An evenly spread sample of real markdown files, if the corpora are present."""
    if not CORPORA.is_dir():
        return []
    files = sorted(CORPORA.rglob("*.md"))
    return files[:: max(1, len(files) // 30)]


@pytest.mark.skipif(not CORPORA.is_dir(), reason="no shared corpora on this machine")
def test_real_markdown_matches_tiktoken(short: o200k._ShortCounter, reference: Encoding) -> None:
    files = corpus_markdown()
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert short.count(text) == expected(reference, text), path


@pytest.mark.skipif(not CORPORA.is_dir(), reason="no shared corpora on this machine")
def test_real_markdown_splits_like_tiktoken(
    short: o200k._ShortCounter, tiktoken_split: regex.Pattern[str]
) -> None:
    for path in corpus_markdown():
        text = path.read_text(encoding="utf-8", errors="replace")
        ours, theirs = shadow_split(short, tiktoken_split, text)
        assert ours == theirs, path


@pytest.mark.skipif(not CORPORA.is_dir(), reason="no shared corpora on this machine")
def test_real_session_texts_match_tiktoken(short: o200k._ShortCounter, reference: Encoding) -> None:
    for log in sorted(CORPORA.rglob("sessions.jsonl")):
        with log.open(encoding="utf-8") as lines:
            texts = [json.loads(line)["text"] for i, line in enumerate(lines) if i % 50 == 0]
        assert [short.count(t) for t in texts] == [expected(reference, t) for t in texts], log


def test_bpe_merges_lowest_rank_first() -> None:
    # Merging "cd" (rank 2) before "bc" (rank 0) would end in two tokens, not three.
    assert o200k.bpe_token_count(b"abcd", {b"bc": 0, b"ab": 1, b"cd": 2}.get) == 3


def test_bpe_breaks_rank_ties_leftmost() -> None:
    # Leftmost: ab, then cd -> 2 tokens; rightmost would give a, bc, d -> 3 tokens.
    assert o200k.bpe_token_count(b"abcd", {b"ab": 0, b"bc": 0, b"cd": 1}.get) == 2


def test_bpe_edge_cases() -> None:
    assert o200k.bpe_token_count(b"", {}.get) == 0
    assert o200k.bpe_token_count(b"z", {}.get) == 1
    assert o200k.bpe_token_count(b"aaa", {b"aa": 5}.get) == 2
    assert o200k.bpe_token_count(b"aaaa", {b"aa": 5, b"aaaa": 6}.get) == 1


@pytest.fixture(scope="module")
def rendered_split() -> regex.Pattern[str]:
    """The pattern tiermem gives tiktoken when no cache file can be written."""
    return regex.compile(o200k.split_pattern(o200k._UNICODE_CLASSES, o200k._UNICODE_SUFFIX))


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_rendered_pattern_splits_samples_like_tiktoken(
    rendered_split: regex.Pattern[str], tiktoken_split: regex.Pattern[str], text: str
) -> None:
    assert rendered_split.findall(text) == tiktoken_split.findall(text)


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(exclude_categories=["Cs"])))
def test_rendered_pattern_splits_like_tiktoken(
    rendered_split: regex.Pattern[str], tiktoken_split: regex.Pattern[str], text: str
) -> None:
    assert rendered_split.findall(text) == tiktoken_split.findall(text)


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIERMEM_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert o200k.cache_dir() == str(tmp_path / "explicit")
    monkeypatch.delenv("TIERMEM_CACHE_DIR")
    assert o200k.cache_dir() == str(tmp_path / "xdg" / "tiermem")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert o200k.cache_dir() == str(tmp_path / "home" / ".cache" / "tiermem")


def test_table_is_cached_atomically(cache_root: Path, short: o200k._ShortCounter) -> None:
    table = cache_root / o200k._TABLE_NAME
    assert table.is_file()
    assert not list(cache_root.glob("*.tmp"))
    assert o200k._map_table(str(table)) is not None


@pytest.fixture
def quick_build(
    monkeypatch: pytest.MonkeyPatch, cache_root: Path, short: o200k._ShortCounter
) -> bytes:
    """Make table builds return the module's table at once; building is tested elsewhere."""
    table = (cache_root / o200k._TABLE_NAME).read_bytes()
    monkeypatch.setattr(o200k, "_build_table", lambda: table)
    return table


def truncated(data: bytes) -> bytes:
    """What an interrupted copy could leave behind."""
    return data[: len(data) // 2]


def from_older_format(data: bytes) -> bytes:
    """A file of the same size whose header names another layout."""
    return b"TMO200K1" + data[8:]


@pytest.mark.parametrize("damage", [truncated, from_older_format])
def test_unusable_table_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    quick_build: bytes,
    reference: Encoding,
    damage: Callable[[bytes], bytes],
) -> None:
    damaged = tmp_path / o200k._TABLE_NAME
    damaged.write_bytes(damage(quick_build))
    monkeypatch.setenv("TIERMEM_CACHE_DIR", str(tmp_path))
    assert o200k._Counter().short_counts([MARKDOWN]) == [expected(reference, MARKDOWN)]
    assert damaged.read_bytes() == quick_build


def unwritable_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point the cache below a regular file, which no one (not even root) can create."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("TIERMEM_CACHE_DIR", str(blocker / "cache"))


def must_not_build() -> bytes:
    """Stand-in for the table builder where a cached table should have been found."""
    raise AssertionError("the table was built again instead of read from the cache")


def test_unwritable_cache_falls_back_to_private_temp_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, quick_build: bytes, reference: Encoding
) -> None:
    unwritable_cache(monkeypatch, tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert o200k._Counter().short_counts([MARKDOWN]) == [expected(reference, MARKDOWN)]
    fallback = o200k._private_temp_dir(create=False)
    assert fallback is not None
    assert (Path(fallback) / o200k._TABLE_NAME).is_file()
    # The next process finds the table there instead of building it again.
    monkeypatch.setattr(o200k, "_build_table", must_not_build)
    assert o200k._Counter().short_counts([MARKDOWN]) == [expected(reference, MARKDOWN)]


def test_looking_for_cached_files_creates_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, short: o200k._ShortCounter
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert o200k._tiktoken_cache() is not None
    assert list(o200k._cached_paths("no-such-file")) == [
        os.path.join(o200k.cache_dir(), "no-such-file")
    ]
    assert not list(tmp_path.iterdir())


def test_nowhere_writable_counts_from_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, quick_build: bytes, reference: Encoding
) -> None:
    unwritable_cache(monkeypatch, tmp_path)
    monkeypatch.setattr(o200k, "_private_temp_dir", lambda create=True: None)
    assert o200k._Counter().short_counts([MARKDOWN]) == [expected(reference, MARKDOWN)]
    assert o200k._tiktoken_cache() is None


def test_bulk_path_without_cache_files_matches(reference: Encoding) -> None:
    built = o200k._construct_encoding()
    texts = list(SAMPLES.values())
    assert o200k._bulk_counts(built, texts) == o200k._bulk_counts(reference, texts)


@pytest.mark.parametrize("user_value", [None, "/somewhere/the/user/chose"])
def test_tiktoken_cache_dir_is_restored(
    monkeypatch: pytest.MonkeyPatch, reference: Encoding, user_value: str | None
) -> None:
    if user_value is None:
        monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", user_value)
    folder = o200k._tiktoken_cache()
    assert folder is not None
    assert o200k._get_encoding_from(folder) is reference
    assert os.environ.get("TIKTOKEN_CACHE_DIR") == user_value


def test_tiktoken_cache_file_has_the_name_tiktoken_expects(
    monkeypatch: pytest.MonkeyPatch, cache_root: Path
) -> None:
    folder = o200k._tiktoken_cache()
    assert folder is not None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", folder)
    # Served from the cache file and hash-checked: the network is never consulted.
    data = tiktoken.load.read_file_cached(o200k.O200K_URL, o200k.O200K_SHA256)
    assert data == (Path(folder) / o200k._tiktoken_cache_name()).read_bytes()


def test_short_path_hands_over_to_tiktoken_past_break_even(
    monkeypatch: pytest.MonkeyPatch, reference: Encoding
) -> None:
    monkeypatch.setattr(o200k, "BULK_BREAK_EVEN_CHARS", 100)
    counter = o200k._Counter()
    assert counter.count_many(["x" * 60]) == [expected(reference, "x" * 60)]
    assert counter.encoding is None
    assert counter.count_many(["y" * 60]) == [expected(reference, "y" * 60)]
    assert counter.encoding is reference


def test_table_from_another_tiktoken_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    cache_root: Path,
    short: o200k._ShortCounter,
    reference: Encoding,
) -> None:
    data = bytearray((cache_root / o200k._TABLE_NAME).read_bytes())
    version_at = o200k._HEADER_BYTES - o200k._VERSION_BYTES
    data[version_at : o200k._HEADER_BYTES] = b"0.0.0".ljust(o200k._VERSION_BYTES, b"\0")
    stale = tmp_path / o200k._TABLE_NAME
    stale.write_bytes(data)
    monkeypatch.setenv("TIERMEM_CACHE_DIR", str(tmp_path))
    counter = o200k._Counter()
    loaded = counter.short_counter()
    assert loaded is not None
    assert loaded.table.engine_version == "0.0.0"
    counter.bulk_encoding()
    assert counter.short is None
    assert not stale.exists()


def test_damaged_tiktoken_cache_file_is_replaced_not_downloaded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    damaged = tmp_path / "tiktoken" / o200k._tiktoken_cache_name()
    damaged.parent.mkdir()
    damaged.write_bytes(b"not the vocabulary")
    monkeypatch.setenv("TIERMEM_CACHE_DIR", str(tmp_path))
    assert o200k._tiktoken_cache() == str(damaged.parent)
    assert o200k._holds_vocabulary(str(damaged))


def test_concurrent_cold_builds_agree(tmp_path: Path, reference: Encoding) -> None:
    cache = tmp_path / "shared-cache"
    # Each worker builds the table and materialises tiktoken's cache file at the same time.
    script = (
        "import os, sys; from tiermem.index import o200k\n"
        "folder = o200k._tiktoken_cache()\n"
        "cached = os.path.join(folder, o200k._tiktoken_cache_name())\n"
        "print(o200k.count(sys.stdin.read()), o200k._holds_vocabulary(cached))\n"
    )
    env = {**os.environ, "TIERMEM_CACHE_DIR": str(cache)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for _ in range(4)
    ]
    results = [worker.communicate(MARKDOWN, timeout=120) for worker in workers]
    want = expected(reference, MARKDOWN)
    for worker, (out, err) in zip(workers, results, strict=True):
        assert worker.returncode == 0, err
        assert out.split() == [str(want), "True"]
    assert o200k._map_table(str(cache / o200k._TABLE_NAME)) is not None
    leftovers = [p for p in cache.rglob("*") if p.name.endswith(".tmp")]
    assert not leftovers
