"""The hot tier: the current session of one agent, small and always loaded.

These are pure functions over a parsed hot file; `Memory` holds the locks and writes.
"""

from __future__ import annotations

from ..storage.entries import Entry, TierFile, content_id

SLOTS = ("task", "why", "talking-to", "decision", "blocker", "action", "note")
SINGLE_SLOTS = ("task", "why", "talking-to")
LABELS = {
    "task": "Task",
    "why": "Why",
    "talking-to": "Talking to",
    "decision": "Decision",
    "blocker": "Blocker",
    "action": "Action",
    "note": "Note",
}
SLOT_CLASS = {
    "task": "status",
    "why": "status",
    "talking-to": "status",
    "decision": "decision",
    "blocker": "status",
    "action": "action",
    "note": "learning",
}
# Evicted first when the budget is tight: the oldest notes and actions, then decisions.
_EVICTION_ORDER = ("note", "action", "decision", "blocker", "talking-to", "why", "task")
TITLE_CHARS = 120


def new_file(agent: str, session: str, started: str) -> TierFile:
    """An empty hot file for a new session."""
    meta = {"tier": "hot", "agent": agent, "session": session, "started": started}
    return TierFile(heading=f"{agent}: hot memory", meta=meta)


def between_sessions(agent: str) -> TierFile:
    """A hot file between sessions: no session yet (its first write starts one). It is the
    same bytes in every clone, so two clones that end one session merge without a line of
    difference."""
    return TierFile(heading=f"{agent}: hot memory", meta={"tier": "hot", "agent": agent})


def session_id(stamp: str) -> str:
    """A session id from its start time: compact and sortable."""
    return "s" + "".join(ch for ch in stamp if ch.isdigit())[:14]


def title_of(text: str) -> str:
    """The first line of a text, cut at a word to a heading's length (never inside a path
    or a name: `cut_at_word`)."""
    from ..text.prose import cut_at_word

    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    first = first.lstrip("#").strip() or "(untitled)"
    return cut_at_word(first, TITLE_CHARS)


def make_entry(agent: str, slot: str, text: str, stamp: str, session: str, n: int) -> Entry:
    """A hot entry for one piece of session text: a text of one line is its heading, whole,
    and nothing else (never a cut heading and the line again); a longer text is its body,
    under its first line."""
    one_line = len(text.strip().splitlines()) == 1
    title = text.strip() if one_line else title_of(text)
    body = "" if one_line or text.strip() == title else text.strip("\n")
    entry_id = content_id("h", agent, slot, text, stamp, str(n))
    return Entry(
        id=entry_id,
        cls=SLOT_CLASS[slot],
        title=f"{LABELS[slot]}: {title}",
        body=body,
        agent=agent,
        created=stamp,
        session=session,
        slot=slot,
    )


def slot_text(entry: Entry) -> str:
    """The text the user wrote for an entry (without the slot label)."""
    if entry.body:
        return entry.body
    label = LABELS.get(entry.slot, "")
    prefix = f"{label}: "
    return entry.title[len(prefix) :] if label and entry.title.startswith(prefix) else entry.title


def of_slot(hot: TierFile, slot: str) -> list[Entry]:
    """Entries of one slot, oldest first."""
    return [e for e in hot.entries if e.slot == slot]


def size(hot: TierFile) -> int:
    """Bytes the hot budget counts: what a spawn loads (`view.hot_markdown`), each text once
    under its slot's label, not the metadata the file keeps beside it."""
    slots = {e.slot for e in hot.entries}
    headings = sum(_heading_bytes(s) for s in slots if s in LIST_HEADINGS)
    return headings + sum(shown_bytes(e) for e in hot.entries)


def _heading_bytes(slot: str) -> int:
    return len(f"**{LIST_HEADINGS[slot]}:**\n".encode())


# The slots a hot view lists, each under its heading, in the spawn template's order.
LIST_HEADINGS = {
    "decision": "Decisions so far",
    "action": "Last actions",
    "blocker": "Blockers",
    "note": "Notes",
}


def shown_line(entry: Entry) -> str:
    """An entry as the hot view shows it: a single slot under its label, a listed one as a
    bullet (a text of several lines indented under it)."""
    text = _indent(slot_text(entry))
    if entry.slot in SINGLE_SLOTS:
        return f"**{LABELS[entry.slot]}:** {_mark(entry)}{text}"
    if entry.slot in LIST_HEADINGS:
        return f"- {_mark(entry)}{_since(entry)}{text}"
    body = f"\n  {_indent(entry.body)}" if entry.body else ""
    return f"- {_mark(entry)}{entry.title}{body}"


def shown_bytes(entry: Entry) -> int:
    """The bytes of an entry's line in the hot view, its line end included."""
    return len(shown_line(entry).encode("utf-8")) + 1


def _indent(text: str) -> str:
    lines = text.splitlines() or [""]
    return "\n".join([lines[0], *("  " + ln if ln.strip() else ln for ln in lines[1:])])


def _mark(entry: Entry) -> str:
    return "(untrusted source) " if entry.trust else ""


def _since(entry: Entry) -> str:
    """A blocker carried from an earlier session says since when it is open."""
    if entry.slot != "blocker" or not dict(entry.extra).get("carried") or not entry.created:
        return ""
    return f"(open since {entry.created[:10]}) "


def extra_actions(hot: TierFile, keep: int) -> list[Entry]:
    """Actions beyond the last `keep`, oldest first."""
    actions = of_slot(hot, "action")
    return actions[: max(0, len(actions) - keep)]


# A hot tier over its budget gives up its oldest notes and actions until it is down to this
# share of the budget: a checkpoint then holds a stretch of the session (what a summary and
# a search result can make sense of), not one note, and the next notes fit without another.
# The session's state (decisions, blockers, why, task) leaves only to fit the budget itself.
CHECKPOINT_DOWN_TO = 0.5
_RUNNING = ("note", "action")


def fit(hot: TierFile, budget: int, protect: set[str]) -> list[Entry]:
    """Evict the oldest entries of a file over its budget; return what left.

    Notes and actions go first, down to CHECKPOINT_DOWN_TO of the budget; then, only as far
    as the budget needs, the rest in eviction order. Entries in `protect` go last; the task
    is only cut (its body moved out) when nothing else can make room.
    """
    evicted: list[Entry] = []
    now = size(hot)
    if now > budget:
        now = _evict(hot, _RUNNING, int(budget * CHECKPOINT_DOWN_TO), budget, protect, evicted, now)
        _evict(hot, _EVICTION_ORDER, budget, budget, protect, evicted, now)
    return evicted


def _evict(
    hot: TierFile,
    slots: tuple[str, ...],
    down_to: int,
    budget: int,
    protect: set[str],
    evicted: list[Entry],
    now: int,
) -> int:
    """Evict the oldest entries of some slots until the file (`now` bytes) is down to
    `down_to` bytes (an entry in `protect` only while the file is over the budget itself);
    the file's size after. Each entry leaving takes its own bytes with it: the file is not
    rendered again for each (a full tier gave up a dozen notes in a row that way)."""
    for slot in slots:
        for entry in sorted(of_slot(hot, slot), key=lambda e: (e.id in protect, e.created)):
            if now <= down_to or (entry.id in protect and now <= budget):
                return now
            now -= sum(_entry_bytes(e) for e in hot.remove({entry.id}))
            if slot in LIST_HEADINGS and not of_slot(hot, slot):
                now -= _heading_bytes(slot)  # the slot's last entry took its heading along
            evicted.append(entry)
    return now


def _entry_bytes(entry: Entry) -> int:
    """The bytes an entry takes of the budget (see `size`)."""
    return shown_bytes(entry)
