"""SHA-256 and HMAC without OpenSSL at start-up (`storage.digest`) give what hashlib and hmac
give, for short texts and long ones, and keys of every length."""

from __future__ import annotations

import hashlib
import hmac
import random

import pytest

from tiermem.storage import digest

SIZES = (0, 1, 55, 56, 63, 64, 65, 1000, digest.LARGE - 1, digest.LARGE, digest.LARGE * 3 + 7)


@pytest.mark.parametrize("size", SIZES)
def test_a_digest_is_hashlib_s(size: int) -> None:
    data = random.Random(size).randbytes(size)
    assert digest.sha256(data) == hashlib.sha256(data).digest()
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert digest.short_sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("repeat", (1, digest.LARGE // 7 + 1, digest.LARGE // 3))
def test_text_is_hashed_as_utf8(repeat: int) -> None:
    text = "décision \u2014 ship it \U0001f680" * repeat  # long ones a part at a time
    assert digest.sha256_hex(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("key_size", (0, 1, 32, 63, 64, 65, 200))
@pytest.mark.parametrize("size", (0, 17, 64, 5000))
def test_an_hmac_is_the_hmac_module_s(key_size: int, size: int) -> None:
    rng = random.Random(key_size * 10_000 + size)
    key, message = rng.randbytes(key_size), rng.randbytes(size)
    expected = hmac.new(key, message, hashlib.sha256).hexdigest()
    assert digest.hmac_sha256_hex(key, message) == expected


def test_digests_compare_as_equal_or_not() -> None:
    one = digest.sha256_hex("a")
    assert digest.same(one, digest.sha256_hex("a"))
    assert not digest.same(one, digest.sha256_hex("b"))
    assert not digest.same(one, one[:-1])
    assert not digest.same("", one)
