"""Files under `.squad/`: atomic writes, create-only records, per-file locks, safe reads.

Every write goes to a temp file next to its target and is renamed into place, so readers
see the old or the new content, never a mix; locks are advisory OS locks that die with
their process. Every path is first checked by `safepath.check` (no link, no `..`, from
`.squad` down), files are opened with O_NOFOLLOW, and before anything is written the
store's own folders and files are checked too (`check_store`), so a committed link makes a
command refuse before its first write, not half-way through.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import LockTimeout, ParseError, StoreError, UnsafePathError
from ..vocabulary import QUEUE, TIERS
from . import safepath
from .layout import LOCAL_FOLDER, Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, TypeVar

    _T = TypeVar("_T")

LOCK_TIMEOUT_SECONDS = 60.0
TEMP_PREFIX = ".tmp-"
# A temp file this old belongs to a write that was killed: the next write next to it (or
# `tiermem doctor --repair`) removes it.
STALE_TEMP_SECONDS = 15 * 60
_LOCK_NAME_BYTES = 200

# The folders and files of a store that every write relies on, checked before any write.
STORE_FOLDERS = (*TIERS, QUEUE, ".locks", LOCAL_FOLDER)
INDEX_SIDES = ("", "-wal", "-shm", "-journal")  # the index, and what SQLite keeps beside it


def store_files(layout: Layout) -> list[str]:
    """Names of the store's own files in `.squad/memory/`: the audit trail, the config, and
    the index with its log."""
    index = layout.index.name
    return [layout.audit.name, layout.config.name, *(index + side for side in INDEX_SIDES)]


def index_files(layout: Layout) -> list[str]:
    """Names of the index and what SQLite keeps beside it."""
    return [layout.index.name + side for side in INDEX_SIDES]


def _failed(action: str, path: Path | str, exc: OSError) -> StoreError:
    """An OS failure (disk full, permissions, a name too long) as one line."""
    reason = exc.strerror or str(exc)
    return StoreError(f"cannot {action} {path}: {reason}")


# --- checks ---------------------------------------------------------------------------


def _store_of(path: Path) -> Layout | None:
    """The store a path lies in (the folder above its first `.squad`), if any."""
    parts = path.absolute().parts
    if safepath.SQUAD not in parts:
        return None
    return Layout(Path(*parts[: parts.index(safepath.SQUAD)]))


def check_store(layout: Layout) -> None:
    """Refuse a store whose own folders or files are links or of the wrong type.

    Runs before every write, so that a link committed in place of `hot/`, `.locks/` or
    `audit.jsonl` stops a command before it writes anything.
    """
    safepath.check(layout.memory)  # the root's .squad and .squad/memory: no link
    for path in (layout.squad, layout.memory):
        _expect(str(path), "folder")
    memory = str(layout.memory)
    for name in STORE_FOLDERS:  # one lstat each: the folders above them are known now
        _expect(os.path.join(memory, name), "folder")
    for name in store_files(layout):
        _expect(os.path.join(memory, name), "file")


def _expect(path: str, wanted: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISLNK(mode):
        raise UnsafePathError(path, safepath.LINK_REASON)
    if (stat.S_ISDIR(mode) if wanted == "folder" else stat.S_ISREG(mode)) is False:
        article = "a folder" if wanted == "folder" else "a regular file"
        raise UnsafePathError(path, f"is not {article} (run `tiermem doctor` for what to do)")


def _before_write(path: Path) -> Path:
    """The checked path of a write, once its store is known to be safe to write in."""
    layout = _store_of(path)
    if layout is not None:
        check_store(layout)
    return safepath.check(path)


# --- reading --------------------------------------------------------------------------


read_bytes = safepath.read_bytes


def read_text(layout: Layout, path: Path) -> str | None:
    """A file's text, or None when it does not exist; refuses links and invalid UTF-8."""
    data = read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(path, line, "is not valid UTF-8") from None


def exists(path: Path) -> bool:
    """Whether anything is at a path (a link counts: it is not followed)."""
    return safepath.kind(safepath.check(path)) != "missing"


def is_file(path: Path) -> bool:
    """Whether a path is a regular file, reached without following any link."""
    try:
        return safepath.kind(safepath.check(path)) == "file"
    except UnsafePathError:
        return False


def is_folder(path: Path) -> bool:
    """Whether a path is a folder, reached without following any link."""
    try:
        return safepath.kind(safepath.check(path)) == "folder"
    except UnsafePathError:
        return False


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a folder, as listed: never followed if it is a link."""

    name: str
    folder: str
    kind: str  # file, folder, link or other

    @property
    def path(self) -> Path:
        """The entry's full path (made when asked: every read lists the tiers)."""
        return Path(self.folder, self.name)

    def lstat(self) -> os.stat_result:
        """Size and times of the entry itself (a link's own, for a link)."""
        return os.lstat(os.path.join(self.folder, self.name))


def _kind_of(item: os.DirEntry[str]) -> str:
    if item.is_symlink():
        return "link"
    if item.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if item.is_file(follow_symlinks=False) else "other"


def _scan(folder: Path) -> list[tuple[str, str]]:
    """(name, kind) of a folder's entries, unsorted (nothing when it does not exist or is no
    folder); the folder itself is reached without following links (UnsafePathError
    otherwise)."""
    return _entries(folder, _kind_of)


def stamps(folder: Path, wanted: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    """(name, "size:mtime") of the entries of a folder that `wanted(name, kind)` keeps, as
    `_scan` lists them; each stamp is read beside the listing, relative to the open folder
    (no path resolved again: every read stamps every tier file), a link's own, "" when the
    entry vanished since the listing."""

    def stamp(item: os.DirEntry[str]) -> str | None:
        if not wanted(item.name, _kind_of(item)):
            return None
        try:
            st = item.stat(follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return ""
        return f"{st.st_size}:{st.st_mtime_ns}"

    return _entries(folder, stamp)


def _entries(folder: Path, read: Callable[[os.DirEntry[str]], _T | None]) -> list[tuple[str, _T]]:
    """(name, what `read` says of it) of a folder's entries it says something of; the folder
    reached as `_scan` reaches it, read while its descriptor is open."""
    folder = safepath.check(folder)
    flags = os.O_RDONLY | safepath.NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | safepath.CLOEXEC
    try:
        fd = os.open(folder, flags)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        if safepath.is_link_error(exc):
            raise UnsafePathError(folder, safepath.LINK_REASON) from None
        raise ParseError(folder, 1, f"cannot be listed ({exc.strerror})") from None
    try:
        with os.scandir(fd) as found:
            return [(i.name, said) for i in found if (said := read(i)) is not None]
    except FileNotFoundError:
        return []
    finally:
        os.close(fd)


def listing(folder: Path) -> list[Item]:
    """What a folder holds, in name order (nothing when it does not exist or is no folder).

    The folder itself is reached without following links (UnsafePathError otherwise); its
    entries are listed as they are, links included, for the caller to skip.
    """
    where = str(safepath.check(folder))
    items = [Item(name, where, kind) for name, kind in _scan(folder)]
    return sorted(items, key=lambda i: i.name)


class Folder:
    """A folder opened once, never through a link, whose files are then read by name: what
    `read_bytes` guarantees for each file, without checking the folder's path again for each
    of thousands of records."""

    def __init__(self, path: Path) -> None:
        self.path = safepath.check(path)
        flags = os.O_RDONLY | safepath.NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | safepath.CLOEXEC
        try:
            self.fd = os.open(self.path, flags)
        except (FileNotFoundError, NotADirectoryError):
            self.fd = -1  # vanished since it was listed, and so did its files
        except OSError as exc:
            if safepath.is_link_error(exc):
                raise UnsafePathError(self.path, safepath.LINK_REASON) from None
            raise ParseError(self.path, 1, f"cannot be listed ({exc.strerror})") from None

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *_: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def lstat(self, name: str) -> os.stat_result:
        """A file's own size and times (a link's, for a link); FileNotFoundError when gone."""
        if self.fd < 0:
            raise FileNotFoundError(self.path / name)
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def read(self, name: str) -> tuple[bytes, os.stat_result] | None:
        """A file's bytes and the size and times they go with, None when it is gone: a file
        that grew while it was read (entries are appended to cold files) is read again."""
        got = None
        for _ in range(3):
            got = self._read_once(name)
            if got is None or len(got[0]) == got[1].st_size:
                break
        return got

    def _read_once(self, name: str) -> tuple[bytes, os.stat_result] | None:
        flags = os.O_RDONLY | safepath.NOFOLLOW | safepath.NONBLOCK | safepath.CLOEXEC
        try:
            if self.fd < 0:
                return None
            fd = os.open(name, flags, dir_fd=self.fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if safepath.is_link_error(exc):
                raise UnsafePathError(self.path / name, safepath.LINK_REASON) from None
            raise ParseError(self.path / name, 1, f"cannot be read ({exc.strerror})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                what = "Is a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                raise ParseError(self.path / name, 1, f"cannot be read ({what})")
            return _read_all(fd, st.st_size), os.fstat(fd)
        except OSError as exc:
            raise ParseError(self.path / name, 1, f"cannot be read ({exc.strerror})") from None
        finally:
            os.close(fd)


def _read_all(fd: int, size: int) -> bytes:
    """Everything a descriptor still holds, read in the fewest calls its size allows (an
    archive's thousands of small records are read each in one)."""
    parts = []
    while chunk := os.read(fd, max(size + 1, 65_536)):
        parts.append(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def file_names(folder: Path, suffix: str = ".md") -> list[str]:
    """The names of a folder's regular files with this suffix, unsorted, no temp file: what
    `memory_files` lists, without making a path of each (an archive folder holds thousands)."""
    return [
        name
        for name, kind in _scan(folder)
        if name.endswith(suffix) and not name.startswith(TEMP_PREFIX) and kind == "file"
    ]


def memory_files(folder: Path, suffix: str = ".md") -> list[Path]:
    """The regular files of a tier folder with this suffix, in name order: no temp file, no
    link (a link is never memory), no folder."""
    return [
        item.path
        for item in listing(folder)
        if item.name.endswith(suffix)
        and not item.name.startswith(TEMP_PREFIX)
        and item.kind == "file"
    ]


def subfolders(folder: Path) -> list[Path]:
    """The folders in a folder, in name order; links to folders are not folders here."""
    return [item.path for item in listing(folder) if item.kind == "folder"]


# --- writing --------------------------------------------------------------------------


def ensure_folder(path: Path) -> None:
    """Make a folder (and the folders above it, from `.squad` down), never through a link."""
    if safepath.kind(safepath.check(path)) == "folder":
        return  # the common case: nothing to make
    path = _before_write(path)
    missing = []
    current = path
    while safepath.kind(current) == "missing" and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _failed("create the folder", folder, exc) from None
        if safepath.kind(folder) != "folder":
            raise UnsafePathError(folder, "is not a folder")
    if safepath.kind(path) != "folder":
        raise UnsafePathError(path, "is not a folder")


def _temp_in(folder: Path) -> tuple[int, str]:
    """A new temp file next to its target (same file system, so the rename is atomic)."""
    for _ in range(100):
        name = folder / f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | safepath.NOFOLLOW | safepath.CLOEXEC
            return os.open(name, flags, 0o644), str(name)
        except FileExistsError:
            continue
    raise StoreError(f"cannot create a temp file in {folder}")


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so readers see the old or the new content, never a mix.

    The data is fsynced before the rename, so a crash or power loss leaves the old or the
    new version. The folder is not fsynced: losing the rename itself to a power cut brings
    back the previous version, which still holds everything, and every raw text is in the
    archive (whose records are fully durable) before any tier drops it. A full disk leaves
    the old file as it was and no temp file behind.
    """
    path = _replaceable(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = _synced_temp(path.parent, raw)
    with _cleaned_up(tmp, path):
        os.replace(tmp, path)


@contextlib.contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """Write a file in pieces as `atomic_write` writes one whole: into a temp file beside
    it, synced, then renamed over it; a failure leaves the old file and no temp file."""
    path = _replaceable(path)
    ensure_folder(path.parent)
    try:
        fd, tmp = _temp_in(path.parent)
    except OSError as exc:
        raise _failed("write in", path.parent, exc) from None
    with _cleaned_up(tmp, path):
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)


def _replaceable(path: Path) -> Path:
    """The checked path of a file a write may replace: missing, or a regular file."""
    path = _before_write(path)
    if safepath.kind(path) not in ("missing", "file"):
        raise UnsafePathError(path, "is not a regular file; tiermem does not replace it")
    return path


@contextlib.contextmanager
def _cleaned_up(tmp: str, path: Path) -> Iterator[None]:
    """Remove the temp file when writing or renaming it over `path` fails."""
    try:
        yield
    except OSError as exc:
        _remove_quietly(tmp)
        raise _failed("write", path, exc) from None
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str | Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _synced_temp(folder: Path, data: bytes) -> str:
    """A temp file in `folder` holding `data`, flushed to disk; removed again on failure."""
    ensure_folder(folder)
    _clean_stale_temps(folder)
    try:
        fd, tmp = _temp_in(folder)
    except OSError as exc:
        raise _failed("write in", folder, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        _remove_quietly(tmp)
        raise _failed("write in", folder, exc) from None
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


_CLEANED: set[str] = set()


def _clean_stale_temps(folder: Path) -> None:
    """Remove temp files of writes killed long ago (once per folder and process)."""
    key = str(folder)
    if key in _CLEANED:
        return
    _CLEANED.add(key)
    stale_temps(folder, remove=True)


def stale_temps(folder: Path, remove: bool = False, now: float | None = None) -> list[Path]:
    """Temp files in a folder older than STALE_TEMP_SECONDS (removed, if asked)."""
    now = time.time() if now is None else now
    found = []
    try:
        temps = [n for n, kind in _scan(folder) if n.startswith(TEMP_PREFIX) and kind != "folder"]
    except ParseError:
        return []
    for name in temps:
        path = Path(folder, name)
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        if age > STALE_TEMP_SECONDS:
            found.append(path)
            if remove:
                _remove_quietly(path)  # a link is removed, never followed
    return sorted(found)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | safepath.NOFOLLOW)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write a new file atomically and durably; False (and no write) when it already exists.

    Something other than a regular file in its place (a link, a folder) is refused: a
    record that only seemed to exist would let a tier drop the text it holds.
    """
    path = _before_write(path)
    found = safepath.kind(path)
    if found == "file":
        return False
    if found != "missing":
        raise UnsafePathError(path, f"is a {found}, not an archive record")
    tmp = _synced_temp(path.parent, data)
    try:
        os.link(tmp, path)  # link fails if the name exists: no overwrite race
    except FileExistsError:
        if safepath.kind(path) != "file":
            raise UnsafePathError(path, "is not a regular file") from None
        return False
    except OSError as exc:
        raise _failed("write", path, exc) from None
    finally:
        _remove_quietly(tmp)
    _fsync_dir(path.parent)
    return True


def move(path: Path, target: Path) -> None:
    """Move a file to a new name in the store (never over a file already there)."""
    path = _before_write(path)
    target = _before_write(target)
    ensure_folder(target.parent)
    if safepath.kind(target) != "missing":
        target = target.with_name(f"{target.name}.{os.urandom(3).hex()}")
    try:
        os.rename(path, target)
    except OSError as exc:
        raise _failed("move", path, exc) from None


def unlink(path: Path) -> None:
    """Remove a file (a link is never followed); nothing when it is already gone."""
    path = _before_write(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _failed("remove", path, exc) from None


def _open_append(path: Path, create: bool = True) -> int:
    """A descriptor to append to a regular file (never through a link)."""
    flags = os.O_WRONLY | os.O_APPEND | safepath.NOFOLLOW | safepath.CLOEXEC
    try:
        fd = os.open(path, flags | (os.O_CREAT if create else 0), 0o644)
    except OSError as exc:
        if safepath.is_link_error(exc):
            raise UnsafePathError(path, safepath.LINK_REASON) from None
        raise _failed("write", path, exc) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(path, "is not a regular file")
    return fd


def append(path: Path, data: bytes) -> None:
    """Append bytes to a file in one write (O_APPEND, never through a link)."""
    fd = _open_append(_before_write(path))
    try:
        os.write(fd, data)
    except OSError as exc:
        raise _failed("write", path, exc) from None
    finally:
        os.close(fd)


def append_synced(path: Path, data: bytes) -> None:
    """Add bytes to the end of an existing file durably: one write, one fsync.

    The file's earlier bytes are neither read nor written again, so the cost is that of
    the new bytes alone. A write or fsync that fails (a full disk) cuts the file back to
    the size it had, so a failure leaves the old file as it was. One write under the
    file's lock (the caller holds it): readers see the file before or after it.
    """
    path = _before_write(path)
    fd = _open_append(path, create=False)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise _failed("write", path, exc) from None
    finally:
        os.close(fd)


def read_tail(path: Path, limit: int) -> tuple[bytes, int] | None:
    """The last `limit` bytes of a file and its size, None when it does not exist (never
    through a link)."""
    fd = safepath.open_regular(safepath.check(path))
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - limit)
        return os.pread(fd, size - start, start), size
    except OSError as exc:
        raise ParseError(path, 1, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


# --- locks ----------------------------------------------------------------------------


@contextlib.contextmanager
def locked(
    layout: Layout, path: Path, shared: bool = False, timeout: float | None = None
) -> Iterator[None]:
    """Hold the cross-process lock of one memory file (re-entrant within a thread), and with
    it the store's lock, shared (`store_locked`), waiting up to `timeout` seconds for the
    file's (LOCK_TIMEOUT_SECONDS unless told) before LockTimeout.

    Locks are advisory OS locks on files in `.squad/memory/.locks/`: the OS releases them
    when a process dies, so a crash never leaves a store locked. `shared` locks are held
    together by many (readers of the index), and keep out an exclusive one.
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
    with store_locked(layout):
        fd = open_lock(layout, name)
        try:
            # Each thread opens its own descriptor: the OS lock then keeps threads apart too.
            acquire(fd, layout.relative(path), shared, timeout)
            held[name] = 1
            try:
                yield
            finally:
                del held[name]
        finally:
            os.close(fd)  # closing the descriptor releases the lock


# The lock of the whole store: every holder of a file's lock holds it too, shared; what
# removes the store (`tiermem squad install --uninstall`) holds it alone, from the moment it
# looks at the store until the store is gone.
STORE_LOCK = "store.lock"


@contextlib.contextmanager
def store_locked(layout: Layout, alone: bool = False) -> Iterator[None]:
    """Hold the store's lock: shared with every other writer and reader, or `alone`.

    One that waited while the store was removed finds its lock file gone and refuses, in one
    line, before it writes: a write then lands in no store that is being taken away, and a
    command never says it saved what an uninstall deleted a moment later.
    """
    key = str(layout.locks / STORE_LOCK)
    held = _held()
    if key in held:
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    fd = open_lock(layout, STORE_LOCK) if alone else _shared_store_fd(layout, key)
    try:
        acquire(fd, layout.relative(layout.memory), shared=not alone)
        try:
            if os.fstat(fd).st_nlink == 0:
                raise StoreError(
                    f"the tiermem store in {layout.relative(layout.memory)} was removed "
                    "(`tiermem squad install --uninstall`) while this command waited for it; "
                    "nothing was written"
                )
            held[key] = 1
            try:
                yield
            finally:
                del held[key]
        finally:
            release(fd)
    finally:
        if alone:
            os.close(fd)


def _shared_store_fd(layout: Layout, key: str) -> int:
    """This thread's descriptor on the store's lock file, opened once (a lock is taken with
    every write): opened again when the file it names was removed since, or in a child
    process, which must not share its parent's lock."""
    if not hasattr(_THREAD, "store_fds"):
        _THREAD.store_fds = {}
    fds: dict[str, tuple[int, int]] = _THREAD.store_fds
    fd, pid = fds.get(key, (-1, 0))
    if pid == os.getpid():
        if os.fstat(fd).st_nlink > 0:
            return fd
        os.close(fd)
    fd = open_lock(layout, STORE_LOCK)
    fds[key] = (fd, os.getpid())
    return fd


def open_lock(layout: Layout, name: str) -> int:
    """A descriptor on a lock file in `.locks/` (created; never through a link)."""
    path = layout.locks / name
    ensure_folder(layout.locks)
    flags = os.O_RDWR | os.O_CREAT | safepath.NOFOLLOW | safepath.CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except OSError as exc:
        if safepath.is_link_error(exc):
            raise UnsafePathError(path, safepath.LINK_REASON) from None
        raise _failed("lock", path, exc) from None


# `threading.local` itself: the `threading` module, which a lock does not need, is not loaded.
_THREAD = _thread._local()


def _held() -> dict[str, int]:
    """The locks this thread holds, by name (re-entry within a thread is allowed)."""
    if not hasattr(_THREAD, "held"):
        _THREAD.held = {}
    held: dict[str, int] = _THREAD.held
    return held


def _lock_name(layout: Layout, path: Path) -> str:
    """A lock file name from the path as written (links are not followed: never a ValueError);
    a long one is shortened to a digest, so that no lock name is too long for the disk."""
    name = path.name
    for base in (layout.memory, layout.root):
        with contextlib.suppress(ValueError):
            name = path.relative_to(base).as_posix().replace("/", "__")
            break
    if len(name.encode("utf-8", "surrogateescape")) > _LOCK_NAME_BYTES:
        from .digest import short_sha256

        digest = short_sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        name = f"long-{digest}"
    return name + ".lock"


def acquire(fd: int, what: str, shared: bool = False, timeout: float | None = None) -> None:
    """Take a lock on fd, waiting up to `timeout` seconds (LOCK_TIMEOUT_SECONDS unless told)."""
    deadline = time.monotonic() + (LOCK_TIMEOUT_SECONDS if timeout is None else timeout)
    pause = 0.001
    while not try_lock(fd, shared):
        if time.monotonic() > deadline:
            raise LockTimeout(f"{what} is locked by another process")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def try_lock(fd: int, shared: bool = False) -> bool:
    """Take (or convert to) an exclusive or shared lock on fd without waiting."""
    if sys.platform == "win32":
        import msvcrt

        if shared:
            # Windows locks are exclusive only; it refuses to replace a file another process
            # has open anyway, which is all a shared lock guards against here.
            return True
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def release(fd: int) -> None:
    """Give up the lock held on fd (the descriptor stays open)."""
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def is_temp(path: Path) -> bool:
    """Whether a file is a write in progress (never memory)."""
    return path.name.startswith(TEMP_PREFIX)
