"""The doors: what each operation's request needs before its step, and the step it is handed to.

A door is one function per operation, named as its `Memory` method, taking the store's
`Context` and the request as a caller built it (`options`), already checked against its
declaration (`answer`). It asks for what the step needs (the store there, the team's state
writable, an agent the team knows) and hands the step the request, or its fields where a step
takes them one by one. A door imports its step when it is called: a command loads only what
it runs (`tiermem hot show` never loads Scribe or the Squad parsers).

`Memory`'s method of an operation is `method(Request, door)`: its keywords are the fields of
the request, typed as declared (a type checker reads them from the request's constructor),
so that an option added to a request is a keyword of the method with nothing more written.
"""

from __future__ import annotations

from dataclasses import replace

from . import options
from .context import Context
from .errors import UsageError
from .hot import view as render
from .options import (
    AgentRequest,
    DecideRequest,
    DoctorRequest,
    ForgetRequest,
    HotAddRequest,
    HotSetRequest,
    HotUnblockRequest,
    ImportRequest,
    LogRequest,
    NoRequest,
    ReadEntryRequest,
    ReadTierRequest,
    ReindexRequest,
    ReportRequest,
    ScribeRunRequest,
    SearchRequest,
    SpawnRequest,
    TopicRequest,
    WikiWriteRequest,
)
from .team import agents
from .vocabulary import trust_of_source

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Callable
    from inspect import Signature
    from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

    from .results.figures import Stats
    from .results.hot import AgentInfo, HotView, WriteReport
    from .results.imports import ImportReport
    from .results.reading import EntryText, Page, Searched, WikiEntry
    from .results.report import ReportResult
    from .results.scribe import RunReport, SessionReport
    from .results.spawn import SpawnLog, SpawnResult
    from .results.upkeep import DoctorReport, ForgetReport

    class _Carries(Protocol):
        notes: list[str]

    class _Says(Protocol):
        messages: list[str]

        def lines(self) -> list[str]: ...

    class _Store(Protocol):
        context: Context

    _Noted = TypeVar("_Noted", bound=_Carries)
    _Said = TypeVar("_Said", bound=_Says)
    _Fields = ParamSpec("_Fields")
    _Request = TypeVar("_Request")
    _Result = TypeVar("_Result")

    def method(
        request: Callable[_Fields, _Request], door: Callable[[Context, _Request], _Result]
    ) -> Callable[Concatenate[_Store, _Fields], _Result]:
        """An operation's `Memory` method: the request's fields its keywords."""


def answer(
    ctx: Context, door: Callable[[Context, _Request], _Result], request: _Request
) -> _Result:
    """A door's result for a request, checked against its declaration first. A write door, once
    its write is done (not when it refused, nor for a dry run), moves this clone's own state
    out of Squad's `local/`, where a store made before kept it (`storage.local_state`): "on
    the next write"."""
    ctx.wrote = False
    result = door(ctx, options.checked(request))
    if ctx.wrote:
        from .storage import local_state

        ctx.wrote = False
        local_state.move(ctx.layout)
    return result


class _Method:
    """An operation's `Memory` method, as it runs: its arguments make the request (the
    request's constructor says which it takes), the door answers it. Its docstring is the
    door's; its signature, for `help()` and `inspect`, the request's fields."""

    def __init__(self, request: Callable[..., object], door: Callable[..., Any]) -> None:
        self.request, self.door = request, door
        self.__name__ = self.__qualname__ = door.__name__
        self.__doc__ = door.__doc__

    def __get__(self, store: _Store | None, owner: type | None = None) -> Any:
        from types import MethodType

        return self if store is None else MethodType(self, store)

    def __call__(self, store: _Store, *args: object, **fields: object) -> object:
        return answer(store.context, self.door, self.request(*args, **fields))

    @property
    def __signature__(self) -> Signature:
        from inspect import Parameter, signature

        fields = signature(self.request).parameters.values()
        returns = signature(self.door).return_annotation
        store = Parameter("self", Parameter.POSITIONAL_OR_KEYWORD)
        return signature(self.door).replace(parameters=[store, *fields], return_annotation=returns)


if not TYPE_CHECKING:
    method = _Method


def _ready(ctx: Context) -> Context:
    """The context, once the store is known to exist (and holding no earlier call's notes)."""
    ctx.require_store()
    ctx.take_notes()
    return ctx


def _writing(ctx: Context) -> Context:
    """The context for a write: the store there, and the team's state a file of this working
    tree (`Host.check_writable`, one line when it is not)."""
    _ready(ctx).host.check_writable()
    ctx.wrote = True
    return ctx


def _writing_as(ctx: Context, agent: str, new_agent: bool) -> Context:
    """The context for a write by an agent: one the team does not know is refused as a likely
    typo, naming the nearest agents, unless the request says it is new (see `agents`)."""
    _writing(ctx)
    if not new_agent:
        agents.require_for_write(ctx, agent)
    return ctx


def _noted(ctx: Context, report: _Noted) -> _Noted:
    """A write's result with the notes its steps made (a summarizer that fell back)."""
    report.notes = ctx.take_notes()
    return report


def _said(report: _Said) -> _Said:
    """A result with its words for people and programs: the steps return data, and each
    result says what happened itself (`lines`)."""
    report.messages = report.lines()
    return report


# --- hot tier -------------------------------------------------------------------------


def hot_set(ctx: Context, request: HotSetRequest) -> WriteReport:
    """Set the current task (and why, and who the agent talks to). `new_agent=False` refuses
    an agent the team does not know (no Squad folder, no memory) as a likely typo, naming the
    nearest agents: the CLI and the MCP server ask for that unless told the agent is new;
    a program names its agents, so the Python API takes them as they come."""
    from .hot.writes import set_task

    slots = {"task": request.task, "why": request.why, "talking-to": request.talking_to}
    given = {slot: value for slot, value in slots.items() if value is not None}
    _writing_as(ctx, request.agent, request.new_agent)
    return _said(_noted(ctx, set_task(ctx, request.agent, given)))


def hot_add(ctx: Context, request: HotAddRequest) -> WriteReport:
    """Record an action, decision, blocker or note in the agent's hot tier.

    `source` says where the text came from: text from `tool` output or the `web` is marked
    untrusted, shown as such in prompts, and never promoted to the wiki. `new_agent=False`
    refuses an unknown agent, as for `hot_set`.
    """
    from .hot.writes import add

    trust = trust_of_source(request.source)
    _writing_as(ctx, request.agent, request.new_agent)
    return _said(_noted(ctx, add(ctx, request.agent, request.kind, request.text, trust)))


def hot_unblock(ctx: Context, request: HotUnblockRequest) -> WriteReport:
    """Remove a blocker (matched by id or by text); the resolution is kept as an action."""
    from .hot.writes import unblock

    agents.require(_writing(ctx), request.agent, even_alone=True)
    return _said(unblock(ctx, request.agent, request.text))


def hot_clear(ctx: Context, request: AgentRequest) -> WriteReport:
    """Empty the hot tier; its content is archived and queued for Scribe first."""
    from .hot.writes import clear

    agents.require(_writing(ctx), request.agent, even_alone=True)
    return _said(clear(ctx, request.agent))


def hot_view(ctx: Context, request: AgentRequest) -> HotView:
    """The agent's hot tier; NotFoundError for an agent with no memory at all."""
    view = render.hot_view(_ready(ctx), request.agent)
    if view is not None:
        return render.shown(view)
    agents.require(ctx, request.agent, even_alone=True)
    from .results.hot import HotView

    return HotView(request.agent, "", 0, render.hot_markdown(request.agent, []), ())


def team(ctx: Context, _: NoRequest) -> list[AgentInfo]:
    """Every agent of the team: Squad's agent folders and every agent with memory."""
    return agents.roster(_ready(ctx))


# --- reading --------------------------------------------------------------------------


def search(ctx: Context, request: SearchRequest) -> Searched:
    """BM25 search over every tier and the archive: `limit` results after the first `offset`,
    with where the next page starts; using a cold entry refreshes it.

    With an agent, the search covers that agent's memory, the team's and the whole wiki, the
    agent's own entries ranking first on a par. A query of entry ids reads those entries
    whole, and says what became of those forgotten.
    """
    from .search import hits

    _ready(ctx)
    if request.agent is not None:
        agents.require(ctx, request.agent)
    return hits.search(ctx, request)


def read_entry(ctx: Context, request: ReadEntryRequest) -> EntryText:
    """Any id a search or spawn gives, read whole: a tier entry (its metadata, and the title
    that starts its text, as outputs show them: `text.shown`), an archived record
    (`a-0123456789-abcdef0123`, byte for byte) or one section of it
    (`a-0123456789-abcdef0123#4`)."""
    from .search.lookup import read_entry

    return read_entry(_ready(ctx), request.id.strip(), request.agent)


def tier_text(ctx: Context, request: ReadTierRequest) -> str:
    """The markdown of a tier file (hot/cold of an agent, or a wiki topic)."""
    from .errors import NotFoundError
    from .storage import files

    path = ctx.layout.tier_file(request.tier, request.name)
    text = files.read_text(ctx.layout, path)
    if text is None:
        raise NotFoundError(f"no {request.tier} file for {request.name!r}")
    return text


def forget(ctx: Context, request: ForgetRequest) -> ForgetReport:
    """Retire an entry (a long entry's parts go together) from every tier; its text stays in
    the archive. `purge` deletes the text from the archive and the index too."""
    from .upkeep.forget import forget

    with _writing(ctx).index.uncounted():  # it reads ids and text, and shows no token count
        return _said(forget(ctx, request.id, request.reason, request.purge))


def reindex(ctx: Context, request: ReindexRequest) -> list[str]:
    """Rebuild the index, or (check) list how it differs from the files."""
    if request.check:
        return _ready(ctx).index.check()
    report = _ready(ctx).index.rebuild()
    for error in report.errors:
        ctx.skipped(str(error))
    return [f"indexed {report.scanned} files"]


# --- Scribe, decisions, wiki, spawn, import -------------------------------------------


def end_session(ctx: Context, request: AgentRequest) -> SessionReport:
    """Compress the agent's hot tier into a dated cold entry and reset hot."""
    from .scribe.session import end_session

    agents.require(_writing(ctx), request.agent, even_alone=True)
    return _noted(ctx, end_session(ctx, request.agent))


def scribe_run(ctx: Context, request: ScribeRunRequest) -> RunReport:
    """Scribe maintenance: checkpoints, inbox merge, supersede, promote, expire."""
    from .scribe.maintenance import run

    _ready(ctx) if request.dry_run else _writing(ctx)
    return _noted(ctx, run(ctx, dry_run=request.dry_run))


def decide(ctx: Context, request: DecideRequest) -> list[str]:
    """Record a team decision (also appended to Squad's decisions.md); return its ids.
    `new_agent=False` refuses a `by` the team does not know, as a likely typo."""
    from .team.decisions import decide

    _writing_as(ctx, request.by, request.new_agent)
    return decide(ctx, request.text, request.by)


def wiki_write(ctx: Context, request: WikiWriteRequest) -> WikiEntry:
    """Ask Scribe for a wiki entry on a topic (`new_agent=False`: refuse an unknown `by`)."""
    from .team.wiki import write

    author = request.by or "team"
    _writing_as(ctx, author, request.new_agent or not request.by)
    return write(ctx, request.topic, request.text, author)


def wiki_pages(ctx: Context, _: NoRequest) -> list[Page]:
    """Every wiki topic page with its size."""
    from .team.wiki import pages

    return pages(_ready(ctx))


def wiki_read(ctx: Context, request: TopicRequest) -> str:
    """A wiki topic page's markdown."""
    from .team.wiki import read

    return read(ctx, request.topic)


def spawn(ctx: Context, request: SpawnRequest) -> SpawnResult:
    """Render the prompt for spawning an agent on a task: the options are the fields of
    `SpawnRequest`, where each is described."""
    from .spawn import log as spawn_log
    from .spawn import task
    from .spawn.assemble import assemble

    agents.require(_ready(ctx), request.agent)
    budget = ctx.config.spawn.budget_tokens if request.budget is None else request.budget
    # The task as a prompt shows it, and the log keeps: its ends trimmed, fitted to the room.
    request = replace(request, task=task.fitted(ctx, request.task.strip(), budget))
    result = assemble(ctx, request)
    result.notes = ctx.take_notes()
    spawn_log.record(ctx, request.task, result)
    return result


def log(ctx: Context, request: LogRequest) -> SpawnLog:
    """Logged spawns, newest first: what each got, or (entry) which spawns got an entry."""
    from .results.spawn import SpawnLog
    from .spawn import log as spawn_log

    _ready(ctx)
    if request.agent is not None:
        agents.require(ctx, request.agent)
    end = request.offset + request.limit
    found, skipped = spawn_log.spawns(ctx, request.agent, request.entry, end)
    return SpawnLog(found[request.offset :], request.agent or "", request.entry or "", skipped)


def import_squad(ctx: Context, request: ImportRequest) -> ImportReport:
    """Import the root's existing `.squad/` memory into tiers (archive first).

    A dry run performs the whole import on a scratch copy and writes nothing here: the report
    says where each entry would land after Scribe's pass.
    """
    from .squad.importer import squad_import

    (ctx if request.dry_run else _writing(ctx)).take_notes()
    return _noted(ctx, squad_import.run(ctx, dry_run=request.dry_run, progress=request.progress))


def report(ctx: Context, request: ReportRequest) -> ReportResult:
    """Write the report page (one self-contained HTML file) into `out` (default:
    `.squad/memory/tiermem-local/report/`, git-ignored); with a task and an agent, it previews
    that spawn entry by entry."""
    from .report.html_page import build, output_folder

    if (request.task is None) != (request.agent is None):
        raise UsageError("a spawn preview needs both a task and an agent")
    _ready(ctx)
    if request.agent is not None:
        agents.require(ctx, request.agent)
    _ = ctx.config  # read now: a damaged config.toml is said before the folder is made
    folder, local = output_folder(ctx, request.out)
    # '-' reads stdin: the task without its last newline.
    task = None if request.task is None else request.task.strip()
    return build(ctx, folder, request.agent, task, local)


def doctor(ctx: Context, request: DoctorRequest) -> DoctorReport:
    """Check the store after a merge or a crash; with `repair`, mend what is safe to mend.

    Runs on a store that other commands refuse (a link in its folders): it says why.
    """
    from .upkeep.doctor import run

    if request.repair:
        ctx.host.check_writable()
    return run(ctx, repair=request.repair)


def stats(ctx: Context, _: NoRequest) -> Stats:
    """Entries, bytes and tokens per agent and tier, and what a Squad spawn loads."""
    from .upkeep.stats import collect

    return collect(_ready(ctx))


def door(name: str) -> Callable[[Context, object], object]:
    """The door of an operation, by its `Memory` method's name (`operations.Operation.door`)."""
    found: Callable[[Context, object], object] = globals()[name]
    return found
