"""Paths in an untrusted repository: every path `squad install` reads or writes is checked
for links and escapes here before any use."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from ...errors import UsageError
from ...storage import safepath, validate


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
