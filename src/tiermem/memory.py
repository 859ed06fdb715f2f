"""`Memory`: the one API that the CLI, the MCP server and Python callers use."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import archive, audit, hot, store, validate
from .clock import Clock
from .entries import Entry, TierFile
from .errors import NotFoundError, StoreError, UsageError

if TYPE_CHECKING:
    from .config import Config
    from .index import Doc, Hit, Index, SyncReport
    from .maintenance import RunReport
    from .scribe import SessionReport
    from .spawn import SpawnResult
    from .squad_import import ImportReport
    from .wiki import Page

ENV_ROOT = "TIERMEM_ROOT"
SOURCES = ("agent", "user", "tool", "web")
MAX_SEARCH_LIMIT = 10_000
# An agent's own memory is the likeliest to bear on its question; the team's decisions still
# rank first when they match clearly better (1.5 kept replayed recall and raised imported).
SEARCH_OWN_BOOST = 1.5
UNTRUSTED = frozenset({"tool", "web"})

_GITIGNORE = """\
# Derived or transient: rebuilt from the markdown tiers at any time.
index.sqlite
index.sqlite-*
.locks/
.tmp-*
"""

_GITATTRIBUTES = """\
# Tier files are lists of entries with stable ids: a union merge keeps both sides'
# entries, and tiermem folds any entry that ends up twice.
hot/*.md merge=union
cold/*.md merge=union
wiki/*.md merge=union
queue/*.md merge=union
audit.jsonl merge=union
# Archive records are create-only and named by their content: they never conflict.
archive/** -diff
"""


_SQUAD_LOG_UNION = "decisions.md merge=union"


def _union_for_squad_log(layout: store.Layout) -> bool:
    """`decision add` appends to .squad/decisions.md: make it merge like Squad's own files."""
    path = layout.squad / ".gitattributes"
    current = store.read_text(layout, path) or ""
    if any(line.split()[:2] == ["decisions.md", "merge=union"] for line in current.splitlines()):
        return False
    prefix = current if not current or current.endswith("\n") else current + "\n"
    store.atomic_write(path, f"{prefix}{_SQUAD_LOG_UNION}\n")
    return True


def _valid_name(name: str) -> bool:
    """Whether a file stem found on disk is an agent name tiermem would accept."""
    try:
        return validate.name(name) == name
    except UsageError:
        return False


def discover_root(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The folder holding `.squad/`: --root, TIERMEM_ROOT, else the nearest ancestor."""
    given = explicit if explicit is not None else os.environ.get(ENV_ROOT) or None
    if given is not None:
        root = Path(given).expanduser()
        if not root.is_dir():
            raise StoreError(f"root {root} is not a directory")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".squad").is_dir():
            return folder
    raise StoreError(f"no .squad/ folder in {here} or above; run `tiermem init` or pass --root")


@dataclass
class WriteReport:
    """What a write did, in words for the user and ids for programs."""

    agent: str
    ids: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    cold: list[str] = field(default_factory=list)
    redactions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HotView:
    """The hot tier of one agent, as loaded into a spawn."""

    agent: str
    session: str
    entries: tuple[Entry, ...]
    bytes: int

    def render(self) -> str:
        """Markdown for people and prompts."""
        from .render import hot_markdown

        return hot_markdown(self.agent, list(self.entries))


class Memory:
    """A tiermem store rooted at a folder that holds (or will hold) `.squad/`."""

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        now: datetime | str | None = None,
        must_exist: bool = True,
    ) -> None:
        self.root = discover_root(root) if must_exist or root is None else Path(root).resolve()
        self.layout = store.Layout(self.root)
        self.clock = Clock(now)
        self._config: Config | None = None
        self._index: Index | None = None

    @property
    def config(self) -> Config:
        """The store's settings, read from config.toml when first needed.

        Reading the file is a parse of TOML; commands that need no setting (`hot show`,
        `search`) start faster without it.
        """
        if self._config is None:
            from . import config

            self._config = config.load(self.layout.config)
        return self._config

    # --- housekeeping -------------------------------------------------------------------

    @classmethod
    def init(
        cls, root: str | Path, *, now: datetime | str | None = None, squad_files: bool = True
    ) -> tuple[Memory, list[str]]:
        """Create the memory folders, config and git settings; return what was created.

        `squad_files=False` touches nothing outside `.squad/memory/` (as an import promises).
        """
        folder = Path(root).expanduser().resolve()
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a directory")
        from .config import render_default

        layout = store.Layout(folder)
        created: list[str] = []
        for tier in (*store.TIERS, "queue"):
            path = layout.tier_dir(tier)
            if not path.is_dir():
                path.mkdir(parents=True)
                created.append(layout.relative(path) + "/")
        for path, text in (
            (layout.config, render_default()),
            (layout.memory / ".gitignore", _GITIGNORE),
            (layout.memory / ".gitattributes", _GITATTRIBUTES),
        ):
            if not path.exists():
                store.atomic_write(path, text)
                created.append(layout.relative(path))
        if squad_files and _union_for_squad_log(layout):
            created.append(layout.relative(layout.squad / ".gitattributes"))
        return cls(folder, now=now), created

    @property
    def index(self) -> Index:
        """The search index (opened on first use)."""
        if self._index is None:
            self._require_store()
            from .index import Index

            self._index = Index(self.layout)
        return self._index

    def _require_store(self) -> None:
        if not self.layout.memory.is_dir():
            raise StoreError(f"no tiermem store in {self.layout.squad}; run `tiermem init`")

    def close(self) -> None:
        """Release the index connection."""
        if self._index is not None:
            self._index.close()
            self._index = None

    def sync(self) -> SyncReport:
        """Bring the index up to date; warn about files that could not be read."""
        from .index import warn

        report = self.index.sync()
        warn(report)
        return report

    def _audit(
        self, action: str, ids: list[str], tiers: list[str], reason: str = "", **kw: object
    ) -> None:
        audit.append(self.layout, self.clock.stamp(), action, ids, tiers, reason, **kw)

    def _clean(self, text: str, what: str) -> tuple[str, list[str]]:
        """Validate user text and replace credentials in it, before it is written anywhere."""
        from .redact import redact

        return redact(validate.text(text, what))

    def _audit_redactions(self, kinds: list[str], where: str) -> None:
        """After a write: say which kinds of credentials were replaced (never the values)."""
        if kinds:
            self._audit("redact", [], [where], "credential-shaped text replaced", kinds=kinds)

    # --- hot tier -----------------------------------------------------------------------

    def _hot_path(self, agent: str) -> Path:
        return self.layout.tier_file("hot", agent)

    def _load_hot(self, agent: str) -> TierFile:
        path = self._hot_path(agent)
        loaded = store.load(self.layout, "hot", path)
        if loaded is not None and loaded.meta.get("session"):
            return loaded
        stamp = self.clock.stamp()
        fresh = hot.new_file(agent, hot.session_id(stamp), stamp)
        if loaded is not None:  # a hand-written hot file: keep all of it, add the session
            fresh.entries, fresh.notes = loaded.entries, loaded.notes
        return fresh

    def hot_set(
        self, agent: str, task: str, why: str | None = None, talking_to: str | None = None
    ) -> WriteReport:
        """Set the current task (and why, and who the agent talks to)."""
        agent = validate.name(agent)
        self._require_store()
        values = {"task": task, "why": why, "talking-to": talking_to}
        given = {slot: validate.text(v, slot) for slot, v in values.items() if v is not None}
        cleaned: dict[str, str] = {}
        kinds: list[str] = []
        for slot, value in given.items():
            cleaned[slot], found = self._clean(value, slot)
            kinds += found

        def change(tier_file: TierFile) -> list[Entry]:
            session = tier_file.meta["session"]
            replaced = [e for e in tier_file.entries if e.slot in cleaned]
            tier_file.remove({e.id for e in replaced})
            added = [
                hot.make_entry(agent, slot, text, self.clock.stamp(), session, 0)
                for slot, text in cleaned.items()
            ]
            tier_file.entries[0:0] = added
            return replaced

        report = self._hot_write(agent, change, "set")
        report.redactions = kinds
        self._audit_redactions(kinds, "hot")
        return report

    def hot_add(self, agent: str, slot: str, text: str, source: str = "agent") -> WriteReport:
        """Record an action, decision, blocker or note in the agent's hot tier.

        `source` says where the text came from: text from `tool` output or the `web` is
        marked untrusted, shown as such in prompts, and never promoted to the wiki.
        """
        agent = validate.name(agent)
        if slot not in ("action", "decision", "blocker", "note"):
            raise UsageError(f"unknown hot slot {slot!r}")
        if source not in SOURCES:
            raise UsageError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")
        self._require_store()
        cleaned, kinds = self._clean(text, slot)
        trust = "untrusted" if source in UNTRUSTED else ""

        def change(tier_file: TierFile) -> list[Entry]:
            n = len(tier_file.entries)
            entry = hot.make_entry(
                agent, slot, cleaned, self.clock.stamp(), tier_file.meta["session"], n
            )
            tier_file.entries.append(replace(entry, trust=trust))
            return []

        report = self._hot_write(agent, change, slot)
        report.redactions = kinds
        self._audit_redactions(kinds, "hot")
        return report

    def hot_unblock(self, agent: str, text: str) -> WriteReport:
        """Remove a blocker (matched by id or by text); the resolution is kept as an action."""
        agent = validate.name(agent)
        needle = validate.text(text, "blocker").strip().lower()
        if not self._hot_path(agent).exists():
            raise NotFoundError(f"agent {agent!r} has no hot tier")

        def change(tier_file: TierFile) -> list[Entry]:
            blockers = hot.of_slot(tier_file, "blocker")
            match = [b for b in blockers if b.id == needle or needle in hot.slot_text(b).lower()]
            if len(match) != 1:
                found = "no blocker" if not match else f"{len(match)} blockers"
                raise NotFoundError(f"{found} of {agent} matches {text!r}")
            tier_file.remove({match[0].id})
            resolved = "Unblocked: " + hot.slot_text(match[0])
            tier_file.entries.append(
                hot.make_entry(
                    agent,
                    "action",
                    resolved,
                    self.clock.stamp(),
                    tier_file.meta["session"],
                    len(tier_file.entries),
                )
            )
            return []

        return self._hot_write(agent, change, "unblock")

    def _hot_write(
        self, agent: str, change: Callable[[TierFile], list[Entry]], what: str
    ) -> WriteReport:
        """Apply a change to hot under its lock, keep the budget, archive what moves out."""
        from .scribe import checkpoint, queue_entries

        path = self._hot_path(agent)
        report = WriteReport(agent)
        with store.locked(self.layout, path):
            tier_file = self._load_hot(agent)
            before = {e.id for e in tier_file.entries}
            replaced: list[Entry] = change(tier_file)
            new_ids = [e.id for e in tier_file.entries if e.id not in before]
            moved = replaced + hot.extra_actions(tier_file, self.config.hot.max_actions)
            tier_file.remove({e.id for e in moved})
            overflow = hot.fit(tier_file, self.config.hot.budget_bytes, set(new_ids))
            if moved or overflow:
                record = queue_entries(self, agent, moved + overflow, tier_file.meta["session"])
                report.archived.append(record.location)
            store.save(self.layout, path, tier_file)
        report.ids = new_ids
        report.messages.append(f"hot: {agent} {what} saved ({hot.size(tier_file)} bytes)")
        if overflow:
            size = sum(len(e.text.encode("utf-8")) for e in overflow)
            done = checkpoint(self, agent)
            report.cold.extend(done)
            report.messages.append(
                f"hot budget {self.config.hot.budget_bytes} bytes: {size} bytes moved out; raw "
                f"text archived in {report.archived[-1]}; Scribe checkpointed it to cold "
                f"({', '.join(done) or 'queued'})"
            )
        elif moved:
            report.messages.append(
                f"{len(moved)} older item(s) left hot; archived in {report.archived[-1]} and "
                "queued for the session summary"
            )
        return report

    def hot_view(self, agent: str) -> HotView:
        """The agent's hot tier; NotFoundError for an agent with no memory at all."""
        agent = validate.name(agent)
        self._require_store()
        tier_file = store.load(self.layout, "hot", self._hot_path(agent))
        if tier_file is None:
            if not self.known_agent(agent):
                raise NotFoundError(
                    f"unknown agent {agent!r} (no memory for it under "
                    f"{self.layout.relative(self.layout.memory)})"
                )
            return HotView(agent, "", (), 0)
        size = self._hot_path(agent).stat().st_size
        return HotView(agent, tier_file.meta.get("session", ""), tuple(tier_file.entries), size)

    def hot_clear(self, agent: str) -> WriteReport:
        """Empty the hot tier; its content is archived and queued for Scribe first."""
        from .scribe import queue_entries

        agent = validate.name(agent)
        path = self._hot_path(agent)
        report = WriteReport(agent)
        if not path.exists():
            raise NotFoundError(f"agent {agent!r} has no hot tier")
        with store.locked(self.layout, path):
            tier_file = store.load(self.layout, "hot", path)
            if tier_file is None:
                raise NotFoundError(f"agent {agent!r} has no hot tier")
            if tier_file.entries:
                record = queue_entries(
                    self, agent, tier_file.entries, tier_file.meta.get("session", "")
                )
                report.archived.append(record.location)
            path.unlink()
        self._audit(
            "hot-clear", [e.id for e in tier_file.entries], ["hot", "archive"], "cleared by request"
        )
        report.messages.append(
            f"hot: {agent} cleared; {len(tier_file.entries)} item(s) archived and queued for Scribe"
        )
        return report

    def known_agent(self, agent: str) -> bool:
        """Whether the agent has memory in any tier, or a Squad agent folder."""
        if (self.layout.squad / "agents" / agent).is_dir():
            return True
        for tier in ("hot", "cold", "queue"):
            if (self.layout.tier_dir(tier) / f"{agent}.md").exists():
                return True
        return (self.layout.tier_dir("archive") / agent).is_dir()

    def agents(self) -> list[str]:
        """Every agent with memory in hot, cold or the archive."""
        found: set[str] = set()
        for tier in ("hot", "cold", "queue"):
            found.update(
                p.stem for p in self.layout.tier_dir(tier).glob("*.md") if not store.is_temp(p)
            )
        archive_dir = self.layout.tier_dir("archive")
        if archive_dir.is_dir():
            found.update(p.name for p in archive_dir.iterdir() if p.is_dir())
        return sorted(a for a in found - {store.TEAM} if _valid_name(a))

    # --- reading ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        agent: str | None = None,
        tier: str | None = None,
        limit: int = 10,
    ) -> list[Hit]:
        """BM25 search over every tier and the archive; using a cold entry refreshes it.

        With an agent, the search covers that agent's memory, the team's (the decisions and
        policies every agent works under) and the whole wiki, the agent's own entries ranking
        first on a par. A match in one part of a long entry returns the whole entry, and a
        match in a chunk of an archived text returns its whole section. A query of nothing
        but entry ids reads those entries.
        """
        from .index import agent_ranking

        validate.text(query, "query")
        if agent is not None:
            agent = validate.name(agent)
        if tier is not None and tier not in store.TIERS:
            raise UsageError(f"unknown tier {tier!r} (expected one of {', '.join(store.TIERS)})")
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise UsageError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}")
        self.sync()
        owners = None if agent is None else sorted({agent, store.TEAM})
        if ids := _entry_ids(query):
            return self._look_up(ids, owners, tier, limit)
        pool = 2 * limit + 10  # room for repeats and parts folded away, and for the boost
        while True:
            found = self.index.search(
                query, agent=owners, tiers=[tier] if tier else None, limit=pool, whole_wiki=True
            )
            if agent is not None:
                found = agent_ranking(found, agent, SEARCH_OWN_BOOST)
            hits, used = self._whole_entries(_once(found), limit)
            if len(hits) == limit or len(found) < pool:
                break
            pool *= 4  # so many repeats that the pool ran short: look further
        self.mark_used(used)
        return hits

    def _look_up(
        self, ids: list[str], owners: list[str] | None, tier: str | None, limit: int
    ) -> list[Hit]:
        """The entries a query of ids names (as a spawn lists what it left out), whole, in
        the search's scope; an exact lookup has no score (0)."""
        from .index import Hit

        docs = self.index.by_ids(ids, agent=owners, tiers=[tier] if tier else None, whole_wiki=True)
        hits, used = self._whole_entries(_once([Hit(d, 0.0) for d in docs]), limit)
        self.mark_used(used)
        return hits

    def _whole_entries(self, found: list[Hit], limit: int) -> tuple[list[Hit], list[Doc]]:
        """The first `limit` entries among the hits, parts joined into their entry."""
        hits: list[Hit] = []
        used: list[Doc] = []
        wholes: set[str] = set()
        for hit in found:
            if len(hits) == limit:
                break
            doc = hit.doc
            if not doc.parent:
                hits.append(hit)
                used.append(doc)
            elif doc.parent not in wholes:
                wholes.add(doc.parent)
                parts = self.index.parts(doc.parent)
                hits.append(replace(hit, doc=_joined(parts)))
                used.extend(parts)
        return hits, used

    def mark_used(self, docs: Sequence[Doc]) -> None:
        """Move the last-use time of these cold/wiki entries to now (TTL refresh)."""
        today = self.clock.stamp()[:10]
        if not any(d.tier in ("cold", "wiki") and d.used[:10] < today for d in docs):
            return  # the common case: already used today, nothing to write
        from .maintenance import refresh

        refresh(self, docs)

    def read_archive(self, agent: str, record_id: str) -> archive.Record:
        """One archive record."""
        agent = validate.name(agent)
        base = record_id.split("#")[0]
        if not archive.RECORD_ID.fullmatch(base):
            raise UsageError(f"{record_id!r} is not an archive record id (a-<10 hex digits>)")
        if not archive.path_of(self.layout, agent, base).exists():
            raise NotFoundError(f"no archive record {base} for {agent}")
        return archive.read(self.layout, agent, base)

    def tier_text(self, tier: str, name: str) -> str:
        """The markdown of a tier file (hot/cold of an agent, or a wiki topic)."""
        if tier not in ("hot", "cold", "wiki"):
            raise UsageError(f"tier must be hot, cold or wiki, not {tier!r}")
        path = self.layout.tier_file(tier, name)
        text = store.read_text(self.layout, path)
        if text is None:
            raise NotFoundError(f"no {tier} file for {name!r}")
        return text

    def reindex(self, check: bool = False) -> list[str]:
        """Rebuild the index, or (check) list how it differs from the files."""
        if check:
            return self.index.check()
        from .index import warn

        report = self.index.rebuild()
        warn(report)
        return [f"indexed {report.scanned} files"]

    def replace_entry(self, tier: str, name: str, entry: Entry) -> None:
        """Write one entry back into its tier file (under the file's lock)."""
        path = self.layout.tier_file(tier, name)
        with store.locked(self.layout, path):
            tier_file = store.load(self.layout, tier, path)
            if tier_file is None or tier_file.get(entry.id) is None:
                return
            tier_file.put(entry)
            store.save(self.layout, path, tier_file)

    def with_used(self, entry: Entry) -> Entry:
        """The entry marked as used now."""
        stamp = self.clock.stamp()
        return entry if entry.used >= stamp else replace(entry, used=stamp)

    # --- Scribe, decisions, wiki, spawn, import: one door each into its module ----------

    def end_session(self, agent: str) -> SessionReport:
        """Compress the agent's hot tier into a dated cold entry and reset hot."""
        from .scribe import end_session

        return end_session(self, agent)

    def scribe_run(self, dry_run: bool = False) -> RunReport:
        """Scribe maintenance: checkpoints, inbox merge, supersede, promote, expire."""
        from .maintenance import run

        return run(self, dry_run=dry_run)

    def decide(self, text: str, by: str) -> list[str]:
        """Record a team decision (also appended to Squad's decisions.md); return its ids."""
        from .decisions import record_decisions

        author = validate.name(by)
        return record_decisions(self, text, by=author, source=f"decision:{author}", squad_log=True)

    def wiki_write(self, topic: str, text: str, by: str = "") -> Entry:
        """Ask Scribe for a wiki entry on a topic."""
        from .wiki import write

        return write(self, topic, text, by=by)

    def wiki_pages(self) -> list[Page]:
        """Every wiki topic page with its size."""
        from .wiki import pages

        self._require_store()
        return pages(self)

    def wiki_read(self, topic: str) -> str:
        """A wiki topic page's markdown."""
        from .wiki import read

        return read(self, topic)

    def spawn(self, agent: str, task: str, **options: Any) -> SpawnResult:
        """Render the prompt for spawning an agent on a task (see `SpawnRequest`)."""
        from .spawn import SpawnRequest, assemble

        return assemble(self, SpawnRequest(agent=agent, task=task, **options))

    def import_squad(self, dry_run: bool = False, progress: bool = False) -> ImportReport:
        """Import the root's existing `.squad/` memory into tiers (archive first).

        A dry run performs the whole import on a scratch copy and writes nothing here: the
        report says where each entry would land after Scribe's pass.
        """
        from .squad_import import plan, rehearse, write

        if dry_run:
            return rehearse(self, progress=progress)
        self._require_store()
        report = plan(self, progress=progress)
        write(self, report, progress=progress)
        return report

    def stats(self) -> dict[str, Any]:
        """Entries, bytes and tokens per agent and tier, and what a Squad spawn loads."""
        from .stats import collect

        return collect(self)


# What `spawn` lists as left out: entry ids (`d-0123456789`), ids of parts of a long entry
# (`d-0123456789-abcdef0123`) and of archive chunks (`a-0123456789#4`).
_ENTRY_ID = re.compile(r"[a-z]-[0-9a-f]{10}(?:-[0-9a-f]{10})*(?:#\d+)?")


def _entry_ids(query: str) -> list[str]:
    """The ids a query names when it is nothing but ids (separated by spaces or commas)."""
    words = query.replace(",", " ").split()
    if words and all(_ENTRY_ID.fullmatch(w) for w in words):
        return list(dict.fromkeys(words))
    return []


def _once(found: list[Hit]) -> list[Hit]:
    """Each entry and each text once, in rank order.

    One entry can sit in two tiers for a while (promoted in one clone, used in another,
    before Scribe runs after a merge), and one text in several places (a decision repeated
    by a union merge, or kept both in the archive and as an entry): each shows once, at the
    rank of its best match, from the tier that holds it in its most finished form.
    """
    groups: dict[str, list[Hit]] = {}
    first_of_id: dict[str, str] = {}
    for hit in found:
        key = first_of_id.setdefault(hit.doc.id, _repeat_key(hit.doc.text))
        groups.setdefault(key, []).append(hit)
    return [_most_finished(group) for group in groups.values()]


def _most_finished(group: list[Hit]) -> Hit:
    if len(group) == 1:
        return group[0]
    return replace(min(group, key=lambda h: _FINISHED.index(h.doc.tier)), score=group[0].score)


_FINISHED = ("wiki", "cold", "hot", "archive")
_MARKS = str.maketrans("", "", "#>*-")


# Copies of one text carry different headings (the raw `## 2026-03-04 — Title` of the archived
# file, the entry's bare title): what repeats is the body under them. A body shorter than this
# ("Done.") is too common to say that two texts are one.
_REPEAT_BODY_CHARS = 40


def _repeat_key(text: str) -> str:
    """What two copies of one text share: the gist of the body under the heading line."""
    body = _gist(text.partition("\n")[2])
    return body if len(body) >= _REPEAT_BODY_CHARS else _gist(text)


def _gist(text: str) -> str:
    """A text without markdown marks and spacing, to recognise repeats."""
    return " ".join(text.translate(_MARKS).split()).lower()


def _joined(parts: list[Doc]) -> Doc:
    """One document for an entry stored in parts, or a section of an archived text stored in
    chunks: the first one's heading, every text."""
    glue = "" if parts[0].tier == "archive" else "\n\n"  # archive chunks are contiguous text
    return replace(
        parts[0],
        id=parts[0].parent,
        text=glue.join(p.text for p in parts),
        tokens=sum(p.tokens for p in parts),
        parent="",
    )
