"""A command's options, declared once: the fields of its typed request.

Each field of a request (`SpawnRequest`) carries an `Option` in its metadata: its help text
and how the command line spells it. The CLI's flags (`cli`), the MCP tool's parameters
(`mcp_server`) and the keyword arguments of the `Memory` method follow from the fields, so
a new option, a default or a help text is written here and nowhere else.
"""

from __future__ import annotations

from .record import field, record

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from typing import Any

OPTION = "option"


@record(frozen=True)
class Option:
    """How one field of a request is offered: its help text, and how a command line takes it.

    `cli` is "flag" (`--name VALUE`, or a switch for a bool), "positional", "repeat" (a flag
    given once per value) or "words" (a flag followed by zero or more values). `stdin` says
    the command line reads the value from stdin when it is `-`.
    """

    help: str  # may name a setting's default, as "{spawn.budget_tokens}" (see `described`)
    cli: str = "flag"
    metavar: str | None = None
    stdin: bool = False


def option(help: str, **how: Any) -> dict[str, Option]:
    """A field's metadata: its `Option`."""
    return {OPTION: Option(help, **how)}


@record(frozen=True)
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


REQUIRED = object()  # the default of a field that has none


def options_of(request: type) -> list[tuple[str, Option, object]]:
    """(name, option, default) of each field of a request class, in order."""
    return [
        (spec.name, spec.metadata[OPTION], getattr(request, spec.name, REQUIRED))
        for spec in request.__dict__["__record_fields__"]
    ]


def described(item: Option) -> str:
    """An option's help text, with the settings' defaults it names filled in (config.py
    states each default once)."""
    from .storage import config

    return item.help.format(spawn=config.SpawnConfig)


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
