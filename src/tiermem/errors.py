"""Errors that tiermem reports to its users."""

from __future__ import annotations

from pathlib import Path


class TiermemError(Exception):
    """A problem with the user's input or store: reported in one line, exit status 2."""

    exit_code = 2


class UsageError(TiermemError):
    """Bad arguments or input text; nothing was written."""


class PartlyDone(TiermemError):
    """A command that stopped after writing part of what it meant to (exit status 1, not
    2: something was written); what it wrote is kept, and running it again finishes."""

    exit_code = 1


class NotFoundError(TiermemError):
    """A named agent, topic or entry does not exist."""


class ParseError(TiermemError):
    """A memory file that cannot be read; it is never overwritten."""

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


class StoreError(TiermemError):
    """The store is missing or cannot be used."""


class LockTimeout(StoreError):
    """Another process held a lock for the whole wait."""


class UnsafePathError(ParseError):
    """A path that came with the repository and would lead out of it (a symbolic link, a
    `..`, a name too long): never read, written or followed."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(path, 1, reason)
        self.args = (f"{path}: {reason}",)

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"
