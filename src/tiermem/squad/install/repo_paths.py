"""Paths in an untrusted repository: every path `squad install` reads or writes is checked
for links and escapes here before any use, and every file it writes is replaced whole from a
temp file kept where git does not see it."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath

from ...errors import StoreError, UsageError
from ...storage import safepath, validate

# Where an install writes a file before renaming it into place: the store's folder, whose
# `.gitignore` ignores `.tmp-*`, so a run killed half-way leaves nothing beside the team's
# files that `git add -A` would take; the next run removes what such a run left there.
TEMP_FOLDER = ".squad/memory"
TEMP_PREFIX = ".tmp-install-"


class Repo:
    """A repository root whose paths are checked for links and escapes before any use."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def path(self, rel: str) -> Path:
        """The path of `rel`, refused when any part of it is a link or it leads outside."""
        current = self.root
        for part in PurePosixPath(rel).parts:
            if part in ("", ".", "..") or "/" in part:
                raise UsageError(f"{rel}: not a plain path inside the repository")
            current = current / part
            try:
                mode = current.lstat().st_mode
            except FileNotFoundError:
                break
            except OSError as exc:
                raise UsageError(f"{self.shown(current)} cannot be read ({exc.strerror})") from None
            if stat.S_ISLNK(mode):
                raise UsageError(
                    f"{self.shown(current)} is a symbolic link; tiermem reads and writes no "
                    "repository path through a link (nothing was written)"
                )
        target = self.root / rel
        real = Path(os.path.realpath(target))
        if real != self.root and self.root not in real.parents:
            raise UsageError(f"{rel} leads outside {self.root} (nothing was written)")
        return target

    def shown(self, path: Path) -> str:
        """A path as the user sees it: relative to the root."""
        return path.relative_to(self.root).as_posix()

    def read(self, rel: str) -> bytes | None:
        """A regular file's bytes, or None when it does not exist."""
        path = self.path(rel)
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(mode):
            raise UsageError(f"{rel} is not a regular file (nothing was written)")
        data = safepath.read_bytes(path)  # O_NOFOLLOW: a link put in since is refused
        if data is None:
            return None
        if len(data) > validate.MAX_INPUT_BYTES:
            limit = validate.MAX_INPUT_BYTES
            raise UsageError(f"{rel} is over {limit} bytes (nothing was written)")
        return data

    def text(self, rel: str) -> str | None:
        """A file's UTF-8 text, or None when it does not exist."""
        data = self.read(rel)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{rel} is not valid UTF-8 (nothing was written)") from None

    def exists(self, rel: str) -> bool:
        """Whether anything (a file, a folder, a link) is at `rel`."""
        try:
            self.path(rel).lstat()
        except FileNotFoundError:
            return False
        return True

    def is_dir(self, rel: str) -> bool:
        """Whether `rel` is a real folder (not a link to one)."""
        path = self.path(rel)
        try:
            return stat.S_ISDIR(path.lstat().st_mode)
        except FileNotFoundError:
            return False

    def missing_dirs(self, rel: str) -> list[str]:
        """The folders above `rel` that do not exist yet, outermost first."""
        parents = [p.as_posix() for p in reversed(PurePosixPath(rel).parents) if str(p) != "."]
        return [p for p in parents if not self.is_dir(p)]

    def write(self, rel: str, data: bytes) -> None:
        """Replace a file whole: readers see the old bytes or the new, never a mix. The new
        bytes are written to a temp file in `TEMP_FOLDER` and renamed into place (beside the
        file only where the two lie on different file systems)."""
        target = self.path(rel)
        folders = [self.path(TEMP_FOLDER)] if self.is_dir(TEMP_FOLDER) else []
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            for folder in [*folders, target.parent]:
                tmp = _synced_temp(folder, data)
                try:
                    os.replace(tmp, target)
                    return
                except OSError as exc:
                    _remove_quietly(tmp)
                    if exc.errno != errno.EXDEV or folder == target.parent:
                        raise
        except OSError as exc:
            raise StoreError(f"cannot write {rel}: {exc.strerror or exc}") from None

    def remove_dead_temps(self, folders: tuple[str, ...]) -> None:
        """Remove the temp files in `folders` that processes no longer running left (an
        install or a write killed before its rename): a temp file's name holds the id of its
        process, and one still running keeps its own."""
        for rel in folders:
            if not self.is_dir(rel):
                continue
            with os.scandir(self.path(rel)) as listing:
                for item in listing:
                    found = _TEMP.fullmatch(item.name)
                    if found and item.is_file(follow_symlinks=False) and _gone(int(found[1])):
                        _remove_quietly(item.path)


# A temp file of tiermem's: `.tmp-PID-HEX`, `.tmp-install-PID-HEX`, `.tmp-index-PID-HEX...`.
_TEMP = re.compile(r"\.tmp-(?:[a-z]+-)?(\d{1,10})-[0-9a-f]{12}.*")


def _gone(pid: int) -> bool:
    """Whether no process has this id (one of another user's is still running)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def _synced_temp(folder: Path, data: bytes) -> str:
    """A new temp file in `folder` holding `data`, flushed to disk."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | safepath.NOFOLLOW | safepath.CLOEXEC
    name = str(folder / f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}")
    fd = os.open(name, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _remove_quietly(name)
        raise
    os.close(fd)
    return name


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
