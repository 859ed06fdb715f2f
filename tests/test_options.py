"""A command's options are declared once, as the fields of its request: the CLI's flags, the
MCP tool's parameters and `Memory`'s keyword arguments are built from them and agree."""

from __future__ import annotations

import argparse
import asyncio
import inspect
from pathlib import Path

from tiermem.cli.parser import build_parser
from tiermem.memory import Memory
from tiermem.options import REQUIRED, SpawnRequest, described, options_of
from tiermem.server.mcp_server import build_server

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
        prop = schema["properties"][name]
        assert prop["description"].lower() == described(item).lower() + ".", name
        if default is not REQUIRED:
            expected = list(default) if isinstance(default, tuple) else default
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
