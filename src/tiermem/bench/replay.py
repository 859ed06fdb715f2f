"""The replay of METRICS.md: a team's memory writes, session by session, into a new store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..render.progress import track
from ..storage.clock import format_time
from .corpus import Event, Session, last_date, load_events, sessions


@dataclass
class ReplaySummary:
    """What a replay did and how long it took."""

    corpus: str
    store: str
    events: int = 0
    sessions: int = 0
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)


def _apply(mem: Memory, event: Event, inbox: Path, summary: ReplaySummary) -> str | None:
    """Feed one event; return the agent whose session it extends, if any."""
    from dataclasses import replace

    from ..errors import TiermemError
    from ..team import decisions

    if "\x00" in event.text:
        # A few streams carry a stray NUL from a corrupted commit; tiermem refuses NUL as
        # binary input, so the replay drops that one character and says so.
        summary.normalized.append(f"event {event.seq}: {event.text.count(chr(0))} NUL removed")
        event = replace(event, text=event.text.replace("\x00", ""))
    try:
        if event.kind == "history" and event.agent:
            if not event.text.strip():
                return None
            mem.hot_add(event.agent, "note", event.text)
            return mem_agent(event.agent)
        if event.kind == "decision" and event.text.strip():
            decisions.record(mem.context, event.text, by="team", source=event.path)
        elif event.kind == "inbox" and event.text.strip():
            inbox.mkdir(parents=True, exist_ok=True)
            (inbox / Path(event.path).name).write_text(event.text, encoding="utf-8")
    except TiermemError as exc:
        summary.skipped.append(f"event {event.seq}: {exc}")
    return None


def mem_agent(name: str) -> str:
    """Agent names as the store keeps them."""
    return name.strip().lower()


def _session(out: Path, session: Session, summary: ReplaySummary) -> None:

    mem = Memory(out, now=format_time(session.date))
    inbox = out / ".squad" / "decisions" / "inbox"
    agents: list[str] = []
    for event in session.events:
        agent = _apply(mem, event, inbox, summary)
        if agent and agent not in agents:
            agents.append(agent)
    for agent in agents:
        mem.end_session(agent)
    if inbox.is_dir() and any(inbox.iterdir()):
        mem.context.host.merge_inbox(dry_run=False)
    mem.close()


def replay(
    corpus: Path,
    out: Path,
    progress: bool = False,
    before: Callable[[Session], None] | None = None,
) -> ReplaySummary:
    """Replay a corpus into `out` (a new store).

    Scribe ends every session that wrote, and runs its maintenance once a day (at the day's
    first session end) and once more at the end, with now = the commit date. `before` is
    called with each session just before it is written (the forward probes ask then).
    """
    started = time.perf_counter()
    events = load_events(corpus)
    ordered = sessions(events)
    out.mkdir(parents=True, exist_ok=True)
    Memory.init(out)
    summary = ReplaySummary(corpus.name, str(out), len(events), len(ordered))
    maintained = ""
    for session in track(ordered, f"replay {corpus.name}", progress):
        if before is not None:
            before(session)
        _session(out, session, summary)
        day = format_time(session.date)[:10]
        if day != maintained:
            # Scribe's maintenance runs once per day of the team's history, as a team that
            # runs `scribe run` daily would: cold stays within its budget as the replay goes.
            daily = Memory(out, now=format_time(session.date))
            daily.scribe_run()
            daily.close()
            maintained = day
    final = Memory(out, now=format_time(last_date(events)))
    report = final.scribe_run()
    final.sync()
    final.close()
    summary.run = {k: v for k, v in report.to_json().items() if k != "promoted"}
    summary.run["promoted"] = sum(len(v) for v in report.promoted.values())
    summary.seconds = round(time.perf_counter() - started, 2)
    return summary
