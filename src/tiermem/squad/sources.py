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


def read(source: Source, squad: Path) -> tuple[str | None, str]:
    """A file's text, or None and a reason (with the line) when it cannot be imported."""
    path = source.path
    if path.is_symlink():
        try:
            path.resolve().relative_to(squad.resolve())
        except ValueError:
            return None, f"{source.rel}:1: symbolic link out of .squad/; skipped"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{source.rel}:1: unreadable ({exc.strerror}); skipped"
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        # The same rule git uses: a NUL early on means binary; a stray one later is text.
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return None, f"{source.rel}:{line}: binary data; skipped"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, f"{source.rel}:{line}: not valid UTF-8; skipped"
