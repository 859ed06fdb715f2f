"""The one clock: every time-dependent rule reads "now" from here."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from ..errors import UsageError

ENV_NOW = "TIERMEM_NOW"


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 date or time; naive values are taken as UTC."""
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(f"not an ISO-8601 time: {text!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise UsageError(f"time {text!r} is out of range") from None


def format_time(value: datetime) -> str:
    """Render a time as compact UTC ISO-8601, to the second."""
    value = value.astimezone(UTC)
    # strftime does not pad years before 1000; ISO-8601 (and our parser) need four digits.
    return f"{value.year:04d}-{value:%m-%dT%H:%M:%S}Z"


class Clock:
    """Gives "now": a fixed time when overridden, else the system clock."""

    def __init__(self, fixed: datetime | str | None = None) -> None:
        if fixed is None:
            env = os.environ.get(ENV_NOW)
            fixed = env if env else None
        self._fixed = parse_time(fixed) if isinstance(fixed, str) else fixed

    @property
    def fixed(self) -> bool:
        """Whether now is overridden."""
        return self._fixed is not None

    def now(self) -> datetime:
        """The current time in UTC."""
        if self._fixed is not None:
            return self._fixed
        return datetime.now(UTC).replace(microsecond=0)

    def stamp(self) -> str:
        """The current time as an ISO-8601 string."""
        return format_time(self.now())
