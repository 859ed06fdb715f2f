"""`tiermem import squad`: an existing `.squad/` team memory into tiers, losing nothing.

Every file read is archived byte for byte first (one record per file, so the original text
can be rebuilt). Then its sections become entries: an agent's Core Context becomes that
agent's wiki page; structured sections (policies, decisions, conventions, contracts) and
decisions go through Scribe's promotion rules to the wiki; other learnings become cold
summaries, or stay archive-only when older than the cold TTL. The import only ever writes
under `.squad/memory/`, and a file whose exact content was imported before is skipped. A dry
run performs the whole import on a scratch copy, so its table shows where entries land.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import archive, squad_parse, store
from .classify import classify, is_structured
from .entries import Entry, TierFile, content_id, split_entry
from .progress import track, working
from .summarize import ExtractiveSummarizer, budget_for

if TYPE_CHECKING:
    from .memory import Memory

BINARY_PROBE_BYTES = 8000
_HISTORY_KINDS = ("learning", "context", "text", "team-update", "core-context")


@dataclass(frozen=True)
class Source:
    """One Squad file to import."""

    path: Path
    rel: str
    kind: str  # history | decisions | inbox | log
    agent: str


@dataclass
class Planned:
    """An entry and the tier file it goes to."""

    tier: str  # cold | wiki
    name: str  # agent (cold) or topic (wiki)
    entry: Entry


@dataclass
class ImportReport:
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
    after: dict[str, dict[str, int]] = field(default_factory=dict)

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


def sources(squad: Path) -> list[Source]:
    """The Squad files an import reads, in a fixed order."""
    found: list[Source] = []
    agents = squad / "agents"
    if agents.is_dir():
        for folder in sorted(p for p in agents.iterdir() if p.is_dir()):
            for path in sorted(folder.glob("history*.md")):
                found.append(Source(path, "", "history", folder.name.lower()))
    for pattern in (
        "decisions.md",
        "decisions-archive*.md",
        "decisions/*.md",
        "decisions/archive/*.md",
    ):
        found += [Source(p, "", "decisions", store.TEAM) for p in sorted(squad.glob(pattern))]
    inbox = sorted(squad.glob("decisions/inbox/*.md"))
    found += [Source(p, "", "inbox", store.TEAM) for p in inbox]
    for logs in ("log", "orchestration-log"):
        found += [Source(p, "", "log", store.TEAM) for p in sorted(squad.glob(f"{logs}/*.md"))]
    top = squad.parent
    return [Source(s.path, s.path.relative_to(top).as_posix(), s.kind, s.agent) for s in found]


def _read(source: Source, squad: Path) -> tuple[str | None, str]:
    """A file's text, or None and a reason (with the line) when it cannot be imported."""
    path = source.path
    if path.is_symlink():
        try:
            path.resolve().relative_to(squad.resolve())
        except ValueError:
            return None, f"{source.rel}:1: symbolic link out of .squad/; skipped"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{source.rel}:1: unreadable ({exc.strerror}); skipped"
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        # The same rule git uses: a NUL early on means binary; a stray one later is text.
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return None, f"{source.rel}:{line}: binary data; skipped"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, f"{source.rel}:{line}: not valid UTF-8; skipped"


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


def _body(section: squad_parse.Section) -> str:
    text = section.text
    if section.level and "\n" in text:
        text = text.split("\n", 1)[1]
    return text.strip("\n")


def _short(text: str, target: int) -> str:
    return ExtractiveSummarizer().summarize(text, title="", budget_bytes=budget_for(text, target))


class _Planner:
    """Turns parsed sections into entries."""

    def __init__(self, mem: Memory, report: ImportReport) -> None:
        self.mem = mem
        self.report = report
        self.now = mem.clock.stamp()
        self.target = mem.config.scribe.compression_target

    def add(self, tier: str, name: str, entry: Entry) -> None:
        self.report.planned.append(Planned(tier, name, entry))

    def history(self, source: Source, text: str, record: archive.Record) -> None:
        sections = squad_parse.parse_history(text)
        for section, date in zip(sections, _fill_dates(sections), strict=True):
            if section.kind not in _HISTORY_KINDS or not _body(section).strip():
                continue
            self._history_section(source, section, date or self.now, record)

    def _history_section(
        self, source: Source, section: squad_parse.Section, date: str, record: archive.Record
    ) -> None:
        body = _body(section)
        title = (section.title or section.kind)[:200]
        where = (f"{record.location}#L{section.line}",)
        key = content_id("i", source.agent, title, body)
        if section.kind == "core-context":
            entry = Entry(
                key,
                "contract",
                f"{source.agent}: {title}",
                body,
                agent=source.agent,
                created=date,
                used=self.now,
                sources=where,
                tags=(source.agent,),
            )
            for part in split_entry(entry):
                self.add("wiki", source.agent, part)
            return
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
        from .decisions import decision_entries

        parse = squad_parse.parse_inbox if source.kind == "inbox" else squad_parse.parse_decisions
        sections = parse(text, source.path.name) if source.kind == "inbox" else parse(text)  # type: ignore[call-arg]
        for section in sections:
            if section.kind != "decision" or not _body(section).strip():
                continue
            for entry in decision_entries(
                section, section.author or "", self.now, "", record.location
            ):
                self.add("cold", store.TEAM, _dated(entry))

    def log(self, source: Source, text: str, record: archive.Record) -> None:
        for section in squad_parse.parse_log(text, source.path.name):
            date = _stamp(section.date) or self.now
            title = (section.title or source.path.stem)[:200]
            entry = Entry(
                content_id("i", "log", source.rel, text),
                "status",
                title,
                _short(text, self.target),
                agent=store.TEAM,
                created=date,
                used=date,
                sources=(record.location,),
            )
            self.add("cold", store.TEAM, entry)


def _dated(entry: Entry) -> Entry:
    """An imported decision was last relevant when it was made."""
    from dataclasses import replace

    return replace(entry, used=entry.created)


def plan(mem: Memory, progress: bool = False, squad: Path | None = None) -> ImportReport:
    """Read and archive every source; plan the entries (nothing but the archive is written).

    The sources are read from `squad` (default: the store's own `.squad/`).
    """
    from .redact import redact

    squad = squad or mem.layout.squad
    report = ImportReport()
    planner = _Planner(mem, report)
    found = sources(squad)
    done = completed_records(mem)
    for source in track(found, "importing .squad/", progress):
        text, problem = _read(source, squad)
        report.files += 1
        if text is None:
            report.skipped.append(problem)
            continue
        report.before_bytes += len(text.encode("utf-8"))
        # Squad files are not CLI input: any size, and a stray NUL, are imported as they are.
        cleaned, kinds = redact(text)
        record = archive.new_record(
            source.agent, mem.clock.stamp(), "import", source.rel, source.rel, cleaned
        )
        if record.id in done:
            report.unchanged += 1
            continue
        report.records.append(record.id)
        if kinds:
            mem._audit("redact", [], ["archive"], "credential-shaped text replaced", kinds=kinds)
        archive.write(mem.layout, record)  # a no-op when a crashed import archived it
        report.archived.append(record.location)
        getattr(
            planner,
            "history"
            if source.kind == "history"
            else "log"
            if source.kind == "log"
            else "decisions",
        )(source, cleaned, record)
    return report


def completed_records(mem: Memory) -> set[str]:
    """Archive records of Squad files whose import finished (named by its audit line).

    A file archived by an import that crashed before its audit line is imported again,
    and entries already in a tier are not written twice.
    """
    from . import audit

    done: set[str] = set()
    for line in audit.read(mem.layout):
        if line.get("action") == "import":
            records = line.get("records", [])
            if isinstance(records, list):
                done.update(str(r) for r in records)
    return done


def _existing_ids(mem: Memory) -> set[str]:
    from .decisions import promoted_ids

    ids = promoted_ids(mem)
    for path in sorted(mem.layout.tier_dir("cold").glob("*.md")):
        if not store.is_temp(path):
            loaded = store.load(mem.layout, "cold", path)
            if loaded is not None:
                ids.update(e.id for e in loaded.entries)
    return ids


def write(mem: Memory, report: ImportReport, progress: bool = False) -> None:
    """Write planned entries (one write per tier file), then apply Scribe's rules."""
    with working("applying Scribe's rules and indexing", progress):
        _write(mem, report)


def _write(mem: Memory, report: ImportReport) -> None:
    from . import maintenance, wiki

    existing = _existing_ids(mem)
    groups: dict[tuple[str, str], list[Entry]] = {}
    for item in report.planned:
        if item.entry.id not in existing:
            groups.setdefault((item.tier, item.name), []).append(item.entry)
            existing.add(item.entry.id)
    for (tier, name), items in sorted(groups.items()):
        if tier == "wiki":
            wiki.add(mem, name, items)
            continue
        path = mem.layout.tier_file("cold", name)
        with store.locked(mem.layout, path):
            cold = store.load(mem.layout, "cold", path) or TierFile(
                f"{name}: cold memory", {"tier": "cold", "agent": name}
            )
            for entry in items:
                cold.put(entry)
            store.save(mem.layout, path, cold)
        report.written += len(items)
    if report.records:
        # Even when a crashed import already wrote every entry, Scribe's pass must still run.
        maintenance.run(mem, merge_inbox=False)
        mem._audit(
            "import",
            [],
            ["archive", "cold", "wiki"],
            "Squad memory imported",
            files=len(report.records),
            entries=sum(len(v) for v in groups.values()),
            records=report.records,
        )
    _record_outcome(mem, report)


def _record_outcome(mem: Memory, report: ImportReport) -> None:
    """Where the planned entries are now, and what each tier holds."""
    mem.sync()
    report.landed = {d.id: d.tier for d in mem.index.docs() if d.tier in ("cold", "wiki")}
    report.after = {}
    for _, tier, n, b, t in mem.index.totals():
        slot = report.after.setdefault(tier, {"entries": 0, "bytes": 0, "tokens": 0})
        slot["entries"] += n
        slot["bytes"] += b
        slot["tokens"] += t


def rehearse(mem: Memory, progress: bool = False) -> ImportReport:
    """A dry run: the whole import into a scratch copy of the store, then thrown away.

    Entries are planned into cold and wiki, but Scribe's pass then promotes, supersedes and
    archives many of them (an old learning is archive-only past the cold TTL): only running
    it shows where they land. The copy reads the real `.squad/` files, starts from the
    store's memory as it is (its config, and what earlier imports wrote), and writes nothing
    outside its own temporary folder.
    """
    import shutil
    import tempfile

    from .memory import Memory

    now = mem.clock.stamp() if mem.clock.fixed else None
    with tempfile.TemporaryDirectory(prefix="tiermem-dry-run-") as folder:
        scratch_root = Path(folder)
        if mem.layout.memory.is_dir():
            # The index is a cache: rebuilt in the copy rather than copied mid-write.
            shutil.copytree(
                mem.layout.memory,
                store.Layout(scratch_root).memory,
                ignore=shutil.ignore_patterns("index.sqlite*", ".locks"),
            )
        scratch, _ = Memory.init(scratch_root, now=now, squad_files=False)
        try:
            report = plan(scratch, progress=progress, squad=mem.layout.squad)
            write(scratch, report, progress=progress)
        finally:
            scratch.close()
    report.archived = []
    report.written = 0
    return report


def summary(mem: Memory, report: ImportReport, dry_run: bool) -> dict[str, Any]:
    """The end-of-import table as data: classes per tier, bytes and tokens before and after."""
    from .tokens import count_many

    texts = [
        s.path.read_bytes().decode("utf-8", "replace")
        for s in sources(mem.layout.squad)
        if s.path.is_file()
    ]
    return {
        "dry_run": dry_run,
        "files": report.files,
        "unchanged_files": report.unchanged,
        "skipped": report.skipped,
        "entries_written": report.written,
        "classes": report.classes(),
        "before": {"bytes": report.before_bytes, "tokens": sum(count_many(texts)) if texts else 0},
        "after": report.after,
    }


def print_summary(summary: dict[str, Any]) -> None:
    """Print the end-of-import tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    verb = "would import" if summary["dry_run"] else "imported"
    console.print(
        f"{verb} {summary['files']} files ({summary['unchanged_files']} unchanged since the "
        f"last import, {len(summary['skipped'])} skipped)"
    )
    table = Table(title="entries per class and tier")
    tiers = ["cold", "wiki", "archive"]
    table.add_column("class")
    for tier in tiers:
        table.add_column(tier, justify="right")
    for cls, row in summary["classes"].items():
        table.add_row(cls, *(str(row.get(t, 0)) for t in tiers))
    console.print(table)
    sizes = Table(title="before and after")
    for column in ("", "entries", "bytes", "tokens"):
        sizes.add_column(column, justify="right" if column else "left")
    before = summary["before"]
    sizes.add_row("Squad files (before)", "", f"{before['bytes']:,}", f"{before['tokens']:,}")
    for tier, slot in sorted(summary["after"].items()):
        sizes.add_row(
            f"{tier} (after)", f"{slot['entries']:,}", f"{slot['bytes']:,}", f"{slot['tokens']:,}"
        )
    console.print(sizes)
