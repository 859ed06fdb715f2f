"""The Squad files this clone imported: the digest of each file's bytes whose import finished
(`tiermem-local/imported`, never committed), which tells `scribe run` what changed since
(`follow`) in a read and a hash."""

from __future__ import annotations

from ...context import Context
from ...errors import TiermemError
from ...storage import clone, digest, files
from .import_sources import Source

RECORD = "imported"  # in this clone's own folder: `SHA-256 path` of each file imported


def remember(ctx: Context, found: list[Source]) -> None:
    """Record the digest of every file whose import finished (an unreadable one is left
    out: it is read again next time)."""
    lines = sorted(f"{sha} {s.rel}\n" for s in found if (sha := of_file(s)))
    clone.ready(ctx.layout)
    files.atomic_write(ctx.layout.local / RECORD, "".join(lines))


def known(ctx: Context) -> dict[str, str]:
    """Path -> digest of the files this clone recorded as imported."""
    try:
        data = files.read_bytes(ctx.layout.local / RECORD) or b""
    except TiermemError:  # a link in its place: only a cache, every file is checked again
        return {}
    found = {}
    for line in data.decode("utf-8", "replace").splitlines():
        sha, _, rel = line.partition(" ")
        if len(sha) == 64 and rel:
            found[rel] = sha
    return found


def of_file(source: Source) -> str:
    """The SHA-256 of a file's bytes ('' when it cannot be read: it counts as changed)."""
    try:
        data = files.read_bytes(source.path)
    except (TiermemError, OSError):
        return ""
    return digest.sha256_hex(data) if data is not None else ""
