"""Markdown views of memory for people and prompts (no metadata comments)."""

from __future__ import annotations

from ..context import Context
from ..results.hot import HotEntry, HotView
from ..storage import store
from ..storage.entries import Entry
from .tier import LABELS, SINGLE_SLOTS, slot_text

_LIST_SLOTS = (
    ("decision", "Decisions so far"),
    ("action", "Last actions"),
    ("blocker", "Blockers"),
    ("note", "Notes"),
)


def _indent(text: str) -> str:
    lines = text.splitlines() or [""]
    return "\n".join([lines[0], *("  " + ln if ln.strip() else ln for ln in lines[1:])])


def _mark(entry: Entry) -> str:
    return "(untrusted source) " if entry.trust else ""


def hot_markdown(agent: str, entries: list[Entry], session: str = "") -> str:
    """The hot tier as a short markdown block, in the spawn template's order.

    A hot tier merged from two clones holds two sessions (each entry names its own): the
    file's `session` first, then each other one under a line that says it was merged.
    """
    sessions = sorted({e.session for e in entries if e.session and e.session != session})
    if not session or not sessions:
        return _session_markdown(agent, entries)
    parts = [_session_markdown(agent, [e for e in entries if e.session in ("", session)])]
    for other in sessions:
        mine = [e for e in entries if e.session == other]
        started = min(e.created for e in mine)[:10] or "undated"
        head = f"**Also open: session {other}, started {started}, merged from another clone**"
        parts.append(head + "\n" + _session_markdown(agent, mine))
    return "\n\n".join(parts)


def _session_markdown(agent: str, entries: list[Entry]) -> str:
    """One session's entries as markdown, in the spawn template's order."""
    lines: list[str] = []
    for slot in SINGLE_SLOTS:
        for entry in (e for e in entries if e.slot == slot):
            lines.append(f"**{LABELS[slot]}:** {_indent(slot_text(entry))}")
    for slot, heading in _LIST_SLOTS:
        items = [e for e in entries if e.slot == slot]
        if items:
            lines.append(f"**{heading}:**")
            lines.extend(f"- {_mark(e)}{_indent(slot_text(e))}" for e in items)
    other = [e for e in entries if e.slot not in LABELS]
    lines.extend(f"- {e.title}" + (f"\n  {_indent(e.body)}" if e.body else "") for e in other)
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
    markdown = hot_markdown(agent, list(tier_file.entries), tier_file.meta.get("session", ""))
    size = path.stat().st_size
    return HotView(agent, tier_file.meta.get("session", ""), size, markdown, entries)
