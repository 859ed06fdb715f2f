"""Checks on everything a user hands to tiermem, before anything is written."""

from __future__ import annotations

import re
import unicodedata

from ..errors import UsageError

MAX_INPUT_BYTES = 1024 * 1024
MAX_SEARCH_LIMIT = 10_000  # results a search or the spawn log returns at the most
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# Names Windows keeps for devices, with any extension (`con.md` opens the console there).
_DEVICES = frozenset(
    [
        "con",
        "prn",
        "aux",
        "nul",
        *(f"com{n}" for n in range(1, 10)),
        *(f"lpt{n}" for n in range(1, 10)),
    ]
)
TEAM = "team"  # the owner of what the whole team shares (layout.TEAM): no agent's name
# The ids search and spawn list: entry ids (`d-0123456789`), ids of parts of a long entry
# (`d-0123456789-abcdef0123`) and of archive chunks (`a-0123456789-abcdef0123#4`), and the
# ids Squad gives its governed memories (`4f1c1d8d-e176-45f2-bddf-2dc11802f779`).
_ENTRY_ID = re.compile(
    r"[a-z]-[0-9a-f]{10}(?:-[0-9a-f]{10})*(?:#\d+)?"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def name(value: str, what: str = "agent") -> str:
    """Return a safe, lower-cased agent or topic name, or raise UsageError."""
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what} name is empty")
    if any(unicodedata.category(ch)[0] == "C" for ch in value):
        raise UsageError(f"{what} name {value!r} contains control characters")
    if "/" in value or "\\" in value or value.startswith(("/", "~")):
        raise UsageError(f"{what} name {value!r} must not contain path separators")
    if ".." in value:
        raise UsageError(f"{what} name {value!r} must not contain '..'")
    lowered = value.strip().lower()
    if not _NAME.fullmatch(lowered):
        raise UsageError(
            f"{what} name {value!r} must be 1-64 letters, digits, '.', '_' or '-', "
            f"starting with a letter or digit{_dashed(lowered)}"
        )
    if lowered.split(".", 1)[0] in _DEVICES:
        raise UsageError(f"{what} name {value!r} is a device name on Windows")
    if what == "agent" and lowered == TEAM:
        raise UsageError(f"agent name {value!r} is reserved for the team's own memory")
    return lowered


def _dashed(lowered: str) -> str:
    """'; did you mean ...?' with the name's words joined by dashes, when that makes it a
    name (Squad's agent folders write "Comic Book Guy" as `comic-book-guy`)."""
    dashed = "-".join(lowered.split())
    return f"; did you mean {dashed!r}?" if _NAME.fullmatch(dashed) else ""


def owner(value: str, what: str = "agent") -> str:
    """An agent name, or `team` (whose files hold what the whole team shares)."""
    return TEAM if value == TEAM else name(value, what)


def text(value: str, what: str = "text", limit: int = MAX_INPUT_BYTES) -> str:
    """Return text that is non-empty and within the size limit, or raise UsageError."""
    if not value or not value.strip():
        raise UsageError(f"{what} is empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # Lone surrogates: what undecodable bytes in argv or a file become in Python.
        raise UsageError(f"{what} is not valid UTF-8") from None
    if size > limit:
        raise UsageError(f"{what} is {size} bytes, over the {limit}-byte limit")
    if "\x00" in value:
        raise UsageError(f"{what} contains NUL bytes")
    return value


def entry_id(value: str) -> bool:
    """Whether a value is one id, as search and spawn list them."""
    return _ENTRY_ID.fullmatch(value) is not None


def entry_ids(query: str) -> list[str]:
    """The ids a query names when it is nothing but ids (separated by spaces or commas)."""
    words = query.replace(",", " ").split()
    if words and all(_ENTRY_ID.fullmatch(w) for w in words):
        return list(dict.fromkeys(words))
    return []


def decode(data: bytes, what: str = "input", limit: int = MAX_INPUT_BYTES) -> str:
    """Decode bytes as UTF-8 text within the size limit, or raise UsageError."""
    if len(data) > limit:
        raise UsageError(f"{what} is {len(data)} bytes, over the {limit}-byte limit")
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} is not valid UTF-8 (byte {exc.start})") from None
    return text(decoded, what, limit)
