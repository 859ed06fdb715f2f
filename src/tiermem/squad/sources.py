"""The Squad files an import reads, and how each is read: text as it is, or why not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..layout import TEAM

BINARY_PROBE_BYTES = 8000


@dataclass(frozen=True)
class Source:
    """One Squad file to import."""

    path: Path
    rel: str
    kind: str  # history | decisions | inbox | log | skill
    agent: str


def sources(squad: Path) -> list[Source]:
    """The Squad files an import reads, in a fixed order."""
    found: list[Source] = []
    agents = squad / "agents"
    if agents.is_dir():
        for folder in sorted(p for p in agents.iterdir() if p.is_dir()):
            for path in sorted(folder.glob("history*.md")):
                found.append(Source(path, "", "history", folder.name.lower()))
    for pattern in (
        "decisions.md",
        "decisions-archive*.md",
        "decisions/*.md",
        "decisions/archive/*.md",
    ):
        found += [Source(p, "", "decisions", TEAM) for p in sorted(squad.glob(pattern))]
    inbox = sorted(squad.glob("decisions/inbox/*.md"))
    found += [Source(p, "", "inbox", TEAM) for p in inbox]
    for logs in ("log", "orchestration-log"):
        found += [Source(p, "", "log", TEAM) for p in sorted(squad.glob(f"{logs}/*.md"))]
    found += [Source(p, "", "skill", TEAM) for p in _skills(squad)]
    top = squad.parent
    return [Source(s.path, s.path.relative_to(top).as_posix(), s.kind, s.agent) for s in found]


# Skills that describe tiered memory itself (Squad's design note, tiermem's own runtime skill)
# are no convention of the team's.
_NOT_THE_TEAMS = frozenset({"tiered-memory"})


def _skills(squad: Path) -> list[Path]:
    """The team's written conventions: `.squad/skills/{name}/SKILL.md`."""
    found = sorted(squad.glob("skills/*/SKILL.md"))
    return [p for p in found if p.parent.name.lower() not in _NOT_THE_TEAMS]


@dataclass(frozen=True)
class Read:
    """What reading one Squad file gave: its bytes, or why it was skipped."""

    data: bytes | None  # None: skipped
    problem: str = ""  # why it was skipped, or (with data) what was replaced in its text

    @property
    def lossy(self) -> bool:
        """Whether some bytes are not UTF-8 (the text holds U+FFFD in their place)."""
        return self.data is not None and bool(self.problem)


def read(source: Source, squad: Path) -> Read:
    """A file's bytes, or None and a reason (with the line) when it cannot be imported.

    Bytes that are not UTF-8 do not stop a file: its text has U+FFFD in their place, the
    archive keeps the bytes, and `problem` says where the first one is.
    """
    path = source.path
    if path.is_symlink():
        try:
            path.resolve().relative_to(squad.resolve())
        except ValueError:
            return Read(None, f"{source.rel}:1: symbolic link out of .squad/")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Read(None, f"{source.rel}:1: unreadable ({exc.strerror})")
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
