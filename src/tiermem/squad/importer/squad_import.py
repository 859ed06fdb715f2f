"""`tiermem import squad`: an existing `.squad/` team memory into tiers, losing nothing.

Every file read is archived byte for byte first (one record per file, so the original text
can be rebuilt; a file too large for one record is archived in pieces, one record each).
Then its sections go where Squad's own model puts them (see `placement`): an agent's
history stays its own (its standing self-knowledge one entry of its cold tier, its latest
sessions in cold, older ones in the archive), the team's decisions go to its tier and, once
Scribe's pass finds them stable, to the wiki; decision archives and superseded decisions
stay in the archive, marked. The import only ever writes under `.squad/memory/`, and a file
whose exact content was imported before is skipped. Files are read piece by piece, so a
history of 50 MB is imported in bounded memory. A dry run performs the whole import on a
scratch copy, so its rows say where every section lands.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...context import Context
from ...errors import PartlyDone, TiermemError
from ...render.progress import bar, working
from ...results.base import count
from ...results.figures import Totals
from ...results.imports import ImportReport, SectionPlacement
from ...scribe import maintenance, supersede
from ...storage import archive, audit, bootstrap, files, store
from ...storage.entries import Entry
from ...storage.layout import TEAM, Layout
from ...team import decisions, sections, wiki
from ...team.classify import is_structured
from ...text import redact
from ...upkeep.stats import tier_totals
from ...vocabulary import LASTING_TIERS
from . import earlier, file_pieces, imported_files, last_commits, scrubbed
from .import_sources import Read, Source, read, sources
from .placement import Planned, Planner

__all__ = ["Plan", "Planned", "completed_records", "plan", "rehearse", "report", "run", "write"]


@dataclass
class Plan:
    """What an import read, planned and wrote."""

    files: int = 0
    unchanged: int = 0
    imported: int = 0
    skipped: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)  # `file:line: kind` of each credential
    planned: list[Planned] = field(default_factory=list)
    rows: list[SectionPlacement] = field(default_factory=list)
    before_bytes: int = 0
    before_tokens: int = 0
    written: int = 0
    # After Scribe's pass: the tier each planned entry landed in (absent: archive only), and
    # entries, bytes and tokens per tier. None until the import (or its rehearsal) ran.
    landed: dict[str, str] | None = None
    after: dict[str, Totals] = field(default_factory=dict)
    sources: list[Source] = field(default_factory=list)  # every Squad file there is
    changed: list[str] = field(default_factory=list)  # the files imported (not unchanged)
    replaced: list[str] = field(default_factory=list)  # entries of sections that grew since
    scrubbed: set[str] = field(default_factory=set)  # addresses Squad's scrub took out

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


def run(ctx: Context, dry_run: bool = False, progress: bool = False) -> ImportReport:
    """Import the store's `.squad/` (or rehearse it on a scratch copy); the report says where
    entries landed after Scribe's pass."""
    if dry_run:
        return report(ctx, rehearse(ctx, progress=progress), dry_run=True)
    planned = Plan()
    try:
        plan(ctx, progress=progress, into=planned)
        write(ctx, planned, progress=progress)
        imported_files.remember(ctx, planned.sources)  # what a `scribe run` follows from
    except (TiermemError, OSError) as exc:
        if not planned.records:
            raise  # nothing written: the one line says why
        raise PartlyDone(
            f"import squad stopped after archiving {count(len(planned.records), 'record')} of "
            f"{count(planned.imported, 'file')} ({exc}); run it again once that is fixed: what "
            "was archived is not archived twice"
        ) from None
    return report(ctx, planned, dry_run=False)


def plan(
    ctx: Context,
    progress: bool = False,
    squad: Path | None = None,
    into: Plan | None = None,
    only: Callable[[list[Source]], list[Source]] | None = None,
) -> Plan:
    """Read and archive every source; plan the entries (nothing but the archive is written).

    The sources are read from `squad` (default: the store's own `.squad/`); `into` is the
    plan to fill, so that what was archived before a failure is known; `only` chooses the
    sources to read (following the team's files reads those that changed: `follow`).
    """
    squad = squad or ctx.layout.squad
    planned = into or Plan()
    planner = Planner(ctx)
    done = completed_records(ctx)
    found = sources(squad, last_commits.last_commits(squad.parent, squad.name, ctx.stamp()))
    planned.sources = found
    found = only(found) if only is not None else found
    before = earlier.Earlier(ctx)
    with bar(sum(_size(s) for s in found), "importing .squad/", progress) as step:
        for source in found:
            _plan_file(ctx, planner, planned, source, done, before)
            step(_size(source))
    planner.settle()
    planned.planned, planned.rows = planner.planned, planner.rows
    return planned


def _size(source: Source) -> int:
    try:
        return os.lstat(source.path).st_size
    except OSError:
        return 0


def _plan_file(
    ctx: Context,
    planner: Planner,
    planned: Plan,
    source: Source,
    done: set[str],
    before: earlier.Earlier | None = None,
) -> None:
    """Archive one Squad file (in pieces when it is large) and plan its sections."""
    got = read(source)
    planned.files += 1
    if got.data is None:
        planned.skipped.append(got.problem)
        return
    if got.lossy:
        ctx.note(got.problem)
    planned.before_bytes += len(got.data)
    # Squad files are not CLI input: any size, and a stray NUL, are imported as they are.
    made = _pieces(ctx, source, got)
    planned.before_tokens += sum(p.tokens for p in made)
    if all(archive.key_of(p.record.id) in done for p in made):
        planned.unchanged += 1  # the same text imported before, at any time
        planner.unchanged(source, made[0].record)
        return
    kinds = sorted({kind for p in made for _, kind in p.redacted})
    if kinds:
        ctx.audit("redact", [], ["archive"], "credential-shaped text replaced", kinds=kinds)
        planned.redacted += [
            f"{source.rel}:{line}: {kind}" for p in made for line, kind in p.redacted
        ]
    planned.imported += 1
    planned.changed.append(source.rel)
    leave_out = {p.record.id for p in made}
    texts = before.texts(source.agent, source.rel, leave_out) if before is not None else []
    planner.start(source, "", unchanged=planner.earlier_ids(source, texts))
    for piece in made:
        if not piece.record.text:  # a piece of a large file: read again, one at a time
            piece.record.text, piece.raw, _ = _piece_text(ctx, got, piece.start, piece.end)
        archive.write(ctx.layout, piece.record, piece.raw)  # no-op when archived already
        planned.records.append(piece.record.id)
        planned.archived.append(piece.record.location)
        planner.piece(piece.record.text, piece.record)
        if len(made) > 1:
            piece.record.text, piece.raw = "", None
    planner.finish()
    if texts:
        planned.scrubbed |= scrubbed.addresses(texts, got.data.decode("utf-8", "replace"))


@dataclass
class _Piece:
    """One piece of a Squad file: its archive record (text dropped when the file has many
    pieces, to hold one at a time), the original bytes when not all UTF-8, its tokens."""

    start: int
    end: int
    record: archive.Record
    raw: bytes | None
    redacted: list[tuple[int, str]]  # (line of the file, kind) of each credential replaced
    tokens: int


def _pieces(ctx: Context, source: Source, got: Read) -> list[_Piece]:
    """The records a file is archived as: one, or one per piece of a large file."""
    assert got.data is not None
    spans = file_pieces.cuts(got.data)
    made = []
    for n, (start, end) in enumerate(spans):
        text, raw, found = _piece_text(ctx, got, start, end)
        lines_before = got.data.count(b"\n", 0, start)
        redacted = [(lines_before + line, kind) for line, kind in found]
        part = f"{n + 1}/{len(spans)}" if len(spans) > 1 else ""
        # Named by the text, its place and its file's last commit, never the import's time:
        # a dry run names what the import writes, and two imports of one text agree. Undated
        # itself (a passage of it says its own date), so no passage of it is ever the newest.
        record = archive.new_record(
            source.agent,
            "",
            "import",
            source.rel,
            source.rel,
            text,
            raw,
            part,
            committed=source.committed,
        )
        tokens = ctx.tokens.count_many([got.data[start:end].decode("utf-8", "replace")])[0]
        made.append(_Piece(start, end, record, raw, redacted, tokens))
        if len(spans) > 1:
            record.text, made[-1].raw = "", None
    return made


def _piece_text(
    ctx: Context, got: Read, start: int, end: int
) -> tuple[str, bytes | None, list[tuple[int, str]]]:
    """(text, original bytes when not all UTF-8, (line, kind) of each credential replaced)
    of a piece; lines count from the piece's first.

    Bytes that are not UTF-8 ride through redaction as escapes and come back as they were,
    so the archive keeps them while no credential reaches it; the text is their decoding.
    """
    assert got.data is not None
    data = got.data[start:end]
    original = data.decode("utf-8", "surrogateescape" if got.lossy else "strict")
    text, kinds = ctx.redact(original)
    found = redact.located(original, text) if kinds else []
    if not got.lossy:
        return text, None, found
    raw = text.encode("utf-8", "surrogateescape")
    return archive.decode(raw), raw, found


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
    """The entries an import does not write again: those in cold or the wiki, and those that
    left since (Scribe aged them out, a newer version replaced them, someone forgot them):
    a section the team did not change since the last import is untouched."""
    ids = decisions.promoted_ids(ctx) | _left(ctx)
    for path in files.memory_files(ctx.layout.tier_dir("cold")):
        loaded = store.load(ctx.layout, "cold", path)
        if loaded is not None:
            ids.update(e.id for e in loaded.entries)
    return ids


# What the audit trail says took an entry out of the tiers for good (or into the archive).
_LEFT = frozenset({"expire", "cold-budget", "replace", "forget", "purge", "superseded"})


def _left(ctx: Context) -> set[str]:
    """The ids of entries that left the tiers, as the audit trail names them."""
    found: set[str] = set()
    for line in audit.read(ctx.layout):
        ids = line.get("ids")
        if line.get("action") in _LEFT and isinstance(ids, list):
            found.update(str(i) for i in ids)
    return found


def write(ctx: Context, planned: Plan, progress: bool = False, maintain: bool = True) -> None:
    """Write planned entries (one write per tier file), then apply Scribe's rules (unless
    the caller is Scribe's own run, which applies them next: `maintain=False`)."""
    with working("applying Scribe's rules and indexing", progress):
        _write(ctx, planned, maintain)


def _write(ctx: Context, planned: Plan, maintain: bool = True) -> None:
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
            items = _put_cold(ctx, name, items, planned.replaced)
        planned.written += len(items)
    if planned.records:
        # Even when a crashed import already wrote every entry, Scribe's pass must still run.
        _retire_superseded(ctx, planned)
        if maintain:
            maintenance.run(ctx, merge_inbox=False)
        _file_decisions(ctx, planned)
        _retire_scrubbed(ctx, planned)
        ctx.audit(
            "import",
            [],
            ["archive", "cold", "wiki"],
            "Squad memory imported",
            files=planned.imported,
            entries=sum(len(v) for v in groups.values()),
            records=planned.records,
        )
    ctx.sync()
    if maintain:
        _place(ctx, planned)
        planned.after = tier_totals(ctx)


def _put_cold(
    ctx: Context, agent: str, items: list[Entry], replaced: list[str] | None = None
) -> list[Entry]:
    """Add entries to an agent's cold file; return those written. A standing entry replaces
    the agent's earlier one, and a section's entry the entry of the section's earlier text
    (a section that grew since the last import: `team.sections`), whose text is archived
    first; the same text again is no write."""
    path = ctx.layout.tier_file("cold", agent)
    new = functools.partial(store.blank, "cold", agent)
    written = []
    made_from = sections.Sources(ctx.layout)
    with store.update(ctx.layout, "cold", path, new) as cold:
        for entry in items:
            old = cold.get(entry.id)
            if old is not None and (old.title, old.body) == (entry.title, entry.body):
                continue
            if old is not None:
                _archive_replaced(ctx, agent, [old])
            earlier = sections.replaced_by(entry, cold.entries, made_from.file_of)
            if earlier:
                _archive_replaced(ctx, agent, earlier, "a newer version of its section")
                cold.remove({e.id for e in earlier})
                if replaced is not None:
                    replaced += [e.id for e in earlier]
            cold.put(entry)
            written.append(entry)
    return written


def _archive_replaced(
    ctx: Context, agent: str, old: list[Entry], why: str = "a newer version"
) -> None:
    """The text of entries a newer version replaces, archived before they go (as where
    it is kept, when a record they cite holds it verbatim: `archive.leaving`)."""
    for entry in old:
        record = archive.new_record(
            agent,
            ctx.stamp(),
            "replace",
            f"cold/{agent}.md",
            entry.title,
            archive.leaving(ctx.layout, entry),
            trust=entry.trust,
        )
        archive.write(ctx.layout, record)
    ids = [e.id for e in old]
    ctx.audit("replace", ids, ["cold", "archive"], f"{why} replaced it", agent=agent)


def _retire_superseded(ctx: Context, planned: Plan) -> None:
    """Scribe's supersede step first: the team's decisions this import brought in that a
    newer one supersedes leave its cold tier for the archive, marked "Superseded by ID." (the
    wiki holds only what is current), before the rest of the pass ages them as sessions."""
    supersede.apply(ctx, supersede.pairs(ctx))
    ours = {item.entry.id for item in planned.planned if item.entry.agent == TEAM}
    path = ctx.layout.tier_file("cold", TEAM)
    with store.update_existing(ctx.layout, "cold", path) as cold:
        if cold is None:
            return
        retired = [e for e in cold.entries if e.id in ours and e.status == "superseded"]
        for entry in retired:
            leaving = archive.leaving(ctx.layout, entry)
            marked = f"Superseded by {entry.superseded_by}.\n\n{leaving}"
            record = archive.new_record(
                TEAM,
                ctx.stamp(),
                "superseded",
                f"cold/{TEAM}.md",
                entry.title,
                marked,
                trust=entry.trust,
            )
            archive.write(ctx.layout, record)
        cold.remove({e.id for e in retired})
    if retired:
        ids = [e.id for e in retired]
        ctx.audit("superseded", ids, ["cold", "archive"], "superseded decisions archived")
        for row in planned.rows:
            gone = next((e for e in retired if e.id in row.entries), None)
            row.note = f"superseded by {gone.superseded_by}" if gone else row.note


def _retire_scrubbed(ctx: Context, planned: Plan) -> None:
    """Every copy tiermem keeps of an address Squad scrubbed from the files this import read
    is retired (`scrubbed`); said without the address."""
    if not planned.scrubbed:
        return
    entries, passages = scrubbed.retire(ctx, planned.scrubbed)
    n = len(planned.scrubbed)
    said = f"{n} email address{'' if n == 1 else 'es'}"
    ctx.note(
        f"{said} Squad scrubbed (squad scrub-emails) retired from what tiermem keeps: "
        f"{count(len(entries), 'entry')} and {count(len(passages), 'archived passage')} "
        "that held them, as `forget` retires them"
    )


def _file_decisions(ctx: Context, planned: Plan) -> None:
    """The team's active decisions this import brought in go to the wiki now, those Scribe's
    pass left in cold too: the team recorded them in its decision log or inbox (Scribe's
    wait for a decision to be stable is for what a session decides)."""
    ours = {item.entry.id for item in planned.planned if item.entry.agent == TEAM}
    cold = store.load(ctx.layout, "cold", ctx.layout.tier_file("cold", TEAM))
    chosen = [
        (TEAM, e)
        for e in (cold.entries if cold else [])
        if e.id in ours and is_structured(e.cls) and e.active and not e.trust
    ]
    if chosen:
        skipped: list[str] = []
        wiki.promote(ctx, chosen, skipped)
        for line in skipped:
            ctx.note(line)
        ids = sorted(e.id for _, e in chosen)
        ctx.audit("promote", ids, ["cold", "wiki"], "decisions the team recorded")


def _place(ctx: Context, planned: Plan) -> None:
    """Where each planned entry, and so each section, landed after Scribe's pass."""
    landed: dict[str, tuple[str, str]] = {}
    for tier in LASTING_TIERS:
        for doc in ctx.index.docs(tier=tier):
            landed.setdefault(doc.id, (tier, doc.path))
    planned.landed = {entry_id: tier for entry_id, (tier, _) in landed.items()}
    memory = ctx.layout.relative(ctx.layout.memory) + "/"
    for row in planned.rows:
        spot = next((landed[e] for e in row.entries if e in landed), None)
        row.tier, row.page = spot if spot else ("archive", row.record)
        row.page = row.page.removeprefix(memory)


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
        scratch = ctx.moved(Layout(scratch_root))
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
    """What the import did, as the end-of-import tables show it (a dry run: every section)."""
    return ImportReport(
        dry_run=dry_run,
        files=planned.files,
        unchanged_files=planned.unchanged,
        skipped=planned.skipped,
        entries_written=planned.written,
        classes=planned.classes(),
        before=Totals(planned.files, planned.before_bytes, planned.before_tokens),
        after=planned.after,
        redacted=planned.redacted,
        sections=planned.rows if dry_run else [],
    )
