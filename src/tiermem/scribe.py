"""Scribe, the memory keeper: checkpoints, session ends, and the maintenance run.

Every step runs in the same order: archive the raw text first, then write the derived tier,
then change the source. Ids are derived from content, so a step that crashed half-way is
simply done again by the next run, with the same result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import archive, hot, store
from .classify import classify, is_structured
from .clock import parse_time
from .entries import Entry, TierFile, content_id, render_entry, split_entry
from .errors import NotFoundError
from .summarize import budget_for

if TYPE_CHECKING:
    from .index import Doc
    from .memory import Memory

_SECTION = re.compile(r"^#{1,4} .*$", re.MULTILINE)
KNOWLEDGE_MIN_BYTES = 80


@dataclass
class SessionReport:
    """What ending one agent's session produced."""

    agent: str
    cold: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    raw_bytes: int = 0
    summary_bytes: int = 0
    summarizer: str = "extractive"


# --- the queue: text that left hot and waits for a summary ----------------------------


def _queue_path(mem: Memory, agent: str) -> Path:
    return mem.layout.tier_file("queue", agent)


def queue_entries(
    mem: Memory, agent: str, entries: Sequence[Entry], session: str
) -> archive.Record:
    """Archive entries leaving hot, then queue them for Scribe's next summary."""
    text = "\n".join(render_entry(e) for e in entries)
    record = archive.new_record(
        agent, mem.clock.stamp(), "hot", f"hot/{agent}.md", entries[0].title, text
    )
    archive.write(mem.layout, record)
    path = _queue_path(mem, agent)
    with store.locked(mem.layout, path):
        queue = store.load(mem.layout, "queue", path) or TierFile(
            f"{agent}: waiting for Scribe", {"tier": "queue", "agent": agent, "session": session}
        )
        for entry in entries:
            queue.put(replace(entry, sources=(*entry.sources, record.location)))
        store.save(mem.layout, path, queue)
    mem._audit("archive", [e.id for e in entries], ["hot", "archive"], "left hot", record=record.id)
    return record


def checkpoint(mem: Memory, agent: str) -> list[str]:
    """Compress everything queued for an agent into cold now (a session that never ends)."""
    path = _queue_path(mem, agent)
    with store.locked(mem.layout, path):
        queue = store.load(mem.layout, "queue", path)
        if queue is None or not queue.entries:
            return []
        report = _compress(mem, agent, list(queue.entries), None, "checkpoint")
        path.unlink()
    mem._audit(
        "checkpoint",
        report.cold + report.knowledge,
        ["queue", "cold"],
        "hot over budget",
        agent=agent,
        raw_bytes=report.raw_bytes,
        summary_bytes=report.summary_bytes,
        summarizer=report.summarizer,
    )
    return report.cold


def end_session(mem: Memory, agent: str) -> SessionReport:
    """Turn the agent's hot tier (and its queue) into one dated cold entry; reset hot."""
    from . import validate

    agent = validate.name(agent)
    mem._require_store()
    if not mem.known_agent(agent):
        raise NotFoundError(f"unknown agent {agent!r}")
    hot_path = mem.layout.tier_file("hot", agent)
    queue_path = _queue_path(mem, agent)
    with store.locked(mem.layout, hot_path), store.locked(mem.layout, queue_path):
        hot_text = store.read_text(mem.layout, hot_path)
        current = store.load(mem.layout, "hot", hot_path)
        queue = store.load(mem.layout, "queue", queue_path)
        if current is None and queue is None:
            return SessionReport(agent)
        items = _merge_items(queue, current)
        _preflight(mem, agent, items)
        raw_record = None
        if hot_text and current is not None and current.entries:
            raw_record = archive.new_record(
                agent,
                mem.clock.stamp(),
                "hot-session",
                f"hot/{agent}.md",
                "hot at session end",
                hot_text,
            )
            archive.write(mem.layout, raw_record)
        report = _compress(mem, agent, items, raw_record, "session")
        _reset_hot(mem, agent, hot_path, current, report)
        if queue is not None:
            queue_path.unlink()
    mem._audit(
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


def _preflight(mem: Memory, agent: str, items: Sequence[Entry]) -> None:
    """Read every file a session end will write, so a broken one stops it before any write."""
    from .decisions import TEAM

    names = [agent] + ([TEAM] if any(e.slot == "decision" for e in items) else [])
    for name in names:
        store.load(mem.layout, "cold", mem.layout.tier_file("cold", name))


def _covered(mem: Memory, agent: str) -> dict[str, str]:
    """Hot entry id -> the cold summary that already holds it (a re-run after a crash)."""
    cold = store.load(mem.layout, "cold", mem.layout.tier_file("cold", agent))
    found: dict[str, str] = {}
    for entry in cold.entries if cold else []:
        for item in dict(entry.extra).get("from", "").split(","):
            found[item] = entry.id
    return found


def _merge_items(queue: TierFile | None, current: TierFile | None) -> list[Entry]:
    items: dict[str, Entry] = {}
    for source in (queue, current):
        if source is not None:
            for entry in source.entries:
                items.setdefault(entry.id, entry)
    return list(items.values())


def _reset_hot(
    mem: Memory, agent: str, path: Path, current: TierFile | None, report: SessionReport
) -> None:
    if current is None:
        return
    blockers = hot.of_slot(current, "blocker")
    if not blockers:
        path.unlink()
        return
    stamp = mem.clock.stamp()
    fresh = hot.new_file(agent, hot.session_id(stamp), stamp)
    session = fresh.meta["session"]
    # New ids: the blocker is still open, so the next session's summary says so again.
    fresh.entries = [
        replace(b, id=content_id("h", b.id, session), session=session) for b in blockers
    ]
    store.save(mem.layout, path, fresh)
    report.carried = [e.id for e in fresh.entries]


# --- compression ----------------------------------------------------------------------


def _raw_session(items: Sequence[Entry]) -> str:
    """The session's text as one document: what the summary is made from and judged on."""
    parts = []
    for entry in items:
        parts.append(hot.slot_text(entry) if entry.slot == "note" else f"{entry.title}")
    return "\n\n".join(parts)


def _overview(items: Sequence[Entry]) -> list[str]:
    lines = []
    for slot, label in (
        ("task", "Task"),
        ("why", "Why"),
        ("decision", "Decided"),
        ("action", "Did"),
    ):
        texts = [hot.title_of(hot.slot_text(e)) for e in items if e.slot == slot]
        if texts:
            lines.append(f"{label}: " + "; ".join(texts))
    return lines


def _compress(
    mem: Memory, agent: str, items: list[Entry], raw_record: archive.Record | None, kind: str
) -> SessionReport:
    from .summarize import summarizer_for

    report = SessionReport(agent)
    if not items:
        return report
    done = _covered(mem, agent)
    report.decisions = _decide(mem, agent, items)
    if all(e.id in done for e in items):
        report.cold = sorted({done[e.id] for e in items})
        return report
    items = [e for e in items if e.id not in done]
    stamp = mem.clock.stamp()
    sources = sorted(
        {s for e in items for s in e.sources} | ({raw_record.location} if raw_record else set())
    )
    report.archived = sources
    notes = "\n\n".join(
        hot.slot_text(e)
        for e in items
        if e.slot not in ("task", "why", "talking-to", "blocker", "action", "decision")
    )
    raw = _raw_session(items)
    overview = _overview(items)
    open_items = [hot.title_of(hot.slot_text(e)) for e in items if e.slot == "blocker"]
    budget = budget_for(raw, mem.config.scribe.compression_target)
    head = "\n".join(overview)
    title = f"{stamp[:10]} {kind}: {_title(items)}"
    summarizer, used = summarizer_for(mem)
    report.summarizer = used
    summary = ""
    if notes.strip():
        # The entry as a whole (title and overview included) holds the compression target.
        fixed = len(f"{title}\n{head}\nOpen: {'; '.join(open_items)}".encode())
        room = max(200, budget - fixed)
        summary = summarizer.summarize(notes, title=_title(items), budget_bytes=room)
    body = "\n".join(
        p for p in [head, summary, ("Open: " + "; ".join(open_items)) if open_items else ""] if p
    )
    session = next((e.session for e in items if e.session), "")
    entry = Entry(
        id=content_id("c", agent, *sorted(e.id for e in items)),
        cls="status" if all(e.cls == "status" for e in items) else "learning",
        title=title,
        body=body,
        agent=agent,
        created=stamp,
        used=stamp,
        session=session,
        sources=tuple(sources),
        trust="untrusted" if any(e.trust for e in items) else "",
        # Which hot entries this summary holds: a step repeated after a crash skips them.
        extra=(("from", ",".join(sorted(e.id for e in items))),),
    )
    knowledge = _knowledge(mem, agent, items, stamp, session, sources)
    _put_cold(mem, agent, [entry, *knowledge])
    report.cold = [entry.id]
    report.knowledge = [k.id for k in knowledge]
    report.raw_bytes = len(raw.encode("utf-8"))
    report.summary_bytes = len(entry.text.encode("utf-8"))
    return report


def _decide(mem: Memory, agent: str, items: Sequence[Entry]) -> list[str]:
    """The session's decisions down the decision path (repeating it records nothing twice)."""
    from .decisions import record_decisions

    ids: list[str] = []
    for decision in (e for e in items if e.slot == "decision"):
        ids += record_decisions(
            mem,
            hot.slot_text(decision),
            by=agent,
            source=f"hot/{agent}.md",
            squad_log=False,
            session=decision.session,
            trust=decision.trust,
        )
    return ids


def _title(items: Sequence[Entry]) -> str:
    for slot in ("task", "note", "decision", "action"):
        for entry in items:
            if entry.slot == slot:
                return hot.title_of(hot.slot_text(entry))
    return hot.title_of(items[0].title)


def _sections(text: str) -> list[tuple[str, str]]:
    """(title, body) pieces of a note, split at its headings."""
    starts = [m.start() for m in _SECTION.finditer(text)]
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
    mem: Memory, agent: str, items: Sequence[Entry], stamp: str, session: str, sources: list[str]
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
                title=title[:200],
                body=body.strip("\n"),
                agent=agent,
                created=stamp,
                used=stamp,
                session=session,
                sources=tuple(sources),
            )
            found += split_entry(whole)
    return found


def _put_cold(mem: Memory, agent: str, new: Sequence[Entry]) -> None:
    path = mem.layout.tier_file("cold", agent)
    with store.locked(mem.layout, path):
        cold = store.load(mem.layout, "cold", path) or TierFile(
            f"{agent}: cold memory", {"tier": "cold", "agent": agent}
        )
        for entry in new:
            existing = cold.get(entry.id)
            cold.put(
                entry if existing is None else replace(entry, used=max(entry.used, existing.used))
            )
        store.save(mem.layout, path, cold)


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
            tier_file = store.load(mem.layout, tier, path)
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
