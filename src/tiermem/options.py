"""Each operation's request declared once: its fields, with their types, defaults, help and
what a value must be.

Each field of a request carries an `Option` in its metadata: its help text, how the command
line spells it, and what a value must be (one of its `choices`, a `name`, a text, an entry id,
a number within bounds). The fronts build a request from what they were given (`request_from`),
`Memory` checks it against its declaration (`checked`) and the step receives it whole. The
CLI's flags (`cli.parser`), the MCP tools' parameters (`server.mcp_server`) and the keyword
arguments of each `Memory` method are the fields of its request (`tests/test_options.py`
holds the three the same), so a new option, a default or a help text is written here and in
the step that acts on it, nowhere else. Which operations there are: `operations`.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, dataclass, field, fields, replace
from pathlib import Path

from .errors import UsageError
from .storage import validate
from .vocabulary import FILE_TIERS, HOT_KINDS, SOURCES, TIERS

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _Request = TypeVar("_Request")

    from .vocabulary import FileTier, HotKind, Source, Tier

OPTION = "option"
# The field every writer asks "may this agent be new?" by: the fronts offer False (a name the
# team does not know is refused as a likely typo), a program gets True (`Option.offered`).
GUARD = "new_agent"


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

    What a given value must be (`checked`): one of `choices`; a `shape`, "name" (an agent or
    topic: `validate.name`), "text" (`validate.text`) or "entry" (an entry id, as search and
    spawn list them); a number from `least` to `most` (of `unit`). A refusal calls the value
    `what`, or the field's name. `offered` is the default the CLI and the MCP tools give a
    switch where it differs from the default a program gets (`new_agent`).
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
    shape: str = ""
    least: int | None = None
    most: int | None = None
    unit: str = ""
    offered: bool | None = None  # the fronts' default, where it is not a program's


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
    shape="name",
)
TOPIC = option(
    "wiki topic, e.g. 'release': 1-64 letters, digits, '.', '_' or '-'",
    cli="positional",
    metavar="TOPIC",
    brief="",
    shape="name",
    what="topic",
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
_COUNT: dict[str, Any] = {"least": 1, "most": validate.MAX_SEARCH_LIMIT}  # results asked for


def _new_agent() -> Any:
    """A program names its agents: an agent is taken as it comes unless the caller asks for
    the check. The fronts ask for it unless told the agent is new (a typed name)."""
    return _given(
        "the agent is new to the team (without it, a name that Squad does not list and that "
        "has no memory is refused as a likely typo, naming the nearest agents)",
        True,
        brief="",  # the server's instructions say it once
        offered=False,
    )


# --- requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class HotSetRequest:
    """Set the agent's current task (and why, and who it talks to)."""

    agent: str = field(metadata=AGENT)
    task: str = field(
        metadata=option(
            "what the agent is doing now; replaces the previous task",
            stdin=True,
            brief="",
            shape="text",
        )
    )
    why: str | None = _maybe(
        "why the task matters; omitted, the current why stays",
        "TEXT",
        stdin=True,
        shape="text",
        **_KEPT,
    )
    talking_to: str | None = _maybe(
        "who the agent works with; omitted, the current one stays",
        "NAME",
        shape="text",
        what="talking-to",
        **_KEPT,
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
            what="hot slot",
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
            shape="text",
            what="blocker",
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
            shape="text",
        )
    )
    agent: str | None = _maybe(
        "search this agent's memory, the team's and the wiki",
        "AGENT",
        brief="this agent's memory, the team's and the wiki",
        shape="name",
    )
    tier: Tier | None = _maybe(
        "only this tier (omitted: every tier and the archive)", "TIER", choices=TIERS, brief=""
    )
    limit: int = _given("at most this many results", 10, metavar="K", brief="", **_COUNT)
    offset: int = _given(
        "skip this many results (the next page's offset a search gives)",
        0,
        metavar="N",
        brief="",  # the server's instructions say how a list is paged
        least=0,
    )


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
            shape="text",
        )
    )
    agent: str | None = _maybe(
        "the agent whose archive holds a record (found if omitted)",
        "AGENT",
        brief="",
        shape="name",
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
            shape="text",
            what="wiki text",
        )
    )
    by: str = _given(
        "the agent asking (default: the team)",
        "",
        metavar="AGENT",
        brief="",
        shape="name",
        what="agent",
    )
    new_agent: bool = _new_agent()


@dataclass(frozen=True)
class DecideRequest:
    """A team decision."""

    text: str = field(
        metadata=_text(
            "the decision (markdown; its first line is its title)", what="decision", shape="text"
        )
    )
    by: str = field(metadata=option("who decided", metavar="AGENT", shape="name", what="agent"))
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
            shape="entry",
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
    task: str | None = _maybe(
        "preview the spawn of --agent on this task", "T", stdin=True, shape="text"
    )
    agent: str | None = _maybe("the agent of the spawn preview", "A", shape="name")


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

    agent: str | None = _maybe("only spawns of this agent", "AGENT", shape="name")
    entry: str | None = _maybe(
        "only spawns that loaded this entry (or one of its parts)", "ID", shape="entry"
    )
    limit: int = _given("at most this many spawns", 50, metavar="N", **_COUNT)
    offset: int = _given("skip this many spawns (the newest)", 0, metavar="N", least=0)


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
    task: str = field(
        metadata=option("the task to start the agent on", stdin=True, brief="", shape="text")
    )
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
        least=0,
        unit="tokens",
    )
    charter: bool = _switch("include the agent's Squad charter", brief="")
    refs: bool = _switch(
        "name the tier files instead of inlining their text", brief="name tier files, not inline"
    )


REQUIRED = object()  # the default of a field that has none


def options_of(request: type) -> list[tuple[str, Option, object]]:
    """(name, option, default) of each field of a request class, in order: the default the
    fronts offer."""
    return [(item.name, item.metadata[OPTION], _offered(item)) for item in fields(request)]


def _offered(item: Field[Any]) -> object:
    offered: bool | None = item.metadata[OPTION].offered
    if offered is not None:
        return offered
    return REQUIRED if item.default is MISSING else item.default


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


def request_from(kind: type[_Request], given: dict[str, Any]) -> _Request:
    """The request a front was given (`values`), as the one object the step receives."""
    return kind(**values(kind, given))


def checked(request: _Request) -> _Request:
    """The request, each value given checked against its field's declaration (a value left
    at its default is one the declaration chose): the request itself when all hold, with
    names lower-cased as stored when one is not; one line (`UsageError`) when one fails."""
    changed: dict[str, Any] = {}
    for name, item, default in options_of(type(request)):
        value = getattr(request, name)
        if isinstance(value, list):  # a program's list of values
            value = changed[name] = tuple(value)
        if value is None or (default is not REQUIRED and value == default):
            continue
        what = item.what or name
        if item.choices and value not in item.choices:
            raise UsageError(
                f"unknown {what} {value!r} (expected one of {', '.join(item.choices)})"
            )
        found = _shaped(item.shape, value, what)
        if item.least is not None or item.most is not None:
            _within(item, value, what)
        if found != value:
            changed[name] = found
    return replace(request, **changed) if changed else request  # type: ignore[type-var]


def _shaped(shape: str, value: Any, what: str) -> Any:
    if shape == "name":
        return validate.name(value, what)
    if shape == "text":
        return validate.text(value, what)
    if shape == "entry" and not validate.entry_id(value):
        raise UsageError(f"{value!r} is not an entry id (as search and spawn list them)")
    return value


def _within(item: Option, value: int, what: str) -> None:
    """A number within its field's bounds, or one line saying them."""
    low, high = item.least, item.most
    if (low is None or value >= low) and (high is None or value <= high):
        return
    unit = f" {item.unit}" if item.unit else ""
    if high is not None:
        raise UsageError(f"{what} must be between {low} and {high}{unit}")
    raise UsageError(f"{what} must be {'zero' if low == 0 else low} or more{unit}")
