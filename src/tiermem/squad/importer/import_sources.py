"""The Squad files an import reads, and how each is read: text as it is, or why not.

Squad's folder came with the repository: a link in it (to a file or a folder) is never
followed, and an agent folder whose name tiermem does not take as an agent's (`_alumni`)
is skipped with a note instead of stopping the import of everyone else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import ParseError, UsageError
from ...storage import files, safepath, validate
from ...storage.layout import TEAM

BINARY_PROBE_BYTES = 8000


@dataclass(frozen=True)
class Source:
    """One Squad file to import."""

    path: Path
    rel: str
    kind: str  # history | decisions | decision-archive | inbox | log | skill
    agent: str
    committed: str = ""  # when git last committed it unchanged ('' when it did not)


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


def sources(squad: Path, committed: dict[str, str] | None = None) -> list[Source]:
    """The Squad files an import reads, in a fixed order; `committed` gives, by path from
    the folder above `.squad/`, when git last committed each (`squad.importer.last_commits`)."""
    found: list[Source] = []
    for folder in _agent_folders(squad):
        if safepath.kind(folder) == "link":
            found.append(Source(folder / "history.md", "", "history", folder.name.lower()))
            continue
        for path in _md_files(folder, prefix="history"):
            found.append(Source(path, "", "history", folder.name.lower()))
    for path in _decision_files(squad):
        archived = "archive" in path.relative_to(squad).as_posix()
        kind = "decision-archive" if archived else "decisions"
        found.append(Source(path, "", kind, TEAM))
    found += [Source(p, "", "inbox", TEAM) for p in _md_files(squad / "decisions" / "inbox")]
    for logs in ("log", "orchestration-log"):
        found += [Source(p, "", "log", TEAM) for p in _md_files(squad / logs)]
    found += [Source(p, "", "skill", TEAM) for p in _skills(squad)]
    top = squad.parent
    dates = committed or {}
    return [
        Source(s.path, rel, s.kind, s.agent, dates.get(rel, ""))
        for s in found
        for rel in [s.path.relative_to(top).as_posix()]
    ]


def _decision_files(squad: Path) -> list[Path]:
    """The decision log and its archives: `decisions.md`, `decisions-archive*.md`,
    `decisions/*.md` and `decisions/archive/*.md` (an archive: a name or folder saying so)."""
    found = [p for p in _md_files(squad) if p.name == "decisions.md"]
    found += _md_files(squad, prefix="decisions-archive")
    return found + _md_files(squad / "decisions") + _md_files(squad / "decisions" / "archive")


# Skills that describe tiered memory itself (Squad's design note, tiermem's own runtime skill)
# are no convention of the team's.
_NOT_THE_TEAMS = frozenset({"tiered-memory"})


def _skills(squad: Path) -> list[Path]:
    """The team's written conventions: `.squad/skills/{name}/SKILL.md`."""
    try:
        folders = files.listing(squad / "skills")
    except ParseError:
        return []
    found: list[Path] = []
    for item in folders:
        if item.kind == "folder" and item.name.lower() not in _NOT_THE_TEAMS:
            found += [p for p in _md_files(item.path) if p.name == "SKILL.md"]
    return found


@dataclass(frozen=True)
class Read:
    """What reading one Squad file gave: its bytes, or why it was skipped."""

    data: bytes | None  # None: skipped
    problem: str = ""  # why it was skipped, or (with data) what was replaced in its text

    @property
    def lossy(self) -> bool:
        """Whether some bytes are not UTF-8 (the text holds U+FFFD in their place)."""
        return self.data is not None and bool(self.problem)


def read(source: Source) -> Read:
    """A file's bytes, or None and a reason (with the line) when it cannot be imported.

    Bytes that are not UTF-8 do not stop a file: its text has U+FFFD in their place, the
    archive keeps the bytes, and `problem` says where the first one is.
    """
    if source.kind == "history":
        try:
            validate.name(source.agent)  # `team` is the team's own memory, no agent's
        except UsageError as exc:
            folder = source.path.parent.name
            reason = f"the agent folder {folder!r} is not a name tiermem takes for an agent"
            return Read(None, f"{source.rel}:1: {reason} ({exc})")
    try:
        data = files.read_bytes(source.path)
    except ParseError as exc:
        return Read(None, f"{source.rel}:1: " + _refused(exc.reason))
    except OSError as exc:
        return Read(None, f"{source.rel}:1: unreadable ({exc.strerror})")
    if data is None:
        return Read(None, f"{source.rel}:1: unreadable (no such file)")
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        # The same rule git uses: a NUL early on means binary; a stray one later is text.
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return Read(None, f"{source.rel}:{line}: binary data")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = len(data) - len(data.decode("utf-8", "ignore").encode("utf-8"))
        return Read(
            data,
            f"{source.rel}:{line}: {bad} byte(s) not valid UTF-8, read as U+FFFD "
            "(the archive keeps the original bytes)",
        )
    return Read(data)


def _refused(reason: str) -> str:
    return "symbolic link in .squad/" if "symbolic link" in reason else reason
