"""Session ends and checkpoints: hot text into dated cold summaries, raw text archived.

Every step runs in the same order: archive the raw text first, then write the derived tier,
then change the source. Ids are derived from content, so a step that crashed half-way is
simply done again by the next run, with the same result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..context import Context
from ..errors import TiermemError
from ..hot import tier as hot
from ..results.scribe import SessionReport
from ..storage import archive, files, store
from ..storage.entries import Entry, TierFile, content_id, render_entry, split_entry
from ..storage.layout import TEAM
from ..team import decisions
from ..team.classify import classify, is_structured
from ..text import markdown
from ..text.prose import clean_title, readable
from .summarize import SMALL_BYTES, budget_for, untitled

KNOWLEDGE_MIN_BYTES = 80


# --- the queue: text that left hot and waits for a summary ----------------------------


def _queue_path(ctx: Context, agent: str) -> Path:
    return ctx.layout.tier_file("queue", agent)


def _archived(ctx: Context, agent: str, entries: Sequence[Entry]) -> archive.Record:
    """Entries leaving hot, archived as one record (said in the audit trail)."""
    text = "\n".join(render_entry(e) for e in entries)
    record = archive.new_record(
        agent,
        ctx.stamp(),
        "hot",
        f"hot/{agent}.md",
        entries[0].title,
        text,
        trust=archive.trust_of(entries),
    )
    archive.write(ctx.layout, record)
    ctx.audit("archive", [e.id for e in entries], ["hot", "archive"], "left hot", record=record.id)
    return record


def _cited(entries: Sequence[Entry], record: archive.Record) -> list[Entry]:
    return [replace(e, sources=(*e.sources, record.location)) for e in entries]


def _queue(ctx: Context, agent: str, entries: Sequence[Entry], session: str) -> None:
    new = functools.partial(store.blank, "queue", agent, session=session)
    with store.update(ctx.layout, "queue", _queue_path(ctx, agent), new) as queue:
        for entry in entries:
            queue.put(entry)


def queue_entries(
    ctx: Context, agent: str, entries: Sequence[Entry], session: str
) -> archive.Record:
    """Archive entries leaving hot, then queue them for Scribe's next summary."""
    record = _archived(ctx, agent, entries)
    _queue(ctx, agent, _cited(entries, record), session)
    return record


def _empty_queue(ctx: Context, agent: str) -> None:
    """Empty the agent's queue, keeping the file (see `_reset_hot` for why it is kept)."""
    store.save(ctx.layout, _queue_path(ctx, agent), store.blank("queue", agent))


def checkpoint(ctx: Context, agent: str) -> list[str]:
    """Compress everything queued for an agent into cold now (a session that never ends)."""
    path = _queue_path(ctx, agent)
    with files.locked(ctx.layout, path):
        queue = store.load(ctx.layout, "queue", path)
        if queue is None or not queue.entries:
            return []
        report = _compress(ctx, agent, list(queue.entries), None, "checkpoint")
        _empty_queue(ctx, agent)
    _audit_checkpoint(ctx, agent, report)
    return report.cold


def checkpoint_leaving(
    ctx: Context, agent: str, leaving: Sequence[Entry], session: str
) -> tuple[archive.Record, list[str], TiermemError | None]:
    """Entries a full hot tier pushes out, compressed into cold at once together with what
    the queue holds: (their archive record, the cold entries written, a failure).

    The same steps as queueing them and checkpointing the queue, without writing them into
    the queue and out again: archived first, then summarised, and the queue is emptied
    only when it held something. When the summary cannot be written (a damaged cold file,
    a full disk), they are queued instead, and the failure is returned.
    """
    record = _archived(ctx, agent, leaving)
    cited = _cited(leaving, record)
    path = _queue_path(ctx, agent)
    try:
        with files.locked(ctx.layout, path):
            queue = store.load(ctx.layout, "queue", path)
            pending = queue if queue is not None else store.blank("queue", agent)
            waiting = bool(pending.entries)
            for entry in cited:
                pending.put(entry)
            report = _compress(ctx, agent, list(pending.entries), None, "checkpoint")
            if waiting:
                _empty_queue(ctx, agent)
    except TiermemError as exc:
        _queue(ctx, agent, cited, session)
        return record, [], exc
    _audit_checkpoint(ctx, agent, report)
    return record, report.cold, None


def _audit_checkpoint(ctx: Context, agent: str, report: SessionReport) -> None:
    ctx.audit(
        "checkpoint",
        report.cold + report.knowledge,
        ["queue", "cold"],
        "hot over budget",
        agent=agent,
        raw_bytes=report.raw_bytes,
        summary_bytes=report.summary_bytes,
        summarizer=report.summarizer,
    )


def end_session(ctx: Context, agent: str) -> SessionReport:
    """Turn the agent's hot tier (and its queue) into one dated cold entry; reset hot."""
    hot_path = ctx.layout.tier_file("hot", agent)
    queue_path = _queue_path(ctx, agent)
    with files.locked(ctx.layout, hot_path), files.locked(ctx.layout, queue_path):
        current = store.load(ctx.layout, "hot", hot_path)
        queue = store.load(ctx.layout, "queue", queue_path)
        if queue is not None and not queue.entries:
            queue = None  # emptied by the last checkpoint or session end
        if current is None and queue is None:
            return SessionReport(agent)
        if queue is None and current is not None and _untouched(current):
            # Nothing happened since the last session end: ending again records nothing, so
            # `end-session --all` repeated, or re-run after a crash, gives the same store.
            return SessionReport(agent, carried=[e.id for e in current.entries])
        report = _end(ctx, agent, current, queue)
    ctx.audit(
        "end-session",
        report.cold + report.knowledge + report.decisions,
        ["hot", "cold", "archive"],
        "session ended",
        agent=agent,
        summarizer=report.summarizer,
        raw_bytes=report.raw_bytes,
        summary_bytes=report.summary_bytes,
    )
    return report


def _end(
    ctx: Context, agent: str, current: TierFile | None, queue: TierFile | None
) -> SessionReport:
    """Archive the session's raw hot text, compress it into cold, then clear the sources."""
    hot_path = ctx.layout.tier_file("hot", agent)
    items = _merge_items(queue, current)
    _preflight(ctx, agent, items)
    raw_record = None
    hot_text = files.read_text(ctx.layout, hot_path)
    if hot_text and current is not None and (current.entries or current.notes.strip()):
        raw_record = archive.new_record(
            agent,
            ctx.stamp(),
            "hot-session",
            f"hot/{agent}.md",
            "hot at session end",
            hot_text,
            trust=archive.trust_of(current.entries),
        )
        archive.write(ctx.layout, raw_record)
    report = _compress(ctx, agent, items, raw_record, "session")
    # The queue goes before hot is reset: a re-run after a crash in between then finds
    # hot as it was, every item of it already summarised, and only resets it.
    if queue is not None:
        _empty_queue(ctx, agent)
    _reset_hot(ctx, agent, hot_path, current, report)
    return report


def _preflight(ctx: Context, agent: str, items: Sequence[Entry]) -> None:
    """Read everything a session end will need, so that a damaged file (a cold file, the
    team's, the config) or a text it cannot take stops it before any write. The agent's
    cold file is read as far as adding to it reads it (see `store.recent`)."""
    decided = [e for e in items if e.slot == "decision"]
    _cold_near(ctx, agent, items)
    if decided:
        store.load(ctx.layout, "cold", ctx.layout.tier_file("cold", TEAM))
    _ = ctx.config  # read now: a broken config.toml is said before the first write
    for entry in decided:
        ctx.clean(hot.slot_text(entry), "decision")


def _covered(cold: TierFile | None) -> dict[str, str]:
    """Hot entry id -> the cold summary that already holds it (a re-run after a crash)."""
    found: dict[str, str] = {}
    for entry in cold.entries if cold else []:
        for item in dict(entry.extra).get("from", "").split(","):
            found[item] = entry.id
    return found


def _cold_near(ctx: Context, agent: str, items: Sequence[Entry]) -> TierFile | None:
    """The agent's cold file where a summary of these items could already be (see
    `store.recent`): a summary written just before a crash is the last thing in it."""
    path = ctx.layout.tier_file("cold", agent)
    reach = 4 * sum(len(e.title) + len(e.body) for e in items)  # a summary and its pieces
    return store.recent(ctx.layout, "cold", path, [e.id for e in items], reach)


def _merge_items(queue: TierFile | None, current: TierFile | None) -> list[Entry]:
    items: dict[str, Entry] = {}
    for source in (queue, current):
        if source is not None:
            for entry in source.entries:
                items.setdefault(entry.id, entry)
    return list(items.values())


def _untouched(current: TierFile) -> bool:
    """A hot tier holding nothing, or only the blockers the last session end carried into it."""
    if not current.entries:
        return not current.notes.strip()
    session = current.meta.get("session", "")
    return all(
        e.slot == "blocker" and e.session == session and dict(e.extra).get("carried")
        for e in current.entries
    )


def _reset_hot(
    ctx: Context, agent: str, path: Path, current: TierFile | None, report: SessionReport
) -> None:
    """Start the next session in hot, carrying the open blockers.

    The file is rewritten, never deleted: a deleted hot file and the new archive record of
    its text look to git like one file renamed, and a note another clone added to hot in
    the meantime would be merged into the record (breaking its hash) instead of into hot.
    The next session starts with its first write.
    """
    if current is None:
        return
    blockers = hot.of_slot(current, "blocker")
    ended = current.meta.get("session", "")
    fresh = hot.between_sessions(agent)
    # New ids: the blocker is still open, so the next session's summary says so again. They
    # are derived from the session that ended, not the clock: the same in every clone.
    fresh.entries = [
        replace(
            b,
            id=content_id("h", b.id, ended),
            session="",
            extra=(*[kv for kv in b.extra if kv[0] != "carried"], ("carried", b.id)),
        )
        for b in blockers
    ]
    store.save(ctx.layout, path, fresh)
    report.carried = [e.id for e in fresh.entries]


# --- compression ----------------------------------------------------------------------


def _raw_session(items: Sequence[Entry], title: str = "") -> str:
    """The session's text as one document, every item whole under its slot's label: what
    the summary is made from and judged on (a task the entry's `title` says already left
    out: its heading shows it)."""
    parts = []
    for entry in items:
        label = hot.LABELS.get(entry.slot)
        text = hot.slot_text(entry)
        if entry.slot == "task" and title and clean_title(_first_line(text)) == title:
            continue
        parts.append(text if entry.slot == "note" or not label else f"{label}: {text}")
    return "\n\n".join(parts)


def _first_line(text: str) -> str:
    """A text's first line, whole (a decision or a path is never cut)."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _overview(items: Sequence[Entry], title: str) -> list[str]:
    """The session's task, why, decisions and actions, a line each (the task not where the
    title says it whole)."""
    lines = []
    for slot, label in (
        ("task", "Task"),
        ("why", "Why"),
        ("decision", "Decided"),
        ("action", "Did"),
    ):
        texts = [_first_line(hot.slot_text(e)) for e in items if e.slot == slot]
        if slot == "task" and [clean_title(t) for t in texts] == [title]:
            continue
        if texts:
            lines.append(f"{label}: " + "; ".join(texts))
    return lines


def _compress(
    ctx: Context, agent: str, items: list[Entry], raw_record: archive.Record | None, kind: str
) -> SessionReport:
    """The items summarised into cold: one dated entry per session they hold (a hot tier
    merged from two clones holds two, and each is its own summary)."""
    reports = [_compress_session(ctx, agent, s, raw_record, kind) for s in by_session(items)]
    if len(reports) == 1:
        return reports[0]
    joined = SessionReport(agent, summarizer=reports[0].summarizer)
    for report in reports:
        joined.cold += report.cold
        joined.knowledge += report.knowledge
        joined.decisions += report.decisions
        joined.archived = sorted({*joined.archived, *report.archived})
        joined.raw_bytes += report.raw_bytes
        joined.summary_bytes += report.summary_bytes
        joined.notes += report.notes
    return joined


def by_session(items: list[Entry]) -> list[list[Entry]]:
    """Items by the session each came from, oldest session first; an item of none (a
    blocker carried over) goes with the newest."""
    sessions = sorted({e.session for e in items if e.session})
    if len(sessions) < 2:
        return [items]
    newest = sessions[-1]
    return [[e for e in items if (e.session or newest) == s] for s in sessions]


def _compress_session(
    ctx: Context, agent: str, items: list[Entry], raw_record: archive.Record | None, kind: str
) -> SessionReport:
    report = SessionReport(agent)
    if not items:
        return report
    done = _covered(_cold_near(ctx, agent, items))
    report.decisions = _decide(ctx, agent, items)
    if all(e.id in done for e in items):
        report.cold = sorted({done[e.id] for e in items})
        return report
    items = [e for e in items if e.id not in done]
    stamp = ctx.stamp()
    sources = sorted(
        {s for e in items for s in e.sources} | ({raw_record.location} if raw_record else set())
    )
    entry, report.summarizer = _summary_entry(ctx, agent, items, kind, stamp, sources)
    knowledge = _knowledge(ctx, agent, items, stamp, entry.session, sources)
    _put_cold(ctx, agent, [entry, *knowledge])
    report.archived = sources
    report.cold = [entry.id]
    report.knowledge = [k.id for k in knowledge]
    report.raw_bytes = len(_raw_session(items).encode("utf-8"))
    # The summary under the entry's heading (its title; its date is in its metadata).
    report.summary_bytes = len(entry.body.encode("utf-8"))
    return report


_NOT_NOTES = ("task", "why", "talking-to", "blocker", "action", "decision")


def _summary_entry(
    ctx: Context, agent: str, items: list[Entry], kind: str, stamp: str, sources: list[str]
) -> tuple[Entry, str]:
    """One dated cold entry: what the session did, decided, tried and left open.

    A session of up to SMALL_BYTES, or one whose overview and summary would not be shorter
    than its own text, is kept as it is: Scribe never makes a session bigger than its source,
    and never cuts a short one.
    """
    title = _title(items)
    raw = _raw_session(items)
    if len(raw.encode("utf-8")) <= SMALL_BYTES:
        # A short session goes to cold whole (less lines of bare names, which the archive
        # keeps): no summarizer is called.
        whole = readable(_raw_session(items, title))
        return _session_entry(agent, items, kind, stamp, sources, title, whole), "extractive"
    notes = "\n\n".join(hot.slot_text(e) for e in items if e.slot not in _NOT_NOTES)
    head = "\n".join(_overview(items, title))
    open_items = [_first_line(hot.slot_text(e)) for e in items if e.slot == "blocker"]
    tail = ("Open: " + "; ".join(open_items)) if open_items else ""
    name, summary = "extractive", ""  # the overview alone: no summarizer is called
    if notes.strip():
        summarizer = ctx.summarizer()
        # The entry as a whole (title and overview included) holds the compression target.
        budget = budget_for(raw, ctx.config.scribe.compression_target)
        room = max(200, budget - len(f"{title}\n{head}\n{tail}".encode()))
        summary = summarizer.summarize(notes, title=title, budget_bytes=room)
        name = summarizer.name
    body = "\n".join(p for p in (head, summary, tail) if p)
    if len(body.encode("utf-8")) >= len(raw.encode("utf-8")):
        body = raw
    return _session_entry(agent, items, kind, stamp, sources, title, body), name


def _session_entry(
    agent: str,
    items: list[Entry],
    kind: str,
    stamp: str,
    sources: list[str],
    title: str,
    body: str,
) -> Entry:
    """The cold entry of a session's items, its body a summary or the session whole."""
    body = untitled(body, title).strip("\n")
    return Entry(
        id=content_id("c", agent, *sorted(e.id for e in items)),
        cls="status" if all(e.cls == "status" for e in items) else "learning",
        title=title,
        body=body,
        agent=agent,
        created=stamp,
        used=stamp,
        session=next((e.session for e in items if e.session), ""),
        sources=tuple(sources),
        trust=archive.trust_of(items),
        # Which hot entries this summary holds (a step repeated after a crash skips them),
        # and whether the session ended or a full hot tier made it.
        extra=(("from", ",".join(sorted(e.id for e in items))), ("kind", kind)),
    )


def _decide(ctx: Context, agent: str, items: Sequence[Entry]) -> list[str]:
    """The session's decisions down the decision path (repeating it records nothing twice)."""
    ids: list[str] = []
    for decision in (e for e in items if e.slot == "decision"):
        ids += decisions.record(
            ctx,
            hot.slot_text(decision),
            by=agent,
            source=f"hot/{agent}.md",
            session=decision.session,
            trust=decision.trust,
        )
    return ids


def _title(items: Sequence[Entry]) -> str:
    """The session's subject: its task, else the heading or first sentence of its first
    note, decision or action (the entry carries its date and kind apart)."""
    for slot in ("task", "note", "decision", "action"):
        for entry in items:
            if entry.slot == slot:
                return _subject(hot.slot_text(entry))
    return _subject(items[0].title)


_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s")


def _subject(text: str) -> str:
    """A text's heading, or its first sentence, as a clean title."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not first.startswith("#"):
        first = _FIRST_SENTENCE.split(first, maxsplit=1)[0]
    return clean_title(first) or "untitled"


def _sections(text: str) -> list[tuple[str, str]]:
    """(title, body) pieces of a note, split at its headings."""
    starts = [t.start for t in markdown.titles(text) if t.level <= 4]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    pieces = []
    for i, start in enumerate(starts):
        chunk = text[start : starts[i + 1] if i + 1 < len(starts) else len(text)].strip("\n")
        if chunk.strip():
            first, _, rest = chunk.partition("\n")
            title = first.lstrip("#").strip() if first.startswith("#") else hot.title_of(first)
            pieces.append((title, rest if first.startswith("#") else chunk))
    return pieces


def _knowledge(
    ctx: Context, agent: str, items: Sequence[Entry], stamp: str, session: str, sources: list[str]
) -> list[Entry]:
    """Structured pieces of the session's notes (decisions, conventions...), kept whole.

    A rule, a contract or a decision is not summarized: a lossy copy of "never X unless Y"
    is a different rule. Long pieces are split into parts that each fit a prompt.
    """
    found: list[Entry] = []
    for item in items:
        if item.slot != "note" or item.trust:
            continue
        for title, body in _sections(hot.slot_text(item)):
            cls = classify(title, body)
            if not is_structured(cls) or len(body.encode("utf-8")) < KNOWLEDGE_MIN_BYTES:
                continue
            whole = Entry(
                id=content_id("k", agent, title, body),
                cls=cls,
                title=clean_title(title, 200) or "untitled",
                body=readable(body).strip("\n"),
                agent=agent,
                created=stamp,
                used=stamp,
                session=session,
                sources=tuple(sources),
            )
            found += split_entry(whole)
    return found


def _put_cold(ctx: Context, agent: str, new: Sequence[Entry]) -> None:
    """Add entries to the agent's cold tier: appended, unless one is there already (a
    piece of knowledge noted again), which is then updated in place, or the file holds a
    merge's losing version, which the rewrite archives."""
    path = ctx.layout.tier_file("cold", agent)
    with files.locked(ctx.layout, path):
        cold = store.recent(ctx.layout, "cold", path, [e.id for e in new])
        blank = functools.partial(store.blank, "cold", agent)
        if store.appendable(cold, new):
            store.append(ctx.layout, path, new, blank)
            return
        with store.update(ctx.layout, "cold", path, blank) as cold:
            for entry in new:
                existing = cold.get(entry.id)
                cold.put(
                    entry
                    if existing is None
                    else replace(entry, used=max(entry.used, existing.used))
                )
