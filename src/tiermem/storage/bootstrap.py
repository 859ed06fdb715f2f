"""`tiermem init`: the folders, config and git settings of a new store."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import UsageError
from ..vocabulary import TIER_FOLDERS
from . import files, local_state
from .config import render_default
from .layout import LOCAL_FOLDER, Layout

_GITIGNORE = """\
# Derived or transient: rebuilt from the markdown tiers at any time.
index.sqlite
index.sqlite-*
.locks/
.tmp-*
# Local to this clone: the log of spawns and the list of files git tracks.
spawns.jsonl
citations.cache
# This clone's own state (when entries were last used, the key that seals its index, its
# report). Never `local/`: that is Squad's governed memory, committed for the team.
tiermem-local/
# Files `tiermem doctor --repair` set aside: they may hold what a purge removed elsewhere.
damaged/
"""
# This clone's own files, as git pathspecs from the root: never meant to be committed.
_LOCAL_FILES = (
    ".squad/memory/index.sqlite*",
    f".squad/memory/{LOCAL_FOLDER}",
    # What an earlier tiermem kept in Squad's `local/` (by name: the rest is Squad's).
    ".squad/memory/local/used",
    ".squad/memory/local/clone-key",
    ".squad/memory/local/report",
    ".squad/memory/spawns.jsonl",
    ".squad/memory/citations.cache",
    ".squad/memory/.locks",
    ".squad/memory/damaged",
)
_GIT_TIMEOUT_SECONDS = 10

_GITATTRIBUTES = """\
# Tier files are lists of entries with stable ids: a union merge keeps both sides'
# entries, and tiermem folds any entry that ends up twice.
hot/*.md merge=union
cold/*.md merge=union
wiki/*.md merge=union
queue/*.md merge=union
tiermem-audit.jsonl merge=union
# The team's use ledger: one line per entry and day; the later day of an entry counts.
last-use.txt merge=union
# Retired passages of archived text: one line each, kept outside the records.
retired.txt merge=union
# Archive records are create-only and named by their content: they never conflict.
archive/** -diff
"""

_SQUAD_LOG_UNION = "decisions.md merge=union"


def init_store(root: Path, squad_files: bool = True) -> list[str]:
    """Create the memory folders, config and git settings; return what was created.

    `squad_files=False` touches nothing outside `.squad/memory/` (as an import promises).
    """
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory")
    layout = Layout(root)
    created: list[str] = []
    for tier in TIER_FOLDERS:
        path = layout.tier_dir(tier)
        if not files.is_folder(path):
            files.ensure_folder(path)  # refuses a link in the way, never makes folders through it
            created.append(layout.relative(path) + "/")
    for path, text in (
        (layout.config, render_default()),
        (layout.memory / ".gitignore", _GITIGNORE),
        (layout.memory / ".gitattributes", _GITATTRIBUTES),
    ):
        if not files.exists(path):
            files.atomic_write(path, text)
            created.append(layout.relative(path))
    for path, text in (
        (layout.memory / ".gitignore", _GITIGNORE),
        (layout.memory / ".gitattributes", _GITATTRIBUTES),
    ):
        _learn_new_lines(layout, path, text)
    local_state.move(layout)  # a store made before: its state out of Squad's `local/`
    if squad_files and _union_for_squad_log(layout):
        created.append(layout.relative(layout.squad / ".gitattributes"))
    return created


def _learn_new_lines(layout: Layout, path: Path, template: str) -> None:
    """A store made by an older tiermem learns the git settings added since (local files
    to ignore, its own audit file to merge by union)."""
    current = files.read_text(layout, path)
    if current is None:
        return
    have = {line.strip() for line in current.splitlines()}
    missing = [ln for ln in template.splitlines() if ln and not ln.startswith("#")]
    missing = [ln for ln in missing if ln not in have]
    if missing:
        prefix = current if not current or current.endswith("\n") else current + "\n"
        files.atomic_write(path, prefix + "\n".join(missing) + "\n")


def learn_git_settings(layout: Layout) -> None:
    """Teach a store made by an older tiermem the git settings of this one, when it has them
    at all (a store without its own .gitattributes is left as it is)."""
    _learn_new_lines(layout, layout.memory / ".gitattributes", _GITATTRIBUTES)


def learn_ignores(layout: Layout) -> None:
    """Teach a store made by an older tiermem the ignore lines of this one."""
    _learn_new_lines(layout, layout.memory / ".gitignore", _GITIGNORE)


def lacking_ignores(layout: Layout) -> list[str]:
    """Lines of `init`'s .gitignore that the store's .gitignore lacks (none without one)."""
    path = layout.memory / ".gitignore"
    current = files.read_text(layout, path)
    if current is None:
        return []
    have = {line.strip() for line in current.splitlines()}
    return [
        ln for ln in _GITIGNORE.splitlines() if ln and not ln.startswith("#") and ln not in have
    ]


def tracked_local(rel: str) -> str:
    """What is wrong with one of this clone's own files that git tracks."""
    return (
        "is tracked by git, but it is this clone's own (every clone would get it): "
        f"`git rm --cached {rel}` and commit"
    )


def tracked_locals(layout: Layout) -> list[str]:
    """This clone's own files that git tracks all the same (force-added, or committed before
    the store ignored them); none when git or a repository is not there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    command = ["git", "-C", str(layout.root), "ls-files", "-z", "--", *_LOCAL_FILES]
    try:
        proc = subprocess.run(
            command, capture_output=True, env=env, timeout=_GIT_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return sorted(p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p)


def _union_for_squad_log(layout: Layout) -> bool:
    """`decision add` appends to .squad/decisions.md: make it merge like Squad's own files."""
    path = layout.squad / ".gitattributes"
    current = files.read_text(layout, path) or ""
    if any(line.split()[:2] == ["decisions.md", "merge=union"] for line in current.splitlines()):
        return False
    prefix = current if not current or current.endswith("\n") else current + "\n"
    files.atomic_write(path, f"{prefix}{_SQUAD_LOG_UNION}\n")
    return True
