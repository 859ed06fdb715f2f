"""Clones of one repository merged with git: the repository, the merge, and what it left.

tests/test_git_merge.py merges scripted sessions; tests/stress.py (`merge`) merges random
ones, round after round, with these same helpers.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tiermem.storage import store
from tiermem.storage.layout import Layout

# Squad's own root .gitattributes (tiermem init writes the one for .squad/memory).
SQUAD_ATTRIBUTES = (
    ".squad/decisions.md merge=union\n"
    ".squad/agents/*/history.md merge=union\n"
    ".squad/log/** merge=union\n"
    ".squad/orchestration-log/** merge=union\n"
)
_CONFLICT = re.compile(r"^(<{7}|>{7}|={7})( |$)", re.MULTILINE)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """git ARGS in cwd, reading no user or system configuration."""
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    for key in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{key}_NAME"] = "tiermem test"
        env[f"GIT_{key}_EMAIL"] = "test@example.invalid"
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stdout}{proc.stderr}")
    return proc


def new_repository(path: Path, squad_attributes: bool = True) -> Path:
    """An empty repository on branch main, with Squad's .gitattributes if asked."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    if squad_attributes:
        (path / ".gitattributes").write_text(SQUAD_ATTRIBUTES, encoding="utf-8")
    return path


def merge_both_ways(a: Path, b: Path) -> tuple[subprocess.CompletedProcess[str], ...]:
    """Merge b into a and a into b (each from the other's commit before any merge)."""
    git(a, "fetch", "-q", str(b), "main:refs/remotes/other/main")
    git(b, "fetch", "-q", str(a), "main:refs/remotes/other/main")
    return tuple(
        git(c, "merge", "--no-edit", "-q", "refs/remotes/other/main", check=False) for c in (a, b)
    )


def conflict_markers(root: Path) -> list[Path]:
    """The files under .squad that hold conflict markers."""
    return [
        path
        for path in sorted((root / ".squad").rglob("*"))
        if path.is_file()
        and not path.name.startswith("index.sqlite")
        and _CONFLICT.search(path.read_bytes().decode("utf-8", "replace"))
    ]


def entries_by_file(root: Path) -> dict[str, list[str]]:
    """Each tier file's entries (order-free), as a merge leaves them."""
    layout = Layout(root)
    out = {}
    for tier in ("hot", "cold", "wiki", "queue"):
        for path in sorted((layout.memory / tier).glob("*.md")):
            loaded = store.load(layout, tier, path)
            out[f"{tier}/{path.name}"] = sorted(repr(e) for e in loaded.entries) if loaded else []
    return out
