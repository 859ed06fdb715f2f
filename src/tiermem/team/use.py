"""Last use: a spawn or search that uses a cold or wiki entry refreshes it (the TTL counts
from its last use).

Use is recorded in this clone's local state, never in a tracked file, so a read leaves
`git status` clean and two clones never conflict over last-use times. `local/used` under
`.squad/memory/` (a folder that ignores itself in git) holds one line per use,
`YYYY-MM-DD ID`, appended at most once a day per entry. It is not the index: deleting the
index (a cache) keeps it. Scribe's maintenance folds the recorded days into the entries'
`used` field, at day granularity (`YYYY-MM-DDT00:00:00Z`), so two clones folding the same
day write the same bytes; until then the TTL counts from the later of the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..context import Context
from ..errors import ParseError
from ..index.protocol import Doc
from ..record import replace
from ..storage import clone, files, store
from ..storage.entries import Entry
from ..storage.layout import Layout

_LINE = re.compile(r"(\d{4}-\d\d-\d\d) (\S+)")
# Lines beyond twice the entries they name (plus this slack) are compacted to one each.
_COMPACT_SLACK = 200
FOLDED_TIERS = ("cold", "wiki")


def day_stamp(day: str) -> str:
    """A day of use as the time an entry's `used` field holds."""
    return f"{day}T00:00:00Z"


def recorded(layout: Layout) -> dict[str, str]:
    """Entry id -> the last day this clone used it (YYYY-MM-DD)."""
    return _parse(_read(layout.used))


def last_use(used: str, created: str, local: Mapping[str, str], entry_id: str) -> str:
    """The later of an entry's `used` time and the day this clone last used it."""
    day = local.get(entry_id)
    mine = day_stamp(day) if day else ""
    return max(used or created, mine)


def mark_used(ctx: Context, docs: Sequence[Doc]) -> None:
    """Record that these cold/wiki entries were used today (at most one line a day each)."""
    today = ctx.stamp()[:10]
    known = _known_today(ctx.layout.used, today)
    wanted = {d.id for d in docs if d.tier in FOLDED_TIERS and d.used[:10] < today} - known
    if not wanted:
        return  # the common case: already used today, nothing to read or write
    path = ctx.layout.used
    with files.locked(ctx.layout, path):
        lines = _read(path)
        seen = _parse(lines)
        known.update(i for i, day in seen.items() if day == today)
        new = sorted(wanted - known)
        if not new:
            return
        if len(lines) > 2 * len(seen) + _COMPACT_SLACK:
            _rewrite(ctx.layout, seen | dict.fromkeys(new, today))
        else:
            _append(ctx.layout, [f"{today} {i}" for i in new])
        known.update(new)


# The ids this process knows are recorded as used today, by record file. A day's record only
# grows (a fold or a compaction keeps each id's last day), so a search or spawn that returns
# them again need not read the record: its cost no longer grows with it.
_KNOWN: dict[tuple[Path, str], set[str]] = {}


def _known_today(path: Path, today: str) -> set[str]:
    if not any(day == today for _, day in _KNOWN):
        _KNOWN.clear()  # a new day: yesterday's knowledge is no use
    return _KNOWN.setdefault((path, today), set())


def fold(ctx: Context, dry_run: bool = False) -> list[str]:
    """Write recorded days of use into the entries' `used` field; return the ids moved.

    The local record is kept (compacted): it costs little, and a fold whose tier writes
    are thrown away (`git checkout`) loses nothing.
    """
    path = ctx.layout.used
    if not path.exists():
        return []
    with files.locked(ctx.layout, path):
        local = recorded(ctx.layout)
        moved: list[str] = []
        for tier in FOLDED_TIERS if local else ():
            for tier_path in files.memory_files(ctx.layout.tier_dir(tier)):
                moved += _fold_file(ctx, tier, tier_path, local, dry_run)
        if local and not dry_run:
            _rewrite(ctx.layout, local)
    return moved


def _fold_file(
    ctx: Context, tier: str, path: Path, local: Mapping[str, str], dry_run: bool
) -> list[str]:
    """Ids of one file's entries used later than their `used` says (updated unless dry)."""
    try:
        if dry_run:
            loaded = store.load(ctx.layout, tier, path)
            return [e.id for e in loaded.entries if _later(e, local)] if loaded else []
        with store.update_existing(ctx.layout, tier, path) as tier_file:
            if tier_file is None:
                return []
            moved = [e for e in tier_file.entries if _later(e, local)]
            for entry in moved:
                tier_file.put(replace(entry, used=day_stamp(local[entry.id])))
            return [e.id for e in moved]
    except ParseError as exc:
        ctx.warn(f"tiermem: skipped {exc} (recorded use not folded into it)")
        return []


def _later(entry: Entry, local: Mapping[str, str]) -> bool:
    return local.get(entry.id, "") > entry.used[:10]


def _read(path: Path) -> list[str]:
    data = files.read_bytes(path)
    return data.decode("utf-8", "replace").splitlines() if data is not None else []


def _parse(lines: Iterable[str]) -> dict[str, str]:
    """The last day of each id; a torn or foreign line is skipped, never an error."""
    days: dict[str, str] = {}
    for line in lines:
        if m := _LINE.fullmatch(line.strip()):
            day, entry_id = m.groups()
            days[entry_id] = max(day, days.get(entry_id, ""))
    return days


def _append(layout: Layout, lines: list[str]) -> None:
    clone.ready(layout)
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    files.append(layout.used, data)  # one write under the lock: whole lines, never a torn one


def _rewrite(layout: Layout, days: Mapping[str, str]) -> None:
    clone.ready(layout)
    text = "".join(f"{day} {i}\n" for i, day in sorted(days.items()))
    files.atomic_write(layout.used, text)
