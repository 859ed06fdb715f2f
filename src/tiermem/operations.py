"""Each operation declared once with its door: the `Memory` method it calls, the request
it takes (`options`), the CLI command and the MCP tool that offer it, and how the command
prints its result. The CLI's subcommands (`cli.parser`) and the MCP tools (`server.mcp_server`)
follow from `OPERATIONS`.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from .render import printers

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Callable

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


def operation(door: str) -> Operation:
    """The operation whose door is this `Memory` method."""
    [found] = [op for op in OPERATIONS if op.door == door]
    return found
