"""`tiermem import squad`: an existing `.squad/` team memory into tiers, losing nothing.

Every file read is archived byte for byte first (one record per file, so the original text
can be rebuilt). Then its sections become entries, dated by their own headings: an agent's
standing self-knowledge (its Core Context) is one entry of its own in its cold tier;
structured sections (policies, decisions, conventions, contracts), decisions and the team's
SKILL.md files go through Scribe's promotion rules to the wiki; other learnings become cold
summaries, which Scribe ages into the archive past the cold TTL, except each agent's last TTL
days of activity. The import only ever writes under `.squad/memory/`, and a file whose exact
content was imported before is skipped. A dry run performs the whole import on a scratch
copy, so its table shows where entries land.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from . import archive, audit, bootstrap, decisions, files, store, wiki
from .classify import classify, is_structured
from .clock import format_time, parse_time
from .context import Context
from .entries import STANDING, Entry, content_id, render_entry, split_entry
from .layout import TEAM, Layout
from .progress import track, working
from .results import ImportReport, Totals
from .scribe import maintenance
from .scribe.summarize import ExtractiveSummarizer, budget_for
from .squad import parse as squad_parse
from .squad.dates import find_dates
from .squad.sources import Read, Source, read, sources
from .stats import tier_totals

_HISTORY_KINDS = ("learning", "context", "text", "team-update", "core-context")
# Sections of an agent's history.md that say what the agent is (its standing self-knowledge).
_STANDING_KINDS = ("preamble", "title", "context", "core-context")
_STANDING_TITLE = "Core Context"


@dataclass
class Planned:
    """An entry and the tier file it goes to."""

    tier: str  # cold | wiki
    name: str  # agent (cold) or topic (wiki)
    entry: Entry


@dataclass
class Plan:
    """What an import read, planned and wrote."""

    files: int = 0
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    planned: list[Planned] = field(default_factory=list)
    before_bytes: int = 0
    written: int = 0
    # After Scribe's pass: the tier each planned entry landed in (absent: archive only), and
    # entries, bytes and tokens per tier. None until the import (or its rehearsal) ran.
    landed: dict[str, str] | None = None
    after: dict[str, Totals] = field(default_factory=dict)

    def classes(self) -> dict[str, dict[str, int]]:
        """Entries per class and tier: where they landed (else where they were planned)."""
        table: dict[str, dict[str, int]] = {}
        unique = {item.entry.id: item for item in self.planned}
        where = self.landed
        for item in unique.values():
            tier = item.tier if where is None else where.get(item.entry.id, "archive")
            row = table.setdefault(item.entry.cls, {})
            row[tier] = row.get(tier, 0) + 1
        return dict(sorted(table.items()))


def _stamp(date: str | None) -> str | None:
    if not date or "X" in date:
        return None
    if len(date) == 7:
        date += "-01"
    return f"{date[:10]}T00:00:00Z"


def _fill_dates(sections: list[squad_parse.Section]) -> list[str | None]:
    """Each section's date; an undated one takes its nearest dated neighbour's."""
    dates = [_stamp(s.date) for s in sections]
    last: str | None = None
    filled = []
    for d in dates:
        last = d or last
        filled.append(last)
    following: str | None = None
    for i in range(len(filled) - 1, -1, -1):
        following = dates[i] or following
        filled[i] = filled[i] or following
    return filled


def _file_date(text: str, fallback: str) -> str:
    """The date a file speaks of last, for what in it has no date of its own (the import's
    time only when the file names none)."""
    found = [_stamp(hit.value) for hit in find_dates(text)]
    dated = [d for d in found if d and d <= fallback]
    return max(dated) if dated else fallback


def _body(section: squad_parse.Section) -> str:
    text = section.text
    if section.level and "\n" in text:
        text = text.split("\n", 1)[1]
    return text.strip("\n")


def _short(text: str, target: int) -> str:
    return ExtractiveSummarizer().summarize(text, title="", budget_bytes=budget_for(text, target))


class _Planner:
    """Turns parsed sections into entries."""

    def __init__(self, ctx: Context, report: Plan) -> None:
        self.report = report
        self.now = ctx.stamp()
        self.file_date = self.now
        self.target = ctx.config.scribe.compression_target
        self.cold_budget = ctx.config.cold.budget_bytes
        self.ttl_days = ctx.config.cold.ttl_days

    def source(self, source: Source, text: str, record: archive.Record) -> None:
        """Plan the entries of one Squad file, by its kind."""
        self.file_date = _file_date(text, self.now)
        if source.kind == "history":
            self.history(source, text, record)
        elif source.kind == "log":
            self.log(source, text, record)
        elif source.kind == "skill":
            self.skill(source, text, record)
        else:
            self.decisions(source, text, record)

    def add(self, tier: str, name: str, entry: Entry) -> None:
        self.report.planned.append(Planned(tier, name, entry))

    def keep_recent(self) -> None:
        """Every agent with a history starts with its latest work in cold: the sessions of
        its last TTL days of activity, up to its cold budget, the work it most likely picks
        up again. Their TTL counts from the import; older sessions keep their own dates and
        Scribe ages them into the archive."""
        by_agent: dict[str, list[Planned]] = {}
        for item in self.report.planned:
            entry = item.entry
            if item.tier == "cold" and entry.agent != TEAM and _session_like(entry):
                by_agent.setdefault(entry.agent, []).append(item)
        for items in by_agent.values():
            items.sort(key=lambda i: (i.entry.created, i.entry.id), reverse=True)
            since = _days_before(items[0].entry.created, self.ttl_days)
            spent = 0
            for item in (i for i in items if i.entry.created >= since):
                spent += len(render_entry(item.entry).encode("utf-8")) + 1
                if spent > self.cold_budget:
                    break
                item.entry = replace(item.entry, used=self.now)

    def history(self, source: Source, text: str, record: archive.Record) -> None:
        sections = squad_parse.parse_history(text)
        standing = []
        for section, date in zip(sections, _fill_dates(sections), strict=True):
            if not _content(_body(section)):
                continue
            if source.path.name == "history.md" and section.kind in _STANDING_KINDS:
                standing.append(section)
            elif section.kind in _HISTORY_KINDS:
                self._history_section(source, section, date or self.file_date, record)
        if standing:
            self.add("cold", source.agent, self._standing(source, standing, record))

    def _standing(
        self, source: Source, sections: list[squad_parse.Section], record: archive.Record
    ) -> Entry:
        """The agent's standing self-knowledge: its history's Core Context, the text under
        its title, its project context and role, as one entry of its own (one id per agent,
        so a later import replaces it)."""
        return Entry(
            standing_id(source.agent),
            "learning",
            _STANDING_TITLE,
            _standing_body(sections),
            agent=source.agent,
            created=self.file_date,
            used=self.now,
            sources=tuple(f"{record.location}#L{s.line}" for s in sections),
            tags=(STANDING,),
        )

    def _history_section(
        self, source: Source, section: squad_parse.Section, date: str, record: archive.Record
    ) -> None:
        body = _body(section)
        title = (section.title or section.kind)[:200]
        where = (f"{record.location}#L{section.line}",)
        key = content_id("i", source.agent, title, body)
        cls = classify(title, body)
        if section.kind == "team-update":
            cls = "status"
        if is_structured(cls):
            # Rules, decisions and contracts are kept whole (in parts), never summarized.
            whole = Entry(
                key, cls, title, body, agent=source.agent, created=date, used=date, sources=where
            )
            for part in split_entry(whole):
                self.add("cold", source.agent, part)
            return
        summary = _short(f"{title}\n{body}", self.target)
        entry = Entry(
            key, cls, title, summary, agent=source.agent, created=date, used=date, sources=where
        )
        self.add("cold", source.agent, entry)

    def decisions(self, source: Source, text: str, record: archive.Record) -> None:
        parse = squad_parse.parse_inbox if source.kind == "inbox" else squad_parse.parse_decisions
        sections = parse(text, source.path.name) if source.kind == "inbox" else parse(text)  # type: ignore[call-arg]
        for section in sections:
            if section.kind != "decision" or not _body(section).strip():
                continue
            for entry in decisions.decision_entries(
                section, section.author or "", self.file_date, "", record.location
            ):
                self.add("cold", TEAM, _dated(entry))

    def log(self, source: Source, text: str, record: archive.Record) -> None:
        for section in squad_parse.parse_log(text, source.path.name):
            date = _stamp(section.date) or self.file_date
            title = (section.title or source.path.stem)[:200]
            entry = Entry(
                content_id("i", "log", source.rel, text),
                "status",
                title,
                _short(text, self.target),
                agent=TEAM,
                created=date,
                used=date,
                sources=(record.location,),
            )
            self.add("cold", TEAM, entry)

    def skill(self, source: Source, text: str, record: archive.Record) -> None:
        """A team skill (`.squad/skills/{name}/SKILL.md`): a convention, filed whole in the
        wiki under the skill's name, with the file it came from."""
        fields, body = squad_parse.front_matter(text)
        folder = source.path.parent.name
        name = fields.get("name") or folder
        about = fields.get("description", "")
        title = (f"{name}: {about}" if about else name)[:200]
        entry = Entry(
            content_id("s", source.rel, text),
            "convention",
            title,
            body.strip("\n"),
            agent=TEAM,
            created=self.file_date,
            used=self.file_date,
            sources=(record.location,),
            tags=(_topic(folder),),
            extra=(("path", source.rel),),
        )
        for part in split_entry(entry):
            self.add("wiki", _topic(folder), part)


def standing_id(agent: str) -> str:
    """The id of an agent's standing entry: the same for every version of it."""
    return content_id("i", agent, STANDING)


def _content(text: str) -> str:
    """Text without blank lines, rules and comments at its ends ('' when that is all)."""
    lines = text.strip("\n").split("\n")
    while lines and squad_parse.is_filler(lines[0]):
        lines.pop(0)
    while lines and squad_parse.is_filler(lines[-1]):
        lines.pop()
    return "\n".join(lines)


def _standing_body(sections: list[squad_parse.Section]) -> str:
    """Standing sections as one text: the Core Context and the text under the history's
    title as they are, other sections (Project Context, My Role) under their own headings."""
    parts = []
    for section in sections:
        body = _content(_body(section))
        own = section.kind in ("preamble", "title") or section.title.lower() == "core context"
        parts.append(body if own else f"### {section.title}\n{body}")
    return "\n\n".join(parts)


def _topic(name: str) -> str:
    """A wiki topic from a folder name (`Squad Conventions` gives `squad-conventions`)."""
    slug = "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:64]
    return slug or "skills"


def _session_like(entry: Entry) -> bool:
    """A learning of an agent's past work (its standing entry is none: it never ages)."""
    return entry.cls == "learning" and not entry.standing


def _days_before(stamp: str, days: int) -> str:
    return format_time(parse_time(stamp) - timedelta(days=days))


def _dated(entry: Entry) -> Entry:
    """An imported decision was last relevant when it was made."""
    return replace(entry, used=entry.created)


def run(ctx: Context, dry_run: bool = False, progress: bool = False) -> ImportReport:
    """Import the store's `.squad/` (or rehearse it on a scratch copy); the report says where
    entries landed after Scribe's pass."""
    if dry_run:
        return report(ctx, rehearse(ctx, progress=progress), dry_run=True)
    planned = plan(ctx, progress=progress)
    write(ctx, planned, progress=progress)
    return report(ctx, planned, dry_run=False)


def plan(ctx: Context, progress: bool = False, squad: Path | None = None) -> Plan:
    """Read and archive every source; plan the entries (nothing but the archive is written).

    The sources are read from `squad` (default: the store's own `.squad/`).
    """
    squad = squad or ctx.layout.squad
    planned = Plan()
    planner = _Planner(ctx, planned)
    done = completed_records(ctx)
    for source in track(sources(squad), "importing .squad/", progress):
        got = read(source)
        planned.files += 1
        if got.data is None:
            planned.skipped.append(got.problem)
            continue
        if got.lossy:
            ctx.note(got.problem)
        planned.before_bytes += len(got.data)
        # Squad files are not CLI input: any size, and a stray NUL, are imported as they are.
        cleaned, raw, kinds = _redacted(ctx, got)
        record = archive.new_record(
            source.agent, ctx.stamp(), "import", source.rel, source.rel, cleaned, raw
        )
        if archive.key_of(record.id) in done:  # the same text imported before, at any time
            planned.unchanged += 1
            continue
        planned.records.append(record.id)
        if kinds:
            ctx.audit("redact", [], ["archive"], "credential-shaped text replaced", kinds=kinds)
        archive.write(ctx.layout, record, raw)  # a no-op when a crashed import archived it
        planned.archived.append(record.location)
        planner.source(source, cleaned, record)
    planner.keep_recent()
    return planned


def _redacted(ctx: Context, got: Read) -> tuple[str, bytes | None, list[str]]:
    """(text, original bytes when not all UTF-8, kinds of credentials replaced).

    Bytes that are not UTF-8 ride through redaction as escapes and come back as they were,
    so the archive keeps them while no credential reaches it; the text is their decoding.
    """
    assert got.data is not None
    if not got.lossy:
        text, kinds = ctx.redact(got.data.decode("utf-8"))
        return text, None, kinds
    escaped, kinds = ctx.redact(got.data.decode("utf-8", "surrogateescape"))
    raw = escaped.encode("utf-8", "surrogateescape")
    return archive.decode(raw), raw, kinds


def completed_records(ctx: Context) -> set[str]:
    """Archive records of Squad files whose import finished (named by its audit line).

    A file archived by an import that crashed before its audit line is imported again,
    and entries already in a tier are not written twice.
    """
    done: set[str] = set()
    for line in audit.read(ctx.layout):
        if line.get("action") == "import":
            records = line.get("records", [])
            if isinstance(records, list):
                done.update(archive.key_of(str(r)) for r in records)
    return done


def _existing_ids(ctx: Context) -> set[str]:
    ids = decisions.promoted_ids(ctx)
    for path in files.memory_files(ctx.layout.tier_dir("cold")):
        loaded = store.load(ctx.layout, "cold", path)
        if loaded is not None:
            ids.update(e.id for e in loaded.entries)
    return ids


def write(ctx: Context, planned: Plan, progress: bool = False) -> None:
    """Write planned entries (one write per tier file), then apply Scribe's rules."""
    with working("applying Scribe's rules and indexing", progress):
        _write(ctx, planned)


def _write(ctx: Context, planned: Plan) -> None:
    existing = _existing_ids(ctx)
    groups: dict[tuple[str, str], list[Entry]] = {}
    for item in planned.planned:
        if item.entry.standing or item.entry.id not in existing:
            groups.setdefault((item.tier, item.name), []).append(item.entry)
            existing.add(item.entry.id)
    for (tier, name), items in sorted(groups.items()):
        if tier == "wiki":
            wiki.add(ctx, name, items)
        else:
            items = _put_cold(ctx, name, items)
        planned.written += len(items)
    if planned.records:
        # Even when a crashed import already wrote every entry, Scribe's pass must still run.
        maintenance.run(ctx, merge_inbox=False)
        ctx.audit(
            "import",
            [],
            ["archive", "cold", "wiki"],
            "Squad memory imported",
            files=len(planned.records),
            entries=sum(len(v) for v in groups.values()),
            records=planned.records,
        )
    ctx.sync()
    planned.landed = {d.id: d.tier for d in ctx.index.docs() if d.tier in ("cold", "wiki")}
    planned.after = tier_totals(ctx)


def _put_cold(ctx: Context, agent: str, items: list[Entry]) -> list[Entry]:
    """Add entries to an agent's cold file; return those written. A standing entry replaces
    the agent's earlier one, whose text is archived first; the same text again is no write."""
    path = ctx.layout.tier_file("cold", agent)
    new = functools.partial(store.blank, "cold", agent)
    written = []
    with store.update(ctx.layout, "cold", path, new) as cold:
        for entry in items:
            old = cold.get(entry.id)
            if old is not None and (old.title, old.body) == (entry.title, entry.body):
                continue
            if old is not None:
                _archive_replaced(ctx, agent, old)
            cold.put(entry)
            written.append(entry)
    return written


def _archive_replaced(ctx: Context, agent: str, old: Entry) -> None:
    """The text of a standing entry a newer version replaces, archived before it goes."""
    record = archive.new_record(
        agent, ctx.stamp(), "replace", f"cold/{agent}.md", old.title, render_entry(old)
    )
    archive.write(ctx.layout, record)
    ctx.audit("replace", [old.id], ["cold", "archive"], "a newer version replaced it", agent=agent)


def rehearse(ctx: Context, progress: bool = False) -> Plan:
    """A dry run: the whole import into a scratch copy of the store, then thrown away.

    Entries are planned into cold and wiki, but Scribe's pass then promotes, supersedes and
    archives many of them (an old learning is archive-only past the cold TTL): only running
    it shows where they land. The copy reads the real `.squad/` files, starts from the
    store's memory as it is (its config, and what earlier imports wrote), and writes nothing
    outside its own temporary folder.
    """
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tiermem-dry-run-") as folder:
        scratch_root = Path(folder)
        if ctx.layout.memory.is_dir():
            # The index is a cache: rebuilt in the copy rather than copied mid-write.
            shutil.copytree(
                ctx.layout.memory,
                Layout(scratch_root).memory,
                ignore=shutil.ignore_patterns("index.sqlite*", ".locks"),
            )
        bootstrap.init_store(scratch_root, squad_files=False)
        scratch = Context(
            Layout(scratch_root), ctx.clock, tokens=ctx.tokens, ranker=ctx.ranker, warn=ctx.warn
        )
        try:
            planned = plan(scratch, progress=progress, squad=ctx.layout.squad)
            write(scratch, planned, progress=progress)
        finally:
            ctx.notes += scratch.take_notes()
            scratch.close()
    planned.archived = []
    planned.written = 0
    return planned


def report(ctx: Context, planned: Plan, dry_run: bool) -> ImportReport:
    """What the import did, as the end-of-import tables show it."""
    reads = (read(s) for s in sources(ctx.layout.squad))
    texts = [r.data.decode("utf-8", "replace") for r in reads if r.data is not None]
    tokens = sum(ctx.tokens.count_many(texts)) if texts else 0
    return ImportReport(
        dry_run=dry_run,
        files=planned.files,
        unchanged_files=planned.unchanged,
        skipped=planned.skipped,
        entries_written=planned.written,
        classes=planned.classes(),
        before=Totals(planned.files, planned.before_bytes, tokens),
        after=planned.after,
    )
