"""Files under `.squad/memory/`: atomic writes, create-only records and per-file locks.

Every write goes to a temp file next to its target and is renamed into place, so readers
see the old or the new content, never a mix; locks are advisory OS locks that die with
their process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from .errors import ParseError, StoreError
from .layout import Layout

LOCK_TIMEOUT_SECONDS = 60.0
TEMP_PREFIX = ".tmp-"


def _temp_in(folder: Path) -> tuple[int, str]:
    """A new temp file next to its target (same file system, so the rename is atomic)."""
    for _ in range(100):
        name = folder / f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), str(name)
        except FileExistsError:
            continue
    raise StoreError(f"cannot create a temp file in {folder}")


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so readers see the old or the new content, never a mix.

    The data is fsynced before the rename, so a crash or power loss leaves the old or the
    new version. The folder is not fsynced: losing the rename itself to a power cut brings
    back the previous version, which still holds everything, and every raw text is in the
    archive (whose records are fully durable) before any tier drops it.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = _synced_temp(path.parent, raw)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _synced_temp(folder: Path, data: bytes) -> str:
    """A temp file in `folder` holding `data`, flushed to disk; removed again on failure."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_in(folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write a new file atomically and durably; False (and no write) when it already exists."""
    if path.exists():
        return False
    tmp = _synced_temp(path.parent, data)
    try:
        os.link(tmp, path)  # link fails if the name exists: no overwrite race
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(path.parent)
    return True


@contextlib.contextmanager
def locked(layout: Layout, path: Path) -> Iterator[None]:
    """Hold the cross-process lock of one memory file (re-entrant within a process).

    Locks are advisory OS locks on files in `.squad/memory/.locks/`: the OS releases them
    when a process dies, so a crash never leaves a store locked.
    """
    name = _lock_name(layout, path)
    held: dict[str, int] = _held()
    if name in held:
        held[name] += 1
        try:
            yield
        finally:
            held[name] -= 1
        return
    layout.locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(layout.locks / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        # Each thread opens its own descriptor: the OS lock then keeps threads apart too.
        _acquire(fd, layout.relative(path))
        held[name] = 1
        try:
            yield
        finally:
            del held[name]
    finally:
        os.close(fd)  # closing the descriptor releases the lock


_THREAD = threading.local()


def _held() -> dict[str, int]:
    """The locks this thread holds, by name (re-entry within a thread is allowed)."""
    if not hasattr(_THREAD, "held"):
        _THREAD.held = {}
    held: dict[str, int] = _THREAD.held
    return held


def _lock_name(layout: Layout, path: Path) -> str:
    """A lock file name from the path as written (links are not followed: never a ValueError)."""
    for base in (layout.memory, layout.root):
        with contextlib.suppress(ValueError):
            return path.relative_to(base).as_posix().replace("/", "__") + ".lock"
    return path.name + ".lock"


def _acquire(fd: int, what: str) -> None:
    """Take an exclusive lock on fd, waiting up to LOCK_TIMEOUT_SECONDS."""
    import time

    deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
    pause = 0.001
    while not _try_lock(fd):
        if time.monotonic() > deadline:
            raise StoreError(f"{what} is locked by another process")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def read_text(layout: Layout, path: Path) -> str | None:
    """A memory file's text, or None when it does not exist; refuses links out of the store."""
    if path.is_symlink() and not layout.inside(path):
        raise ParseError(path, 1, "is a symbolic link that points outside .squad/memory")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder where a file should be, no permission...
        raise ParseError(path, 1, f"cannot be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(path, line, "is not valid UTF-8") from None


def is_temp(path: Path) -> bool:
    """Whether a file is a write in progress (never memory)."""
    return path.name.startswith(TEMP_PREFIX)
