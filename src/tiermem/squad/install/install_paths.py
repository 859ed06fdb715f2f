"""The files of a Squad team that `tiermem squad install` reads, writes or may remove.

Everything an install may touch is named here, so that a committed install record can be
held to it: a path the record names that is not one of these is refused.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ...vocabulary import TIER_FOLDERS

MANIFEST = ".squad/memory/tiermem-install.json"
MCP_JSON = ".mcp.json"
VSCODE_MCP = ".vscode/mcp.json"
# Copilot CLI's MCP servers for the repository (`squad init` writes one, with an example).
COPILOT_MCP = ".copilot/mcp-config.json"
COORDINATOR = ".github/agents/squad.agent.md"
# What the team's @copilot member (GitHub's coding agent) reads before it works.
COPILOT_INSTRUCTIONS = ".github/copilot-instructions.md"
# Copies of Squad's templates that earlier Squads' `squad upgrade` wrote into `.squad/`
# itself rather than `.squad/templates/`.
STRAY_TEMPLATES = (
    ".squad/charter.md",
    ".squad/copilot-instructions.md",
    ".squad/scribe-charter.md",
)
TEMPLATES = ".squad/templates"
SPAWN_TEMPLATE = f"{TEMPLATES}/spawn-reference.md"
# Where the tiered-memory skill goes: Squad's `.squad/skills/` and `.github/skills/`, and
# `.copilot/skills/` where Squad copied `.squad/skills/` when upgrading from before 0.9.
SKILLS = (
    ".squad/skills/tiered-memory/SKILL.md",
    ".github/skills/tiered-memory/SKILL.md",
    ".copilot/skills/tiered-memory/SKILL.md",
)
SQUAD_SKILL_COPY = f"{TEMPLATES}/skills/tiered-memory/SKILL.md"
STORE = ".squad/memory/"
STORE_DIRS: tuple[str, ...] = TIER_FOLDERS
STORE_FILES = ("config.toml", ".gitignore", ".gitattributes")
# Where Squad copies its skills (its wording), and where the team keeps its own.
SQUAD_SKILL_FOLDERS = (".github/skills", ".copilot/skills", f"{TEMPLATES}/skills")
TEAM_SKILL_FOLDER = ".squad/skills"
# The folders an install can make (for the skill), and so the only ones uninstall may remove.
CREATED_DIRS = frozenset(
    {".squad/skills", ".squad/skills/tiered-memory", ".github/skills/tiered-memory"}
)

_NAME = r"[A-Za-z0-9][A-Za-z0-9._ -]{0,127}"
_CHARTER = re.compile(rf"\.squad/agents/{_NAME}/charter\.md")
_TEMPLATE = re.compile(rf"{re.escape(TEMPLATES)}/{_NAME}\.md(?:\.template)?")


def plain(rel: str) -> bool:
    """Whether a path is a plain relative path: no `..`, `.`, empty part or backslash."""
    parts = PurePosixPath(rel).parts
    return (
        bool(parts)
        and not rel.startswith("/")
        and "\\" not in rel
        and all(p not in ("", ".", "..") for p in rel.split("/"))
    )


def is_charter(rel: str) -> bool:
    """Whether a path is an agent's charter under `.squad/agents/`."""
    return plain(rel) and _CHARTER.fullmatch(rel) is not None


def is_template(rel: str) -> bool:
    """Whether a path is one of Squad's markdown templates, directly in `.squad/templates/`
    (`name.md`, or a `name.md.template` copy)."""
    return plain(rel) and _TEMPLATE.fullmatch(rel) is not None


def has_lines(rel: str) -> bool:
    """Whether an install may replace Squad's instruction lines in this file."""
    return (
        rel in (COORDINATOR, COPILOT_INSTRUCTIONS, *STRAY_TEMPLATES)
        or is_template(rel)
        or is_charter(rel)
    )


def installable(rel: str) -> bool:
    """Whether a path (or `path#line-key`) is one an install puts something in."""
    if "#" in rel:
        rel = rel.split("#", 1)[0]
        return has_lines(rel)
    return rel in (STORE, MCP_JSON, VSCODE_MCP, COPILOT_MCP, MANIFEST, *SKILLS) or has_lines(rel)
