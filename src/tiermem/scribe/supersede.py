"""Supersession: a newer decision on the same subject retires the older one, marked, linked."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..context import Context
from ..errors import ParseError
from ..storage import files, store
from ..storage.entries import Entry
from ..team.classify import is_structured
from ..vocabulary import LASTING_TIERS

_WORD = re.compile(r"[a-z0-9]+")
_DATE = re.compile(r"\b20\d\d-\d\d(-\d\d)?(t[\d:z+-]*)?\b")
# Words that say what kind of note something is, not what it is about.
_GENERIC = frozenset(
    "a an and are as at be by decision decisions directive for from in into is it its "
    "key learning learnings new note notes of on or proposal proposed revised session "
    "status summary the this to update updated updates user via vs was we what why with "
    "work final team agent complete completed done fix fixes added add implementation".split()
)


def subject(title: str) -> frozenset[str] | None:
    """What a structured entry is about: its title's content words (None when too generic)."""
    words = [w for w in _WORD.findall(_DATE.sub(" ", title.lower())) if w not in _GENERIC]
    content = frozenset(w for w in words if not w.isdigit() and len(w) > 1)
    return content if len(content) >= 2 else None


def same_subject(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    """Two subjects are the same when their words match (or nearly, for long titles)."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    return min(len(a), len(b)) >= 3 and len(a & b) / len(a | b) >= 0.8


@dataclass
class _Located:
    entry: Entry
    path: Path
    tier: str


def _structured(ctx: Context) -> list[_Located]:
    found: list[_Located] = []
    for tier in LASTING_TIERS:
        for path in files.memory_files(ctx.layout.tier_dir(tier)):
            try:
                tier_file = store.load(ctx.layout, tier, path)
            except ParseError:
                continue
            if tier_file is not None:
                found += [
                    _Located(e, path, tier) for e in tier_file.entries if is_structured(e.cls)
                ]
    return found


def pairs(ctx: Context) -> list[tuple[Entry, Entry]]:
    """(older, newer) pairs: an active entry and the newer one on the same subject."""
    located = [x for x in _structured(ctx) if x.entry.active]
    groups: dict[str, list[tuple[frozenset[str], _Located]]] = {}
    for item in located:
        key = subject(item.entry.title)
        if key is not None:
            groups.setdefault(item.entry.agent, []).append((key, item))
    pairs: list[tuple[Entry, Entry]] = []
    for members in groups.values():
        members.sort(key=lambda m: (m[1].entry.created, m[1].entry.id))
        for i, (key, older) in enumerate(members):
            newer = next(
                (
                    n
                    for k, n in members[i + 1 :]
                    if same_subject(key, k)
                    and _root(n.entry) != _root(older.entry)
                    # Text from tools or the web never retires what the team decided.
                    and not (n.entry.trust and not older.entry.trust)
                ),
                None,
            )
            if newer is not None and newer.entry.id != older.entry.id:
                pairs.append((older.entry, newer.entry))
    return pairs


def _root(entry: Entry) -> str:
    """The decision an entry is part of (itself when it is whole)."""
    return dict(entry.extra).get("parent", entry.id)


def apply(ctx: Context, pairs: list[tuple[Entry, Entry]]) -> None:
    """Mark each older entry superseded with a link forward, and the newer one back."""
    forward = {old.id: new.id for old, new in pairs}
    back: dict[str, list[str]] = {}
    for old, new in pairs:
        back.setdefault(new.id, []).append(old.id)
    for tier in LASTING_TIERS:
        for path in files.memory_files(ctx.layout.tier_dir(tier)):
            try:
                _mark(ctx, tier, path, forward, back)
            except ParseError:
                continue  # a damaged file holds none of the pairs (they were read from files)
    if pairs:
        ctx.audit(
            "supersede",
            [i for pair in pairs for i in (pair[0].id, pair[1].id)],
            ["cold", "wiki"],
            "newer entry on the same subject",
        )


def _mark(
    ctx: Context, tier: str, path: Path, forward: dict[str, str], back: dict[str, list[str]]
) -> None:
    """Mark the older entries of one file superseded, and the newer ones with what they retire."""
    with store.update_existing(ctx.layout, tier, path) as tier_file:
        if tier_file is None:
            return
        for entry in list(tier_file.entries):
            updated = entry
            if entry.id in forward and entry.active:
                updated = replace(updated, status="superseded", superseded_by=forward[entry.id])
            if entry.id in back:
                merged = tuple(sorted(set(entry.supersedes) | set(back[entry.id])))
                updated = replace(updated, supersedes=merged)
            if updated != entry:
                tier_file.put(updated)
