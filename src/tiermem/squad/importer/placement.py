"""Where each section of a Squad file goes when it is imported, by Squad's own model.

Decisions are shared, knowledge is personal. An agent's history stays that agent's: its
standing self-knowledge (Core Context, the text under its title, its project context and
role) is one entry of its own in its cold tier; its latest sessions (the last TTL days of
its activity, up to its cold budget) start in its cold tier as summaries; older sessions
stay in the archive, where the raw text of every file is, reachable by relevance. The team's
decisions (`decisions.md`, `decisions/*.md`, the inbox) go to the team's tier and, once
stable, Scribe files them in the wiki; decision archives stay in the archive. Each team skill
is a wiki convention under its own name. Session logs are the team's: recent ones in cold,
the rest in the archive.

Every section with content gets a placement: its file and line, whose it is, the entries it
made, and, once Scribe's pass has run, the tier and page it landed on (the dry run's rows).
Sections arrive piece by piece (see `file_pieces`); nothing here holds a whole large file.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta

from ...context import Context
from ...results.imports import SectionPlacement
from ...scribe.summarize import ExtractiveSummarizer, budget_for
from ...storage import archive
from ...storage.clock import format_time, parse_time
from ...storage.entries import KEPT_TEXT, STANDING, Entry, content_id, render_entry
from ...storage.layout import TEAM
from ...team import sections
from ...text.prose import clean_title, cut_at_word, readable
from ..reading import squad_markdown
from ..reading.decision_blocks import decision_entries
from ..reading.heading_dates import find_dates
from .import_sources import Source

_HISTORY_KINDS = ("learning", "context", "text", "team-update", "core-context")
# Sections of an agent's history.md that say what the agent is (its standing self-knowledge).
_STANDING_KINDS = ("preamble", "title", "context", "core-context")
STANDING_TITLE = "Core Context"


@dataclass
class Planned:
    """An entry and the tier file it goes to."""

    tier: str  # cold | wiki
    name: str  # agent (cold) or topic (wiki)
    entry: Entry


def stamp(date: str | None) -> str | None:
    """An ISO time from a section's date (a month means its first day)."""
    if not date or "X" in date:
        return None
    if len(date) == 7:
        date += "-01"
    return f"{date[:10]}T00:00:00Z"


def latest_date(text: str, now: str) -> str:
    """The date a text speaks of last, up to `now` ('' when it names none); a date after
    `now` (a typo, or a plan) is not when anything was written."""
    found = [stamp(hit.value) for hit in find_dates(text)]
    dated = [d for d in found if d and d <= now]
    return max(dated) if dated else ""


def body_of(section: squad_markdown.Section) -> str:
    """A section's text without its heading line."""
    text = section.text
    if section.level and "\n" in text:
        text = text.split("\n", 1)[1]
    return text.strip("\n")


def content(text: str) -> str:
    """Text without blank lines, rules and comments at its ends ('' when that is all)."""
    lines = text.strip("\n").split("\n")
    while lines and squad_markdown.is_filler(lines[0]):
        lines.pop(0)
    while lines and squad_markdown.is_filler(lines[-1]):
        lines.pop()
    return "\n".join(lines)


def standing_id(agent: str) -> str:
    """The id of an agent's standing entry: the same for every version of it."""
    return content_id("i", agent, STANDING)


def _short(text: str, target: int, title: str = "") -> str:
    """A summary of a section's text (its title is the entry's, not repeated in it)."""
    budget = budget_for(f"{title}\n{text}" if title else text, target)
    return ExtractiveSummarizer().summarize(text, title=title, budget_bytes=budget)


def _size(entry: Entry) -> int:
    return len(render_entry(entry).encode("utf-8")) + 1


@dataclass(order=True)
class _Candidate:
    """A session of an agent that may start in its cold tier; its summary is made only if
    it does (a history of 100,000 sessions summarises the few it keeps)."""

    created: str
    id: str
    least: int = field(compare=False)  # the fewest bytes its entry can take in cold
    make: Callable[[], Entry] = field(compare=False)
    row: SectionPlacement = field(compare=False)


class _Recent:
    """One agent's newest sessions that fit its cold budget: what starts in its cold tier."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.heap: list[_Candidate] = []
        self.least = 0
        self.newest = ""

    def offer(self, candidate: _Candidate) -> None:
        """Keep a session while it may be among the newest that fit the budget."""
        self.newest = max(self.newest, candidate.created)
        heapq.heappush(self.heap, candidate)
        self.least += candidate.least
        while self.heap and self.least > self.budget:
            self.least -= heapq.heappop(self.heap).least

    def kept(self, ttl_days: int) -> list[tuple[_Candidate, Entry]]:
        """The newest sessions, as entries, while they fit the budget and are of the agent's
        last TTL days of activity (all of them for a history with no date at all)."""
        since = days_before(self.newest, ttl_days) if self.newest else ""
        kept, spent = [], 0
        for candidate in sorted(self.heap, reverse=True):
            if candidate.created < since:
                break
            entry = candidate.make()
            spent += _size(entry)
            if spent > self.budget:
                break
            kept.append((candidate, entry))
        return kept


class _Dates:
    """Where one history's sections stand in time, as they come, to choose the newest for
    cold: an undated section stands where the dated section before it does, else the first
    one after it, else at its file's latest date. Only for that choice: an undated section's
    entry stays undated (`Planner._session`)."""

    def __init__(self) -> None:
        self.last: str | None = None
        self.waiting: list[tuple[squad_markdown.Section, archive.Record]] = []

    def date(self, section: squad_markdown.Section) -> str | None:
        """The section's date (None: it waits for the next date, see `released`)."""
        own = stamp(section.date)
        self.last = own or self.last
        return self.last

    def released(self, fallback: str) -> list[tuple[squad_markdown.Section, archive.Record, str]]:
        """The sections that waited, with the first date found (else `fallback`)."""
        date = self.last or fallback
        found = [(s, r, date) for s, r in self.waiting]
        self.waiting = []
        return found


class Planner:
    """Turns the sections of Squad files into entries and placements, file by file."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.now = ctx.stamp()
        self.target = ctx.config.scribe.compression_target
        self.cold_budget = ctx.config.cold.budget_bytes
        self.ttl_days = ctx.config.cold.ttl_days
        self.planned: list[Planned] = []
        self.rows: list[SectionPlacement] = []
        self.recent: dict[str, _Recent] = {}
        self.file: _FileState | None = None
        self.offered: set[str] = set()  # every entry the sections read so far make
        self.as_before: set[str] = set()  # the file's entries an earlier import made

    # --- a file, piece by piece -----------------------------------------------------

    def start(self, source: Source, file_date: str, unchanged: set[str] | None = None) -> None:
        """Begin a file; `file_date` is the date it speaks of last, when already known;
        `unchanged`: the entries of sections an earlier import of it made, left untouched."""
        self.file = _FileState(source, file_date, len(self.rows))
        self.as_before = unchanged or set()
        # No text of the file was written after its last commit (or, uncommitted, after now).
        self.file.bound = source.committed or self.now

    def piece(self, text: str, record: archive.Record) -> None:
        """Plan the sections of the next piece of the file begun."""
        state = self.file
        assert state is not None
        state.file_date = max(state.file_date, latest_date(text, state.bound))
        kind = state.source.kind
        if kind == "history":
            self._history(state, state.reader.read(text), record)
        elif kind == "log":
            self._log(state, text, record)
        elif kind == "skill":
            self._skill(state, text, record)
        else:
            self._decisions(state, text, record)

    def finish(self) -> None:
        """End the file begun: what waited for a date gets one, the standing entry is made."""
        state = self.file
        assert state is not None
        for section, record, date in state.dates.released(state.file_date):
            self._session(state, section, date, record)
        for index in state.undated:
            item = self.planned[index]
            item.entry = undated(replace(item.entry, created="", used=""), state.source)
        if state.standing:
            self._standing(state)
        self.rows[state.first_row :] = sorted(self.rows[state.first_row :], key=lambda r: r.line)
        self.file = None

    def earlier_ids(self, source: Source, texts: list[str]) -> set[str]:
        """The entries the sections of a file's earlier texts make (each text read as the
        file then was): what the team did not change since is not planned again."""
        found: set[str] = set()
        for text in texts:
            planner = Planner(self.ctx)
            planner.start(source, "")
            record = archive.new_record(source.agent, "", "import", source.rel, source.rel, text)
            planner.piece(text, record)
            planner.finish()
            found |= planner.offered
        return found

    def settle(self) -> None:
        """After the last file: each agent's latest sessions start in its cold tier (their TTL
        counts from the import); older ones stay in the archive with their own dates."""
        for agent, recent in sorted(self.recent.items()):
            for candidate, entry in sorted(recent.kept(self.ttl_days), key=lambda k: k[0]):
                self.planned.append(Planned("cold", agent, replace(entry, used=self.now)))
                candidate.row.entries = (entry.id,)
        self.recent = {}

    def unchanged(self, source: Source, record: archive.Record) -> None:
        """A file whose exact text was imported before: one row says so."""
        whole = "(the whole file)"
        row = SectionPlacement(source.rel, 1, whole, "unchanged", source.agent, record.location)
        self.rows.append(row)

    # --- histories ------------------------------------------------------------------

    def _history(
        self, state: _FileState, sections: list[squad_markdown.Section], record: archive.Record
    ) -> None:
        main = state.source.path.name == "history.md"
        for section in sections:
            section = trusted(section, state.bound)
            if not content(body_of(section)):
                continue
            if main and section.kind in _STANDING_KINDS:
                state.standing.append((section, record))
            elif section.kind in _HISTORY_KINDS or section.kind in _STANDING_KINDS:
                date = state.dates.date(section)
                if date is None:
                    state.dates.waiting.append((section, record))
                    continue
                for waiting, waiting_record, first in state.dates.released(date):
                    self._session(state, waiting, first, waiting_record)
                self._session(state, section, date, record)

    def _session(
        self, state: _FileState, section: squad_markdown.Section, date: str, record: archive.Record
    ) -> None:
        """A section of an agent's past work: a summary that may start in its cold tier."""
        agent = state.source.agent
        title = (section.title or section.kind)[:200]
        body = body_of(section)
        row = self._row(state, section, "session", agent, record)
        entry_id = content_id("i", agent, title, body)
        self.offered.add(entry_id)
        if entry_id in self.as_before:
            row.entries = (entry_id,)  # as the last import left it, wherever it is now
            return
        cls = "status" if section.kind == "team-update" else "learning"
        where = f"{record.location}#L{section.line}"

        occurrence = state.occurrences.of(title, section.date or "", body)
        named = sections.key(state.source.rel, title, section.date or "", occurrence)

        def make() -> Entry:
            summary = _short(body, self.target, title)
            made = Entry(
                entry_id,
                cls,
                title,
                summary,
                agent=agent,
                created=stamp(section.date) or "",
                used=date,
                sources=(where,),
                extra=((sections.SECTION, named),),
            )
            return made if made.created else undated(made, state.source)

        least = len(title.encode("utf-8")) + min(len(body), _LEAST_SUMMARY) + _LEAST_META
        self._offer(agent, date, entry_id, least, make, row)

    def _offer(
        self,
        owner: str,
        date: str,
        entry_id: str,
        least: int,
        make: Callable[[], Entry],
        row: SectionPlacement,
    ) -> None:
        """A session of an agent (or a report of the team's) that may start in its cold tier:
        the newest that fit its cold budget do (see `settle`)."""
        recent = self.recent.setdefault(owner, _Recent(self.cold_budget))
        recent.offer(_Candidate(date, entry_id, least, make, row))

    def _standing(self, state: _FileState) -> None:
        """The agent's standing self-knowledge, as one entry of its own (one id per agent,
        so a later import replaces it)."""
        agent = state.source.agent
        sections = [s for s, _ in state.standing]
        entry = Entry(
            standing_id(agent),
            "learning",
            STANDING_TITLE,
            standing_body(sections),
            agent=agent,
            created=state.source.committed or state.file_date,
            used=self.now,
            sources=tuple(f"{r.location}#L{s.line}" for s, r in state.standing),
            tags=(STANDING,),
        )
        self.planned.append(Planned("cold", agent, entry))
        for section, record in state.standing:
            self._row(state, section, "standing", agent, record).entries = (entry.id,)

    # --- the team's files -----------------------------------------------------------

    def _decisions(self, state: _FileState, text: str, record: archive.Record) -> None:
        source = state.source
        if source.kind == "inbox":
            sections = squad_markdown.parse_inbox(text, source.path.name)
        else:
            sections = squad_markdown.parse_decisions(text)
        for section in sections:
            section = trusted(replace(section, line=section.line + state.line), state.bound)
            if not content(body_of(section)):
                continue
            if source.kind == "decision-archive":
                kind = "archived decision" if section.kind == "decision" else "text"
                self._row(state, section, kind, TEAM, record)
            elif section.kind != "decision":
                self._row(state, section, "text", TEAM, record)
            else:
                self._decision(state, section, record)
        state.line += text.count("\n")

    def _decision(
        self, state: _FileState, section: squad_markdown.Section, record: archive.Record
    ) -> None:
        """A decision of the team: to its cold tier, which Scribe's pass files in the wiki."""
        made = decision_entries(section, section.author or "", _UNDATED, "", record.location)
        self.offered.update(e.id for e in made)
        if all(e.id in self.as_before for e in made):
            self._row(state, section, made[0].cls, TEAM, record).entries = tuple(e.id for e in made)
            return
        row = self._row(state, section, made[0].cls, TEAM, record)
        if made[0].cls == "status" and made[0].created != _UNDATED:
            # A report of work done is a session of the team's: summarised like one (the
            # archive holds it whole), and only the newest that fit the team's cold budget
            # start there, the rest staying in the archive (never in cold only to leave).
            report = self._report(section, made[0])
            self.offered.add(report.id)
            size = len(report.title.encode("utf-8")) + _LEAST_SUMMARY + _LEAST_META
            self._offer(TEAM, report.created, report.id, size, _summarised(report, self), row)
            return
        for entry in made:
            if entry.created == _UNDATED:
                state.undated.append(len(self.planned))
            self.planned.append(Planned("cold", TEAM, replace(entry, used=entry.created)))
        row.entries = tuple(e.id for e in made)

    @staticmethod
    def _report(section: squad_markdown.Section, first: Entry) -> Entry:
        """A status block of the decision log as one entry, whole (its parts joined)."""
        extra = tuple(kv for kv in first.extra if kv[0] not in ("part", "parent"))
        return replace(
            first,
            id=dict(first.extra).get("parent") or first.id,
            title=clean_title(section.title, 200) or first.title,
            body=readable(content(body_of(section))),
            used=first.created,
            extra=extra,
        )

    def _log(self, state: _FileState, text: str, record: archive.Record) -> None:
        """A session log: the team's; a recent one starts in its cold tier as a summary."""
        source = state.source
        since = days_before(self.now, self.ttl_days)
        for section in squad_markdown.parse_log(text, source.path.name):
            section = trusted(replace(section, line=section.line + state.line), state.bound)
            date = stamp(section.date) or source.committed
            row = self._row(state, section, "session log", TEAM, record)
            if date < since:
                continue  # the archive holds it
            title = (section.title or source.path.stem)[:200]
            entry_id = content_id("i", "log", source.rel, text)
            self.offered.add(entry_id)
            if entry_id in self.as_before:
                row.entries = (entry_id,)  # as the last import left it, wherever it is now
                continue

            def make(title: str = title, date: str = date, entry_id: str = entry_id) -> Entry:
                return Entry(
                    entry_id,
                    "status",
                    title,
                    _short(text, self.target, title),
                    agent=TEAM,
                    created=date,
                    used=date,
                    sources=(record.location,),
                )

            least = len(title.encode("utf-8")) + min(len(text), _LEAST_SUMMARY) + _LEAST_META
            self._offer(TEAM, date, entry_id, least, make, row)
        state.line += text.count("\n")

    def _skill(self, state: _FileState, text: str, record: archive.Record) -> None:
        """A team skill (`.squad/skills/{name}/SKILL.md`): a convention in the wiki under the
        skill's name that points at its file instead of copying it. The text is the archive
        record of the file (the one copy the store keeps), which the index reads for the
        entry's passages; a newer version of the file replaces the entry."""
        source = state.source
        fields, _ = squad_markdown.front_matter(text) if not state.line else ({}, text)
        folder = source.path.parent.name
        name = " ".join((fields.get("name") or folder).split())
        about = " ".join(fields.get("description", "").split())
        title = cut_at_word(f"{name}: {about}" if about else name, 200)
        where = f"`{source.rel}`" + (f" (from line {state.line + 1})" if state.line else "")
        entry = Entry(
            content_id("s", source.rel, str(state.line)),
            "convention",
            title,
            f"The team's skill, read whole in {where}.",
            agent=TEAM,
            created=source.committed,  # a skill says when it was written only through git
            used=source.committed,
            sources=(record.location,),
            tags=(skill_topic(folder),),
            extra=(("path", source.rel), (KEPT_TEXT, record.location)),
        )
        self.offered.add(entry.id)
        if entry.id not in self.as_before:
            self.planned.append(Planned("wiki", skill_topic(folder), entry))
        line = state.line + 1
        section = squad_markdown.Section("skill", title, None, text, 0, 0, line, 0, None, None)
        self._row(state, section, "skill", TEAM, record).entries = (entry.id,)
        state.line += text.count("\n")

    def _row(
        self,
        state: _FileState,
        section: squad_markdown.Section,
        kind: str,
        agent: str,
        record: archive.Record,
    ) -> SectionPlacement:
        # A title written with its line breaks escaped (`First\\n\\nSecond`) ends at them.
        title = (section.title or section.kind).split("\\n\\n", 1)[0]
        title = cut_at_word(" ".join(title.split()), 200)
        row = SectionPlacement(state.source.rel, section.line, title, kind, agent, record.location)
        self.rows.append(row)
        return row


def _summarised(report: Entry, planner: Planner) -> Callable[[], Entry]:
    """A report's entry with its text summarised, made only when it starts in cold."""
    return lambda: replace(report, body=_short(report.body, planner.target, report.title))


def days_before(stamp_: str, days: int) -> str:
    """The time `days` before a time ('' when that is before the calendar starts)."""
    try:
        return format_time(parse_time(stamp_) - timedelta(days=days))
    except OverflowError:
        return ""


def trusted(section: squad_markdown.Section, bound: str) -> squad_markdown.Section:
    """The section with its own date, unless that date is later than its file can have been
    written (`bound`): a typo is no date to age or choose by."""
    own = stamp(section.date)
    return section if own is None or own <= bound else replace(section, date=None)


def undated(entry: Entry, source: Source) -> Entry:
    """An entry of a section with no date of its own: it stays undated (never the import
    day, never the newest), and says when its file was last committed, when git knows."""
    if not source.committed:
        return entry
    return replace(entry, extra=(*entry.extra, ("committed", source.committed)))


# A lower bound of a session's entry in cold: its title, its metadata line, a short summary.
_LEAST_META = 80
_LEAST_SUMMARY = 64
# An undated decision's date until its file's last date is known (see `Planner.finish`).
_UNDATED = "1970-01-01T00:00:00Z"


@dataclass
class _FileState:
    """What the planner keeps while a file is read piece by piece."""

    source: Source
    file_date: str
    first_row: int
    reader: squad_markdown.HistoryReader = field(default_factory=squad_markdown.HistoryReader)
    dates: _Dates = field(default_factory=_Dates)
    standing: list[tuple[squad_markdown.Section, archive.Record]] = field(default_factory=list)
    undated: list[int] = field(default_factory=list)
    occurrences: sections.Occurrences = field(default_factory=sections.Occurrences)
    line: int = 0  # lines of the file before the piece being read (non-history files)
    bound: str = ""  # no text of the file is later: its last commit, else now


def standing_body(sections: list[squad_markdown.Section]) -> str:
    """Standing sections as one text: the Core Context and the text under the history's
    title as they are, other sections (Project Context, My Role) under their own headings."""
    parts = []
    for section in sections:
        body = content(body_of(section))
        own = section.kind in ("preamble", "title") or section.title.lower() == "core context"
        parts.append(body if own else f"### {section.title}\n{body}")
    return "\n\n".join(parts)


def skill_topic(name: str) -> str:
    """A wiki topic from a skill's folder name (`Squad Conventions` gives `squad-conventions`)."""
    slug = "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:64]
    return slug or "skills"
