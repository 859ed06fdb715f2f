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

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from .vocabulary import FILE_TIERS, HOT_KINDS, SOURCES, TIERS

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from typing import Any

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
    may not send null, which would say neither).
    """

    help: str  # may name a setting's default, as "{spawn.budget_tokens}" (see `described`)
    cli: str = "flag"
    metavar: str | None = None
    stdin: bool = False
    choices: tuple[str, ...] | None = None
    keeps: bool = False
    verbs: tuple[tuple[str, str, str], ...] = ()  # (verb, value, help) of a "verb" field
    what: str = ""  # what a refusal calls the value, when not the field's name


def option(help: str, **how: Any) -> dict[str, Option]:
    """A field's metadata: its `Option`."""
    return {OPTION: Option(help, **how)}


# The metadata of fields many requests have (each field is made with `field`, so that type
# checkers see which have no default).
AGENT = option(
    "agent name, e.g. 'flight': 1-64 letters, digits, '.', '_' or '-'",
    cli="positional",
    metavar="AGENT",
)
TOPIC = option(
    "wiki topic, e.g. 'release': 1-64 letters, digits, '.', '_' or '-'",
    cli="positional",
    metavar="TOPIC",
)


def _new_agent() -> Any:
    return field(
        default=False,
        metadata=option(
            "the agent is new to the team (without it, a name that Squad does not list and "
            "that has no memory is refused as a likely typo, naming the nearest agents)"
        ),
    )


def _text(help: str, **how: Any) -> dict[str, Option]:
    """The metadata of a text given as a positional, or on stdin."""
    return option(help, cli="positional", metavar="TEXT", stdin=True, **how)


def _switch(help: str) -> Any:
    return field(default=False, metadata=option(help))


def _maybe(help: str, metavar: str, **how: Any) -> Any:
    return field(default=None, metadata=option(help, metavar=metavar, **how))


# --- requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class HotSetRequest:
    """Set the agent's current task (and why, and who it talks to)."""

    agent: str = field(metadata=AGENT)
    task: str = field(
        metadata=option("what the agent is doing now; replaces the previous task", stdin=True)
    )
    why: str | None = _maybe(
        "why the task matters; omitted, the current why stays", "TEXT", stdin=True, keeps=True
    )
    talking_to: str | None = _maybe(
        "who the agent works with; omitted, the current one stays", "NAME", keeps=True
    )
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class HotAddRequest:
    """Record an action, decision, blocker or note in the agent's hot tier."""

    agent: str = field(metadata=AGENT)
    kind: str = field(
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
        )
    )
    text: str = field(metadata=_text("the text to record (markdown; its first line is its title)"))
    source: str = field(
        default="agent",
        metadata=option(
            "where the text came from; tool output and web text are kept as untrusted data: "
            "marked in prompts and never promoted to the wiki",
            choices=SOURCES,
        ),
    )
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class HotUnblockRequest:
    """Resolve one blocker of the agent; the resolution is kept as an action."""

    agent: str = field(metadata=AGENT)
    text: str = field(metadata=_text("the blocker's id, or text that matches exactly one blocker"))


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
        )
    )
    agent: str | None = _maybe("search this agent's memory, the team's and the wiki", "AGENT")
    tier: str | None = _maybe(
        "only this tier (omitted: every tier and the archive)", "TIER", choices=TIERS
    )
    limit: int = field(default=10, metadata=option("at most this many results", metavar="K"))


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
        )
    )
    agent: str | None = _maybe("the agent whose archive holds a record (found if omitted)", "AGENT")


@dataclass(frozen=True)
class ReadTierRequest:
    """One tier file."""

    tier: str = field(
        metadata=option(
            "'hot' or 'cold' (name is an agent) or 'wiki' (name is a topic)",
            cli="positional",
            choices=FILE_TIERS,
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
            "contract"
        )
    )
    by: str = field(
        default="", metadata=option("the agent asking (default: the team)", metavar="AGENT")
    )
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
        )
    )
    reason: str = field(
        default="",
        metadata=option(
            "why it is wrong or stale (kept in the audit trail)", metavar="TEXT", stdin=True
        ),
    )
    purge: bool = _switch(
        "delete the text from the archive and the index too (a leaked credential); leaves an "
        "audited tombstone"
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
            "folder for report.html (default: .squad/memory/local/report, git-ignored)",
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
    limit: int = field(default=50, metadata=option("at most this many spawns", metavar="N"))


@dataclass(frozen=True)
class ImportRequest:
    """An import of Squad's memory."""

    dry_run: bool = _switch(
        "run the import on a scratch copy and print where entries would land; write nothing"
    )
    progress: bool = field(default=False, metadata=option("show progress on stderr", cli="none"))


# No slots: the class's attributes are its defaults, which `Memory.spawn`'s keywords take.
@dataclass(frozen=True)
class SpawnRequest:
    """What the coordinator asks for."""

    agent: str = field(
        metadata=option(
            "agent name, e.g. 'flight': 1-64 letters, digits, '.', '_' or '-'",
            cli="positional",
            metavar="AGENT",
        )
    )
    task: str = field(metadata=option("the task to start the agent on", stdin=True))
    why: str = field(
        default="",
        metadata=option("why the task matters; omitted (or null), the prompt has no WHY"),
    )
    criteria: tuple[str, ...] = field(
        default=(), metadata=option("a success criterion (one each)", cli="repeat", metavar="TEXT")
    )
    include_cold: bool = field(
        default=False, metadata=option("add the relevant past-session summaries")
    )
    # None: no wiki; (): the relevant pages; names: those topics' relevant entries.
    include_wiki: tuple[str, ...] | None = field(
        default=None,
        metadata=option(
            "add wiki entries: of these topics, or the relevant pages when none is named",
            cli="words",
            metavar="TOPIC",
        ),
    )
    include_archive: bool = field(
        default=False,
        metadata=option("add relevant archived text (raw text kept when it was summarised)"),
    )
    auto: bool = field(
        default=False, metadata=option("choose the tiers from the task and memory, and say why")
    )
    budget: int | None = field(
        default=None,
        metadata=option(
            "tokens of the whole prompt, frame and hot included "
            "(default from config: {spawn.budget_tokens})",
            metavar="TOKENS",
        ),
    )
    charter: bool = field(default=False, metadata=option("include the agent's Squad charter"))
    refs: bool = field(
        default=False, metadata=option("name the tier files instead of inlining their text")
    )


# --- operations -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation and its door: the `Memory` method it calls (`door`, taking the fields of
    `request`), the CLI command that offers it (`command`, its words; none when empty; a
    "verb" field adds the last word), the MCP tool (`tool`, its `title` and `effect`: "read",
    "add", "replace", "remove" or "forget"; none when None), and how the command prints its
    result (`formats`: the `--format` choices, the first the default; `prints`: the name of
    its printer in `cli.handlers`, "" for the result's own lines or JSON)."""

    door: str
    request: type
    help: str
    command: tuple[str, ...] = ()
    tool: str | None = None
    title: str = ""
    effect: str = "read"
    formats: tuple[str, ...] = ()
    prints: str = ""


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
        prints="written",
    ),
    Operation(
        "hot_add",
        HotAddRequest,
        "record an action, decision, blocker or note in the agent's hot tier",
        ("hot",),
        tool="hot_add",
        title="Record in hot memory",
        effect="add",
        prints="written",
    ),
    Operation(
        "hot_unblock",
        HotUnblockRequest,
        "resolve one blocker of the agent (matched by id or text); the resolution is kept as "
        "an action",
        ("hot", "unblock"),
        tool="hot_unblock",
        title="Resolve a blocker",
        effect="remove",
        prints="written",
    ),
    Operation(
        "hot_view",
        AgentRequest,
        "show an agent's hot tier: task, why, decisions, recent actions, blockers and notes",
        ("hot", "show"),
        tool="hot_show",
        title="Show hot memory",
        formats=_TEXT_JSON,
        prints="markdown",
    ),
    Operation(
        "hot_clear",
        AgentRequest,
        "empty the hot tier (its text is archived first)",
        ("hot", "clear"),
        prints="written",
    ),
    Operation(
        "search",
        SearchRequest,
        "search every tier and the archive (BM25), best first",
        ("search",),
        tool="search",
        title="Search memory",
        formats=_TEXT_JSON,
        prints="search",
    ),
    Operation(
        "read_entry",
        ReadEntryRequest,
        "read one entry, archived record or section whole, by the id search gives",
        tool="read_entry",
        title="Read an entry by id",
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
        prints="wiki_entry",
    ),
    Operation(
        "wiki_pages",
        NoRequest,
        "list the team wiki's pages with their entry counts and sizes",
        ("wiki", "list"),
        tool="wiki_list",
        title="List wiki pages",
        formats=_TEXT_JSON,
        prints="pages",
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
    ),
    Operation(
        "spawn",
        SpawnRequest,
        "render the prompt that starts an agent on a task, with only the memory it needs",
        ("spawn",),
        tool="spawn",
        title="Render a spawn prompt",
        formats=("markdown", "json"),
        prints="spawn",
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
        prints="sessions",
    ),
    Operation(
        "scribe_run",
        ScribeRunRequest,
        "maintenance: inbox merge, checkpoints, supersede, promote to wiki, expire, use",
        ("scribe", "run"),
        formats=_TEXT_JSON,
        prints="scribe_run",
    ),
    Operation(
        "decide",
        DecideRequest,
        "record a team decision (also in .squad/decisions.md)",
        ("decision", "add"),
        prints="decided",
    ),
    Operation(
        "forget",
        ForgetRequest,
        "retire a wrong or stale entry from every tier (its text stays in the archive; --purge "
        "deletes), or an archived passage from search and spawns",
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
        prints="report",
    ),
    Operation(
        "reindex",
        ReindexRequest,
        "rebuild the search index from the files",
        ("reindex",),
        prints="reindex",
    ),
    Operation(
        "doctor",
        DoctorRequest,
        "check a store after a merge or a crash, and repair what is safe",
        ("doctor",),
        formats=_TEXT_JSON,
        prints="doctor",
    ),
    Operation(
        "stats",
        NoRequest,
        "entries, bytes and tokens per agent and tier",
        ("stats",),
        formats=_TEXT_JSON,
        prints="stats",
    ),
    Operation(
        "log",
        LogRequest,
        "which spawns got an entry, and what each spawn got (this clone's log)",
        ("log",),
        formats=_TEXT_JSON,
        prints="log",
    ),
    Operation(
        "import_squad",
        ImportRequest,
        "import .squad/ histories and decisions into tiers",
        ("import", "squad"),
        formats=_TEXT_JSON,
        prints="imported",
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
