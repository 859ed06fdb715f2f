"""Forgetting: retire a wrong or stale entry from every tier; purge the one text that must go.

`forget` takes an entry id as search and spawn give it (a part of a long entry takes the
whole entry with it), archives the entry's text unless the archive already holds it, takes
the entry out of every tier file it is in (hot, cold, wiki and Scribe's queue) and audits
the act. Nothing is lost: search still finds the text in the archive. Given a passage of
archived text (`a-...`, `a-...#3`, as search and spawns show it), `forget` retires that
passage (its whole section): the record keeps every byte, and a line of the ledger of
retired passages (`storage.retired`) names the passage, which no search or spawn serves
again. Every retirement is audited before it is made (a kill in between leaves an intent
audited, never a retirement unaudited). A search for a forgotten id says when it was
forgotten and why (`search.hits.forgotten`).

`purge` is the one deletion, for a credential that slipped through redaction. It takes
every copy tiermem made: the entry leaves every tier unarchived, and so do the versions of it
that lost a merge conflict (never archived now, and the ones archived before are taken out
of their records); every line of an archive record, or of a file `doctor --repair` set aside
in `damaged/`, that holds a line or a sentence of any version's text is replaced by a
marker; a record keeps its id and file name (the sources that cite it stay valid) and its
header names the purge. A spawn task, a reason in the audit trail or a tombstone that quotes
the text loses what it quotes (a long word of it, or a line), and so does the purge's own
reason. The index is rebuilt from the files, so no copy of the text survives in its pages. A
tombstone record and an audit line say what was purged, when and why, without the text.
Other entries that hold some of the text, and Squad's own files that do, are named, never
edited.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..context import Context
from ..errors import NotFoundError, ParseError, TiermemError, UsageError
from ..index.protocol import Doc
from ..results.upkeep import ForgetReport
from ..spawn import log as spawn_log
from ..storage import archive, audit, files, governed, retired, safepath, store
from ..storage.entries import Entry, escape_value, render_entry
from ..storage.layout import TEAM
from ..vocabulary import FILE_FOLDERS

# A purge finds the archive records that hold the text by its lines and sentences of at
# least PIECE_MIN_CHARS characters: shorter ones ("Done.", "## Notes") are too common to say
# that two texts are one. In those records, and in the records the entry names as its
# sources, every line holding any piece of SHORT_PIECE_CHARS or more goes.
PIECE_MIN_CHARS = 16
SHORT_PIECE_CHARS = 6
_LEADING_MARKS = re.compile(r"^(?:[#>*+\-|\s]|\d+[.)]\s|\[[ xX]\]\s)+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_LABEL = re.compile(r"^[A-Z][A-Za-z ]{0,20}:\s+")
DAMAGED = "damaged"  # where `doctor --repair` sets damaged records aside


@dataclass
class _Found:
    """The entries of one tier file that go, and the versions of them a merge left there."""

    tier: str
    path: Path
    entries: list[Entry]
    lost: list[Entry]


def forget(ctx: Context, target: str, reason: str, purge: bool) -> ForgetReport:
    """Retire an entry from every tier (archived first); with `purge`, delete its text."""
    reason, kinds = ctx.clean(reason, "reason") if reason.strip() else ("", [])
    archived = bool(archive.RECORD_ID.fullmatch(target.split("#")[0]))
    _require(ctx, target, archived, purge)
    ctx.sync()
    if not archived:
        report = _retire(ctx, target, reason, purge)
    elif purge:
        report = _purge_archived(ctx, target, reason)
    else:
        report = _retire_archived(ctx, target, reason)
    ctx.audit_redactions(kinds, "audit")
    ctx.sync()
    return report


def _retire(ctx: Context, target: str, reason: str, purge: bool) -> ForgetReport:
    """Take an entry out of every tier file; its text archived first, or purged after."""
    found = _locate(ctx, _group(ctx, target))
    if not found:
        raise NotFoundError(f"no entry {target} in hot, cold, the wiki or Scribe's queue")
    gone = [e for f in found for e in f.entries]
    report = ForgetReport(target, sorted({e.id for e in gone}), purged=purge)
    report.files = sorted({ctx.layout.relative(f.path) for f in found})
    tiers = sorted({f.tier for f in found})
    if purge:
        lost = [e for f in found for e in f.lost]
        _remove(ctx, found, keep_lost=False)  # a loser archived now would be one more copy
        sources = [s for e in (*gone, *lost) for s in e.sources]
        texts = [e.text for e in (*gone, *lost)]
        _purge_text(ctx, report, texts, reason, tiers, sources)
        return report
    report.archived = _keep(ctx, gone, report.files)
    # Audited before the entry leaves its tiers (see `_retire_archived`).
    ctx.audit("forget", report.ids, tiers, reason or "retired", record=report.archived)
    _remove(ctx, found)
    return report


# --- finding the entry ------------------------------------------------------------------


def _require(ctx: Context, target: str, archived: bool, purge: bool) -> None:
    """Refuse, before the index is brought up to date (which writes), an id that no tier
    file and no archive record holds, a passage retired already, and one of Squad's governed
    memories (Squad's file, which tiermem never changes); `_retire` and `_purge_archived`
    say it otherwise."""
    squads = governed.holding(ctx.layout, target)
    if squads:
        raise UsageError(
            f"{target} is Squad's governed memory ({squads}), which tiermem reads and never "
            f"changes: `squad memory delete {target}` takes it out (nothing was written)"
        )
    if archived:
        if not _record_of(ctx, target, retiring=not purge):
            raise NotFoundError(f"no archived text {target} (or it was forgotten before)")
    elif not _mentioned(ctx, target):
        raise NotFoundError(f"no entry {target} in hot, cold, the wiki or Scribe's queue")


def _record_of(ctx: Context, target: str, retiring: bool) -> bool:
    """Whether the archive holds a record (`a-...`), or a section of one (`a-...#3`; the
    first section's id is the record's own), and, `retiring`, one not retired yet."""
    record_id, _, section = target.partition("#")
    for folder in archive.records_folders(ctx.layout):
        if files.is_file(folder / f"{record_id}.md"):
            record = archive.read(ctx.layout, folder.name, record_id)
            chunk = int(section or 0)
            gone = record.retired_chunks() | retired.load(ctx.layout).get(record_id, set())
            within = not section or 0 < chunk < len(archive.chunks(record.text))
            return within and not (retiring and chunk in gone)
    return False


def _mentioned(ctx: Context, target: str) -> bool:
    """Whether a tier file names the id: as an entry's, or as the entry a part is of."""
    written = escape_value(target)
    for tier in FILE_FOLDERS:
        for path in sorted(ctx.layout.tier_dir(tier).glob("*.md")):
            text = "" if files.is_temp(path) else files.read_text(ctx.layout, path) or ""
            if f"id={written} " in text or f"parent={written}" in text:
                return True
    return False


def _group(ctx: Context, target: str) -> set[str]:
    """The ids that go together: an entry, or every part of the long entry a part is of."""
    docs = [d for d in ctx.index.by_ids([target]) if d.tier != "archive"]
    whole = next((d.parent for d in docs if d.parent), target)
    parts = [d for d in ctx.index.parts(whole) if d.tier != "archive"]
    return {target, whole, *(d.id for d in parts)}


def _locate(ctx: Context, ids: set[str]) -> list[_Found]:
    """Every tier file holding one of the ids, and those entries (the queue is not indexed,
    so every tier folder is read)."""
    found = []
    for tier in FILE_FOLDERS:
        for path in sorted(ctx.layout.tier_dir(tier).glob("*.md")):
            if files.is_temp(path):
                continue
            text = files.read_text(ctx.layout, path) or ""
            if not any(f"id={i} " in text for i in ids):
                continue  # a cheap test first: most files hold none of them
            loaded = store.load(ctx.layout, tier, path)
            if loaded is None:
                continue
            entries = [e for e in loaded.entries if e.id in ids]
            lost = [c.lost for c in loaded.conflicts if c.id in ids and c.lost is not None]
            if entries:
                found.append(_Found(tier, path, entries, lost))
    return found


# --- forgetting -------------------------------------------------------------------------


def _keep(ctx: Context, gone: list[Entry], where: list[str]) -> str:
    """The archive record that holds the entries' text: a source of theirs, else a new one."""
    for location in _held_by_sources(ctx, gone):
        return location
    first = gone[0]
    text = "\n".join(render_entry(e) for e in gone)
    record = archive.new_record(
        first.agent or TEAM,
        ctx.stamp(),
        "forgotten",
        ", ".join(where),
        first.title,
        text,
        trust=archive.trust_of(gone),
    )
    archive.write(ctx.layout, record)
    return record.location


def _held_by_sources(ctx: Context, gone: list[Entry]) -> list[str]:
    """Source records that already hold every entry's text (its body, else its title), and
    its untrusted mark where it has one (a record made before records carried it does not)."""
    texts = [e.body or e.title for e in gone]
    trust = archive.trust_of(gone)
    for location in dict.fromkeys(s.split("#")[0] for e in gone for s in e.sources):
        record = _record_at(ctx, location)
        if record is None or (trust and not record.trust):
            continue
        if all(t in record.text for t in texts):
            return [location]
    return []


def _record_at(ctx: Context, location: str) -> archive.Record | None:
    parts = location.split("/")
    if len(parts) != 3 or parts[0] != "archive" or not parts[2].endswith(".md"):
        return None
    try:  # the agent and the id are checked as names: a cited location leads nowhere else
        return archive.read(ctx.layout, parts[1], parts[2].removesuffix(".md"))
    except (OSError, TiermemError):
        return None


def _remove(ctx: Context, found: list[_Found], keep_lost: bool = True) -> None:
    for item in found:
        ids = {e.id for e in item.entries}
        with store.update_existing(ctx.layout, item.tier, item.path) as tier_file:
            if tier_file is not None:
                tier_file.remove(ids)
                if not keep_lost:
                    tier_file.conflicts = [c for c in tier_file.conflicts if c.id not in ids]


# --- purging ----------------------------------------------------------------------------


def pieces(texts: list[str], shortest: int = PIECE_MIN_CHARS) -> list[str]:
    """The lines and sentences of texts that a purge looks for, longest first."""
    found: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            core = _LEADING_MARKS.sub("", line).strip()
            candidates = [core, _LABEL.sub("", core)]
            candidates += [p.strip() for p in _SENTENCE_END.split(core)]
            candidates += [_LABEL.sub("", p.strip()) for p in core.split("; ")]
            found.update(c for c in candidates if len(c) >= shortest)
    return sorted(found, key=lambda p: (-len(p), p))


def _purge_archived(ctx: Context, target: str, reason: str) -> ForgetReport:
    """Purge archived text itself: a record, or one section of it (`a-...#3`)."""
    record_id = target.split("#")[0]
    docs = ctx.index.by_ids([target]) + ctx.index.parts(target)
    docs = [d for d in docs if d.tier == "archive"]
    if not docs:
        raise NotFoundError(f"no archived text {target}")
    if "#" in target or any(d.parent for d in docs):
        texts = [d.text for d in docs]
    else:
        texts = [archive.read(ctx.layout, docs[0].agent, record_id).text]
    report = ForgetReport(target, [target], purged=True)
    _purge_text(ctx, report, texts, reason, ["archive"], [_location(docs[0])])
    return report


def _retire_archived(ctx: Context, target: str, reason: str) -> ForgetReport:
    """Retire a passage of archived text from search and spawns (its whole section), its
    bytes kept."""
    docs = [d for d in ctx.index.by_ids([target]) + ctx.index.parts(target) if d.tier == "archive"]
    if not docs:
        raise NotFoundError(f"no archived text {target} (or it was forgotten before)")
    record_id = target.split("#")[0]
    chunks = {int(d.id.partition("#")[2] or 0) for d in docs}
    report = ForgetReport(target, sorted(d.id for d in docs))
    report.archived = _location(docs[0])
    # The audit line first, as the intent: a kill between the two leaves a retirement
    # audited and not made (done again by the next `forget`), never one made unaudited.
    ctx.audit("forget", report.ids, ["archive"], reason or "retired", record=report.archived)
    retired.add(ctx.layout, record_id, chunks, ctx.stamp()[:10])
    return report


@dataclass
class _Purge:
    """What a purge looks for, and the marker it leaves."""

    texts: list[str]  # every version of the text that goes
    ids: set[str]  # the entries that go (their rendered copies in records go whole)
    marker: str

    @functools.cached_property
    def wanted(self) -> list[str]:
        return pieces(self.texts)

    @functools.cached_property
    def needles(self) -> list[bytes]:
        """The long pieces, and the metadata of a rendered copy of a purged entry."""
        found = [p.encode("utf-8") for p in self.wanted]
        return found + [f"tiermem id={i} ".encode() for i in sorted(self.ids)]

    @functools.cached_property
    def short(self) -> list[str]:
        return pieces(self.texts, SHORT_PIECE_CHARS)

    def unquoted(self, text: str) -> str:
        """Text someone wrote about the purged one (a reason, a task) without what it
        quotes: each line or sentence of it, and each long word of it."""
        for piece in self.wanted:
            text = text.replace(piece, "[purged]")
        return quoted_words(text, self.texts)


def _location(doc: Doc) -> str:
    return f"archive/{doc.agent}/{doc.id.split('#')[0]}.md"


def _purge_text(
    ctx: Context,
    report: ForgetReport,
    texts: list[str],
    reason: str,
    tiers: list[str],
    sources: list[str],
) -> None:
    """Take the texts out of every archive record, the files set aside in `damaged/`, the
    spawn log and the reasons of the audit trail; rebuild the index."""
    ids = set(report.ids)
    texts = texts + _archived_versions(ctx, ids)
    purge = _Purge(texts, ids, f"[purged: {report.id} on {ctx.stamp()[:10]}]")
    related = {s.split("#")[0] for s in sources}
    for path in archive.records(ctx.layout):
        location = ctx.layout.relative(path).removeprefix(".squad/memory/")
        if _scrub(ctx, path, purge, location in related):
            report.records.append(location)
    report.records += _scrub_damaged(ctx, purge)
    _scrub_spawn_log(ctx, purge)
    reason = purge.unquoted(reason)
    audit.scrub(ctx.layout, purge.unquoted)
    report.tombstone = _tombstone(ctx, report, reason)
    ctx.index.rebuild(scrub=True)  # deleted text would linger in the index's own files
    wanted = purge.wanted
    report.still_in = _still_in(ctx, wanted)
    report.elsewhere = _elsewhere(ctx, wanted)
    ctx.audit(
        "purge",
        report.ids,
        sorted({*tiers, "archive"}),
        reason or "purged",
        records=report.records,
        tombstone=report.tombstone,
    )


def _scrub(ctx: Context, path: Path, purge: _Purge, related: bool) -> bool:
    """Replace the lines of a record that hold the text; whether it was rewritten.

    A record is read when it names the entry's text in a long piece, holds a rendered copy
    of a purged entry (a merge's loser, a forgotten entry), is one of the entry's sources, or
    is a tombstone (whose reason may quote the text); then every line holding a piece of any
    length goes, and with it every copy of a purged entry and every word a reason quotes.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if not (related or _names(data, purge) or b"kind=tombstone " in data[:400]):
        return False
    try:
        record = archive.parse(data, path)
    except ParseError:
        record = _damaged(data, path)
    text, removed = _without(_without_copies(record.text, purge), purge.short, purge.marker)
    if record.kind == "tombstone":
        text = purge.unquoted(text)
    if text == record.text:
        return False
    short = purge.short
    title = "[purged]" if _holds(record.title, removed, short) else purge.unquoted(record.title)
    purged = purge.marker.strip("[]").removeprefix("purged: ")
    archive.rewrite(ctx.layout, replace(record, text=text, title=title), purged)
    return True


def _names(data: bytes, purge: _Purge) -> bool:
    """Whether bytes hold a long piece of the text, or a rendered copy of a purged entry."""
    return any(needle in data for needle in purge.needles)


_ENTRY_HEAD = re.compile(r"^#{1,6} [^\n]*\n<!-- tiermem id=(\S+) ", re.MULTILINE)


def _copies(text: str, ids: set[str]) -> list[tuple[int, int]]:
    """(start, end) of each rendered copy of a purged entry in a text: from its heading to
    the next entry's heading, or the end."""
    heads = list(_ENTRY_HEAD.finditer(text))
    ends = [h.start() for h in heads[1:]] + [len(text)] if heads else []
    return [(h.start(), end) for h, end in zip(heads, ends, strict=True) if h.group(1) in ids]


def _without_copies(text: str, purge: _Purge) -> str:
    """A text with every rendered copy of a purged entry replaced by the marker."""
    for start, end in reversed(_copies(text, purge.ids)):
        text = text[:start] + purge.marker + "\n" + text[end:].lstrip("\n")
    return text


def _archived_versions(ctx: Context, ids: set[str]) -> list[str]:
    """The text of every copy of a purged entry the archive holds (a merge's losers archived
    before the purge may say more than the version that won)."""
    found = []
    for path in archive.records(ctx.layout):
        with contextlib.suppress(OSError):
            data = path.read_bytes()
            if any(f"tiermem id={i} ".encode() in data for i in ids):
                text = data.decode("utf-8", "replace")
                found += [text[start:end] for start, end in _copies(text, ids)]
    return found


def _scrub_damaged(ctx: Context, purge: _Purge) -> list[str]:
    """Files `doctor --repair` set aside (records a merge wrote into) lose the text too."""
    base = ctx.layout.memory / DAMAGED
    changed = []
    for top, _, names in os.walk(base, followlinks=False):
        for name in sorted(names):
            path = Path(top, name)
            if safepath.kind(path) == "file" and _scrub_aside(ctx, path, purge):
                changed.append(ctx.layout.relative(path).removeprefix(".squad/memory/"))
    return changed


def _scrub_aside(ctx: Context, path: Path, purge: _Purge) -> bool:
    try:
        data = files.read_bytes(path) or b""
    except (OSError, TiermemError):
        return False
    if not _names(data, purge):
        return False
    text = _without_copies(data.decode("utf-8", "replace"), purge)
    text, _ = _without(text, purge.short, purge.marker)
    files.atomic_write(path, text)
    return True


def _damaged(data: bytes, path: Path) -> archive.Record:
    """A record whose size or hash no longer match: its header fields and text as they are."""
    fields = archive.header(path)
    text = data.split(b"\n", 1)[1].decode("utf-8", "replace") if b"\n" in data else ""
    return archive.from_fields(fields, path, text)


def _without(text: str, wanted: list[str], marker: str) -> tuple[str, list[str]]:
    """The text with every line holding a piece replaced (a run of them by one marker)."""
    kept: list[str] = []
    removed: list[str] = []
    for line in text.split("\n"):
        if any(p in line for p in wanted):
            removed.append(line)
            if not kept or kept[-1] != marker:
                kept.append(marker)
        else:
            kept.append(line)
    return "\n".join(kept), removed


def _holds(title: str, removed: list[str], wanted: list[str]) -> bool:
    """Whether a record's title (a line of its text, cut to 200 characters) held the text."""
    flat = " ".join(title.split())
    if not flat:
        return False
    return any(p in flat for p in wanted) or any(flat in " ".join(r.split()) for r in removed)


def _scrub_spawn_log(ctx: Context, purge: _Purge) -> None:
    """A spawn's task, and the engine's reasons for what it loaded, can quote the text: they
    are replaced in the log (a log that cannot be read holds no task tiermem could have
    written)."""
    path = spawn_log.path_of(ctx.layout)
    with files.locked(ctx.layout, path):
        try:
            data = files.read_bytes(path)
        except TiermemError:
            return
        if data is None:
            return
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        changed = [_scrub_line(line, purge) for line in lines]
        if changed != lines:
            files.atomic_write(path, "".join(changed))


def _scrub_line(line: str, purge: _Purge) -> str:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return "" if purge.unquoted(line) != line else line  # a torn line, no spawn's
    if not isinstance(data, dict):
        return line
    task, why = data.get("task"), data.get("why")
    quoted = isinstance(task, str) and purge.unquoted(task) != task
    if quoted:
        data["task"] = "[purged]"
    if isinstance(why, dict):  # the engine's reasons quote the task's words and headings
        scrubbed = {
            k: "[purged]" if isinstance(v, str) and purge.unquoted(v) != v else v
            for k, v in why.items()
        }
        quoted = quoted or scrubbed != why
        data["why"] = scrubbed
    if not quoted:
        return line
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


# A word of a reason or a task that quotes the purged text: long, or a password's make-up.
_WORD = re.compile(r"[^\s=:/,;\"'`()\[\]{}<>]+")
_EDGES = ".!?*_-"


def quoted_words(text: str, purged: list[str]) -> str:
    """`text` with each word it quotes from the purged texts replaced by `[purged]`: a word
    of 8 characters or more, or of 6 or more that mixes letters with digits or symbols
    (shorter words, and everyday ones, say nothing about a secret)."""
    haystack = "\n".join(purged).lower()

    def swap(match: re.Match[str]) -> str:
        word = match.group().strip(_EDGES)
        if _distinctive(word) and word.lower() in haystack:
            return match.group().replace(word, "[purged]")
        return match.group()

    return _WORD.sub(swap, text)


def _distinctive(word: str) -> bool:
    if len(word) >= 8:
        return True
    mixed = any(c.isalpha() for c in word) and not word.isalpha()
    return len(word) >= 6 and mixed


def _tombstone(ctx: Context, report: ForgetReport, reason: str) -> str:
    """A record saying what was purged, when and why, without the text."""
    lines = [
        f"Purged {report.id} ({', '.join(report.ids)}) on {ctx.stamp()}.",
        f"Reason: {reason or '(none given)'}",
        f"Tier files it left: {', '.join(report.files) or '(none: archived text only)'}",
        f"Archive records rewritten: {', '.join(report.records) or '(none)'}",
    ]
    text = "\n".join(lines) + "\n"
    record = archive.new_record(TEAM, ctx.stamp(), "tombstone", "forget --purge", report.id, text)
    archive.write(ctx.layout, record)
    return record.location


def _still_in(ctx: Context, wanted: list[str]) -> list[str]:
    """Entries still holding a piece of the purged text (Scribe's queue too: not indexed)."""
    texts = [(d.id, d.text) for d in ctx.index.docs() if d.tier != "archive"]
    for path in sorted(ctx.layout.tier_dir("queue").glob("*.md")):
        queue = None if files.is_temp(path) else store.load(ctx.layout, "queue", path)
        texts += [(e.id, e.text) for e in queue.entries] if queue else []
    return sorted({i for i, text in texts if any(p in text for p in wanted)})


def _elsewhere(ctx: Context, wanted: list[str]) -> list[str]:
    """Files of `.squad/` outside the store (Squad's own) that hold a piece of the text."""
    found = []
    for path in _squad_files(ctx):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if any(p.encode("utf-8") in data for p in wanted):
            found.append(ctx.layout.relative(path))
    return found


def _squad_files(ctx: Context) -> list[Path]:
    """Every file under `.squad/` but the store, and Squad's governed memory inside it
    (links are neither followed nor read)."""
    found: list[Path] = []
    for top in sorted(ctx.layout.squad.iterdir()):
        if top == ctx.layout.memory or top.is_symlink():
            continue
        found += [top] if top.is_file() else sorted(top.rglob("*"))
    for folder in governed.folders(ctx.layout):
        if folder.is_relative_to(ctx.layout.memory) and files.is_folder(folder):
            found += files.memory_files(folder)
    return [p for p in found if p.is_file() and not p.is_symlink()]
