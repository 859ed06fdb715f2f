"""Squad's decision inbox, `.squad/decisions/inbox/*.md`: files agents drop for the log.

A file's name came with the repository and ends up in a path, an audit line and the log:
one with characters a shell or a terminal would read as more than a name (`$(...)`,
quotes, control characters) is left where it is, with a note, and never merged.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...context import Context
from ...errors import ParseError
from ...storage import files

# Letters (any script), digits, and . _ - + and spaces: what agents' file names are made of.
_SAFE_NAME = re.compile(r"[\w][\w .+-]*\.md", re.UNICODE)


def folder(ctx: Context) -> Path:
    """Where Squad's agents drop decisions for the log."""
    return ctx.layout.squad / "decisions" / "inbox"


def read(ctx: Context) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, text) of every readable inbox file, and why the others were skipped."""
    where = folder(ctx)
    inbox: list[tuple[str, str]] = []
    skipped: list[str] = []
    try:
        found = [i for i in files.listing(where) if i.name.endswith(".md")]
    except ParseError as exc:
        return [], [f"{ctx.layout.relative(where)}: {exc.reason}"]
    for item in found:
        shown = ctx.layout.relative(item.path)
        if not safe_name(item.name):
            skipped.append(f"{shown!r}: a file name tiermem does not take; left in the inbox")
            continue
        if item.kind != "file":
            if item.kind == "link":
                skipped.append(f"{shown}: a symbolic link; left in the inbox")
            continue
        try:
            data = files.read_bytes(item.path)
            if data is not None:
                inbox.append((item.name, data.decode("utf-8")))
        except (ParseError, UnicodeDecodeError):
            skipped.append(f"{shown}: not readable as UTF-8")
    return inbox, skipped


def safe_name(name: str) -> bool:
    """Whether an inbox file name is a plain name (see the module's docstring)."""
    return len(name.encode("utf-8", "surrogateescape")) <= 255 and bool(_SAFE_NAME.fullmatch(name))


def remove(ctx: Context, name: str) -> None:
    """Take a merged file out of the inbox."""
    if not safe_name(name):
        raise ParseError(folder(ctx) / "?", 1, "not an inbox file name tiermem takes")
    files.unlink(folder(ctx) / name)
