"""Scribe's maintenance run: finish checkpoints, merge the inbox, supersede, promote, expire."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..context import Context
from ..errors import ParseError, TiermemError, UsageError
from ..results.scribe import RunReport
from ..storage import archive, files, store, validate
from ..storage.clock import parse_time
from ..storage.entries import Entry, TierFile, render_entry
from ..team import use, wiki
from ..team.classify import is_structured
from . import supersede
from .session import checkpoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..vocabulary import FileTier, Queue


def active_days(colds: list[tuple[str, TierFile]], now_stamp: str) -> list[str]:
    """The days the team was at work (sessions it wrote down, and today), in order.

    Cold ages by these, not by the calendar: a team back from a pause, or one whose history
    was just imported, finds its last sessions where it left them.
    """
    days = {e.created[:10] for _, cold in colds for e in cold.entries if e.created}
    return sorted(days | {now_stamp[:10]})


def age_of(
    entry: Entry, now_stamp: str, days: Sequence[str], local: Mapping[str, str] | None = None
) -> int:
    """Active days (see `active_days`) since the entry was last used or made, here or in any
    clone: the days after that one, up to today, on which the team was at work.

    `local` is this clone's record of use (see `use`), which Scribe may not have folded
    into the entry yet: a reader's use protects an entry before any fold.
    """
    last = use.last_use(entry.used, entry.created, local or {}, entry.id) or now_stamp
    return bisect.bisect_right(days, now_stamp[:10]) - bisect.bisect_right(days, last[:10])


# --- maintenance ----------------------------------------------------------------------


def _readable(
    ctx: Context, tier: FileTier | Queue, skipped: list[str]
) -> list[tuple[str, TierFile]]:
    """(owner, file) of each tier file that can be read; the others are skipped, and said:
    a damaged file, or one whose name is no agent's, stops only what needs it."""
    found = []
    for path in files.memory_files(ctx.layout.tier_dir(tier)):
        try:
            validate.owner(path.stem)
            loaded = store.load(ctx.layout, tier, path)
        except UsageError:
            skipped.append(f"{ctx.layout.relative(path)}: not an agent's file name")
            continue
        except ParseError as exc:
            skipped.append(f"{exc} (not read)")
            continue
        if loaded is not None:
            found.append((path.stem, loaded))
    return found


def _cold_files(ctx: Context, skipped: list[str] | None = None) -> list[tuple[str, TierFile]]:
    return _readable(ctx, "cold", [] if skipped is None else skipped)


def _queued(ctx: Context, skipped: list[str]) -> list[str]:
    """Agents whose queue holds text waiting for a summary (an emptied queue file stays)."""
    return [agent for agent, queue in _readable(ctx, "queue", skipped) if queue.entries]


def _recurring(colds: list[tuple[str, TierFile]]) -> dict[frozenset[str], int]:
    sessions: dict[frozenset[str], set[str]] = {}
    for _, cold in colds:
        for entry in cold.entries:
            if entry.trust:
                continue  # untrusted text is no evidence that a subject recurs
            key = supersede.subject(entry.title)
            if key is not None:
                sessions.setdefault(key, set()).add(entry.session or entry.created[:10])
    return {k: len(v) for k, v in sessions.items()}


def _mark_superseded(colds: list[tuple[str, TierFile]], forward: dict[str, str]) -> None:
    for _, cold in colds:
        cold.entries = [
            replace(e, status="superseded", superseded_by=forward[e.id]) if e.id in forward else e
            for e in cold.entries
        ]


def _promotable(
    ctx: Context, colds: list[tuple[str, TierFile]], now: str
) -> list[tuple[str, Entry]]:
    recurring = _recurring(colds)
    chosen = []
    rules = ctx.config.scribe
    for agent, cold in colds:
        for entry in cold.entries:
            if not (is_structured(entry.cls) and entry.active and not entry.trust):
                continue
            age = (parse_time(now) - parse_time(entry.created or now)).total_seconds() / 86400
            key = supersede.subject(entry.title)
            seen = recurring.get(key, 0) if key is not None else 0
            if age >= rules.promote_after_days or seen >= rules.promote_min_sessions:
                chosen.append((agent, entry))
    return chosen


def _stays(entry: Entry) -> bool:
    """Entries the cold TTL never retires: policies, and an agent's standing self-knowledge."""
    return entry.cls == "policy" or entry.standing


def _to_leave(
    ctx: Context, colds: list[tuple[str, TierFile]], now: str, skip: set[str]
) -> tuple[list[tuple[str, Entry]], list[tuple[str, Entry]]]:
    """(expired, over budget) cold entries; policies and standing entries never leave.

    The budget bounds an agent's session summaries. Structured entries (decisions,
    conventions, contracts) do not count against it: they are on their way to the wiki,
    which takes them once they are stable. Nor does the agent's standing entry (its Core
    Context): it is what the agent is, not a session, and only a newer version replaces it.
    """
    ttl = ctx.config.cold.ttl_days
    local = use.recorded(ctx.layout, now[:10])
    days = active_days(colds, now)
    expired, over = [], []
    for agent, cold in colds:
        keep = [e for e in cold.entries if e.id not in skip]
        gone = [e for e in keep if not _stays(e) and age_of(e, now, days, local) > ttl]
        expired += [(agent, e) for e in gone]
        ids = {e.id for e in gone}
        summaries = [e for e in keep if e.id not in ids and budgeted(e)]
        over += [(agent, e) for e in _over_budget(ctx, summaries, local)]
    return expired, over


def budgeted(entry: Entry) -> bool:
    """Whether an entry counts against its agent's cold budget: a session summary (not a
    structured entry, on its way to the wiki, nor the agent's standing entry). The report's
    cold gauge counts the same."""
    return not is_structured(entry.cls) and not entry.standing


def _over_budget(ctx: Context, summaries: list[Entry], local: Mapping[str, str]) -> list[Entry]:
    """The least recently used summaries that take an agent's cold over its budget."""
    size = sum(len(render_entry(e).encode("utf-8")) + 1 for e in summaries)

    def least_used(e: Entry) -> tuple[str, str]:
        return use.last_use(e.used, e.created, local, e.id), e.id

    over = []
    for entry in sorted(summaries, key=least_used):
        if size <= ctx.config.cold.budget_bytes:
            break
        size -= len(render_entry(entry).encode("utf-8")) + 1
        over.append(entry)
    return over


def _archive_out(ctx: Context, leaving: list[tuple[str, Entry]], why: str) -> None:
    by_agent: dict[str, list[Entry]] = {}
    for agent, entry in leaving:
        by_agent.setdefault(agent, []).append(entry)
    for agent, items in sorted(by_agent.items()):
        for entry in items:
            record = archive.new_record(
                agent,
                ctx.stamp(),
                why,
                f"cold/{agent}.md",
                entry.title,
                archive.leaving(ctx.layout, entry),
                trust=entry.trust,
            )
            archive.write(ctx.layout, record)
        path = ctx.layout.tier_file("cold", agent)
        with store.update_existing(ctx.layout, "cold", path) as cold:
            if cold is not None:
                cold.remove({e.id for e in items})
        ctx.audit(why, [e.id for e in items], ["cold", "archive"], f"{why}: left cold", agent=agent)


def run(ctx: Context, dry_run: bool = False, merge_inbox: bool = True) -> RunReport:
    """All maintenance: finish checkpoints, merge the inbox, supersede, promote, expire."""
    report = RunReport(dry_run)
    queued = _queued(ctx, report.skipped)
    report.checkpoints = list(queued)
    if merge_inbox:
        try:
            merged = ctx.host.merge_inbox(dry_run)
            report.inbox_merged, report.inbox_skipped = merged.merged, merged.skipped
            report.inbox_lines = merged.lines_added
        except TiermemError as exc:  # the team's file is damaged: the inbox waits for it
            report.skipped.append(f"inbox merge: {exc}")
        _follow(ctx, report)
    if not dry_run:
        for agent in queued:
            try:
                checkpoint(ctx, agent)
            except TiermemError as exc:  # that agent's cold file is damaged
                report.checkpoints.remove(agent)
                report.skipped.append(f"checkpoint of {agent}: {exc}")
    # Use recorded in this clone reaches the files the team commits (a dry run only counts it).
    report.refreshed = use.fold(ctx, dry_run=dry_run)
    pairs = supersede.pairs(ctx)
    report.superseded = [(old.id, new.id) for old, new in pairs]
    if not dry_run:
        supersede.apply(ctx, pairs)
    colds = _cold_files(ctx, report.skipped)
    if dry_run:
        # Nothing was written: see the cold files as the supersede step would leave them.
        _mark_superseded(colds, {old.id: new.id for old, new in pairs})
    _age(ctx, colds, report)
    return report


def _follow(ctx: Context, report: RunReport) -> None:
    """What the team wrote in its own files since they were imported comes in now, section
    by section (the host's `follow`); the steps after it age what it brought."""
    try:
        found = ctx.host.follow(report.dry_run)
    except TiermemError as exc:  # a damaged file of the team's: the rest of the run goes on
        report.skipped.append(f"follow: {exc}")
        return
    report.followed = found.files if found.followed else None
    report.follow_written, report.follow_replaced = found.written, found.replaced


def _age(ctx: Context, colds: list[tuple[str, TierFile]], report: RunReport) -> None:
    """Promote what is stable, then archive what expired or is over the cold budget."""
    now = ctx.stamp()
    promotable = _promotable(ctx, colds, now)
    promoted_ids = {e.id for _, e in promotable}
    expired, over = _to_leave(ctx, colds, now, promoted_ids)
    # Structured entries pushed out by the budget reach the wiki instead of the archive.
    rescued = [(a, e) for a, e in over if is_structured(e.cls) and e.active and not e.trust]
    rescued_ids = {e.id for _, e in rescued}
    over = [(a, e) for a, e in over if e.id not in rescued_ids]
    report.expired = [e.id for _, e in expired]
    report.over_budget = [e.id for _, e in over]
    if report.dry_run:
        placed = wiki.placements(ctx, [e for _, e in promotable + rescued])
        report.promoted = {topic: [e.id for e in items] for topic, items in placed.items()}
        return
    report.promoted = wiki.promote(ctx, promotable + rescued, report.skipped)
    if report.promoted:
        ctx.audit("promote", sorted(promoted_ids), ["cold", "wiki"], "stable structured entries")
    _archive_out(ctx, expired, "expire")
    _archive_out(ctx, over, "cold-budget")
