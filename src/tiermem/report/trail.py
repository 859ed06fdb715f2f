"""Scribe's work over time, from the audit trail: the lines a chart can draw (the trail is a
file anyone can edit) and the report's charts of them, by day, week, month or year."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta

from ..context import Context
from ..errors import TiermemError
from ..render import charts
from ..storage import audit
from ..storage.clock import parse_time

_SERIES = (
    ("sessions", "sessions compressed into cold", ("end-session", "checkpoint")),
    ("promotions", "entries promoted to the wiki", ("promote",)),
    ("supersessions", "decisions superseded by newer ones", ("supersede",)),
    (
        "expiries",
        "cold entries archived (unused for the TTL, or over budget)",
        ("expire", "cold-budget"),
    ),
)


def checked(ctx: Context) -> tuple[list[dict[str, object]], list[str]]:
    """The audit lines the charts can draw, and each other one in a few words.

    The trail is a file anyone can edit: a line is drawn only when its time is a time (ISO
    8601, not after the report's own now) and its counts are counts. Any other line is left
    out of the charts and named on the page, and the rest of the page stands.
    """
    # A year of slack: clones' clocks differ, and `--now` moves one; far beyond that, a
    # time is not one Scribe can have kept (and 9999-12-31 leaves no room to draw it).
    latest = parse_time(ctx.stamp()) + timedelta(days=366)
    drawn, left_out = [], []
    for line in audit.read(ctx.layout):
        why = _unfit(line, latest)
        if why:
            left_out.append(f"line ({str(line.get('action', '?'))[:40]}): {why}")
        else:
            drawn.append(line)
    return drawn, left_out


def _unfit(line: dict[str, object], latest: datetime) -> str:
    """Why an audit line cannot be drawn ('' when it can)."""
    when = line.get("time")
    shown = repr(when)[:40]
    if not isinstance(when, str):
        return f"time {shown} is not a time"
    try:
        moment = parse_time(when)
    except TiermemError:
        return f"time {shown} is not an ISO 8601 time"
    if moment > latest:
        return f"time {shown} is more than a year after this report's own time"
    if moment.year < 1970:
        return f"time {shown} is before 1970"
    for key in ("raw_bytes", "summary_bytes"):
        value = line.get(key)
        if value is not None and not _is_count(value):
            return f"{key} {repr(value)[:40]} is not a count of bytes"
    return ""


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def history(lines: list[dict[str, object]]) -> list[charts.Chart]:
    """Charts of Scribe's work per day, week or month, and of compression ratios."""
    dated = [(str(line.get("time", "")), line) for line in lines if line.get("time")]
    if not dated:
        return []
    bucket = _bucketing([t for t, _ in dated])
    made = []
    for key, title, actions in _SERIES:
        counts: Counter[str] = Counter()
        for when, line in dated:
            if line.get("action") in actions and _amount(key, line):
                counts[bucket(when)] += _amount(key, line)
        made.append(charts.bars(title, _filled(counts, bucket, list(dated))))
    ratios = [
        (when[:10], raw / summary)
        for when, line in dated
        if line.get("action") in ("end-session", "checkpoint")
        and (raw := _int(line.get("raw_bytes"))) > 0
        and (summary := _int(line.get("summary_bytes"))) > 0
    ]
    made.append(
        charts.dots("compression ratio of each session (raw bytes : summary bytes)", ratios, ":1")
    )
    return made


def totals(lines: list[dict[str, object]]) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for line in lines:
        totals[str(line.get("action", ""))] += 1
    return dict(sorted(totals.items()))


def _amount(key: str, line: dict[str, object]) -> int:
    ids = line.get("ids")
    count = len(ids) if isinstance(ids, list) else 0
    if key == "sessions":
        return 1 if _int(line.get("raw_bytes")) > 0 or count else 0
    if key == "supersessions":
        return count // 2  # each pair names the older and the newer entry
    return count


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


Bucket = Callable[[str], str]
MAX_BUCKETS = 400


def _bucketing(times: list[str]) -> Bucket:
    """Day, week (from Monday), month or year buckets, whichever keeps a chart readable; a
    trail longer than 30 years goes by year, so its newest months are never cut off."""
    days = (parse_time(max(times)) - parse_time(min(times))).days
    if days <= 45:
        return lambda t: t[:10]
    if days <= 730:
        return _week
    if days <= 30 * 365:  # at most 361 months, within MAX_BUCKETS
        return lambda t: t[:7]
    return lambda t: t[:4]


def _week(time: str) -> str:
    moment = parse_time(time)
    return (moment - timedelta(days=moment.weekday())).strftime("%Y-%m-%d")


def _filled(
    counts: Counter[str], bucket: Bucket, dated: list[tuple[str, object]]
) -> list[tuple[str, float]]:
    """Every bucket from the first audit line to the last, empty ones as 0."""
    times = sorted(t for t, _ in dated)
    keys: list[str] = []
    moment, stop = parse_time(times[0]), parse_time(times[-1])
    while moment <= stop + timedelta(days=1) and len(keys) < MAX_BUCKETS:
        key = bucket(moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
        if key <= bucket(times[-1]) and (not keys or keys[-1] != key):
            keys.append(key)
        moment += timedelta(days=1)
    return [(k, float(counts.get(k, 0))) for k in keys]
