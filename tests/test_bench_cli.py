"""`tiermem bench` registers its own commands, runs each from one table, and reads nothing
outside what the user names."""

from __future__ import annotations

import argparse

import pytest

from tiermem.bench import arguments as bench_arguments
from tiermem.bench import runners as bench_runners
from tiermem.cli.parser import build_parser


def _bench_commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(["bench"])
    [top] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    bench: argparse.ArgumentParser = top.choices["bench"]
    [verbs] = [a for a in bench._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(verbs.choices)


def test_every_registered_command_has_its_runner_and_help() -> None:
    commands = _bench_commands()
    assert set(commands) == set(bench_runners._COMMANDS)
    assert all(parser.description for parser in commands.values())


def test_no_default_reaches_outside_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench_arguments.CORPORA_VARIABLE, raising=False)
    monkeypatch.delenv(bench_arguments.LOCOMO_VARIABLE, raising=False)
    commands = _bench_commands()
    for parser in commands.values():
        for action in parser._actions:
            assert "shared" not in str(action.default), (parser.prog, action.dest)
    assert commands["all"].parse_args([]).corpora is None
    assert commands["speed"].parse_args([]).locomo == ""


def test_the_variables_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bench_arguments.CORPORA_VARIABLE, "/data/corpora")
    monkeypatch.setenv(bench_arguments.LOCOMO_VARIABLE, "/data/locomo-dev.json")
    commands = _bench_commands()
    assert commands["all"].parse_args([]).corpora == "/data/corpora"
    assert commands["speed"].parse_args([]).locomo == "/data/locomo-dev.json"


def test_all_without_corpora_is_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tiermem.cli.main import main

    monkeypatch.delenv(bench_arguments.CORPORA_VARIABLE, raising=False)
    assert main(["bench", "all"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--corpora DIR (or TIERMEM_CORPORA)" in err
