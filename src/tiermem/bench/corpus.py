"""Replay streams of real team memory: events, sessions and corpus folders."""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

EventKind = Literal["history", "decision", "inbox"]
EVENT_KINDS: frozenset[str] = frozenset({"history", "decision", "inbox"})
STREAM_FILE = "sessions.jsonl"


@dataclass(frozen=True)
class Event:
    """One memory write of a team, as recorded in a replay stream."""

    seq: int
    commit: str
    date: datetime
    kind: EventKind
    agent: str | None
    path: str
    text: str


@dataclass(frozen=True)
class Session:
    """The events of one commit, in stream order."""

    commit: str
    date: datetime
    events: tuple[Event, ...]


def corpus_folder(value: str) -> Path:
    """A corpus folder named on the command line (one that holds sessions.jsonl)."""
    from ..errors import UsageError

    path = Path(value).expanduser().resolve()
    if not (path / "sessions.jsonl").is_file():
        raise UsageError(f"{value} is not a corpus folder (no sessions.jsonl)")
    return path


def load_events(corpus_dir: Path) -> list[Event]:
    """Read the replay stream of a corpus folder, in stream order."""
    lines = (corpus_dir / STREAM_FILE).read_text(encoding="utf-8").splitlines()
    events = [parse_event(line, number) for number, line in enumerate(lines, 1) if line.strip()]
    return sorted(events, key=lambda event: event.seq)


def parse_event(line: str, number: int = 0) -> Event:
    """Build an event from one JSON line of a replay stream."""
    record = cast(dict[str, Any], json.loads(line))
    kind = str(record["kind"])
    if kind not in EVENT_KINDS:
        raise ValueError(f"line {number}: unknown event kind {kind!r}")
    agent = record.get("agent")
    return Event(
        seq=int(record["seq"]),
        commit=str(record["commit"]),
        date=parse_date(str(record["date"])),
        kind=cast(EventKind, kind),
        agent=None if agent is None else str(agent),
        path=str(record.get("path", "")),
        text=str(record["text"]),
    )


def parse_date(value: str) -> datetime:
    """Parse an ISO date; a date without an offset is taken as UTC so all dates compare."""
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def sessions(events: Iterable[Event]) -> list[Session]:
    """Group events by commit, sorted by commit date and then by first seq."""
    by_commit: dict[str, list[Event]] = {}
    for event in sorted(events, key=lambda event: event.seq):
        by_commit.setdefault(event.commit, []).append(event)
    grouped = [
        Session(commit=commit, date=group[0].date, events=tuple(group))
        for commit, group in by_commit.items()
    ]
    return sorted(grouped, key=lambda session: (session.date, session.events[0].seq))


def corpus_dirs(root: Path) -> list[Path]:
    """List the folders directly under root that hold a replay stream, sorted by name."""
    if not root.is_dir():
        return []
    return sorted(child for child in root.iterdir() if (child / STREAM_FILE).is_file())


def last_date(events: Iterable[Event]) -> datetime:
    """Return the latest date of a stream, the `now` of the final Scribe pass."""
    latest = max((event.date for event in events), default=None)
    if latest is None:
        raise ValueError("an empty stream has no last date")
    return latest
