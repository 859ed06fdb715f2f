"""Last use: a spawn or search that uses a cold or wiki entry refreshes it (the TTL counts
from its last use).

Use is recorded in this clone's local state, never in a tracked file, so a read leaves
`git status` clean and two clones never conflict over last-use times. `tiermem-local/used`
under `.squad/memory/` (a folder that ignores itself in git) holds one line per use,
`YYYY-MM-DD ID`, appended at most once a day per entry. It is not the index: deleting the
index (a cache) keeps it.

Scribe's maintenance folds the recorded days into the team's use ledger,
`.squad/memory/last-use.txt`: one line `ID YYYY-MM-DD` per entry, its last day of use in any
clone, sorted by id. The ledger is one tracked file, never a tier file people review, so a
day of spawns changes that one file and a run with nothing new changes none. Git merges it
by union (`.gitattributes`): two clones' lines for one entry both stay, and the later day
counts. Ageing reads the latest of an entry's `used` field (written by tiermem before the
ledger, and at an entry's making), the ledger and this clone's record.

A day of use that cannot be true never counts: one that is no date (`2026-99-99`), or one
after today (by tiermem's clock and the system's) and after the day of the repository's
latest commit (`9999-12-31`: a clone with a wrong clock, a hand edit), which would keep an
entry from ageing forever.
Days are compared as dates only once they are known to be dates. `tiermem doctor` names
such lines, and `doctor --repair` drops them; a fold drops them from what it rewrites.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path

from ..context import Context
from ..errors import TiermemError
from ..index.protocol import Doc
from ..storage import clone, files, governed, local_state
from ..storage.layout import Layout
from ..vocabulary import LASTING_TIERS

_LINE = re.compile(r"(\d{4}-\d\d-\d\d) (\S+)")
# Lines beyond twice the entries they name (plus this slack) are compacted to one each.
_COMPACT_SLACK = 200


def day_stamp(day: str) -> str:
    """A day of use as the time an entry's `used` field holds."""
    return f"{day}T00:00:00Z"


LEDGER_NAME = "last-use.txt"
_LEDGER_LINE = re.compile(r"(\S+) (\d{4}-\d\d-\d\d)")


def ledger_path(layout: Layout) -> Path:
    """The team's use ledger (tracked, merged by union)."""
    return layout.memory / LEDGER_NAME


Plausible = Callable[[str], bool]
_GIT_TIMEOUT_SECONDS = 10


def plausible(layout: Layout, today: str | None = None) -> Plausible:
    """Which days of use can be true: a date that exists, no later than today or than the
    day of the repository's latest commit, whichever is later, so that a clone whose clock
    runs behind another's keeps that clone's days. Today is tiermem's (`--now`, by default
    the system's), or the system's where `--now` sets an earlier day: a day already past is
    a day of use that can have been. Git is asked only for a day after today, once."""
    from datetime import UTC, datetime

    system = datetime.now(UTC).strftime("%Y-%m-%d")
    today = max(today or "", system)
    latest: list[str] = []

    def check(day: str) -> bool:
        if not _is_date(day):
            return False
        if day <= today:
            return True
        if not latest:
            latest.append(latest_commit_day(layout.root))
        return day <= latest[0]

    return check


def _any_day(day: str) -> bool:
    """Every day, as a file is compacted: which of them can be true is for its reader."""
    return True


def _is_date(day: str) -> bool:
    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def latest_commit_day(root: Path) -> str:
    """The UTC day of the latest commit of the repository at `root` ("" without git, or
    without a commit)."""
    from ..storage.clock import parse_time
    from .citations import git_output

    said = git_output(root, "log", "-1", "--format=%cI", timeout=_GIT_TIMEOUT_SECONDS)
    when = said.decode("utf-8", "replace").strip() if said else ""
    try:
        return parse_time(when).strftime("%Y-%m-%d") if when else ""
    except (ValueError, TiermemError):
        return ""


def recorded(layout: Layout, today: str | None = None) -> dict[str, str]:
    """Entry id -> the last day it was used (YYYY-MM-DD): in any clone, as the team's
    ledger has it, or in this one, as its own record has it (days that cannot be true left
    out, `plausible`)."""
    check = plausible(layout, today)
    days = ledger(layout, check)
    # A store made before keeps its record in Squad's `local/` until its next write moves it.
    mine = _read(layout.used) + _read_quietly(local_state.legacy_used(layout))
    for entry_id, day in _parse(mine, check).items():
        days[entry_id] = max(day, days.get(entry_id, ""))
    return days


def ledger(layout: Layout, check: Plausible | None = None) -> dict[str, str]:
    """Entry id -> its last day of use, as the team's ledger has it (a line a union merge
    doubled counts its later day; a torn or foreign line, or a day that cannot be true, is
    skipped)."""
    check = check or plausible(layout)
    days: dict[str, str] = {}
    for line in _read(ledger_path(layout)):
        if (m := _LEDGER_LINE.fullmatch(line.strip())) and check(m.group(2)):
            entry_id, day = m.groups()
            days[entry_id] = max(day, days.get(entry_id, ""))
    return days


def implausible(layout: Layout, today: str) -> dict[Path, list[tuple[int, str]]]:
    """The lines (number, day) of the ledger and of this clone's record whose day cannot
    be true (`plausible`), by file: what `doctor` names and `--repair` drops."""
    check = plausible(layout, today)
    found: dict[Path, list[tuple[int, str]]] = {}
    for path, shape, at in ((ledger_path(layout), _LEDGER_LINE, 2), (layout.used, _LINE, 1)):
        for n, line in enumerate(_read(path), start=1):
            if (m := shape.fullmatch(line.strip())) and not check(m.group(at)):
                found.setdefault(path, []).append((n, m.group(at)))
    return found


def drop_lines(layout: Layout, path: Path, numbers: set[int]) -> None:
    """Rewrite a use file without some of its lines (under its lock; the others as they
    are)."""
    with files.locked(layout, path):
        lines = _read(path)
        kept = [line for n, line in enumerate(lines, start=1) if n not in numbers]
        files.atomic_write(path, "".join(f"{line}\n" for line in kept))


def last_use(used: str, created: str, local: Mapping[str, str], entry_id: str) -> str:
    """The later of an entry's `used` time and the day this clone last used it."""
    day = local.get(entry_id)
    mine = day_stamp(day) if day else ""
    return max(used or created, mine)


def mark_used(ctx: Context, docs: Sequence[Doc]) -> None:
    """Record that these cold/wiki entries were used today (at most one line a day each)."""
    today = ctx.stamp()[:10]
    known = _known_today(ctx.layout.used, today)
    wanted = {d.id for d in docs if _ages(d) and d.used[:10] < today} - known
    if not wanted:
        return  # the common case: already used today, nothing to read or write
    path = ctx.layout.used
    with files.locked(ctx.layout, path):
        lines = _read(path)
        seen = _parse(lines, _any_day)  # compacted, every line is kept: reads judge them
        known.update(i for i, day in seen.items() if day == today)
        new = sorted(wanted - known)
        if not new:
            return
        if len(lines) > 2 * len(seen) + _COMPACT_SLACK:
            _rewrite(ctx.layout, seen | dict.fromkeys(new, today))
        else:
            _append(ctx.layout, [f"{today} {i}" for i in new])
        known.update(new)


def _ages(doc: Doc) -> bool:
    """Whether an entry's use counts: a cold or wiki entry of tiermem's (Squad's governed
    memories never age, and tiermem keeps no record of them)."""
    return doc.tier in LASTING_TIERS and governed.TAG not in doc.tags.split(",")


# The ids this process knows are recorded as used today, by record file. A day's record only
# grows (a fold or a compaction keeps each id's last day), so a search or spawn that returns
# them again need not read the record: its cost no longer grows with it.
_KNOWN: dict[tuple[Path, str], set[str]] = {}


def _known_today(path: Path, today: str) -> set[str]:
    if not any(day == today for _, day in _KNOWN):
        _KNOWN.clear()  # a new day: yesterday's knowledge is no use
    return _KNOWN.setdefault((path, today), set())


def fold(ctx: Context, dry_run: bool = False) -> list[str]:
    """Fold the days this clone recorded into the team's ledger; return the ids whose last
    use the ledger now says is later. Nothing new: the ledger is not written.

    The local record is kept (compacted): it costs little, and a fold whose ledger write is
    thrown away (`git checkout`) loses nothing.
    """
    path = ctx.layout.used
    if not path.exists():
        return []
    target = ledger_path(ctx.layout)
    with files.locked(ctx.layout, path), files.locked(ctx.layout, target):
        check = plausible(ctx.layout, ctx.stamp()[:10])
        lines = _read(path)
        local = _parse(lines, check)
        team = ledger(ctx.layout, check)
        moved = sorted(i for i, day in local.items() if day > team.get(i, ""))
        if dry_run or not moved:
            return moved
        team.update({i: local[i] for i in moved})
        # The ledger is written without days that cannot be true; this clone's record
        # keeps every line (`doctor --repair` drops those).
        _write_ledger(ctx, _kept(ctx, team))
        _rewrite(ctx.layout, _parse(lines, _any_day))
    return moved


def _kept(ctx: Context, days: Mapping[str, str]) -> dict[str, str]:
    """The ledger's lines of entries still in cold or the wiki (an entry that left for the
    archive, or was forgotten, no longer ages)."""
    with ctx.index.uncounted():  # ids alone: a fold never loads the token encoding
        present = {doc.id for tier in LASTING_TIERS for doc in ctx.index.docs(tier=tier)}
    return {i: day for i, day in days.items() if i in present}


def _write_ledger(ctx: Context, days: Mapping[str, str]) -> None:
    from ..storage import bootstrap  # only a fold that writes reads the git settings

    text = "".join(f"{i} {day}\n" for i, day in sorted(days.items()))
    files.atomic_write(ledger_path(ctx.layout), text)
    bootstrap.learn_git_settings(ctx.layout)  # a store made before the ledger: merge by union


def _read(path: Path) -> list[str]:
    data = files.read_bytes(path)
    return data.decode("utf-8", "replace").splitlines() if data is not None else []


def _read_quietly(path: Path) -> list[str]:
    """Lines of a file in Squad's folder, none when something not a file is in its place."""
    try:
        return _read(path)
    except TiermemError:
        return []


def _parse(lines: Iterable[str], check: Plausible) -> dict[str, str]:
    """The last day of each id; a torn or foreign line, or a day that cannot be true, is
    skipped, never an error."""
    days: dict[str, str] = {}
    for line in lines:
        if (m := _LINE.fullmatch(line.strip())) and check(m.group(1)):
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
