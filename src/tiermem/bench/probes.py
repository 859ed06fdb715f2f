"""Probes made from a team's history, and the baselines they are scored against."""

import re
import unicodedata
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from tiermem.bench.corpus import Event
from tiermem.bench.facts import coverage, key_facts

MIN_PROBE_FACTS = 3
GREP_LIMIT = 5
RECALL_SHARE = 0.5

SECTION_HEADING = "### "
# A section ends at the next heading of its own level or above, never at a deeper one.
SECTION_ENDS = ("### ", "## ", "# ")

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# Teams write placeholders for the parts they did not know: 2026-07-XX, 2026-03-02T[NOW].
_PLACEHOLDER = r"(?:XX|\?\?|\[\w+\])"
_CLOCK = r"\d{2}(?:[:-]?\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
_ISO_TIME = rf"T(?:{_CLOCK}|{_PLACEHOLDER})"
_ISO_DATE = rf"\d{{4}}-\d{{2}}(?:-(?:\d{{2}}|{_PLACEHOLDER})?)?(?:{_ISO_TIME})?"
_DATE = rf"(?:{_ISO_DATE}|{_MONTH}\.? (?:\d{{1,2}}(?:st|nd|rd|th)?,? )?\d{{4}})"
# A bare year is a date only when it stands alone in brackets: "(2026)", not "1719 tests".
_BRACKETED_DATE = rf"\(\s*(?:{_DATE}|\d{{4}})\s*\)"
DATE = re.compile(rf"(?<![\w-])(?:{_BRACKETED_DATE}|{_DATE})(?!\w)", re.IGNORECASE)
LEADING_YEAR = re.compile(r"^\s*(?:19|20)\d{2}(?=\s*[—–:-])")
ISSUE_NUMBER = re.compile(r"#\d+")
# A hash that does not end a word is a markdown mark; one that does is part of a name (C#).
HASH_MARK = re.compile(r"(?<!\w)#+")
EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])")
# Brackets left holding only separators once issue numbers are gone: "(#318, #320)".
EMPTY_BRACKETS = re.compile(r"\([\s,;:/&—–-]*\)|\[[\s,;:/&—–-]*\]")
SPACE_BEFORE_PUNCT = re.compile(r"\s+([,:;)\]])")
SPACE_AFTER_OPENER = re.compile(r"([(\[])\s+")
EDGE_SEPARATORS = "—–-:,;|/ "
WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class Probe:
    """A question the memory should answer: an agent, a query and the facts it needs."""

    agent: str
    query: str
    facts: frozenset[str]
    time: datetime
    seq: int


def build_probes(events: Iterable[Event]) -> list[Probe]:
    """Make one probe from each history event whose first ### section has 3 key facts."""
    probes: list[Probe] = []
    for event in events:
        probe = probe_from_event(event)
        if probe is not None:
            probes.append(probe)
    return probes


def probe_from_event(event: Event) -> Probe | None:
    """Make the probe of one history event, or None when its first section makes none."""
    if event.kind != "history" or event.agent is None:
        return None
    section = first_section(event.text)
    if section is None:
        return None
    facts = key_facts(section)
    query = clean_heading(section.splitlines()[0][len(SECTION_HEADING) :])
    # A heading of nothing but dates, marks and issue numbers leaves no question to ask.
    if len(facts) < MIN_PROBE_FACTS or not query:
        return None
    return Probe(event.agent, query, frozenset(facts), event.date, event.seq)


def first_section(text: str) -> str | None:
    """Return the first ### section of a markdown text, heading line included."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(SECTION_HEADING)), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(SECTION_ENDS)),
        len(lines),
    )
    return "\n".join(lines[start:end])


def clean_heading(heading: str) -> str:
    """Turn a heading into a query: drop dates, markdown marks, emoji and issue numbers."""
    text = strip_symbols(heading).replace("*", "").replace("`", "")
    text = DATE.sub(" ", text)
    text = LEADING_YEAR.sub(" ", text)
    text = ISSUE_NUMBER.sub(" ", text)
    text = HASH_MARK.sub(" ", text)
    text = EDGE_UNDERSCORE.sub(" ", text)
    return tidy(text)


def strip_symbols(text: str) -> str:
    """Drop emoji and pictographs (📌, ✅) with the joiners and selectors that shape them."""
    return "".join(char for char in text if not _is_pictograph(char))


def _is_pictograph(char: str) -> bool:
    """Tell whether a character is an emoji-like symbol or one of its modifiers."""
    return unicodedata.category(char) == "So" or char in "\ufe0f\u200d"


def tidy(text: str) -> str:
    """Collapse whitespace and drop the brackets and separators that removals left behind."""
    text = EMPTY_BRACKETS.sub(" ", text)
    text = " ".join(text.split())
    text = SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = SPACE_AFTER_OPENER.sub(r"\1", text)
    return text.strip(EDGE_SEPARATORS)


def squad_as_is_text(squad_dir: Path, agent: str) -> str:
    """Return what a Squad spawn loads today: the agent's history.md, then decisions.md."""
    root = squad_root(squad_dir)
    history = read_text(root / "agents" / agent / "history.md")
    decisions = read_text(root / "decisions.md")
    return f"{history}\n\n{decisions}"


def import_ceiling_text(squad_dir: Path) -> str:
    """Return all the text of all files under a `.squad` folder, in path order."""
    root = squad_root(squad_dir)
    files = sorted(path for path in root.rglob("*") if path.is_file())
    return "\n\n".join(read_text(path) for path in files)


def squad_root(squad_dir: Path) -> Path:
    """Resolve a corpus folder to the `.squad` folder inside it; leave a `.squad` as is."""
    # Callers hold either the corpus folder or its `.squad`; both name the same snapshot.
    inner = squad_dir / ".squad"
    return inner if inner.is_dir() else squad_dir


def read_text(path: Path) -> str:
    """Read a file as UTF-8, replacing undecodable bytes; a missing file is empty."""
    if not path.is_file():
        return ""
    return path.read_bytes().decode("utf-8", errors="replace")


def full_history_text(events: Iterable[Event], agent: str) -> str:
    """Return every history event of the agent and every decision event, in stream order."""
    kept = (event for event in events if _is_history_of(event, agent) or event.kind == "decision")
    return "\n\n".join(event.text for event in sorted(kept, key=lambda event: event.seq))


def grep_top5(events: Iterable[Event], agent: str, query: str) -> list[str]:
    """Return the 5 history events of the agent sharing most query words, ties to earlier seq."""
    # Words are lower-cased runs of letters, digits and underscores, counted once each; an
    # event sharing no word is no match at all, as with grep.
    wanted = query_words(query)
    scored = [
        (len(wanted & event_words(event.text)), event.seq, event.text)
        for event in events
        if _is_history_of(event, agent)
    ]
    matching = [item for item in scored if item[0] > 0]
    matching.sort(key=lambda item: (-item[0], item[1]))
    return [text for _, _, text in matching[:GREP_LIMIT]]


def query_words(text: str) -> frozenset[str]:
    """Return the distinct lower-cased words (letters, digits, underscores) of a text."""
    return frozenset(WORDS.findall(text.lower()))


@lru_cache(maxsize=8192)
def event_words(text: str) -> frozenset[str]:
    """Return the distinct words of an event text, cached since every probe rescans them."""
    return query_words(text)


def _is_history_of(event: Event, agent: str) -> bool:
    """Tell whether an event is a history write of the given agent."""
    return event.kind == "history" and event.agent == agent


def recalled(facts: AbstractSet[str], texts: list[str]) -> bool:
    """Tell whether the texts together hold at least half of the facts."""
    return coverage(facts, "\n".join(texts)) >= RECALL_SHARE
