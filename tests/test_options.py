"""Each operation is declared once (`operations.OPERATIONS`), its options as the fields of
its request: the CLI's commands and flags, the MCP tools and their parameters, and `Memory`'s
keyword arguments are built from them and agree."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tiermem.cli.parser import build_parser, reference
from tiermem.memory import Memory
from tiermem.operations import OPERATIONS, Operation, operation
from tiermem.options import (
    GUARD,
    REQUIRED,
    Option,
    SpawnRequest,
    described,
    options_of,
    told,
)
from tiermem.server.mcp_server import build_server
from tiermem.vocabulary import FILE_TIERS, HOT_KINDS, SOURCES, TIERS

FIELDS = [name for name, _, _ in options_of(SpawnRequest)]


def _spawn_parser() -> argparse.ArgumentParser:
    parser = build_parser(["spawn"])
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    spawn: argparse.ArgumentParser = commands.choices["spawn"]
    return spawn


def test_every_field_is_declared_with_its_help() -> None:
    assert FIELDS[:2] == ["agent", "task"] and {"charter", "refs", "budget"} <= set(FIELDS)
    for name, item, _ in options_of(SpawnRequest):
        assert described(item) and "{" not in described(item), name
    # The default budget is config.py's, named in the help and nowhere else.
    budget = dict((n, o) for n, o, _ in options_of(SpawnRequest))["budget"]
    assert "(default from config: 2000)" in described(budget)


def test_the_cli_flags_are_the_fields() -> None:
    actions = {a.dest: a for a in _spawn_parser()._actions}
    common = {"help", "root", "now", "inline", "format"}
    assert set(actions) - common == set(FIELDS)
    for name, item, default in options_of(SpawnRequest):
        action = actions[name]
        assert action.help is not None and action.help.startswith(described(item)), name
        assert action.required == (default is REQUIRED), name
    assert actions["agent"].option_strings == []
    assert actions["include_wiki"].option_strings == ["--include-wiki"]
    assert actions["budget"].type is int


def test_the_cli_fills_a_request_as_declared() -> None:
    from tiermem.cli import handlers

    args = _spawn_parser().parse_args(
        ["ada", "--task", "t", "--criteria", "a", "--criteria", "b", "--include-wiki", "--refs"]
    )
    values = handlers._request_values(args, SpawnRequest)
    assert SpawnRequest(**values) == SpawnRequest(
        "ada", "t", criteria=("a", "b"), include_wiki=(), refs=True
    )


def test_the_mcp_tool_parameters_are_the_fields(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path)
    tools = asyncio.run(build_server(mem).list_tools())
    [spawn] = [t for t in tools if t.name == "spawn"]
    schema = spawn.input_schema
    assert list(schema["properties"]) == [*FIELDS, "offset", "max_chars"]
    assert schema["required"] == ["agent", "task"]
    for name, item, default in options_of(SpawnRequest):
        _holds_declared(schema["properties"][name], item, default, name)


# Defaults a tool leaves unsaid: what a model assumes of an argument it omits.
ASSUMED: tuple[object, ...] = (None, False, 0, "", [])


def _holds_declared(prop: dict[str, object], item: Option, default: object, name: str) -> None:
    """A tool's parameter says what the declaration gives a model, lean: its brief (or
    nothing), its default unless a model assumes it, no title, no union with null."""
    said = told(item)
    if said:
        assert str(prop["description"]).lower() == said.lower() + ".", name
    else:
        assert "description" not in prop, name
    assert "title" not in prop and "anyOf" not in prop, name
    expected = list(default) if isinstance(default, tuple) else default
    if default is REQUIRED or item.keeps or expected in ASSUMED:
        assert "default" not in prop, name
    else:
        assert prop["default"] == expected, name


def test_the_memory_method_takes_the_fields() -> None:
    params = list(inspect.signature(Memory.spawn).parameters.values())[1:]
    annotations = inspect.get_annotations(SpawnRequest)
    assert [p.name for p in params] == FIELDS
    for param, (name, _, default) in zip(params, options_of(SpawnRequest), strict=True):
        assert param.annotation == annotations[name], name
        assert param.default == (inspect.Parameter.empty if default is REQUIRED else default)


def test_no_public_method_of_memory_takes_or_returns_any() -> None:
    for name, method in inspect.getmembers(Memory, inspect.isfunction):
        if name.startswith("_"):
            continue
        written = [str(v) for v in inspect.get_annotations(method).values()]
        assert not [w for w in written if "Any" in w], name


# --- every operation --------------------------------------------------------------------

OFFERED = [op for op in OPERATIONS if op.command]
TOOLS = [op for op in OPERATIONS if op.tool]
# What a front adds of its own: the CLI's common options and output format, a spawn's
# --inline, end-session's --all, the report's --open; the MCP tools' pages.
CLI_OWN = {"help", "root", "now", "format", "inline", "all", "open"}
MCP_OWN = {"offset", "max_chars", "limit"}


def _parsers_of(op: Operation) -> list[argparse.ArgumentParser]:
    """The parser of each command line of an operation (one per verb)."""
    found = []
    for words in _lines_of(op):
        parser: argparse.ArgumentParser = build_parser(list(words))
        for word in words:
            [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            parser = sub.choices[word]
        found.append(parser)
    return found


def _lines_of(op: Operation) -> list[tuple[str, ...]]:
    verbs = [i.verbs for _, i, _ in options_of(op.request) if i.cli == "verb"]
    return [(*op.command, v) for v, _, _ in verbs[0]] if verbs else [op.command]


def _front_fields(op: Operation, cli: bool) -> list[str]:
    """The fields a front offers as its own options ("verb" fields are a CLI's words)."""
    hidden = ("verb", "none") if cli else ()
    return [n for n, i, _ in options_of(op.request) if i.cli not in hidden]


@pytest.mark.parametrize("op", OFFERED, ids=lambda op: " ".join(op.command))
def test_each_command_is_its_operations_fields(op: Operation) -> None:
    for parser in _parsers_of(op):
        actions = {a.dest: a for a in parser._actions}
        assert set(actions) - CLI_OWN == set(_front_fields(op, cli=True)), parser.prog
        assert parser.get_default("door") == op.door
        for name, item, default in options_of(op.request):
            if name not in actions:
                continue
            action = actions[name]
            assert action.help is not None and action.help.startswith(described(item)), name
            if action.option_strings:
                assert action.required == (default is REQUIRED), name
                if default is not REQUIRED and not isinstance(default, tuple | bool):
                    assert action.default == default, name
            hint = inspect.get_annotations(op.request)[name]
            assert (action.type is int) == hint.startswith("int"), name
            assert tuple(action.choices or ()) == (item.choices or ()), name


@pytest.mark.parametrize("op", TOOLS, ids=lambda op: str(op.tool))
def test_each_tool_is_its_operations_fields(tmp_path: Path, op: Operation) -> None:
    mem, _ = Memory.init(tmp_path)
    [tool] = [t for t in asyncio.run(build_server(mem).list_tools()) if t.name == op.tool]
    schema = tool.input_schema["properties"]
    fields = _front_fields(op, cli=False)
    assert [n for n in schema if n in fields or n not in MCP_OWN] == fields
    assert tool.description == described(Option(op.help))[:1].upper() + op.help[1:] + "."
    for name, item, default in options_of(op.request):
        _holds_declared(schema[name], item, default, name)
        required = name in tool.input_schema.get("required", [])
        assert required == (default is REQUIRED), name
        assert tuple(schema[name].get("enum", ())) == (item.choices or ()), name


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.door)
def test_each_memory_method_takes_its_operations_fields(op: Operation) -> None:
    """Same names, in order, same types and defaults; `new_agent` defaults to True for a
    program, which names its agents, the one difference."""
    params = list(inspect.signature(getattr(Memory, op.door)).parameters.values())[1:]
    assert [p.name for p in params] == [n for n, _, _ in options_of(op.request)]
    annotations = inspect.get_annotations(op.request)
    for param, (name, _, default) in zip(params, options_of(op.request), strict=True):
        assert param.annotation == annotations[name], name
        if name == GUARD:
            assert param.default is True  # a program's write to a new agent just works
            continue
        assert param.default == (inspect.Parameter.empty if default is REQUIRED else default)


def test_every_name_a_front_offers_comes_from_the_vocabulary() -> None:
    declared = {item.choices for op in OPERATIONS for _, item, _ in options_of(op.request)}
    assert declared - {None} == {TIERS, FILE_TIERS, SOURCES, HOT_KINDS}


def test_a_new_command_is_its_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operation given CLI words becomes a command, its help and its printing included,
    with nothing written for it but its declaration (here: `team`, an MCP tool alone)."""
    from tiermem import operations
    from tiermem.cli.main import main

    team = replace(operation("team"), command=("team",), formats=("text", "json"))
    given = tuple(team if op.door == "team" else op for op in OPERATIONS)
    monkeypatch.setattr(operations, "OPERATIONS", given)
    root = ("--root", str(tmp_path))
    assert main([*root, "init"]) == 0
    assert main([*root, "hot", "note", "ada", "--new-agent", "a note"]) == 0
    capsys.readouterr()
    assert main([*root, "team"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 1 and json.loads(said[0])["name"] == "ada"
    assert main([*root, "team", "--format", "json"]) == 0
    assert [a["name"] for a in json.loads(capsys.readouterr().out)] == ["ada"]
    assert "team" in "\n".join(reference())


def test_a_new_tool_with_a_list_result_is_its_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operation whose `Memory` method returns a list becomes an MCP tool with nothing
    written for it but its declaration (here `decide`, a command alone, whose result is the
    list of ids it wrote): paged by `limit` and `offset`, its items under the name declared."""
    from mcp import Client

    from tiermem import operations

    decide = replace(
        operation("decide"), tool="decide", title="Record a decision", effect="add", pages="ids"
    )
    given = tuple(decide if op.door == "decide" else op for op in OPERATIONS)
    monkeypatch.setattr(operations, "OPERATIONS", given)
    mem, _ = Memory.init(tmp_path)

    async def asked() -> tuple[dict[str, object], dict[str, object], dict[str, object]]:
        async with Client(build_server(mem)) as client:
            [tool] = [t for t in (await client.list_tools()).tools if t.name == "decide"]
            text = "# Use semver\nEvery release gets a semver tag."
            arguments = {"text": text, "by": "lead", "new_agent": True, "limit": 1}
            result = await client.call_tool("decide", arguments)
            assert not result.is_error and isinstance(result.structured_content, dict)
            return tool.input_schema, tool.annotations.model_dump(), result.structured_content

    schema, hints, answer = asyncio.run(asked())
    assert list(schema["properties"]) == ["text", "by", "new_agent", "limit", "offset"]
    assert hints["destructive_hint"] is False and hints["read_only_hint"] is None
    ids = answer["ids"]
    assert isinstance(ids, list) and len(ids) == 1 and str(ids[0]).startswith("d-")
    assert answer["next_offset"] in (None, 1)


def test_a_printer_is_named_by_the_function() -> None:
    """An operation's command prints with the function it names (`render.printers`), not
    a name looked up elsewhere; none names its result's own text, lines or JSON."""
    from tiermem.render import printers

    named = [op.prints for op in OPERATIONS if op.prints is not None]
    assert len(named) >= 10
    for printer in named:
        assert callable(printer) and getattr(printers, printer.__name__) is printer
    assert operation("search").prints is printers.searched
    assert operation("read_entry").prints is None
