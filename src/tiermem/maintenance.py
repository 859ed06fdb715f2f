"""Scribe's maintenance run: finish checkpoints, merge the inbox, supersede, promote, expire.

Also the last-use refresh that spawns and searches ask for, which the TTL counts from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from . import archive, store
from .classify import is_structured
from .clock import parse_time
from .entries import Entry, TierFile, render_entry
from .errors import ParseError

if TYPE_CHECKING:
    from .index import Doc
    from .memory import Memory


# --- last use -------------------------------------------------------------------------


def refresh(mem: Memory, docs: Sequence[Doc]) -> None:
    """Mark cold and wiki entries as used now (at most one write per file and day)."""
    today = mem.clock.stamp()
    by_path: dict[str, set[str]] = {}
    for d in docs:
        if d.tier in ("cold", "wiki") and d.used[:10] < today[:10]:
            by_path.setdefault(d.path, set()).add(d.id)
    wrote = False
    for rel, ids in sorted(by_path.items()):
        path = mem.root / rel
        tier = path.parent.name
        with store.locked(mem.layout, path):
            try:
                tier_file = store.load(mem.layout, tier, path)
            except ParseError:
                # A file broken since it was indexed: the read that used its entries goes on
                # (the sync has warned about the file), and it is not rewritten.
                continue
            if tier_file is None:
                continue
            changed = False
            for entry in tier_file.entries:
                if entry.id in ids and entry.used < today:
                    tier_file.put(replace(entry, used=today))
                    changed = True
            if changed:
                store.save(mem.layout, path, tier_file)
                wrote = True
    if wrote:
        mem.index.sync()  # keep the index in step with what was just written


def age_of(entry: Entry, now_stamp: str) -> float:
    """Days since the entry was last used (or created)."""
    last = entry.used or entry.created or now_stamp
    return (parse_time(now_stamp) - parse_time(last)).total_seconds() / 86400


# --- maintenance ----------------------------------------------------------------------


@dataclass
class RunReport:
    """What a maintenance run did (or, dry, would do)."""

    dry_run: bool
    checkpoints: list[str] = field(default_factory=list)
    inbox_merged: list[str] = field(default_factory=list)
    inbox_skipped: list[str] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)
    promoted: dict[str, list[str]] = field(default_factory=dict)
    expired: list[str] = field(default_factory=list)
    over_budget: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report in words."""
        verb = "would " if self.dry_run else ""
        out = [
            f"checkpoints: {verb}compress {len(self.checkpoints)} queued agent(s)",
            f"inbox: {verb}merge {len(self.inbox_merged)} file(s) into .squad/decisions.md",
            f"supersede: {verb}mark {len(self.superseded)} older entr(ies) superseded",
            f"promote: {verb}move {sum(len(v) for v in self.promoted.values())} entr(ies) to "
            f"{len(self.promoted)} wiki page(s)",
            f"expire: {verb}archive {len(self.expired)} cold entr(ies) unused for the TTL",
            f"cold budget: {verb}archive {len(self.over_budget)} oldest entr(ies) over budget",
        ]
        out += [f"skipped: {s}" for s in self.inbox_skipped]
        return out


def _cold_files(mem: Memory) -> list[tuple[str, TierFile]]:
    found = []
    for path in sorted(mem.layout.tier_dir("cold").glob("*.md")):
        if not store.is_temp(path):
            loaded = store.load(mem.layout, "cold", path)
            if loaded is not None:
                found.append((path.stem, loaded))
    return found


def _recurring(files: list[tuple[str, TierFile]]) -> dict[frozenset[str], int]:
    from .decisions import subject

    sessions: dict[frozenset[str], set[str]] = {}
    for _, cold in files:
        for entry in cold.entries:
            if entry.trust:
                continue  # untrusted text is no evidence that a subject recurs
            key = subject(entry.title)
            if key is not None:
                sessions.setdefault(key, set()).add(entry.session or entry.created[:10])
    return {k: len(v) for k, v in sessions.items()}


def _mark_superseded(files: list[tuple[str, TierFile]], forward: dict[str, str]) -> None:
    for _, cold in files:
        cold.entries = [
            replace(e, status="superseded", superseded_by=forward[e.id]) if e.id in forward else e
            for e in cold.entries
        ]


def _promotable(
    mem: Memory, files: list[tuple[str, TierFile]], now: str
) -> list[tuple[str, Entry]]:
    from .decisions import subject

    recurring = _recurring(files)
    chosen = []
    rules = mem.config.scribe
    for agent, cold in files:
        for entry in cold.entries:
            if not (is_structured(entry.cls) and entry.active and not entry.trust):
                continue
            age = (parse_time(now) - parse_time(entry.created or now)).total_seconds() / 86400
            key = subject(entry.title)
            seen = recurring.get(key, 0) if key is not None else 0
            if age >= rules.promote_after_days or seen >= rules.promote_min_sessions:
                chosen.append((agent, entry))
    return chosen


def _to_leave(
    mem: Memory, files: list[tuple[str, TierFile]], now: str, skip: set[str]
) -> tuple[list[tuple[str, Entry]], list[tuple[str, Entry]]]:
    """(expired, over budget) cold entries; policies never leave.

    The budget bounds an agent's session summaries. Structured entries (decisions,
    conventions, contracts) do not count against it: they are on their way to the wiki,
    which takes them once they are stable.
    """
    ttl = mem.config.cold.ttl_days
    expired, over = [], []
    for agent, cold in files:
        keep = [e for e in cold.entries if e.id not in skip]
        for entry in keep:
            if entry.cls != "policy" and age_of(entry, now) > ttl:
                expired.append((agent, entry))
        gone = {e.id for a, e in expired if a == agent}
        summaries = [e for e in keep if e.id not in gone and not is_structured(e.cls)]
        size = sum(len(render_entry(e).encode("utf-8")) + 1 for e in summaries)
        for entry in sorted(summaries, key=lambda e: (e.used or e.created, e.id)):
            if size <= mem.config.cold.budget_bytes:
                break
            size -= len(render_entry(entry).encode("utf-8")) + 1
            over.append((agent, entry))
    return expired, over


def _archive_out(mem: Memory, leaving: list[tuple[str, Entry]], why: str) -> None:
    by_agent: dict[str, list[Entry]] = {}
    for agent, entry in leaving:
        by_agent.setdefault(agent, []).append(entry)
    for agent, items in sorted(by_agent.items()):
        for entry in items:
            record = archive.new_record(
                agent, mem.clock.stamp(), why, f"cold/{agent}.md", entry.title, render_entry(entry)
            )
            archive.write(mem.layout, record)
        path = mem.layout.tier_file("cold", agent)
        with store.locked(mem.layout, path):
            cold = store.load(mem.layout, "cold", path)
            if cold is not None:
                cold.remove({e.id for e in items})
                store.save(mem.layout, path, cold)
        mem._audit(
            why, [e.id for e in items], ["cold", "archive"], f"{why}: left cold", agent=agent
        )


def run(mem: Memory, dry_run: bool = False, merge_inbox: bool = True) -> RunReport:
    """All maintenance: finish checkpoints, merge the inbox, supersede, promote, expire."""
    from . import decisions, wiki
    from .scribe import checkpoint

    report = RunReport(dry_run)
    queued = sorted(
        p.stem for p in mem.layout.tier_dir("queue").glob("*.md") if not store.is_temp(p)
    )
    report.checkpoints = queued
    if merge_inbox:
        inbox = decisions.merge_inbox(mem, dry_run=dry_run)
        report.inbox_merged, report.inbox_skipped = inbox.merged, inbox.skipped
    if not dry_run:
        for agent in queued:
            checkpoint(mem, agent)
    pairs = decisions.supersessions(mem)
    report.superseded = [(old.id, new.id) for old, new in pairs]
    if not dry_run:
        decisions.apply_supersessions(mem, pairs)
    now = mem.clock.stamp()
    files = _cold_files(mem)
    if dry_run:
        # Nothing was written: see the cold files as the supersede step would leave them.
        _mark_superseded(files, {old.id: new.id for old, new in pairs})
    promotable = _promotable(mem, files, now)
    promoted_ids = {e.id for _, e in promotable}
    expired, over = _to_leave(mem, files, now, promoted_ids)
    # Structured entries pushed out by the budget reach the wiki instead of the archive.
    rescued = [(a, e) for a, e in over if is_structured(e.cls) and e.active and not e.trust]
    rescued_ids = {e.id for _, e in rescued}
    over = [(a, e) for a, e in over if e.id not in rescued_ids]
    report.expired = [e.id for _, e in expired]
    report.over_budget = [e.id for _, e in over]
    if dry_run:
        report.promoted = {"(dry run)": sorted(promoted_ids | {e.id for _, e in rescued})}
        return report
    report.promoted = wiki.promote(mem, promotable + rescued)
    if report.promoted:
        mem._audit("promote", sorted(promoted_ids), ["cold", "wiki"], "stable structured entries")
    _archive_out(mem, expired, "expire")
    _archive_out(mem, over, "cold-budget")
    return report
