"""The hot sessions this clone started: clone-local state, never committed.

Two clones that each left a session open merge into one hot file holding both. Each clone
shows its own session as the current one and the other as open in another clone, so a
clone never calls its own session another's: which sessions it started is known only here.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import TiermemError
from ..storage import clone, files
from ..storage.layout import Layout

NAME = "hot-sessions"


def _path(layout: Layout) -> Path:
    return layout.local / NAME


def record(layout: Layout, agent: str, session: str) -> None:
    """Note that this clone started an agent's session (a line each, appended)."""
    clone.ready(layout)
    files.append(_path(layout), f"{agent} {session}\n".encode())


def started_here(layout: Layout, agent: str) -> set[str]:
    """The sessions of an agent this clone started (none when it has no record)."""
    try:
        text = files.read_text(layout, _path(layout)) or ""
    except (OSError, TiermemError):
        return set()  # clone-local and advisory: a damaged record only loses the labels
    pairs = (line.split() for line in text.splitlines())
    return {p[1] for p in pairs if len(p) == 2 and p[0] == agent}
