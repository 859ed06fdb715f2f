"""SHA-256 digests and HMACs that do not load OpenSSL to hash a few hundred bytes.

`hashlib` loads OpenSSL on import (2 ms, a tenth of a `tiermem hot note`'s start-up) and a
hot note, a search and a spawn each hash a few short strings: CPython's own SHA-256 loads in
a twentieth of that. OpenSSL hashes long texts several times faster, so from `LARGE` bytes
on (an archive record of a long import) `hashlib` is loaded after all, once.
"""

from __future__ import annotations

from _operator import _compare_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256 as _small
else:
    try:
        from _sha256 import sha256 as _small  # CPython 3.11's own SHA-256
    except ImportError:  # the same module from 3.12 on, else hashlib's
        try:
            from _sha2 import sha256 as _small
        except ImportError:
            from hashlib import sha256 as _small

LARGE = 256 * 1024  # bytes from which OpenSSL's speed pays for loading it
_BLOCK = 64  # SHA-256's block size, which HMAC pads its key to
# The hasher itself, for text known to be short (an id's parts, a name): one call into C.
short_sha256 = _small


def sha256(data: bytes) -> bytes:
    """The SHA-256 of some bytes."""
    if len(data) < LARGE:
        return _small(data).digest()
    import hashlib

    return hashlib.sha256(data).digest()


def sha256_hex(data: bytes | str) -> str:
    """The SHA-256 of bytes, or of text as UTF-8, in hex (a long text encoded a part at a
    time: a 50 MB history is not copied whole to be hashed)."""
    if isinstance(data, str) and len(data) >= LARGE:
        import hashlib

        hasher = hashlib.sha256()
        for start in range(0, len(data), LARGE):
            hasher.update(data[start : start + LARGE].encode("utf-8"))
        return hasher.hexdigest()
    return sha256(data.encode("utf-8") if isinstance(data, str) else data).hex()


def hmac_sha256_hex(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) of a message under a key, in hex: what `hmac.new(key,
    message, hashlib.sha256).hexdigest()` gives."""
    if len(key) > _BLOCK:
        key = sha256(key)
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message)
    return sha256(bytes(b ^ 0x5C for b in key) + inner).hex()


def same(a: str, b: str) -> bool:
    """Whether two digests are equal, in a time that does not tell where they differ
    (`hmac.compare_digest`, whose module loads OpenSSL)."""
    return _compare_digest(a, b)
