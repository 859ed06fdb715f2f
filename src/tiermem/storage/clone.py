"""This clone's mark: what tells a search index built here from one that came from elsewhere.

The index is git-ignored, but a contributor can force-add one, and a copy can carry one: its
rows would then be served as if the markdown held them. So every index tiermem builds is
sealed with this clone's mark, and an index without the right seal is never read (it is
built again from the files).

The mark is a random key in `tiermem-local/clone-key` (this clone's untracked state) together with
the identity of that file: its inode and change time. A file that git checks out or a
person copies is a new file on this disk, whose inode and change time nobody who committed
it could know, so even a committed key does not give its committer this clone's mark.
The key file is written once and never again (its change time must not move).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ParseError, StoreError
from . import digest, files, safepath
from .layout import Layout

KEY_NAME = "clone-key"
_KEY = re.compile(rb"[0-9a-f]{64}\n?")
IGNORE_ALL = "# Local state of this clone: never committed.\n*\n"


def key_path(layout: Layout) -> Path:
    """Where this clone keeps its key."""
    return layout.local / KEY_NAME


def ready(layout: Layout) -> None:
    """The local folder, ignored by git whatever the store's own .gitignore says."""
    folder = layout.local
    if not files.exists(folder / ".gitignore"):
        files.atomic_write(folder / ".gitignore", IGNORE_ALL)


def mark(layout: Layout) -> str:
    """This clone's mark, making its key first if there is none (or none that reads)."""
    found = peek(layout)
    if found is not None:
        return found
    path = key_path(layout)
    with files.locked(layout, path):
        found = peek(layout)  # another process made it while we waited
        if found is None:
            kind = safepath.kind(path)
            if kind not in ("missing", "file"):
                raise StoreError(
                    f"{layout.relative(path)} is a {kind}, not this clone's key "
                    "(`tiermem doctor --repair` removes it)"
                )
            ready(layout)
            files.atomic_write(path, os.urandom(32).hex() + "\n")
            found = peek(layout)
    if found is None:
        raise ParseError(path, 1, "cannot be read back after writing it")
    return found


def peek(layout: Layout) -> str | None:
    """This clone's mark, or None when it has no key yet (nothing is written)."""
    path = key_path(layout)
    try:
        data = files.read_bytes(path)
        st = os.lstat(path)
    except (OSError, ParseError):
        return None
    if data is None or not _KEY.fullmatch(data):
        return None
    return f"{data[:64].decode('ascii')}:{st.st_ino}:{st.st_ctime_ns}"


def seal(clone_mark: str, what: str) -> str:
    """The seal of an index over `what` (its schema and its objects), by this clone."""
    key, _, identity = clone_mark.partition(":")
    message = f"{identity}\n{what}".encode()
    return digest.hmac_sha256_hex(bytes.fromhex(key), message)
