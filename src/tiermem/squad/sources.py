"""The Squad files an import reads, and how each is read: text as it is, or why not.

Squad's folder came with the repository: a link in it (to a file or a folder) is never
followed, and an agent folder whose name tiermem does not take as an agent's (`_alumni`)
is skipped with a note instead of stopping the import of everyone else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import files, safepath, validate
from ..errors import ParseError, UsageError
from ..layout import TEAM

BINARY_PROBE_BYTES = 8000


@dataclass(frozen=True)
class Source:
    """One Squad file to import."""

    path: Path
    rel: str
    kind: str  # history | decisions | inbox | log
    agent: str


def _md_files(folder: Path, prefix: str = "", pattern: str = ".md") -> list[Path]:
    """Files (and links, which `read` refuses by name) in a folder that is no link."""
    try:
        items = files.listing(folder)
    except ParseError:
        return []  # a folder reached through a link is not read
    return [
        i.path
        for i in items
        if i.name.startswith(prefix) and i.name.endswith(pattern) and i.kind in ("file", "link")
    ]


def _agent_folders(squad: Path) -> list[Path]:
    try:
        items = files.listing(squad / "agents")
    except ParseError:
        return []
    return [i.path for i in items if i.kind in ("folder", "link")]


def sources(squad: Path) -> list[Source]:
    """The Squad files an import reads, in a fixed order."""
    found: list[Source] = []
    for folder in _agent_folders(squad):
        if safepath.kind(folder) == "link":
            found.append(Source(folder / "history.md", "", "history", folder.name.lower()))
            continue
        for path in _md_files(folder, prefix="history"):
            found.append(Source(path, "", "history", folder.name.lower()))
    decisions = [p for p in _md_files(squad) if p.name == "decisions.md"]
    decisions += _md_files(squad, prefix="decisions-archive")
    decisions += _md_files(squad / "decisions") + _md_files(squad / "decisions" / "archive")
    found += [Source(p, "", "decisions", TEAM) for p in decisions]
    found += [Source(p, "", "inbox", TEAM) for p in _md_files(squad / "decisions" / "inbox")]
    for logs in ("log", "orchestration-log"):
        found += [Source(p, "", "log", TEAM) for p in _md_files(squad / logs)]
    top = squad.parent
    return [Source(s.path, s.path.relative_to(top).as_posix(), s.kind, s.agent) for s in found]


def read(source: Source, squad: Path) -> tuple[str | None, str]:
    """A file's text, or None and a reason (with the line) when it cannot be imported."""
    if source.kind == "history":
        try:
            validate.owner(source.agent)
        except UsageError:
            folder = source.path.parent.name
            return None, (
                f"{source.rel}:1: the agent folder {folder!r} is not a name tiermem takes "
                "for an agent; skipped"
            )
    try:
        data = files.read_bytes(source.path)
    except ParseError as exc:
        where = "symbolic link in .squad/" if "symbolic link" in exc.reason else exc.reason
        return None, f"{source.rel}:1: {where}; skipped"
    if data is None:
        return None, f"{source.rel}:1: unreadable (no such file); skipped"
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        # The same rule git uses: a NUL early on means binary; a stray one later is text.
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return None, f"{source.rel}:{line}: binary data; skipped"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, f"{source.rel}:{line}: not valid UTF-8; skipped"
