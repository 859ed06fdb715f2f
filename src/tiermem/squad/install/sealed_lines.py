"""Squad's instructions that send an agent to its whole history or decision log, line by line.

With `--coordinator`, an install looks through the coordinator's prompt
(`.github/agents/squad.agent.md`), Squad's templates (`.squad/templates/*.md`) and every
charter for the instructions of `install_texts.LINES`, each standing whole on a line (after its
indentation), and puts tiermem's step in its place, marked `<!-- tiermem:line KEY SEAL -->`
(the seal is that of the rest of the line). Nothing else of the line or the file changes, so
that uninstall, finding the mark, puts back Squad's text byte for byte from `install_texts`, never
from anything the repository holds, where the install record lists the line. A marked line
whose seal does not hold (a person changed tiermem's line, or marked a line of their own that
way) is `edited`: left as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import install_paths, install_texts


@dataclass(frozen=True)
class Found:
    """A line of a file that is one of Squad's instructions or tiermem's step for it."""

    number: int  # 1-based
    line: install_texts.Line
    state: str  # squad: Squad's; installed: tiermem's step; outdated: an older one; edited


def _split(text: str) -> list[tuple[str, str, str]]:
    """(indentation, content, ending) of every line; joined again they are the text."""
    pieces = []
    for raw in text.split("\n"):
        body = raw[:-1] if raw.endswith("\r") else raw
        ending = raw[len(body) :]
        content = body.lstrip(" \t")
        pieces.append((body[: len(body) - len(content)], content, ending))
    return pieces


def _join(pieces: list[tuple[str, str, str]]) -> str:
    return "\n".join(indent + content + ending for indent, content, ending in pieces)


def _known(content: str) -> tuple[install_texts.Line, str] | None:
    """The instruction a line is (Squad's or tiermem's), and which of the two it is."""
    squads = install_texts.SQUAD_LINES.get(content)
    if squads is not None:
        return squads, "squad"
    mark = install_texts.LINE_MARK.search(content)
    line = install_texts.LINE_KEYS.get(mark.group(1)) if mark else None
    if mark is None or line is None:
        return None
    if content == line.marked():
        return line, "installed"
    if install_texts.mark_holds(content, mark) or content == line.legacy():
        return line, "outdated"
    return line, "edited"


def replaced(text: str) -> tuple[str, list[Found]]:
    """The text with tiermem's step in place of each of Squad's instructions (and an older
    step brought up to date), and every instruction found."""
    pieces = _split(text)
    found = []
    for n, (indent, content, ending) in enumerate(pieces):
        known = _known(content)
        if known is not None:
            found.append(Found(n + 1, *known))
            if known[1] != "edited":
                pieces[n] = (indent, known[0].marked(), ending)
    return _join(pieces), found


def restored(text: str, listed: Callable[[str], bool]) -> tuple[str, list[Found]]:
    """The text with Squad's own instruction back in place of each of tiermem's steps whose
    key is `listed` (in the install record), and every step of tiermem's found."""
    pieces = _split(text)
    found = []
    for n, (indent, content, ending) in enumerate(pieces):
        known = _known(content)
        if known is not None and known[1] != "squad":
            found.append(Found(n + 1, *known))
            if known[1] != "edited" and listed(known[0].key):
                pieces[n] = (indent, known[0].squad, ending)
    return _join(pieces), found


# A skill's line that sends its reader to a whole history or decision log ("read decisions.md",
# "answer from decisions.md already in context"): reported, never changed (`skill_reads`).
_SKILL_READ = re.compile(
    r"(?i)\b(?:read|reads|load|loads)\b[^\n]{0,40}?\b(?:decisions|history)\.md"
    r"|\b(?:decisions|history)\.md`?\s+already in context"
)


def skill_reads(text: str) -> list[int]:
    """The lines (1-based) of a skill that send its reader to a whole history or decision
    log: a skill's wording is its author's, so these are reported and left as they are."""
    return [n for n, line in enumerate(text.split("\n"), 1) if _SKILL_READ.search(line)]


# A line in anyone's words that sends its reader to a whole history or decision log ("Always
# read .squad/decisions.md first", "Check decisions.md before you start").
_OWN_READ = re.compile(
    r"(?i)\b(?:read|reads|load|loads|consult|consults|check|checks|review|reviews|open|opens"
    r"|follow|follows|go through|start with)\b[^\n]{0,60}?\b(?:decisions|history)\.md"
)
_SAYS_NOT = re.compile(r"(?i)\b(?:never|not|don't|do not|no longer|rather than|instead of)\b")
_SECTION = re.compile(r"<!-- tiermem:(begin|end) ")


def own_reads(text: str, squads: str | None = None) -> list[int]:
    """The lines (1-based) that send their reader to a whole history or decision log in
    words of the team's own: neither one of Squad's instructions an install replaces, nor a
    line of Squad's own copy of the file (`squads`), nor tiermem's (its marked lines and
    sections), nor a line that says not to."""
    theirs = {line.strip() for line in (squads or "").splitlines()}
    found = []
    inside = False
    for n, line in enumerate(text.split("\n"), 1):
        mark = _SECTION.search(line)
        if mark:
            inside = mark.group(1) == "begin"
            continue
        content = line.strip()
        if inside or not _OWN_READ.search(content) or _SAYS_NOT.search(content):
            continue
        if content in theirs or _known(content) is not None or LINE_OF_OURS.search(content):
            continue
        found.append(n)
    return found


LINE_OF_OURS = install_texts.LINE_MARK


def templates(root: str) -> list[str]:
    """Squad's markdown templates, directly in `.squad/templates/` (`.md.template` copies too;
    links included, so that reading one refuses it), in name order."""
    folder = os.path.join(root, install_paths.TEMPLATES)
    try:
        with os.scandir(folder) as listing:
            names = sorted(
                item.name
                for item in listing
                if item.name.endswith((".md", ".md.template"))
                and (item.is_symlink() or item.is_file(follow_symlinks=False))
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        f"{install_paths.TEMPLATES}/{name}"
        for name in names
        if install_paths.is_template(f"{install_paths.TEMPLATES}/{name}")
    ]
