"""The team as Squad lays it out: `.squad/agents/{name}/` with each agent's charter.

Squad names folders as the team wrote the names (`agents/Rai/`); tiermem's agent names are
lower-case, so a folder is matched case-insensitively.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...context import Context
from ...errors import NotFoundError, ParseError
from ...storage import files


def _is_folder(path: Path) -> bool:
    """A folder itself: a link to one is never followed, so it is no agent's folder."""
    return path.is_dir() and not path.is_symlink()


def _folders(ctx: Context) -> list[Path]:
    base = ctx.layout.squad / "agents"
    if not _is_folder(base):
        return []  # no agents folder (or not a folder): no Squad team
    try:
        return sorted(p for p in base.iterdir() if _is_folder(p))
    except OSError:
        return []


def folder(ctx: Context, agent: str) -> Path:
    """An agent's Squad folder (as Squad spelled it, where it exists)."""
    exact = ctx.layout.squad / "agents" / agent
    if _is_folder(exact):
        return exact
    return next((p for p in _folders(ctx) if p.name.lower() == agent), exact)


def folders(ctx: Context) -> list[str]:
    """The names of the agents Squad has folders for, lower-cased as tiermem names agents."""
    return sorted({p.name.lower() for p in _folders(ctx)})


def has_folder(ctx: Context, agent: str) -> bool:
    """Whether Squad has a folder for the agent."""
    return _is_folder(folder(ctx, agent))


def names(ctx: Context) -> list[str]:
    """The names of Squad's agent folders, lower-cased as tiermem names agents."""
    return sorted({p.name.lower() for p in _folders(ctx)})


def charter(ctx: Context, agent: str) -> str:
    """The agent's charter, as Squad wrote it."""
    path = folder(ctx, agent) / "charter.md"
    try:
        text = files.read_text(ctx.layout, path)  # never through a link
    except ParseError:
        text = None
    if text is None:
        raise NotFoundError(f"no readable charter for {agent} at {ctx.layout.relative(path)}")
    return text


# Fields of team.md that name a person (the human the team works for, its lead...).
_PERSON_FIELD = re.compile(
    r"\*\*(?:owner|user|lead(?: developer)?|maintainer|author|human|created by)s?:?\*\*:?\s*(.+)",
    re.IGNORECASE,
)
_NOT_A_NAME = frozenset("and or via the team user human agent by with of for".split())


def name_words(text: str) -> set[str]:
    """The lower-cased words of a name as a file writes it ("Brady (via Copilot)": brady)."""
    name = text.split("(", 1)[0]
    return {w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in _NOT_A_NAME}


def people(ctx: Context) -> set[str]:
    """The words of every name team.md gives: its roster's Name column, and the fields that
    name a person (Owner, User, Lead developer...). No page of the wiki is named by them."""
    try:
        text = files.read_text(ctx.layout, ctx.layout.squad / "team.md") or ""
    except ParseError:
        return set()
    found: set[str] = set()
    for match in _PERSON_FIELD.finditer(text):
        found |= name_words(match.group(1))
    for cell in _name_column(text):
        found |= name_words(cell)
    return found


def _name_column(text: str) -> list[str]:
    """The first cells of the rows of tables whose first header is Name (or Member)."""
    cells: list[str] = []
    named = False
    for line in text.splitlines():
        row = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
        if not row:
            named = False
        elif row[0].lower() in ("name", "member", "agent"):
            named = True
        elif named and not set(row[0]) <= set("-: "):
            cells.append(row[0].strip("*`@ "))
    return cells


# Words that name Squad's own files and roles, not what a team works on.
_SQUAD_WORDS = frozenset("squad inbox config scribe charter roster coordinator casting".split())
_PROJECT_FIELD = re.compile(r"\*\*(?:project|product|repository|repo)s?:?\*\*:?\s*(.+)", re.I)
# A title's words that say it is the team's roster, not what the team works on.
_ROSTER_WORDS = frozenset("squad team roster".split())


def tool_words(ctx: Context) -> set[str]:
    """Squad's own words (`inbox`, `config`, `squad`...) that name no wiki page, but those
    the team's own subject holds (a team working on Squad itself has `squad` pages)."""
    return set(_SQUAD_WORDS - subject_words(ctx))


def subject_words(ctx: Context) -> set[str]:
    """The words of what the team works on: the repository's folder name, team.md's Project
    field, and its title but for the words that only say it is a team ("SadConsole Squad")."""
    found = _words(ctx.layout.root.name)
    try:
        text = files.read_text(ctx.layout, ctx.layout.squad / "team.md") or ""
    except ParseError:
        return found
    for match in _PROJECT_FIELD.finditer(text):
        found |= _words(match.group(1))
    title = next((ln[2:] for ln in text.splitlines() if ln.startswith("# ")), "")
    for token in title.split():
        joined = len(re.findall(r"[A-Za-z0-9]+", token)) > 1  # `squad-sdk` is the subject
        found |= {w for w in _words(token) if joined or w not in _ROSTER_WORDS}
    return found


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))
