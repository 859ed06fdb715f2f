"""Per-entry merges of tier files for git: base, ours and theirs merged entry by entry.

A union merge keeps lines, not entries: entries added on both sides around a shared line can
interleave, and what an entry says can then depend on the merge direction. This driver parses
the three versions and merges them by entry id, so both directions give the same file.

A clone opts in with `tiermem init --merge-driver`, which names the driver in the clone's own
`.git/info/attributes` (it overrides the committed `merge=union`) and `.git/config`. A clone
without it keeps the union merge: never conflict markers, only the known interleaving.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from functools import reduce
from pathlib import Path

from ..errors import ParseError, UsageError
from ..vocabulary import FILE_FOLDERS
from . import entries, files
from .entries import Entry, TierFile

DRIVER = "tiermem"
MERGED_TIERS = FILE_FOLDERS


def merge_tier_files(base: str, ours: str, theirs: str) -> str:
    """The merged tier file; ParseError when a version cannot be read as one."""
    b, o, t = (
        entries.parse(text, f"<{side}>")
        for side, text in (("base", base), ("ours", ours), ("theirs", theirs))
    )
    merged = TierFile(
        heading=_pick(b.heading, o.heading, t.heading),
        meta=_merge_meta(b.meta, o.meta, t.meta),
        notes=_merge_notes(b.notes, o.notes, t.notes),
        entries=_merge_entries(b, o, t),
    )
    return entries.render(merged)


def _pick(base: str, ours: str, theirs: str) -> str:
    """One value three ways; changed on both sides, the larger (the same either way round)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return max(ours, theirs)


Meta = dict[str, str]


def _merge_meta(base: Meta, ours: Meta, theirs: Meta) -> Meta:
    keys = [*base, *sorted((ours.keys() | theirs.keys()) - base.keys())]
    merged = {k: _pick(base.get(k, ""), ours.get(k, ""), theirs.get(k, "")) for k in keys}
    return {k: v for k, v in merged.items() if v}


def _merge_notes(base: str, ours: str, theirs: str) -> str:
    if ours != base and theirs != base and ours != theirs:
        return "\n\n".join(sorted(n for n in (ours, theirs) if n))  # both edited: keep both
    return _pick(base, ours, theirs)


def _merge_entries(base: TierFile, ours: TierFile, theirs: TierFile) -> list[Entry]:
    """Base order first, then new entries by creation time: the same in both directions."""
    known = {e.id: e for e in base.entries}
    mine, other = _versions(ours), _versions(theirs)
    added: dict[str, str] = {}  # id -> its earliest creation time on either side
    for entry_id, versions in [*mine.items(), *other.items()]:
        if entry_id not in known:
            created = versions[0].created
            added[entry_id] = min(added.get(entry_id, created), created)
    order = [*known, *sorted(added, key=lambda i: (added[i], i))]
    merged: list[Entry] = []
    for entry_id in order:
        merged += _merge_one(known.get(entry_id), mine.get(entry_id, []), other.get(entry_id, []))
    return merged


def _versions(tier_file: TierFile) -> dict[str, list[Entry]]:
    """Each id's version, and the ones an earlier merge left unresolved (kept, not dropped)."""
    found = {e.id: [e] for e in tier_file.entries}
    for conflict in tier_file.conflicts:
        if conflict.lost is not None and conflict.id in found:
            found[conflict.id].append(conflict.lost)
    return found


def _merge_one(base: Entry | None, ours: list[Entry], theirs: list[Entry]) -> list[Entry]:
    if not ours or not theirs:
        kept = ours or theirs
        # Gone on one side (promoted, expired, superseded away): gone, unless the other
        # side changed it since, which is kept so that no edit is lost.
        return [] if not kept or kept == [base] else kept
    if ours == theirs or theirs == [base]:
        return ours
    if ours == [base]:
        return theirs
    versions = _distinct([*ours, *theirs])
    winner = reduce(entries.winner, versions)
    marked = entries.marked_as(winner, versions)
    if len({(e.title, e.body) for e in versions}) == 1:
        return [marked]  # only metadata differs (a refreshed last use): newest wins
    # Two texts: both are written under one id. Reading folds them (the winner rule picks
    # the same one in every clone), reports the conflict, and archives the other version.
    return [marked, *[e for e in versions if e is not winner]]


def _distinct(versions: Sequence[Entry]) -> list[Entry]:
    seen: list[Entry] = []
    for entry in versions:
        if entry not in seen:
            seen.append(entry)
    return sorted(seen, key=entries.render_entry)


# --- the git side -------------------------------------------------------------------------


def merge_file(base: Path, ours: Path, theirs: Path) -> bool:
    """Merge into `ours` as git asks a driver to; False when it fell back to a union merge."""
    texts = [p.read_bytes().decode("utf-8", "replace") for p in (base, ours, theirs)]
    try:
        merged = merge_tier_files(*texts)
    except ParseError:
        _union(base, ours, theirs)
        return False
    files.atomic_write(ours, merged)
    return True


def _union(base: Path, ours: Path, theirs: Path) -> None:
    """git's own union merge, for a version that does not parse as a tier file."""
    subprocess.run(
        ["git", "merge-file", "--union", "-q", str(ours), str(base), str(theirs)], check=False
    )


def repository_top(folder: Path) -> Path:
    """The top of the git working tree holding folder (a UsageError outside one)."""
    return Path(_git(folder, "rev-parse", "--show-toplevel")).resolve()


def install(top: Path, memory_dir: Path) -> list[str]:
    """Set up the driver in the clone whose working tree is `top` (see `repository_top`) for
    the store in memory_dir; one line for each change made."""
    attributes = Path(_git(top, "rev-parse", "--git-path", "info/attributes"))
    attributes = attributes if attributes.is_absolute() else top / attributes
    rel = memory_dir.resolve().relative_to(top).as_posix()
    lines = [f"{rel}/{tier}/*.md merge={DRIVER}" for tier in MERGED_TIERS]
    changed = []
    current = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    missing = [line for line in lines if line not in current.splitlines()]
    if missing:
        attributes.parent.mkdir(parents=True, exist_ok=True)
        text = current + ("" if not current or current.endswith("\n") else "\n")
        files.atomic_write(attributes, text + "".join(f"{line}\n" for line in missing))
        shown = (
            attributes.resolve().relative_to(top) if attributes.is_relative_to(top) else attributes
        )
        changed.append(f"wrote {shown}: tier files merge entry by entry in this clone")
    command = f"{shlex.quote(sys.executable)} -m tiermem merge-file %O %A %B"
    if _git(top, "config", "--get", f"merge.{DRIVER}.driver", check=False) != command:
        _git(top, "config", f"merge.{DRIVER}.name", "tiermem: merge tier files by entry")
        _git(top, "config", f"merge.{DRIVER}.driver", command)
        changed.append(f"set git config merge.{DRIVER}.driver")
    return changed


def _git(cwd: Path, *args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except OSError as exc:
        raise UsageError(f"the merge driver needs git: {exc}") from None
    if check and proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
        raise UsageError(f"cannot set up the merge driver in {cwd}: {reason}")
    return proc.stdout.strip()
