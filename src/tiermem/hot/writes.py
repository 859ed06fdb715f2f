"""Writes to the hot tier: the current session, held within its budget on every write.

Whatever a write pushes out of hot (older actions, a replaced task, text over the budget) is
archived and queued for Scribe before hot is saved, and a hot tier over budget is
checkpointed into cold at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..context import Context
from ..errors import NotFoundError, TiermemError
from ..results.hot import WriteReport
from ..storage import files, store
from ..storage.entries import Entry, TierFile
from . import clone_sessions
from . import tier as hot

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from ..vocabulary import HotKind, Trust

# Scribe's session steps (and the archive) are imported by the writes that move text out of
# hot: a note that fits starts without them.

Change = Callable[[TierFile], list[Entry]]


def set_task(ctx: Context, agent: str, values: dict[str, str]) -> WriteReport:
    """Set the task (and why, and who the agent talks to): each replaces its previous value."""
    cleaned: dict[str, str] = {}
    kinds: list[str] = []
    for slot, value in values.items():
        cleaned[slot], found = ctx.clean(value, slot)
        kinds += found

    def change(tier_file: TierFile) -> list[Entry]:
        replaced = [e for e in tier_file.entries if e.slot in cleaned]
        tier_file.remove({e.id for e in replaced})
        session_id = tier_file.meta["session"]
        stamp = ctx.stamp()
        added = [hot.make_entry(agent, s, t, stamp, session_id, 0) for s, t in cleaned.items()]
        tier_file.entries[0:0] = added
        return replaced

    return _redacted(ctx, _write(ctx, agent, change, "set"), kinds)


def add(ctx: Context, agent: str, slot: HotKind, text: str, trust: Trust = "") -> WriteReport:
    """Record an action, decision, blocker or note."""
    cleaned, kinds = ctx.clean(text, slot)

    def change(tier_file: TierFile) -> list[Entry]:
        n = len(tier_file.entries)
        entry = hot.make_entry(agent, slot, cleaned, ctx.stamp(), tier_file.meta["session"], n)
        tier_file.entries.append(replace(entry, trust=trust))
        return []

    return _redacted(ctx, _write(ctx, agent, change, slot), kinds)


def unblock(ctx: Context, agent: str, text: str) -> WriteReport:
    """Remove the one blocker matched by id or text; the resolution is kept as an action,
    with the blocker's untrusted mark when it has one (the text is the blocker's)."""
    path = ctx.layout.tier_file("hot", agent)
    if not path.exists():
        raise NotFoundError(f"agent {agent!r} has no hot tier")
    # Matched before the lock is taken: a refused command writes nothing, not even a lock.
    _blocker(agent, store.load(ctx.layout, "hot", path), text)

    def change(tier_file: TierFile) -> list[Entry]:
        blocker = _blocker(agent, tier_file, text)
        tier_file.remove({blocker.id})
        resolved = "Unblocked: " + hot.slot_text(blocker)
        n = len(tier_file.entries)
        session_id = tier_file.meta["session"]
        action = hot.make_entry(agent, "action", resolved, ctx.stamp(), session_id, n)
        tier_file.entries.append(replace(action, trust=blocker.trust))
        return []

    return _write(ctx, agent, change, "unblock")


def _blocker(agent: str, tier_file: TierFile | None, text: str) -> Entry:
    """The one blocker of a hot tier that an id or a text names (NotFoundError otherwise)."""
    needle = text.strip().lower()
    blockers = hot.of_slot(tier_file, "blocker") if tier_file is not None else []
    match = [b for b in blockers if b.id == needle or needle in hot.slot_text(b).lower()]
    if len(match) != 1:
        found = "no blocker" if not match else f"{len(match)} blockers"
        raise NotFoundError(f"{found} of {agent} matches {text!r}")
    return match[0]


def clear(ctx: Context, agent: str) -> WriteReport:
    """Empty the hot tier; its content is archived and queued for Scribe first."""
    from ..storage import archive

    path = ctx.layout.tier_file("hot", agent)
    report = WriteReport(agent)
    if not path.exists():
        raise NotFoundError(f"agent {agent!r} has no hot tier")
    with files.locked(ctx.layout, path):
        tier_file = store.load(ctx.layout, "hot", path)
        if tier_file is None:
            raise NotFoundError(f"agent {agent!r} has no hot tier")
        if tier_file.entries:
            session_id = tier_file.meta.get("session", "")
            record = ctx.keeper.queue(agent, tier_file.entries, session_id)
            report.archived.append(record.location)
        if tier_file.notes.strip():  # text written by hand outside any entry
            kept = archive.new_record(
                agent, ctx.stamp(), "hot", f"hot/{agent}.md", "hot cleared", tier_file.notes
            )
            archive.write(ctx.layout, kept)
            report.archived.append(kept.location)
        if report.archived:
            # Emptied, not deleted: git would take a deleted hot file and the new archive
            # record of its text for one renamed file (see `session._reset_hot`).
            store.save(ctx.layout, path, hot.between_sessions(agent))
    ids = [e.id for e in tier_file.entries]
    if report.archived:
        ctx.audit("hot-clear", ids, ["hot", "archive"], "cleared by request")
    report.change, report.left = "clear", len(ids)
    return report


def _redacted(ctx: Context, report: WriteReport, kinds: list[str]) -> WriteReport:
    report.redactions = kinds
    ctx.audit_redactions(kinds, "hot")
    return report


def _fresh(ctx: Context, agent: str) -> TierFile:
    stamp = ctx.stamp()
    return hot.new_file(agent, hot.session_id(stamp), stamp)


def _with_session(ctx: Context, agent: str, tier_file: TierFile) -> None:
    """A hot file between sessions (or written by hand) gets a session, keeping all it
    holds; this clone notes that it started it."""
    if not tier_file.meta.get("session"):
        fresh = _fresh(ctx, agent)
        tier_file.heading, tier_file.meta = fresh.heading, fresh.meta
        clone_sessions.record(ctx.layout, agent, fresh.meta["session"])


def _move_out(
    ctx: Context,
    tier_file: TierFile,
    moved: list[Entry],
    overflow: list[Entry],
    report: WriteReport,
) -> TiermemError | None:
    """Archive what left hot: checkpointed into cold at once when hot overflowed, queued for
    the session summary otherwise. A checkpoint that failed is returned, its text queued."""
    agent, session_id = report.agent, tier_file.meta["session"]
    failed = None
    if overflow:
        record, report.cold, failed = ctx.keeper.checkpoint(agent, moved + overflow, session_id)
    else:
        record = ctx.keeper.queue(agent, moved, session_id)
    report.archived.append(record.location)
    return failed


def _write(ctx: Context, agent: str, change: Change, what: str) -> WriteReport:
    """Apply a change to hot under its lock, keep the budget, archive what moves out.

    What overflows the budget is checkpointed into cold before hot is saved: a crash in
    between leaves it in hot, and the summary already written is found again (see
    `session.checkpoint_leaving`).
    """
    path = ctx.layout.tier_file("hot", agent)
    report = WriteReport(agent)
    rules = ctx.config.hot
    failed: TiermemError | None = None
    with store.update(ctx.layout, "hot", path, lambda: hot.between_sessions(agent)) as tier_file:
        _with_session(ctx, agent, tier_file)
        before = {e.id for e in tier_file.entries}
        replaced = change(tier_file)
        new_ids = [e.id for e in tier_file.entries if e.id not in before]
        moved = replaced + hot.extra_actions(tier_file, rules.max_actions)
        tier_file.remove({e.id for e in moved})
        overflow = hot.fit(tier_file, rules.budget_bytes, set(new_ids))
        if moved or overflow:
            failed = _move_out(ctx, tier_file, moved, overflow, report)
    if failed is not None:
        raise failed  # hot is saved and what left it waits in the queue
    report.ids, report.change, report.budget = new_ids, what, rules.budget_bytes
    report.bytes, report.left = hot.size(tier_file), len(moved)
    report.overflow = sum(len(e.text.encode("utf-8")) for e in overflow)
    return report
