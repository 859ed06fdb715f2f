"""Tier files: load, save, and locked read-modify-write, never dropping a merge's lost text."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from . import entries, files
from .errors import ParseError
from .layout import TEAM, Layout

_TIER_CLASS = {"hot": "status", "cold": "learning", "wiki": "convention", "queue": "status"}


def load(layout: Layout, tier: str, path: Path) -> entries.TierFile | None:
    """Parse a tier file, or None when it does not exist."""
    text = files.read_text(layout, path)
    if text is None:
        return None
    return entries.parse(text, path, _TIER_CLASS.get(tier, "learning"))


def parse(tier: str, path: Path, data: bytes) -> entries.TierFile:
    """Parse the bytes of a tier file already read (ParseError for invalid UTF-8)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(path, line, "is not valid UTF-8") from None
    return entries.parse(text, path, _TIER_CLASS.get(tier, "learning"))


def save(layout: Layout, path: Path, tier_file: entries.TierFile) -> None:
    """Write a tier file atomically (caller holds its lock).

    Versions of an entry that lost a merge conflict are archived first, so rewriting the
    file never drops the text of either side.
    """
    lost = [c.lost for c in tier_file.conflicts if c.lost is not None]
    if lost:
        # Only a file merged by git holds lost versions: reads need not load the archive.
        from . import archive

        owner = tier_file.meta.get("agent", "") if path.parent.name != "wiki" else TEAM
        archive.keep_lost(layout, layout.relative(path), lost, owner)
        tier_file.conflicts = [c for c in tier_file.conflicts if c.lost is None]
    files.atomic_write(path, entries.render(tier_file))


def _state(tier_file: entries.TierFile) -> tuple[object, ...]:
    """What a save would write, to tell whether an edit changed anything."""
    return (tier_file.heading, dict(tier_file.meta), tier_file.notes, list(tier_file.entries))


@contextlib.contextmanager
def update(
    layout: Layout, tier: str, path: Path, new: Callable[[], entries.TierFile]
) -> Iterator[entries.TierFile]:
    """Edit a tier file under its lock (`new` makes it when missing); saved if it changed."""
    with files.locked(layout, path):
        tier_file = load(layout, tier, path)
        if tier_file is None:
            tier_file = new()
            before: tuple[object, ...] = ()
        else:
            before = _state(tier_file)
        yield tier_file
        if _state(tier_file) != before:
            save(layout, path, tier_file)


@contextlib.contextmanager
def update_existing(layout: Layout, tier: str, path: Path) -> Iterator[entries.TierFile | None]:
    """Edit a tier file under its lock, None when it does not exist; saved if it changed."""
    with files.locked(layout, path):
        tier_file = load(layout, tier, path)
        before = _state(tier_file) if tier_file is not None else ()
        yield tier_file
        if tier_file is not None and _state(tier_file) != before:
            save(layout, path, tier_file)


def rewrite(
    layout: Layout,
    tier: str,
    path: Path,
    change: Callable[[entries.Entry], entries.Entry] | None = None,
) -> int:
    """Write a tier file again (each entry changed, if asked), with every id once: the
    versions that lost a merge are archived first. How many were archived."""
    with files.locked(layout, path):
        tier_file = load(layout, tier, path)
        if tier_file is None:
            return 0
        lost = sum(1 for c in tier_file.conflicts if c.lost is not None)
        if change is not None:
            tier_file.entries = [change(e) for e in tier_file.entries]
        save(layout, path, tier_file)
    return lost


_HEADINGS = {
    "cold": "{name}: cold memory",
    "wiki": "{name}: wiki",
    "queue": "{name}: waiting for Scribe",
}


def blank(tier: str, name: str, **meta: str) -> entries.TierFile:
    """A new, empty tier file: an agent's cold tier or queue, or a wiki topic page."""
    owner = "topic" if tier == "wiki" else "agent"
    heading = "team: decisions" if (tier, name) == ("cold", TEAM) else _HEADINGS[tier]
    return entries.TierFile(heading.format(name=name), {"tier": tier, owner: name, **meta})
