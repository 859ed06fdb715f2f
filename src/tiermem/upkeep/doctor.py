"""`tiermem doctor`: what a merge or a crash left in a store, and the repairs that are safe.

What it looks at, and what matters:

- links and wrong types: a symbolic link anywhere under `.squad/` is never followed (so what
  it points at is never read); a store's own folder or file of the wrong type stops every
  command. Links in place of the index or the lock folder are removed and the folder made
  again (both are caches); other links need a person (tiermem cannot know what they meant).
- names: a tier file or archive folder whose name is no agent's or topic's is never read.
- temp files (`.tmp-*`): one older than `files.STALE_TEMP_SECONDS` is a write killed long
  ago and is removed; a newer one is a write in progress and is left alone.
- tier files: one that does not parse is named with its line (never rewritten); one with an
  id twice (a union merge), or read mended (`entries.parse`: an id that breaks the id rule,
  an author that is no agent's name, an entry's metadata line or a second file header a merge
  left inside a text), is rewritten as it was read, the losing version archived first and a
  renamed id's old one kept in the audit. A hot tier holding two clones' sessions is a note:
  the hot view and the session end keep them apart.
- archive records: one that fails its size and hash (a merge wrote into it) is moved aside
  to `damaged/` and its text archived again as a new record, which the entries that cited
  the old one now cite; an entry citing a record that is not there is named (its own text
  remains; the raw text it was made from is gone). One git left with conflict markers is
  never archived with them: where both versions hold the same text (two clones retired
  passages in its header, as tiermem did before the ledger of retired passages) it is
  written back as archived and the passages both retired go to the ledger; otherwise each
  version's text is archived again (only a purged one, where a purge took text out); markers
  that do not pair are refused, for a person to resolve.
- the index: a link, a folder, a file that is no database, another schema, an index not
  sealed by this clone (committed, copied, or changed since), objects tiermem never makes
  (a trigger, a view, another table), a log left beside it, or rows that differ from the
  files (each file parsed and compared) is rebuilt (a folder is moved aside first).
- git: the index, this clone's local state or its spawn log tracked by git (every clone
  would get them) is named with the command that stops it; this clone's state where an
  earlier tiermem kept it, in Squad's `local/` (with a rule that made git ignore Squad's
  governed memory there), is moved to `tiermem-local/`; a `.gitignore` of the store that
  lacks lines `tiermem init` writes is a note, and the lines are added.
- Squad's governed memory (`local/`, `policy-inbox/`, `semantic-inbox/`, the decision inbox)
  is counted as the index reads it and never changed; a file there tiermem cannot read as
  one is a note. Squad's `tombstones/`, `config.json`, `index.json` and `audit.jsonl` are
  Squad's alone: never looked into.
- days of use: a line of the team's use ledger (`last-use.txt`) or of this clone's record
  whose day is no date (`2026-99-99`), or after today and the repository's latest commit
  (`9999-12-31`), is named; ageing ignores it, and --repair drops the line.
- notes, not problems: text queued for Scribe, a write in progress, an index not built yet.
  Records that no entry cites are fine: the archive keeps every raw text, cited or not.

Exit status 1 while a problem remains.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..context import Context
from ..errors import ParseError, StoreError, TiermemError, UnsafePathError, UsageError
from ..results.upkeep import DoctorReport, Finding
from ..storage import archive, entries, files, governed, safepath, store, validate
from ..storage.layout import TEAM, Layout
from ..vocabulary import FILE_FOLDERS, LASTING_TIERS, TIERS

DAMAGED = "damaged"
_SOURCE = re.compile(r"archive/([^/#]+)/([^/#]+)\.md(#.*)?")


class _Doctor:
    """One examination of a store: the findings, and the repairs when asked."""

    def __init__(self, ctx: Context, repair: bool) -> None:
        self.ctx = ctx
        self.layout = ctx.layout
        self.report = DoctorReport(repair=repair)
        self.moved: dict[str, str] = {}  # old record location -> the recovered record's

    # --- saying -----------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        return self.layout.relative(path)

    def found(self, kind: str, path: Path | str, problem: str, serious: bool = True) -> Finding:
        shown = path if isinstance(path, str) else self.rel(path)
        finding = Finding(kind, shown, problem, serious)
        self.report.findings.append(finding)
        return finding

    def repair(self, finding: Finding, action: Callable[[], str]) -> None:
        """Run a repair when asked; a repair that fails is said, and the problem stays."""
        if not self.report.repair:
            return
        try:
            finding.repaired = action()
        except (TiermemError, OSError, sqlite3.Error) as exc:
            finding.problem += f" (not repaired: {exc})"

    def count(self, what: str, n: int = 1) -> None:
        self.report.checked[what] = self.report.checked.get(what, 0) + n

    # --- the examination ----------------------------------------------------------------

    def run(self) -> DoctorReport:
        if not self.structure():
            return self.report
        self.clone_key()  # a cache, like the index: a link there is removed before the walk
        self.links(self.layout.squad)
        self.temps()
        self.tier_files()
        self.records()
        self.citations()
        self.sections()
        self.queues()
        self.squads()
        self.use_days()
        self.config()
        self.index()
        self.git()
        return self.report

    def structure(self) -> bool:
        """The store's own folders and files; False when the rest cannot be examined safely."""
        for path in (self.layout.squad, self.layout.memory):
            kind = safepath.kind(path)
            if kind == "missing":
                self.found("store", path, "no tiermem store here; run `tiermem init`")
                return False
            if kind != "folder":
                self.found("link" if kind == "link" else "store", path, _not_folder(kind))
                return False
        sound = True
        for name in (*files.STORE_FOLDERS, *files.store_files(self.layout)):
            sound &= self.store_path(self.layout.memory / name, name)
        return sound

    def store_path(self, path: Path, name: str) -> bool:
        wanted = "folder" if name in files.STORE_FOLDERS else "file"
        kind = safepath.kind(path)
        if kind in ("missing", wanted):
            return True
        problem = _not_folder(kind) if wanted == "folder" else _not_file(kind)
        finding = self.found("link" if kind == "link" else "store", path, problem)
        if name == ".locks" or name in files.index_files(self.layout):
            self.repair(finding, lambda: _clear_cache_path(path, kind))
            return bool(finding.repaired)
        finding.problem += "; remove or replace it by hand (tiermem cannot tell what it meant)"
        return False

    def links(self, folder: Path) -> None:
        """Every link under `.squad/`: never followed, so never read; one named already (in
        place of the clone key) is not named twice."""
        named = {f.path for f in self.report.findings}
        for top, dirs, names in os.walk(folder, followlinks=False):
            for name in [*dirs, *names]:
                path = Path(top) / name
                if path.is_symlink():
                    self.count("links")
                    if self.rel(path) in named:
                        continue
                    self.found(
                        "link",
                        path,
                        "is a symbolic link; tiermem never follows it, so what it points at "
                        "is never read (remove it, or put the file itself here)",
                    )

    def temps(self) -> None:
        """Temp files of writes killed long ago (removed) or in progress (left alone)."""
        now = time.time()
        for top, _, names in os.walk(self.layout.memory, followlinks=False):
            for name in names:
                if not name.startswith(files.TEMP_PREFIX):
                    continue
                path = Path(top) / name
                self.count("temp files")
                try:
                    age = now - os.lstat(path).st_mtime
                except FileNotFoundError:
                    continue
                if age <= files.STALE_TEMP_SECONDS:
                    self.found("temp", path, "a write in progress (left alone)", serious=False)
                    continue
                finding = self.found(
                    "temp", path, f"a temp file left by a write killed {_age(age)} ago"
                )
                self.repair(finding, functools.partial(_remove, path))

    def tier_files(self) -> None:
        for tier in FILE_FOLDERS:
            try:
                items = files.listing(self.layout.tier_dir(tier))
            except ParseError as exc:
                self.found("store", self.layout.tier_dir(tier), exc.reason)
                continue
            for item in items:
                if item.name.endswith(".md") and item.kind == "file":
                    self.tier_file(tier, item.path)

    def tier_file(self, tier: str, path: Path) -> None:
        self.count("tier files")
        stem = path.stem
        try:
            validate.name(stem, "topic") if tier == "wiki" else validate.owner(stem)
        except UsageError as exc:
            self.found("name", path, f"never read: {exc}")
            return
        try:
            data = files.read_bytes(path) or b""
            loaded = store.parse(tier, path, data)
        except ParseError as exc:
            self.found(
                "file",
                path,
                f"line {exc.line}: {exc.reason}; tiermem never rewrites it: fix it by hand",
            )
            return
        twice = _ids_twice(data.decode("utf-8"), loaded)
        problems = _misread(twice, loaded)
        if problems:
            kind = "ids" if twice else "malformed"
            finding = self.found(kind, path, "; ".join(problems))
            self.repair(finding, lambda: self.fold(tier, path, loaded))
        elif tier == "hot":
            self.sessions(path, loaded)

    def fold(self, tier: str, path: Path, loaded: entries.TierFile) -> str:
        renamed = _renamed(loaded)
        if renamed:
            # The audit line first, as the intent: a kill before the rewrite leaves ids
            # audited and not renamed yet (the next repair renames them, to the same ids),
            # never ids renamed unaudited.
            was = {new: self.ctx.redact(old)[0] for new, old in renamed.items()}
            self.ctx.audit("rename", list(renamed), [tier], "ids that break the id rule", was=was)
        kept = store.rewrite(self.layout, tier, path)
        said = f"rewritten well-formed, each id once; {kept} losing version(s) archived"
        if renamed:
            said += f"; {len(renamed)} id(s) renamed (the old ones, percent-encoded, in the audit)"
        return said

    def sessions(self, path: Path, loaded: entries.TierFile) -> None:
        """A hot tier holding two clones' sessions, merged: said, not a problem (the hot view
        and the session end keep them apart)."""
        found = sorted({e.session for e in loaded.entries if e.session})
        if len(found) > 1:
            problem = (
                f"holds {len(found)} sessions merged from clones ({', '.join(found)}); "
                "`hot show` shows each, and the session end summarises each"
            )
            self.found("sessions", path, problem, serious=False)

    def records(self) -> None:
        base = self.layout.tier_dir("archive")
        try:
            folders = files.listing(base)
        except ParseError as exc:
            self.found("store", base, exc.reason)
            return
        for folder in folders:
            if folder.kind != "folder":
                continue
            try:
                validate.owner(folder.name)
            except UsageError as exc:
                self.found("name", folder.path, f"never read: {exc}")
                continue
            for path in files.memory_files(folder.path):
                self.record(folder.name, path)

    def record(self, agent: str, path: Path) -> None:
        self.count("archive records")
        data = files.read_bytes(path) or b""
        try:
            archive.parse(data, path)
            return
        except ParseError as exc:
            reason = exc.reason
        if archive.has_markers(data):
            reason = (
                "holds git's conflict markers: a merge found two versions of it (as when clones "
                "of an earlier tiermem retired passages in its header)"
            )
        finding = self.found("archive", path, reason)
        self.repair(finding, lambda: self.recover(agent, path, data))

    def recover(self, agent: str, path: Path, data: bytes) -> str:
        """Mend a damaged record. One git left in conflict over its header only is written
        back whole, the passages either side retired moved to the ledger; any other is moved
        aside and its text archived again (each version's, for a conflict: git's markers
        are never archived as text). Markers that do not pair are refused: the record stays
        as it is, for a person to resolve."""
        sides = archive.conflict_sides(data)
        if sides is None and archive.has_markers(data):
            raise StoreError(
                "its git conflict markers do not pair; resolve it by hand "
                "(`git checkout --ours` or `--theirs` on it), then run doctor again"
            )
        if sides is not None:
            mended = self.resolve(path, sides)
            if mended:
                return mended
        versions = _kept_versions(sides) if sides is not None else [data]
        aside = self.layout.memory / DAMAGED / "archive" / agent / path.name
        old = f"archive/{agent}/{path.name}"
        said = [f"moved to {self.rel(aside)}"]
        for version in versions:
            record = self.archive_again(agent, path, version)
            if record is None:
                said.append("its text is not readable as UTF-8, kept there as it was")
                continue
            self.moved.setdefault(old, record.location)
            said.append(f"its text archived again as {record.location}")
        files.move(path, aside)
        return "; ".join(said)

    def resolve(self, path: Path, sides: tuple[bytes, bytes]) -> str:
        """A record both of whose versions hold the same text (a merge of two retirements
        written into its header): written back as archived, the retirements to the ledger
        first (a kill in between leaves the conflict for the next run). "" otherwise."""
        from ..storage import retired

        try:
            ours, theirs = (archive.parse(side, path) for side in sides)
        except ParseError:
            return ""
        if (ours.id, ours.text) != (theirs.id, theirs.text):
            return ""
        chunks = ours.retired_chunks() | theirs.retired_chunks()
        if chunks:
            retired.add(self.layout, ours.id, chunks, self.ctx.stamp()[:10])
        files.atomic_write(path, archive.without_retired(ours, sides[0]))
        moved = ", ".join(f"#{n}" for n in sorted(chunks)) or "none"
        return f"written back as archived; its retired passages ({moved}) in {retired.NAME}"

    def archive_again(self, agent: str, path: Path, data: bytes) -> archive.Record | None:
        """The text of a damaged record (after its header, when it has one) archived as a new
        record, with the header's trust; None when it is not text."""
        newline = data.find(b"\n")
        has_header = data.startswith(b"<!-- tiermem-archive ") and newline >= 0
        raw = data[newline + 1 :] if has_header else data
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if not text.strip():
            return None
        header = _header_fields(data[:newline] if has_header else b"")
        record = archive.new_record(
            agent,
            self.ctx.stamp(),
            "recovered",
            f"archive/{agent}/{path.name}",
            f"recovered from {path.stem}: {header.get('title', '')}".strip(": "),
            text,
            trust=header.get("trust", ""),
        )
        archive.write(self.layout, record)
        return record

    def citations(self) -> None:
        """Entries citing records: moved ones are pointed at their recovered record; missing
        ones are named."""
        for tier in FILE_FOLDERS:
            for path in _readable_files(self.layout.tier_dir(tier)):
                self.cited_by(tier, path)

    def cited_by(self, tier: str, path: Path) -> None:
        try:
            loaded = store.load(self.layout, tier, path)
        except ParseError:
            return  # said already
        if loaded is None:
            return
        moved = False
        for entry in loaded.entries:
            for source in entry.sources:
                match = _SOURCE.fullmatch(source)
                if match is None or not source.startswith("archive/"):
                    continue
                self.count("citations")
                location = f"archive/{match.group(1)}/{match.group(2)}.md"
                if location in self.moved:
                    moved = True
                elif not self.cites_something(match.group(1), match.group(2)):
                    self.found(
                        "citation",
                        path,
                        f"entry {entry.id} cites {location}, which is not in the archive "
                        "(its own text remains; the raw text it was made from does not)",
                    )
        if moved and self.report.repair:
            store.rewrite(self.layout, tier, path, lambda e: _recite(e, self.moved))

    def cites_something(self, agent: str, record_id: str) -> bool:
        try:
            return files.is_file(archive.path_of(self.layout, agent, record_id))
        except (UsageError, UnsafePathError):
            return False

    def sections(self) -> None:
        """Live entries of one tier file that are versions of one section of a Squad file (an
        import of a section that grew, beside the import of its earlier text): named;
        `--repair` keeps the last (the newest import) and archives the others first."""
        from ..team import sections

        made_from = sections.Sources(self.layout)
        for tier in LASTING_TIERS:
            for path in _readable_files(self.layout.tier_dir(tier)):
                try:
                    loaded = store.load(self.layout, tier, path)
                except ParseError:
                    continue  # said already
                for group in sections.versions(loaded.entries if loaded else [], made_from.file_of):
                    kept, older = group[-1], group[:-1]
                    ids = ", ".join(e.id for e in older)
                    problem = (
                        f"holds {len(group)} live versions of one section ({kept.title!r}): "
                        f"{ids} beside {kept.id}, the newest"
                    )
                    finding = self.found("sections", path, problem)
                    self.repair(finding, functools.partial(self.fold_versions, tier, path, older))

    def fold_versions(self, tier: str, path: Path, older: list[entries.Entry]) -> str:
        """Older versions of a section out of a tier file, their text archived first."""
        owner = path.stem if tier == "cold" else entries_owner(older)
        for entry in older:
            record = archive.new_record(
                owner,
                self.ctx.stamp(),
                "replace",
                f"{tier}/{path.name}",
                entry.title,
                entries.render_entry(entry),
                trust=entry.trust,
            )
            archive.write(self.layout, record)
        with store.update_existing(self.layout, tier, path) as tier_file:
            if tier_file is not None:
                tier_file.remove({e.id for e in older})
        ids = [e.id for e in older]
        self.ctx.audit("replace", ids, [tier, "archive"], "older versions of a section folded")
        return f"kept the newest; {len(older)} older version(s) archived"

    def queues(self) -> None:
        for path in _readable_files(self.layout.tier_dir("queue")):
            try:
                queue = store.load(self.layout, "queue", path)
            except ParseError:
                continue
            if queue is not None and queue.entries:
                self.found(
                    "queue",
                    path,
                    f"{len(queue.entries)} entr(ies) wait for Scribe's summary "
                    "(`tiermem scribe run` or the agent's next session end)",
                    serious=False,
                )

    def squads(self) -> None:
        """Squad's governed memory beside the store: counted, read as the search index reads
        it, never changed (a file tiermem cannot read as one is a note: Squad's to mend)."""
        for folder in governed.folders(self.layout):
            try:
                paths = files.memory_files(folder) if files.is_folder(folder) else []
            except ParseError:
                continue
            inbox = not folder.is_relative_to(self.layout.memory)  # agents' notes there too
            for path in paths:
                rel = self.rel(path)
                try:
                    found = governed.entry(files.read_text(self.layout, path) or "", rel)
                except (ParseError, UnsafePathError) as exc:
                    found, why = None, str(getattr(exc, "reason", exc))
                else:
                    why = "no front matter with a class and a title"
                if found is not None:
                    self.count("of Squad's governed memories (left as they are)")
                elif not inbox:
                    self.found(
                        "squad",
                        path,
                        f"not read as a governed memory ({why}); Squad's file, left as it is",
                        serious=False,
                    )

    def use_days(self) -> None:
        """Days of use that cannot be true, in the team's use ledger or this clone's record:
        no date, or after today and the repository's latest commit. Ageing ignores them;
        --repair drops their lines."""
        from ..team import use

        for path, lines in use.implausible(self.layout, self.ctx.stamp()[:10]).items():
            self.count("days of use", len(lines))
            shown = ", ".join(f"line {n}: {day}" for n, day in lines[:5])
            more = f" and {len(lines) - 5} more" if len(lines) > 5 else ""
            problem = (
                f"{len(lines)} day(s) of use that cannot be true ({shown}{more}: no date, or "
                "after today and the latest commit); ignored, they would keep entries from "
                "ageing"
            )
            finding = self.found("use", path, problem)
            numbers = {n for n, _ in lines}
            self.repair(finding, functools.partial(_drop_use, self.layout, path, numbers))

    def config(self) -> None:
        from ..storage import config

        try:
            config.load(self.layout.config)
        except ParseError as exc:
            self.found("file", self.layout.config, f"line {exc.line}: {exc.reason}")

    def index(self) -> None:
        """The index file, then what it holds: brought up to date as every read does, it
        must match the files."""
        path = self.layout.index
        if safepath.kind(path) == "missing":
            if self.report.repair:
                self.rebuild()  # one moved aside above, or none yet: built now
            else:
                self.found("index", path, "not built yet; the next read builds it", serious=False)
            return
        problems = _index_problems(path, self.ctx)
        if not problems:
            self.ctx.index.sync()
            drift = [d for d in self.ctx.index.check() if not d.startswith("merge conflict:")]
            problems = [_drift(drift)] if drift else []
        if problems:
            finding = self.found("index", path, "; ".join(problems))
            self.repair(finding, self.rebuild)

    def clone_key(self) -> None:
        """Anything but a file in place of this clone's key (a committed link, a folder):
        removed, never followed; the next read makes a key and builds the index again."""
        from ..storage import clone

        path = clone.key_path(self.layout)
        kind = safepath.kind(path)
        if kind in ("missing", "file"):
            return
        finding = self.found("link" if kind == "link" else "store", path, _not_file(kind))
        self.repair(finding, lambda: _clear_cache_path(path, kind))

    def git(self) -> None:
        """This clone's own files tracked by git, its state where an earlier tiermem kept
        it (in Squad's `local/`), and a .gitignore that lacks lines."""
        from ..storage import bootstrap

        for rel in bootstrap.tracked_locals(self.layout):
            self.found("git", rel, bootstrap.tracked_local(rel))
        self.legacy_state()
        lacking = bootstrap.lacking_ignores(self.layout)
        if lacking:
            path = self.layout.memory / ".gitignore"
            shown = ", ".join(lacking)
            finding = self.found(
                "git", path, f"lacks {shown}; `tiermem init` adds them", serious=False
            )
            self.repair(finding, lambda: _learn_ignores(self.layout))

    def legacy_state(self) -> None:
        """This clone's state kept in Squad's `local/` by an earlier tiermem: a problem where
        a rule of tiermem's makes git ignore Squad's memories there, else a note; either way
        `--repair` (or the next write) moves it to `tiermem-local/`."""
        from ..storage import local_state

        left = local_state.left_behind(self.layout)
        if not left:
            return
        hides = local_state.hides_squad(self.layout)
        said = (
            "makes git ignore local/, where Squad keeps the team's governed memory "
            "(`squad memory write`): a memory there never reaches a teammate"
            if hides
            else "holds this clone's own files, kept there by an earlier tiermem"
        )
        problem = f"{said} ({', '.join(left)}); they move to {self.rel(self.layout.local)}/"
        finding = self.found("git", self.layout.legacy_local, problem, serious=hides)
        self.repair(finding, lambda: _moved(local_state.move(self.layout)))

    def rebuild(self) -> str:
        self.ctx.close()
        report = self.ctx.index.rebuild()
        return f"rebuilt from the files ({report.scanned} files)"


def run(ctx: Context, repair: bool = False) -> DoctorReport:
    """Examine a store (and, with `repair`, mend what is safe to mend)."""
    report = _Doctor(ctx, repair).run()
    ctx.close()
    if repair and any(f.repaired for f in report.findings):
        ctx.audit(
            "doctor",
            [],
            list(TIERS),
            "repairs after a merge or a crash",
            repaired=[f"{f.path}: {f.repaired}" for f in report.findings if f.repaired],
        )
    return report


# --- helpers ------------------------------------------------------------------------------


def entries_owner(found: list[entries.Entry]) -> str:
    """Whose archive folder a wiki entry's old text goes to: its author's, else the team's."""
    agent = found[0].agent if found else ""
    try:
        return validate.owner(agent) if agent else TEAM
    except UsageError:
        return TEAM


def _learn_ignores(layout: Layout) -> str:
    from ..storage import bootstrap

    bootstrap.learn_ignores(layout)
    return "the lines added"


def _moved(done: list[str]) -> str:
    return f"moved or removed: {', '.join(done)}" if done else "nothing left to move"


def _not_folder(kind: str) -> str:
    return "is a symbolic link, not a folder" if kind == "link" else f"is a {kind}, not a folder"


def _not_file(kind: str) -> str:
    if kind == "link":
        return "is a symbolic link, not a file"
    return f"is a {kind}, not a regular file"


def _age(seconds: float) -> str:
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def _remove(path: Path) -> str:
    files.unlink(path)
    return "removed"


def _drop_use(layout: Layout, path: Path, numbers: set[int]) -> str:
    from ..team import use

    use.drop_lines(layout, path, numbers)
    return f"dropped {len(numbers)} line(s)"


def _clear_cache_path(path: Path, kind: str) -> str:
    """Take a link, a file or a folder out of the place of a cache (the index, the locks)."""
    if kind == "link" or (kind == "file" and path.name == ".locks"):
        os.unlink(path)  # a link is removed, never followed; the lock folder holds no memory
        if path.name == ".locks":
            files.ensure_folder(path)
        return "removed" + ("; the lock folder made again" if path.name == ".locks" else "")
    aside = path.with_name(f"{path.name}-aside-{int(time.time())}")
    os.rename(path, aside)  # git ignores index.sqlite-*: nothing is lost, nothing committed
    return f"moved aside to {aside.name}"


def _readable_files(folder: Path) -> list[Path]:
    try:
        return files.memory_files(folder)
    except ParseError:
        return []


_BOUNDARY_ID = re.compile(r"^#{1,6} [^\n]*\n<!-- tiermem id=(\S+)", re.MULTILINE)


def _misread(twice: list[str], loaded: entries.TierFile) -> list[str]:
    """What a read of a tier file had to fold or mend: ids twice (a union merge), and what a
    merge or an edit left malformed (`entries.parse`); [] for a file that reads as written."""
    found = [f"line {m.line}: {m.problem}" for m in loaded.mended]
    if twice:
        shown = ", ".join(twice[:5]) + (f" and {len(twice) - 5} more" if len(twice) > 5 else "")
        found.insert(0, f"holds an id twice (a merge): {shown}")
    return found


def _ids_twice(text: str, loaded: entries.TierFile) -> list[str]:
    """Ids that the file holds more than once (folded on every read until rewritten), as
    they are read (an id that breaks the rule under its fresh one)."""
    seen: dict[str, int] = {}
    for match in _BOUNDARY_ID.finditer(text.replace("\r\n", "\n")):
        entry_id = entries.read_id(entries.unescape_value(match.group(1)))
        seen[entry_id] = seen.get(entry_id, 0) + 1
    twice = sorted(i for i, n in seen.items() if n > 1)
    return twice or sorted({c.id for c in loaded.conflicts})


def _renamed(loaded: entries.TierFile) -> dict[str, str]:
    """Fresh id -> the old one (percent-encoded) of the entries this read renamed."""
    fresh = {m.renamed for m in loaded.mended if m.renamed}
    return {e.id: dict(e.extra).get(entries.WAS, "") for e in loaded.entries if e.id in fresh}


def _kept_versions(sides: tuple[bytes, bytes]) -> list[bytes]:
    """The versions of a record in conflict to archive again: each once, and only the purged
    ones where a purge took text out of one (the other would bring it back)."""
    versions = list(dict.fromkeys(sides))
    purged = [v for v in versions if "purged" in _header_fields(v[: v.find(b"\n")])]
    return purged or versions


def _header_fields(line: bytes) -> dict[str, str]:
    text = line.decode("utf-8", "replace").removeprefix("<!-- tiermem-archive ")
    text = text.removesuffix("-->").strip()
    return {k: entries.unescape_value(v) for k, _, v in (i.partition("=") for i in text.split())}


def _recite(entry: entries.Entry, moved: dict[str, str]) -> entries.Entry:
    """An entry citing the recovered records in place of the damaged ones."""
    sources = []
    for source in entry.sources:
        location, mark, rest = source.partition("#")
        sources.append(moved.get(location, location) + mark + rest)
    return replace(entry, sources=tuple(sources))


def _index_problems(path: Path, ctx: Context) -> list[str]:
    """What is wrong with the index file itself ([] when it may be read)."""
    kind = safepath.kind(path)
    if kind != "file":
        return [_not_file(kind)]
    from ..index import check as index_check
    from ..index import fts

    return index_check.inspect(ctx.layout, fts.wanted(ctx.tokens), quick=True)


def _drift(lines: list[str]) -> str:
    """How the index differs from the files, the first few differences named."""
    more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
    return f"differs from the files ({'; '.join(lines[:3])}{more})"
