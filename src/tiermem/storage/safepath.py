"""Every path tiermem reads or writes is checked here first: a repository is untrusted input.

A store lives in `<root>/.squad/`. The root is the user's choice (and resolved), but all
that lies under `.squad/` came with a clone: symbolic links to anywhere, names with `..`,
names longer than a file system takes, a folder where a file should be. `check` accepts a
path only when no part of it from `.squad` down names `.` or `..` or is longer than 255
bytes, and no part that exists is a symbolic link, each part looked at with lstat and never
followed. Files are then opened with O_NOFOLLOW, so a link put in place after the check is
refused by the kernel too. A path outside any `.squad/` (a merge driver's temp file) has
only its last part checked.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import ParseError, UnsafePathError

SQUAD = ".squad"
MAX_NAME_BYTES = 255
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
LINK_REASON = "is a symbolic link; tiermem never follows links inside .squad/"


def _name_bytes(name: str) -> int:
    return len(name.encode("utf-8", "surrogateescape"))


def _start(parts: tuple[str, ...]) -> int:
    """Index of the first part that came with the repository (`.squad`), else the last."""
    for n, part in enumerate(parts):
        if part == SQUAD:
            return n
    return len(parts) - 1


def check(path: Path) -> Path:
    """The path made absolute, once every part of it from `.squad` down is safe to use.

    UnsafePathError names the first part that is a link, a `..` or too long. Parts that do
    not exist yet are fine: they are created by tiermem, as folders and files.
    """
    path = path.absolute()
    parts = path.parts
    start = _start(parts)
    for part in parts[start:]:
        if part in (".", ".."):
            raise UnsafePathError(path, "names '..' or '.'; tiermem keeps to the store's folders")
        if _name_bytes(part) > MAX_NAME_BYTES:
            raise UnsafePathError(path, f"has a name over {MAX_NAME_BYTES} bytes")
    current = os.path.join(*parts[:start]) if start else parts[0]
    for part in parts[start:]:  # strings, not paths: this runs before every read and write
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break  # the rest does not exist yet
        except OSError as exc:
            raise UnsafePathError(current, f"cannot be examined ({exc.strerror})") from None
        if stat.S_ISLNK(mode):
            raise UnsafePathError(current, LINK_REASON)
    return path


def kind(path: Path) -> str:
    """What is at a checked path, links not followed: file, folder, link, other or missing."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "other"


def is_link_error(exc: OSError) -> bool:
    """Whether an open with O_NOFOLLOW failed because the last part is a link."""
    return exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and NOFOLLOW != 0)


def open_regular(path: Path) -> int | None:
    """A read-only descriptor on a regular file at a checked path, None when nothing is
    there; never through a link (UnsafePathError), never a folder or a device (ParseError)."""
    flags = os.O_RDONLY | NOFOLLOW | NONBLOCK | CLOEXEC
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if is_link_error(exc):
            raise UnsafePathError(path, LINK_REASON) from None
        raise ParseError(path, 1, f"cannot be read ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise ParseError(path, 1, f"cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "Is a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ParseError(path, 1, f"cannot be read ({what})")
    return fd


def read_bytes(path: Path, limit: int = -1) -> bytes | None:
    """A file's bytes (its first `limit` bytes), or None when it does not exist; never
    through a link."""
    path = check(path)
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        raise ParseError(path, 1, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
