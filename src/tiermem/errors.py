"""Errors that tiermem reports to its users."""

from __future__ import annotations

from pathlib import Path


class TiermemError(Exception):
    """A problem with the user's input or store: reported in one line, exit status 2."""

    exit_code = 2


class UsageError(TiermemError):
    """Bad arguments or input text; nothing was written."""


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
