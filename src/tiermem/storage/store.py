"""Tier files: load, save, and locked read-modify-write, never dropping a merge's lost text."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

from ..errors import ParseError
from . import entries, files
from .layout import TEAM, Layout

_TIER_CLASS = {"hot": "status", "cold": "learning", "wiki": "convention", "queue": "status"}
# A tier file up to this size is read whole before entries are added to it; a larger one
# only at its end (see `recent`), so adding to it costs the same whatever its size.
TAIL_BYTES = 8192


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


def recent(
    layout: Layout, tier: str, path: Path, ids: Collection[str], reach: int = 0
) -> entries.TierFile | None:
    """A tier file, parsed whole, where entries about to be added need a look at it first.

    That is when the file is small (up to TAIL_BYTES), or when one of `ids` is written in
    its last TAIL_BYTES (or `reach`, if more): what was added last is what a step repeated
    after a crash finds again. None when the file does not exist, and when it is larger and
    its end names none of the ids: then entries are appended to it unread (`append`).
    """
    reach = max(reach, TAIL_BYTES)
    tail = files.read_tail(path, reach)
    if tail is None:
        return None
    data, size = tail
    if size > reach and not any(entries.escape_value(i).encode() in data for i in ids):
        return None
    return load(layout, tier, path)


def appendable(tier_file: entries.TierFile | None, new: Sequence[entries.Entry]) -> bool:
    """Whether entries can be appended to a file as `recent` read it: none of them is in it,
    and it holds no version that lost a merge (a rewrite archives those, see `save`)."""
    if tier_file is None:
        return True
    if any(c.lost is not None for c in tier_file.conflicts):
        return False
    return all(tier_file.get(e.id) is None for e in new)


def append(
    layout: Layout, path: Path, new: Sequence[entries.Entry], blank: Callable[[], entries.TierFile]
) -> None:
    """Add entries at the end of a tier file, writing only their bytes (the caller holds
    the file's lock, and knows none of them is in it already); a missing or empty file is
    made from `blank`.

    The bytes are those a whole rendering would end with, so reading the file back gives
    its entries followed by these.
    """
    tail = files.read_tail(path, 1)
    if tail is None or tail[1] == 0:
        tier_file = blank()
        tier_file.entries.extend(new)
        save(layout, path, tier_file)
        return
    lead = "" if tail[0] == b"\n" else "\n"  # a file edited by hand may not end a line
    text = lead + "".join("\n" + entries.render_entry(e) for e in new)
    files.append_synced(path, text.encode("utf-8"))


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
