"""A long text is counted in pieces (its token list whole would take hundreds of MB), and the
pieces' counts add up to what tiktoken counts of the whole, wherever the cuts fall."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import corpora
from tiermem.index import tokens

CORPORA = corpora.CORPORA
# Runs on the o200k_base pattern's class boundaries, line breaks and slashes the most.
TRICKY = [*"\n\n\r\t /.-'sSZé19٣²中ゃ\u0301😀#*`|<>", "\n\n", "\r\n", " /", "word", "'ll", "  "]


def _whole(text: str) -> int:
    return len(tokens.loaded().encode_ordinary(text))


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(TRICKY), max_size=300).map("".join),
    size=st.integers(1, 30),
)
def test_pieces_rejoin_and_count_as_the_whole(text: str, size: int) -> None:
    cut = list(tokens.pieces(text, size))
    assert "".join(cut) == text
    assert all(len(piece) > size for piece in cut[:-1])  # each cut after `size` characters
    assert sum(_whole(piece) for piece in cut) == _whole(text)


def test_a_text_over_the_piece_size_is_counted_in_pieces_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [
        f"### 2026-03-{d % 28 + 1:02d}: Fix #{d} in src/cli/run{d}.ts\n- Done.\n"
        for d in range(300)
    ]
    text = "".join(lines)
    whole = _whole(text)
    counted: list[str] = []
    encoding = tokens.loaded()
    encode = encoding.encode_ordinary
    monkeypatch.setattr(encoding, "encode_ordinary", lambda t: counted.append(t) or encode(t))
    monkeypatch.setattr(tokens, "PIECE_CHARS", 1000)
    assert tokens.O200K.count_many(["short", text, ""]) == [1, whole, 0]
    assert len(counted) > 10 and max(map(len, counted)) < 1200  # never the whole at once
    assert "".join(counted) == "short" + text


def test_real_histories_count_the_same_in_pieces() -> None:
    histories = sorted(CORPORA.glob("*/.squad/agents/*/history.md"))[:12]
    if not histories:
        pytest.skip(corpora.MISSING)
    for path in histories:
        text = path.read_text(encoding="utf-8")
        assert sum(_whole(p) for p in tokens.pieces(text, 2000)) == _whole(text), path


@settings(max_examples=400, deadline=None)
@given(
    before=st.lists(st.sampled_from(TRICKY), max_size=40).map("".join),
    after=st.lists(st.sampled_from(TRICKY), max_size=40).map("".join),
)
def test_texts_that_join_exactly_count_as_their_parts(before: str, after: str) -> None:
    if tokens.joins_exactly(before, after):
        assert _whole(before + after) == _whole(before) + _whole(after)


def test_a_join_is_exact_only_at_a_line_break_before_a_word() -> None:
    assert tokens.joins_exactly("## Title\n", "- a bullet\n")
    assert tokens.joins_exactly("", " anything") and tokens.joins_exactly("anything", "")
    assert not tokens.joins_exactly("## Title\n", " indented")  # the spaces join the break
    assert not tokens.joins_exactly("path\n", "/etc")  # a slash runs on from the break
    assert not tokens.joins_exactly("no break", "here")
    # Where it says no, the parts can indeed count otherwise than the whole.
    assert _whole("a\n" + "\n") != _whole("a\n") + _whole("\n")
