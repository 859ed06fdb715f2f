"""Markdown views of memory for people and prompts (no metadata comments)."""

from __future__ import annotations

from collections.abc import Collection

from ..context import Context
from ..results.hot import HotEntry, HotView
from ..storage import store
from ..storage.entries import Entry
from . import clone_sessions
from .tier import LABELS, LIST_HEADINGS, SINGLE_SLOTS, shown_line
from .tier import size as tier_size


def hot_markdown(
    agent: str, entries: list[Entry], session: str = "", mine: Collection[str] = ()
) -> str:
    """The hot tier as a short markdown block, in the spawn template's order.

    A hot tier merged from two clones holds two sessions (each entry names its own): the
    current one first (the newest this clone started, else the file's `session`), then
    each other one under a line that says it is open in another clone.
    """
    current = current_session(entries, session, mine)
    sessions = sorted({e.session for e in entries if e.session and e.session != current})
    if not current or not sessions:
        return _session_markdown(agent, entries)
    parts = [_session_markdown(agent, [e for e in entries if e.session in ("", current)])]
    for other in sessions:
        theirs = [e for e in entries if e.session == other]
        started = min(e.created for e in theirs)[:10] or "undated"
        head = f"**Also open: session {other}, started {started}, in another clone**"
        parts.append(head + "\n" + _session_markdown(agent, theirs))
    return "\n\n".join(parts)


def current_session(entries: list[Entry], session: str, mine: Collection[str] = ()) -> str:
    """The session a clone shows as its own: the newest it started that the entries hold,
    else the file's."""
    here = sorted({e.session for e in entries if e.session in mine})
    return here[-1] if here else session


def started(entries: list[Entry], session: str) -> str:
    """When a session started: its first entry's time (the hot tier's as-of; '' for a
    session with nothing of its own yet). Never the date of a blocker it carries."""
    own = [e.created for e in entries if e.session == session and e.created]
    return min(own, default="")


def _session_markdown(agent: str, entries: list[Entry]) -> str:
    """One session's entries as markdown, in the spawn template's order."""
    lines: list[str] = []
    for slot in SINGLE_SLOTS:
        lines.extend(shown_line(e) for e in entries if e.slot == slot)
    for slot, heading in LIST_HEADINGS.items():
        items = [e for e in entries if e.slot == slot]
        if items:
            lines.append(f"**{heading}:**")
            lines.extend(shown_line(e) for e in items)
    lines.extend(shown_line(e) for e in entries if e.slot not in LABELS)
    return "\n".join(lines) if lines else f"(no hot memory for {agent})"


def shown(view: HotView) -> HotView:
    """A hot view as an output shows it (`text.shown`): its markdown as a spawn's hot block
    holds it (no tag of a prompt's opened), each entry's title as one inert line. A spawn
    fences the view itself, and escapes it there."""
    from dataclasses import replace

    from ..text.shown import fence_safe, meta

    entries = tuple(replace(e, title=meta(e.title)) for e in view.entries)
    return replace(view, markdown=fence_safe(view.markdown), entries=entries)


def hot_view(ctx: Context, agent: str) -> HotView | None:
    """The agent's hot tier as loaded into a spawn; None when it has none."""
    path = ctx.layout.tier_file("hot", agent)
    tier_file = store.load(ctx.layout, "hot", path)
    if tier_file is None:
        return None
    entries = tuple(
        HotEntry(e.id, e.slot, e.cls, e.created, e.title, e.body, e.trust)
        for e in tier_file.entries
    )
    listed = list(tier_file.entries)
    mine = clone_sessions.started_here(ctx.layout, agent)
    session = current_session(listed, tier_file.meta.get("session", ""), mine)
    markdown = hot_markdown(agent, listed, session, mine)
    return HotView(
        agent,
        session,
        tier_size(tier_file),
        markdown,
        entries,
        started=(
            tier_file.meta.get("started", "")
            if session == tier_file.meta.get("session")
            else started(listed, session)
        )
        or started(listed, session),
        hint=_unblock_hint(agent, listed, ctx.stamp()),
    )


def _unblock_hint(agent: str, entries: list[Entry], now: str) -> str:
    """How to clear the blockers carried from earlier sessions ('' when none is carried):
    they stay in every later session and spawn until someone says they are solved."""
    carried = [e for e in entries if e.slot == "blocker" and dict(e.extra).get("carried")]
    if not carried:
        return ""
    oldest = min(e.created for e in carried)[:10] or "an earlier session"
    days = _days_between(oldest, now)
    age = f", {days} day(s) ago" if days is not None else ""
    return (
        f"{len(carried)} blocker(s) carried from earlier sessions (the oldest open since "
        f"{oldest}{age}) stay in every session and spawn until cleared: "
        f'`tiermem hot unblock {agent} "TEXT"` clears one that is solved.'
    )


def _days_between(day: str, now: str) -> int | None:
    from datetime import date

    try:
        return (date.fromisoformat(now[:10]) - date.fromisoformat(day[:10])).days
    except ValueError:
        return None
