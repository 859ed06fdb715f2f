"""A privacy scrub Squad made to its files (`squad scrub-emails .squad`), carried to every
copy tiermem keeps.

Squad's scrub rewrites `team.md`, `decisions.md`, `routing.md`, `ceremonies.md`, every
agent's `history.md` and the session logs: `name (someone@example.org)` becomes `name`, and
an address on a line that is no URL, code or heading becomes `[email scrubbed]`. tiermem
keeps copies of those files' text (the archive records of earlier imports, the summaries
and decisions made from them, the text of entries replaced since). When an import (or a
`scribe run` following the team's files) reads a file whose earlier text held an address
that the file now holds no more, on a line that Squad's scrub turns into a line the file now
has, that address was scrubbed: every entry that holds it is retired as `forget` retires an
entry, and every archived passage that holds it as `forget` retires a passage (its bytes
kept, never searched or served again). The section's new text, scrubbed, comes in as the
import brings any changed section. The address itself is never said nor audited.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable

from ...context import Context
from ...errors import NotFoundError
from ...index.protocol import Doc
from ...storage import governed
from ...vocabulary import LASTING_TIERS

# Squad's own patterns (squad-cli `core/email-scrub`).
EMAIL = re.compile(r"([a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,})")
_NAME_WITH_EMAIL = re.compile(
    r"([a-zA-Z0-9_-]+)\s*\(([a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,})\)"
)
_KEPT = ("http://", "https://", "```", "example.com")
SCRUBBED = "[email scrubbed]"
REASON = "Squad scrubbed an email address from the team's files (squad scrub-emails)"


def squad_scrub(line: str) -> str:
    """A line as Squad's scrub leaves it."""
    line = _NAME_WITH_EMAIL.sub(r"\1", line)
    stripped = line.strip()
    if any(k in line for k in _KEPT) or stripped.startswith(("//", "#")):
        return line
    return EMAIL.sub(SCRUBBED, line)


def addresses(earlier: Iterable[str], now: str) -> set[str]:
    """The addresses Squad's scrub took out of a file: held by a line of its earlier text,
    held nowhere in its text now, on a line the scrub turns into one the file now has."""
    held_now = set(EMAIL.findall(now))
    lines_now = set(now.splitlines())
    found: set[str] = set()
    for text in earlier:
        for line in text.splitlines():
            gone = set(EMAIL.findall(line)) - held_now
            if gone and squad_scrub(line) != line and squad_scrub(line) in lines_now:
                found |= gone
    return found


def retire(ctx: Context, found: set[str]) -> tuple[list[str], list[str]]:
    """Retire every entry and archived passage that holds one of the addresses: (entries,
    passages) retired."""
    from ...upkeep.forget import forget

    if not found:
        return [], []
    ctx.sync()
    holding = [d for d in ctx.index.docs() if d.tier in LASTING_TIERS and _holds(d, found)]
    # Squad's own governed memories are Squad's files: its scrub did not touch them, nor does
    # tiermem.
    entries = sorted({d.parent or d.id for d in holding if governed.TAG not in d.tags})
    for entry_id in entries:
        _forget(ctx, forget, entry_id)
    # Read after the entries went: a text `forget` archived is one more copy.
    archived = ctx.index.docs(tier="archive")
    passages = sorted({d.parent or d.id for d in archived if _holds(d, found)})
    for passage in passages:
        _forget(ctx, forget, passage)
    return entries, passages


def _holds(doc: Doc, found: set[str]) -> bool:
    return "@" in doc.text and any(a in doc.text for a in found)


def _forget(ctx: Context, forget: Callable[..., object], target: str) -> None:
    with contextlib.suppress(NotFoundError):  # retired already, with its section
        forget(ctx, target, REASON, purge=False)
