"""`Memory`: the one API that the CLI, the MCP server and Python callers use.

Each method is a door to one step: it checks its arguments, hands the step the store's
`Context`, and returns the step's result. The rules live in the steps. A door imports its
step when it is called: a command loads only what it runs (`tiermem hot show` never loads
Scribe or the Squad parsers), which keeps every command's start-up short.
"""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path

from .context import Context
from .errors import NotFoundError, UsageError
from .hot import view as render
from .options import LogRequest, SearchRequest, SpawnRequest
from .scribe.keeper import ScribeKeeper, configured_summarizer
from .squad.adapter.squad_host import SquadHost
from .storage import files, validate
from .storage.clock import Clock
from .storage.layout import Layout, discover_root
from .team import agents
from .vocabulary import FILE_TIERS, HOT_KINDS, SOURCES, TIERS, trust_of_source

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol, TypeVar

    from .host import Summarizer
    from .index.protocol import IndexFactory
    from .index.tokens import TokenCounter
    from .relevance.ranking import Ranker

    # A command loads the results it returns, when its step makes them, and no others.
    from .results.figures import Stats
    from .results.hot import AgentInfo, HotView, WriteReport
    from .results.imports import ImportReport
    from .results.reading import EntryText, Page, SearchHit, WikiEntry
    from .results.report import ReportResult
    from .results.scribe import RunReport, SessionReport
    from .results.spawn import SpawnLog, SpawnResult
    from .results.upkeep import DoctorReport, ForgetReport
    from .storage.archive import Record
    from .storage.config import Config
    from .vocabulary import FileTier, HotKind, Source, Tier

    class _Carries(Protocol):
        notes: list[str]

    _Noted = TypeVar("_Noted", bound=_Carries)

    class _Says(Protocol):
        messages: list[str]

        def lines(self) -> list[str]: ...

    _Said = TypeVar("_Said", bound=_Says)
    _Door = TypeVar("_Door", bound=Callable[..., Any])

MAX_SEARCH_LIMIT = validate.MAX_SEARCH_LIMIT


def _moves_local_state(door: _Door) -> _Door:
    """A write door that, once its write is done (not when it refused, nor for a dry run),
    moves this clone's own state out of Squad's `local/`, where a store made before kept it
    (`storage.local_state`): "on the next write"."""

    @functools.wraps(door)
    def wrapped(self: Memory, *args: Any, **kwargs: Any) -> Any:
        self._wrote = False
        try:
            result = door(self, *args, **kwargs)
        except BaseException:
            self._wrote = False
            raise
        if self._wrote:
            from .storage import local_state

            self._wrote = False
            local_state.move(self.layout)
        return result

    return wrapped  # type: ignore[return-value]


class Memory:
    """A tiermem store rooted at a folder that holds (or will hold) `.squad/`.

    Each swappable part is an argument, `None` meaning the shipped one: `index` opens the
    search index (`FtsIndex`), `summarizer` writes session summaries (the one config.toml
    names), `ranker` weighs entries for the asking agent and orders results (`OwnFirst`; see
    `relevance.ranking` for all it changes), `tokens` counts tokens (o200k_base).
    `tiermem.testing` has a fake of each.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        now: datetime | str | None = None,
        must_exist: bool = True,
        index: IndexFactory | None = None,
        summarizer: Summarizer | None = None,
        ranker: Ranker | None = None,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.root = discover_root(root) if must_exist or root is None else Path(root).resolve()
        self._wrote = False  # a write door got its context (see `_moves_local_state`)
        self.context = Context(
            Layout(self.root),
            Clock(now),
            index=index,
            summarizer=summarizer,
            ranker=ranker,
            tokens=tokens,
            host=SquadHost,
            keeper=ScribeKeeper,
            summarizers=configured_summarizer,
        )

    @property
    def layout(self) -> Layout:
        """Where the store keeps each thing."""
        return self.context.layout

    @property
    def config(self) -> Config:
        """The store's settings (`.squad/memory/config.toml` over the defaults)."""
        return self.context.config

    @classmethod
    def init(
        cls, root: str | Path, *, now: datetime | str | None = None, squad_files: bool = True
    ) -> tuple[Memory, list[str]]:
        """Create the memory folders, config and git settings; return what was created.

        `squad_files=False` touches nothing outside `.squad/memory/` (as an import promises).
        """
        folder = Path(root).expanduser().resolve()
        from .squad.adapter.team_state import of_root
        from .storage.bootstrap import init_store

        if folder.is_dir():
            of_root(folder)  # a team whose state is off this working tree: nothing is made
        created = init_store(folder, squad_files=squad_files)
        return cls(folder, now=now), created

    def close(self) -> None:
        """Release the index connection."""
        self.context.close()

    def _ready(self) -> Context:
        """The context, once the store is known to exist (and holding no earlier call's notes)."""
        self.context.require_store()
        self.context.take_notes()
        return self.context

    def _writing(self) -> Context:
        """The context for a write: the store there, and the team's state a file of this
        working tree (`Host.check_writable`, one line when it is not). Once the write is
        done, this clone's own state leaves Squad's folder (`_moves_local_state`)."""
        ctx = self._ready()
        ctx.host.check_writable()
        self._wrote = True
        return ctx

    def _noted(self, report: _Noted) -> _Noted:
        """A write's result with the notes its steps made (a summarizer that fell back)."""
        report.notes = self.context.take_notes()
        return report

    # --- hot tier -----------------------------------------------------------------------

    @_moves_local_state
    def hot_set(
        self,
        agent: str,
        task: str,
        why: str | None = None,
        talking_to: str | None = None,
        *,
        known_only: bool = False,
    ) -> WriteReport:
        """Set the current task (and why, and who the agent talks to).

        With `known_only`, an agent the team does not know (no Squad folder, no memory) is
        refused as a likely typo, naming the nearest agents: the CLI and the MCP server ask
        for that unless told the agent is new (see `agents`).
        """
        agent = validate.name(agent)
        values = {"task": task, "why": why, "talking-to": talking_to}
        given = {slot: validate.text(v, slot) for slot, v in values.items() if v is not None}
        from .hot.writes import set_task

        ctx = self._writing()
        if known_only:
            agents.require_for_write(ctx, agent)
        return _said(self._noted(set_task(ctx, agent, given)))

    @_moves_local_state
    def hot_add(
        self,
        agent: str,
        kind: HotKind,
        text: str,
        source: Source = "agent",
        *,
        known_only: bool = False,
    ) -> WriteReport:
        """Record an action, decision, blocker or note in the agent's hot tier.

        `source` says where the text came from: text from `tool` output or the `web` is
        marked untrusted, shown as such in prompts, and never promoted to the wiki.
        `known_only` refuses an unknown agent, as for `hot_set`.
        """
        agent = validate.name(agent)
        if kind not in HOT_KINDS:
            raise UsageError(f"unknown hot slot {kind!r}")
        if source not in SOURCES:
            raise UsageError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")
        trust = trust_of_source(source)
        from .hot.writes import add

        ctx = self._writing()
        if known_only:
            agents.require_for_write(ctx, agent)
        return _said(self._noted(add(ctx, agent, kind, text, trust)))

    @_moves_local_state
    def hot_unblock(self, agent: str, text: str) -> WriteReport:
        """Remove a blocker (matched by id or by text); the resolution is kept as an action."""
        agent = validate.name(agent)
        from .hot.writes import unblock

        text = validate.text(text, "blocker")
        agents.require(self._writing(), agent, even_alone=True)
        return _said(unblock(self.context, agent, text))

    @_moves_local_state
    def hot_clear(self, agent: str) -> WriteReport:
        """Empty the hot tier; its content is archived and queued for Scribe first."""
        from .hot.writes import clear

        agent = validate.name(agent)
        agents.require(self._writing(), agent, even_alone=True)
        return _said(clear(self.context, agent))

    def hot_view(self, agent: str) -> HotView:
        """The agent's hot tier; NotFoundError for an agent with no memory at all."""
        agent = validate.name(agent)
        ctx = self._ready()
        view = render.hot_view(ctx, agent)
        if view is not None:
            return render.shown(view)
        agents.require(ctx, agent, even_alone=True)
        from .results.hot import HotView

        return HotView(agent, "", 0, render.hot_markdown(agent, []), ())

    def agents(self) -> list[str]:
        """Every agent with memory in hot, cold or the archive."""
        return agents.with_memory(self.context)

    def team(self) -> list[AgentInfo]:
        """Every agent of the team: Squad's agent folders and every agent with memory."""
        return agents.roster(self._ready())

    # --- reading ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        agent: str | None = None,
        tier: Tier | None = None,
        limit: int = SearchRequest.limit,
    ) -> list[SearchHit]:
        """BM25 search over every tier and the archive; using a cold entry refreshes it.

        With an agent, the search covers that agent's memory, the team's and the whole wiki,
        the agent's own entries ranking first on a par. A query of entry ids reads those
        entries.
        """
        from .search.hits import search, shown_hit

        validate.text(query, "query")
        if agent is not None:
            agent = validate.name(agent)
        if tier is not None and tier not in TIERS:
            raise UsageError(f"unknown tier {tier!r} (expected one of {', '.join(TIERS)})")
        validate.limit(limit)
        ctx = self._ready()
        if agent is not None:
            agents.require(ctx, agent)
        return [shown_hit(ctx, f) for f in search(ctx, query, agent, tier, limit)]

    def read_archive(self, agent: str, record_id: str) -> Record:
        """One archive record."""
        from .storage import archive

        agent = validate.owner(agent)
        base = record_id.split("#")[0]
        if not files.is_file(archive.path_of(self.layout, agent, base)):
            raise NotFoundError(f"no archive record {base} for {agent}")
        return archive.read(self.layout, agent, base)

    def read_entry(self, id: str, agent: str | None = None) -> EntryText:
        """Any id a search or spawn gives, read whole: a tier entry (its metadata, and the
        title that starts its text, as outputs show them: `text.shown`), an archived record
        (`a-0123456789-abcdef0123`, byte for byte) or one section of it
        (`a-0123456789-abcdef0123#4`)."""
        from .search.lookup import read_entry

        if agent is not None:
            agent = validate.name(agent)
        return read_entry(self._ready(), validate.text(id.strip(), "id"), agent)

    def tier_text(self, tier: FileTier, name: str) -> str:
        """The markdown of a tier file (hot/cold of an agent, or a wiki topic)."""
        from .storage import files

        if tier not in FILE_TIERS:
            raise UsageError(f"tier must be hot, cold or wiki, not {tier!r}")
        path = self.layout.tier_file(tier, name)
        text = files.read_text(self.layout, path)
        if text is None:
            raise NotFoundError(f"no {tier} file for {name!r}")
        return text

    @_moves_local_state
    def forget(self, id: str, reason: str = "", purge: bool = False) -> ForgetReport:
        """Retire an entry (a long entry's parts go together) from every tier; its text stays
        in the archive. `purge` deletes the text from the archive and the index too."""
        from .search.hits import entry_ids
        from .upkeep.forget import forget

        if entry_ids(id) != [id]:
            raise UsageError(f"{id!r} is not an entry id (as search and spawn list them)")
        ctx = self._writing()
        with ctx.index.uncounted():  # it reads ids and text, and shows no token count
            return _said(forget(ctx, id, reason, purge))

    def forgotten(self, query: str, hits: list[SearchHit]) -> list[str]:
        """For a query of entry ids: each id no hit holds that was forgotten or purged,
        when, why and where its text is kept."""
        from .search.hits import entry_ids

        found = {h.id for h in hits} | {h.id.split("#")[0] for h in hits}
        missing = [i for i in entry_ids(query) if i not in found]
        if not missing:
            return []  # the common case: nothing more to read
        from .upkeep.forget import forgotten

        said = forgotten(self._ready(), missing)
        return [said[i] for i in missing if i in said]

    def reindex(self, check: bool = False) -> list[str]:
        """Rebuild the index, or (check) list how it differs from the files."""
        ctx = self._ready()
        if check:
            return ctx.index.check()
        report = ctx.index.rebuild()
        for error in report.errors:
            ctx.skipped(str(error))
        return [f"indexed {report.scanned} files"]

    def sync(self) -> None:
        """Bring the index up to date with the files (every read does this itself)."""
        self._ready().sync()

    # --- Scribe, decisions, wiki, spawn, import -----------------------------------------

    @_moves_local_state
    def end_session(self, agent: str) -> SessionReport:
        """Compress the agent's hot tier into a dated cold entry and reset hot."""
        from .scribe.session import end_session

        agent = validate.name(agent)
        ctx = self._writing()
        agents.require(ctx, agent, even_alone=True)
        return self._noted(end_session(ctx, agent))

    @_moves_local_state
    def scribe_run(self, dry_run: bool = False) -> RunReport:
        """Scribe maintenance: checkpoints, inbox merge, supersede, promote, expire."""
        from .scribe.maintenance import run

        ctx = self._ready() if dry_run else self._writing()
        return self._noted(run(ctx, dry_run=dry_run))

    @_moves_local_state
    def decide(self, text: str, by: str, known_only: bool = False) -> list[str]:
        """Record a team decision (also appended to Squad's decisions.md); return its ids.

        `known_only` refuses a `by` the team does not know, as a likely typo."""
        from .team.decisions import decide

        text, by = validate.text(text, "decision"), validate.name(by)
        ctx = self._writing()
        if known_only:
            agents.require_for_write(ctx, by)
        return decide(ctx, text, by)

    @_moves_local_state
    def wiki_write(
        self, topic: str, text: str, by: str = "", known_only: bool = False
    ) -> WikiEntry:
        """Ask Scribe for a wiki entry on a topic (`known_only`: refuse an unknown `by`)."""
        from .team.wiki import write

        topic = validate.name(topic, "topic")
        author = validate.name(by, "agent") if by else "team"
        text = validate.text(text, "wiki text")
        ctx = self._writing()
        if by and known_only:
            agents.require_for_write(ctx, author)
        return write(ctx, topic, text, author)

    def wiki_pages(self) -> list[Page]:
        """Every wiki topic page with its size."""
        from .team.wiki import pages

        return pages(self._ready())

    def wiki_read(self, topic: str) -> str:
        """A wiki topic page's markdown."""
        from .team.wiki import read

        return read(self.context, validate.name(topic, "topic"))

    def spawn(
        self,
        agent: str,
        task: str,
        *,
        why: str = SpawnRequest.why,
        criteria: tuple[str, ...] = SpawnRequest.criteria,
        include_cold: bool = SpawnRequest.include_cold,
        include_wiki: tuple[str, ...] | None = SpawnRequest.include_wiki,
        include_archive: bool = SpawnRequest.include_archive,
        auto: bool = SpawnRequest.auto,
        budget: int | None = SpawnRequest.budget,
        charter: bool = SpawnRequest.charter,
        refs: bool = SpawnRequest.refs,
    ) -> SpawnResult:
        """Render the prompt for spawning an agent on a task: the options are the fields of
        `SpawnRequest`, where each is described (a test holds the two the same)."""
        request = SpawnRequest(
            agent=validate.name(agent),
            task=validate.text(task, "task").strip(),  # as a prompt shows it, and the log keeps
            why=why,
            criteria=tuple(criteria),
            include_cold=include_cold,
            include_wiki=None if include_wiki is None else tuple(include_wiki),
            include_archive=include_archive,
            auto=auto,
            budget=budget,
            charter=charter,
            refs=refs,
        )
        return self._spawn(request)

    def _spawn(self, request: SpawnRequest) -> SpawnResult:
        from dataclasses import replace

        from .spawn import log as spawn_log
        from .spawn import task
        from .spawn.assemble import assemble

        if request.budget is not None and request.budget < 0:
            raise UsageError("budget must be zero or more tokens")
        ctx = self._ready()
        agents.require(ctx, request.agent)
        budget = ctx.config.spawn.budget_tokens if request.budget is None else request.budget
        request = replace(request, task=task.fitted(ctx, request.task, budget))
        result = assemble(ctx, request)
        result.notes = ctx.take_notes()
        spawn_log.record(ctx, request.task, result)
        return result

    def log(
        self, agent: str | None = None, entry: str | None = None, limit: int = LogRequest.limit
    ) -> SpawnLog:
        """Logged spawns, newest first: what each got, or (entry) which spawns got an entry."""
        from .search.hits import entry_ids
        from .spawn import log as spawn_log

        if agent is not None:
            agent = validate.name(agent)
        if entry is not None and entry_ids(entry) != [entry]:
            raise UsageError(f"{entry!r} is not an entry id (as search and spawn list them)")
        validate.limit(limit)
        ctx = self._ready()
        if agent is not None:
            agents.require(ctx, agent)
        found, skipped = spawn_log.spawns(ctx, agent, entry, limit)
        from .results.spawn import SpawnLog

        return SpawnLog(found, agent or "", entry or "", skipped)

    @_moves_local_state
    def import_squad(self, dry_run: bool = False, progress: bool = False) -> ImportReport:
        """Import the root's existing `.squad/` memory into tiers (archive first).

        A dry run performs the whole import on a scratch copy and writes nothing here: the
        report says where each entry would land after Scribe's pass.
        """
        from .squad.importer import squad_import

        ctx = self.context if dry_run else self._writing()
        ctx.take_notes()
        return self._noted(squad_import.run(ctx, dry_run=dry_run, progress=progress))

    def report(
        self, out: str | Path | None = None, task: str | None = None, agent: str | None = None
    ) -> ReportResult:
        """Write the report page (one self-contained HTML file) into `out` (default:
        `.squad/memory/tiermem-local/report/`, git-ignored); with a task and an agent, it
        previews that spawn entry by entry."""
        from .report.html_page import build, output_folder

        if (task is None) != (agent is None):
            raise UsageError("a spawn preview needs both a task and an agent")
        if agent is not None:
            agent = validate.name(agent)
        if task is not None:
            task = validate.text(task, "task").strip()  # '-' reads stdin: its last newline
        ctx = self._ready()
        if agent is not None:
            agents.require(ctx, agent)
        _ = ctx.config  # read now: a damaged config.toml is said before the page's folder is made
        folder, local = output_folder(ctx, out)
        return build(ctx, folder, agent, task, local)

    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check the store after a merge or a crash; with `repair`, mend what is safe to mend.

        Runs on a store that other commands refuse (a link in its folders): it says why.
        """
        from .upkeep.doctor import run

        if repair:
            self.context.host.check_writable()
        return run(self.context, repair=repair)

    def stats(self) -> Stats:
        """Entries, bytes and tokens per agent and tier, and what a Squad spawn loads."""
        from .upkeep.stats import collect

        return collect(self._ready())


def _said(report: _Said) -> _Said:
    """A result with its words for people and programs: the steps return data, and each
    result says what happened itself (`lines`)."""
    report.messages = report.lines()
    return report
