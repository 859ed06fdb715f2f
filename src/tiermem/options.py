"""Each operation declared once: its request (the fields, with their types, defaults and
help) and its door (the `Memory` method it calls, the CLI command and the MCP tool that
offer it).

Each field of a request carries an `Option` in its metadata: its help text and how the
command line spells it. The CLI's subcommands and flags (`cli.parser`), the MCP tools and
their parameters (`server.mcp_server`) follow from `OPERATIONS`, and the keyword arguments
of each `Memory` method are the fields of its request (`tests/test_options.py` holds the
three the same), so a new option, a default or a help text is written here and nowhere else.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path

from .render import printers
from .vocabulary import FILE_TIERS, HOT_KINDS, SOURCES, TIERS

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .vocabulary import FileTier, HotKind, Source, Tier

OPTION = "option"
# The field the fronts ask "is this agent new?" by; `Memory` takes its opposite, `known_only`
# (a program names its agents, so the Python API checks a name only when asked).
GUARD, GUARDED = "new_agent", "known_only"


@dataclass(frozen=True, slots=True)
class Option:
    """How one field of a request is offered: its help text, and how a command line takes it.

    `cli` is "flag" (`--name VALUE`, or a switch for a bool), "positional", "joined" (one or
    more words, joined by spaces), "repeat" (a flag given once per value), "words" (a flag
    followed by zero or more values), "verb" (the command's last word, one of `verbs`: the
    value each gives and its help) or "none" (the command line sets it itself). `stdin`
    says the command line reads the value from stdin when it is `-`; `choices` are the
    values it may take; `keeps` says an MCP client that omits it keeps what is there (and
    may not send null, which would say neither). `brief` is what an MCP tool tells a model,
    every session, when it needs less than the command line's help ("": the name says it).
    """

    help: str  # may name a setting's default, as "{spawn.budget_tokens}" (see `described`)
    cli: str = "flag"
    metavar: str | None = None
    stdin: bool = False
    choices: tuple[str, ...] | None = None
    keeps: bool = False
    verbs: tuple[tuple[str, str, str], ...] = ()  # (verb, value, help) of a "verb" field
    what: str = ""  # what a refusal calls the value, when not the field's name
    brief: str | None = None  # what a model is told of it, when less than `help`


def option(help: str, **how: Any) -> dict[str, Option]:
    """A field's metadata: its `Option`."""
    return {OPTION: Option(help, **how)}


# The metadata of fields many requests have (each field is made with `field`, so that type
# checkers see which have no default).
AGENT = option(
    "agent name, e.g. 'flight': 1-64 letters, digits, '.', '_' or '-'",
    cli="positional",
    metavar="AGENT",
    brief="",
)
TOPIC = option(
    "wiki topic, e.g. 'release': 1-64 letters, digits, '.', '_' or '-'",
    cli="positional",
    metavar="TOPIC",
    brief="",
)


def _text(help: str, **how: Any) -> dict[str, Option]:
    """The metadata of a text given as a positional, or on stdin."""
    return option(help, cli="positional", metavar="TEXT", stdin=True, **how)


def _given(help: str, default: Any, **how: Any) -> Any:
    """A field that has a default."""
    return field(default=default, metadata=option(help, **how))


def _switch(help: str, **how: Any) -> Any:
    return _given(help, False, **how)


def _maybe(help: str, metavar: str, **how: Any) -> Any:
    return _given(help, None, metavar=metavar, **how)


_KEPT: dict[str, Any] = {"keeps": True, "brief": "omitted: kept"}  # omitted, what is there stays


def _new_agent() -> Any:
    return _switch(
        "the agent is new to the team (without it, a name that Squad does not list and that "
        "has no memory is refused as a likely typo, naming the nearest agents)",
        brief="",  # the server's instructions say it once
    )


# --- requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class HotSetRequest:
    """Set the agent's current task (and why, and who it talks to)."""

    agent: str = field(metadata=AGENT)
    task: str = field(
        metadata=option(
            "what the agent is doing now; replaces the previous task", stdin=True, brief=""
        )
    )
    why: str | None = _maybe(
        "why the task matters; omitted, the current why stays", "TEXT", stdin=True, **_KEPT
    )
    talking_to: str | None = _maybe(
        "who the agent works with; omitted, the current one stays", "NAME", **_KEPT
    )
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class HotAddRequest:
    """Record an action, decision, blocker or note in the agent's hot tier."""

    agent: str = field(metadata=AGENT)
    kind: HotKind = field(
        metadata=option(
            "what the text is: 'action' (something done; only the last few stay hot), "
            "'decision' (made this session), 'blocker' (carried into the next session), "
            "'note' (anything else worth keeping this session)",
            cli="verb",
            choices=HOT_KINDS,
            verbs=(
                ("action", "action", "record something the agent did (only the last 5 stay)"),
                ("decide", "decision", "record a decision made in this session"),
                ("block", "blocker", "record a blocker (carried into the next session)"),
                ("note", "note", "record a session note"),
            ),
            brief="",  # the instructions say what each is for
        )
    )
    text: str = field(
        metadata=_text(
            "the text to record (markdown; its first line is its title)",
            brief="markdown; its first line is its title",
        )
    )
    source: Source = _given(
        "where the text came from; tool output and web text are kept as untrusted data: "
        "marked in prompts and never promoted to the wiki",
        "agent",
        choices=SOURCES,
        brief="tool and web text is kept as untrusted",
    )
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class HotUnblockRequest:
    """Resolve one blocker of the agent; the resolution is kept as an action."""

    agent: str = field(metadata=AGENT)
    text: str = field(
        metadata=_text(
            "the blocker's id, or text that matches exactly one blocker",
            brief="the blocker's id, or text matching one blocker",
        )
    )


@dataclass(frozen=True)
class AgentRequest:
    """One agent's memory (its hot tier shown or cleared, its session ended)."""

    agent: str = field(metadata=AGENT)


@dataclass(frozen=True)
class SearchRequest:
    """What to look for, and where."""

    query: str = field(
        metadata=option(
            'words to look for (BM25; any may match; a "quoted run" matches as a phrase), or '
            "entry ids to read those entries",
            cli="joined",
            metavar="QUERY",
            stdin=True,
            brief='words, any may match ("quoted" for a phrase), or entry ids',
        )
    )
    agent: str | None = _maybe(
        "search this agent's memory, the team's and the wiki",
        "AGENT",
        brief="this agent's memory, the team's and the wiki",
    )
    tier: Tier | None = _maybe(
        "only this tier (omitted: every tier and the archive)", "TIER", choices=TIERS, brief=""
    )
    limit: int = _given("at most this many results", 10, metavar="K", brief="")


@dataclass(frozen=True)
class ReadEntryRequest:
    """Any id a search or a spawn gives."""

    id: str = field(
        metadata=option(
            "any id a search result, a spawn's sources or left-out list, or a summary's sources "
            "gives: a tier entry ('c-0123abcd45'), an archived record ('a-0123abcd45-6789abcdef', "
            "its raw text byte for byte) or a section of one ('a-0123abcd45-6789abcdef#4')",
            cli="positional",
            metavar="ID",
            brief="",  # the tool's description says it
        )
    )
    agent: str | None = _maybe(
        "the agent whose archive holds a record (found if omitted)", "AGENT", brief=""
    )


@dataclass(frozen=True)
class ReadTierRequest:
    """One tier file."""

    tier: FileTier = field(
        metadata=option(
            "'hot' or 'cold' (name is an agent) or 'wiki' (name is a topic)",
            cli="positional",
            choices=FILE_TIERS,
            brief="",
        )
    )
    name: str = field(
        metadata=option("the agent (hot, cold) or topic (wiki)", cli="positional", metavar="NAME")
    )


@dataclass(frozen=True)
class NoRequest:
    """An operation that takes nothing."""


@dataclass(frozen=True)
class TopicRequest:
    """One wiki page."""

    topic: str = field(metadata=TOPIC)


@dataclass(frozen=True)
class WikiWriteRequest:
    """A wiki entry asked of Scribe."""

    topic: str = field(metadata=TOPIC)
    text: str = field(
        metadata=_text(
            "the entry: a first line as its title, then the policy, decision, convention or "
            "contract",
            brief="a title line, then the policy, decision, convention or contract",
        )
    )
    by: str = _given("the agent asking (default: the team)", "", metavar="AGENT", brief="")
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class DecideRequest:
    """A team decision."""

    text: str = field(
        metadata=_text("the decision (markdown; its first line is its title)", what="decision")
    )
    by: str = field(metadata=option("who decided", metavar="AGENT"))
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class ForgetRequest:
    """An entry to retire."""

    id: str = field(
        metadata=option(
            "the entry's id, as search and spawn list it (e.g. 'c-0123abcd45'), or a passage of "
            "archived text ('a-...', 'a-...#3') to retire from search and spawns",
            cli="positional",
            metavar="ID",
            brief="an entry's id, or an archived passage's ('a-...#3')",
        )
    )
    reason: str = _given(
        "why it is wrong or stale (kept in the audit trail)",
        "",
        metavar="TEXT",
        stdin=True,
        brief="",
    )
    purge: bool = _switch(
        "delete the text from the archive and the index too (a leaked credential); leaves an "
        "audited tombstone",
        brief="delete the text from the archive too (a leaked secret)",
    )


@dataclass(frozen=True)
class ScribeRunRequest:
    """Scribe's maintenance."""

    dry_run: bool = _switch("report what would change; write nothing")


@dataclass(frozen=True)
class ReportRequest:
    """The report page, and the spawn it previews."""

    out: str | Path | None = field(
        default=None,
        metadata=option(
            "folder for report.html (default: .squad/memory/tiermem-local/report, git-ignored)",
            metavar="DIR",
        ),
    )
    task: str | None = _maybe("preview the spawn of --agent on this task", "T", stdin=True)
    agent: str | None = _maybe("the agent of the spawn preview", "A")


@dataclass(frozen=True)
class ReindexRequest:
    """A rebuild of the index, or its check."""

    check: bool = _switch("only report drift (exit 1 if any)")


@dataclass(frozen=True)
class DoctorRequest:
    """A check of the store."""

    repair: bool = _switch("repair what is safe to repair")


@dataclass(frozen=True)
class LogRequest:
    """Which spawns to list."""

    agent: str | None = _maybe("only spawns of this agent", "AGENT")
    entry: str | None = _maybe("only spawns that loaded this entry (or one of its parts)", "ID")
    limit: int = _given("at most this many spawns", 50, metavar="N")


@dataclass(frozen=True)
class ImportRequest:
    """An import of Squad's memory."""

    dry_run: bool = _switch(
        "run the import on a scratch copy and print where entries would land; write nothing"
    )
    progress: bool = _switch("show progress on stderr", cli="none")


# No slots: the class's attributes are its defaults, which `Memory.spawn`'s keywords take.
@dataclass(frozen=True)
class SpawnRequest:
    """What the coordinator asks for."""

    agent: str = field(metadata=AGENT)
    task: str = field(metadata=option("the task to start the agent on", stdin=True, brief=""))
    why: str = _given(
        "why the task matters; omitted (or null), the prompt has no WHY", "", brief=""
    )
    criteria: tuple[str, ...] = _given(
        "a success criterion (one each)", (), cli="repeat", metavar="TEXT", brief="success criteria"
    )
    include_cold: bool = _switch("add the relevant past-session summaries", brief="")
    # None: no wiki; (): the relevant pages; names: those topics' relevant entries.
    include_wiki: tuple[str, ...] | None = _maybe(
        "add wiki entries: of these topics, or the relevant pages when none is named",
        "TOPIC",
        cli="words",
        brief="these topics' ([]: the relevant ones)",
    )
    include_archive: bool = _switch(
        "add relevant archived text (raw text kept when it was summarised)", brief=""
    )
    auto: bool = _switch(
        "choose the tiers from the task and memory, and say why",
        brief="choose the tiers from the task",
    )
    budget: int | None = _maybe(
        "tokens of the whole prompt, frame and hot included "
        "(default from config: {spawn.budget_tokens})",
        "TOKENS",
        brief="prompt tokens (default {spawn.budget_tokens})",
    )
    charter: bool = _switch("include the agent's Squad charter", brief="")
    refs: bool = _switch(
        "name the tier files instead of inlining their text", brief="name tier files, not inline"
    )


# --- operations -----------------------------------------------------------------------


PAGE_CHARS = 8000  # about 2,000 tokens: the page of a text an MCP tool answers with


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation and its door: the `Memory` method it calls (`door`, taking the fields of
    `request`), the CLI command that offers it (`command`, its words; none when empty; a
    "verb" field adds the last word), the MCP tool (`tool`, its `title` and `effect`: "read",
    "add", "replace", "remove" or "forget"; none when None), and how the command prints its
    result (`formats`: the `--format` choices, the first the default; `prints`: its printer,
    a function of `render.printers`, None for the result's own text, lines or JSON).

    A tool pages a long answer: a text, `page_chars` characters from an `offset` (as the text
    field `pages` names of another result); a list, `limit` items under the name `pages`
    gives them ("items" when none)."""

    door: str
    request: type
    help: str
    command: tuple[str, ...] = ()
    tool: str | None = None
    title: str = ""
    effect: str = "read"
    formats: tuple[str, ...] = ()
    prints: Callable[[printers.Command], int] | None = None
    pages: str = ""
    page_chars: int = PAGE_CHARS


_TEXT_JSON = ("text", "json")

OPERATIONS = (
    Operation(
        "hot_set",
        HotSetRequest,
        "set the agent's current task (and why, and who it talks to) in its hot tier",
        ("hot", "set"),
        tool="hot_set",
        title="Set current task",
        effect="replace",
        prints=printers.written,
    ),
    Operation(
        "hot_add",
        HotAddRequest,
        "record an action, decision, blocker or note in the agent's hot tier",
        ("hot",),
        tool="hot_add",
        title="Record in hot memory",
        effect="add",
        prints=printers.written,
    ),
    Operation(
        "hot_unblock",
        HotUnblockRequest,
        "resolve one of the agent's blockers; the resolution is kept as an action",
        ("hot", "unblock"),
        tool="hot_unblock",
        title="Resolve a blocker",
        effect="remove",
        prints=printers.written,
    ),
    Operation(
        "hot_view",
        AgentRequest,
        "show an agent's hot tier: task, why, decisions, recent actions, blockers and notes",
        ("hot", "show"),
        tool="hot_show",
        title="Show hot memory",
        formats=_TEXT_JSON,
        prints=printers.markdown,
        pages="markdown",
    ),
    Operation(
        "hot_clear",
        AgentRequest,
        "empty the hot tier (its text is archived first)",
        ("hot", "clear"),
        prints=printers.written,
    ),
    Operation(
        "search",
        SearchRequest,
        "search every tier and the archive (BM25), best first",
        ("search",),
        tool="search",
        title="Search memory",
        formats=_TEXT_JSON,
        prints=printers.searched,
    ),
    Operation(
        "read_entry",
        ReadEntryRequest,
        "read one entry, archived record or section whole, by the id search gives",
        tool="read_entry",
        title="Read an entry by id",
        pages="text",
    ),
    Operation(
        "tier_text",
        ReadTierRequest,
        "read a tier file's markdown: an agent's hot or cold file, or a wiki page",
        tool="read_tier",
        title="Read a tier file",
    ),
    Operation(
        "wiki_write",
        WikiWriteRequest,
        "ask Scribe for a wiki entry on a topic (the raw request is archived first)",
        ("wiki", "write"),
        tool="wiki_write",
        title="Request a wiki entry",
        effect="add",
        prints=printers.wiki_entry,
    ),
    Operation(
        "wiki_pages",
        NoRequest,
        "list the team wiki's pages with their entry counts and sizes",
        ("wiki", "list"),
        tool="wiki_list",
        title="List wiki pages",
        formats=_TEXT_JSON,
        prints=printers.pages,
        pages="pages",
    ),
    Operation(
        "wiki_read",
        TopicRequest,
        "read one wiki page's markdown",
        ("wiki", "show"),
        tool="wiki_read",
        title="Read a wiki page",
    ),
    Operation(
        "team",
        NoRequest,
        "list the team's agents: Squad's agent folders and every agent with memory",
        tool="agents",
        title="List the team's agents",
        pages="agents",
    ),
    Operation(
        "spawn",
        SpawnRequest,
        "render the prompt that starts an agent on a task, with only the memory it needs",
        ("spawn",),
        tool="spawn",
        title="Render a spawn prompt",
        formats=("markdown", "json"),
        prints=printers.spawned,
        # A prompt is bounded by its token budget already: this cut stops only a budget set
        # far too high.
        pages="prompt",
        page_chars=40_000,
    ),
    Operation(
        "end_session",
        AgentRequest,
        "end the agent's session: Scribe compresses hot into a dated cold entry and resets hot",
        ("scribe", "end-session"),
        tool="end_session",
        title="End the session",
        effect="replace",
        formats=_TEXT_JSON,
        prints=printers.sessions,
    ),
    Operation(
        "scribe_run",
        ScribeRunRequest,
        "maintenance: inbox merge, checkpoints, supersede, promote to wiki, expire, use",
        ("scribe", "run"),
        formats=_TEXT_JSON,
        prints=printers.scribe_ran,
    ),
    Operation(
        "decide",
        DecideRequest,
        "record a team decision (also in .squad/decisions.md)",
        ("decision", "add"),
        prints=printers.decided,
    ),
    Operation(
        "forget",
        ForgetRequest,
        "retire a wrong or stale entry from every tier (its text stays in the archive unless "
        "purged), or an archived passage from search and spawns",
        ("forget",),
        tool="forget",
        title="Forget an entry",
        effect="forget",
        formats=_TEXT_JSON,
    ),
    Operation(
        "report",
        ReportRequest,
        "write one HTML page of the store: agents, budgets, Scribe, wiki, stale, entries",
        ("report",),
        formats=_TEXT_JSON,
        prints=printers.reported,
    ),
    Operation(
        "reindex",
        ReindexRequest,
        "rebuild the search index from the files",
        ("reindex",),
        prints=printers.reindexed,
    ),
    Operation(
        "doctor",
        DoctorRequest,
        "check a store after a merge or a crash, and repair what is safe",
        ("doctor",),
        formats=_TEXT_JSON,
        prints=printers.doctored,
    ),
    Operation(
        "stats",
        NoRequest,
        "entries, bytes and tokens per agent and tier",
        ("stats",),
        formats=_TEXT_JSON,
        prints=printers.stats,
    ),
    Operation(
        "log",
        LogRequest,
        "which spawns got an entry, and what each spawn got (this clone's log)",
        ("log",),
        formats=_TEXT_JSON,
        prints=printers.spawn_log,
    ),
    Operation(
        "import_squad",
        ImportRequest,
        "import .squad/ histories and decisions into tiers",
        ("import", "squad"),
        formats=_TEXT_JSON,
        prints=printers.imported,
    ),
)

REQUIRED = object()  # the default of a field that has none


def options_of(request: type) -> list[tuple[str, Option, object]]:
    """(name, option, default) of each field of a request class, in order."""
    return [
        (item.name, item.metadata[OPTION], REQUIRED if item.default is MISSING else item.default)
        for item in fields(request)
    ]


def described(item: Option) -> str:
    """An option's help text, with the settings' defaults it names filled in (config.py
    states each default once)."""
    from .storage import config

    return item.help.format(spawn=config.SpawnConfig())


def told(item: Option) -> str:
    """What an MCP tool tells a model of a field: its brief, else its help ("": nothing)."""
    return described(item if item.brief is None else replace(item, help=item.brief))


def values(request: type, given: dict[str, Any]) -> dict[str, Any]:
    """The fields of a request from what a caller gave (the command line, an MCP client): a
    field given as None takes its default, a list of values becomes a tuple."""
    found: dict[str, Any] = {}
    for name, _, default in options_of(request):
        value = given.get(name)
        if isinstance(value, list):
            value = tuple(value)
        found[name] = default if value is None else value
    return found


def door_values(request: type, given: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of an operation's `Memory` method from what a front was given:
    the fields, `GUARD` turned into its opposite."""
    found = values(request, given)
    if GUARD in found:
        found[GUARDED] = not found.pop(GUARD)
    return found


def operation(door: str) -> Operation:
    """The operation whose door is this `Memory` method."""
    [found] = [op for op in OPERATIONS if op.door == door]
    return found
