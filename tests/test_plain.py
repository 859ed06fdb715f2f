"""Lines read without argparse (`cli.plain`) hold what argparse would hold, and every other
line (help, mistakes, anything unusual) is left to argparse."""

from __future__ import annotations

import argparse
import contextlib
import io
import random

import pytest

from tiermem.cli import main as cli
from tiermem.cli import plain
from tiermem.cli.parser import build_parser

# Values a line may hold where a word goes: plain words, empty, stdin, and what argparse
# reads as an option or a negative number.
WORDS = ("ada", "two words", "", "-", "-5", "-x", "--", "hot", "show", "json", "1e3")
OPTIONS = (
    "--root",
    "--now",
    "--format",
    "--source",
    "--agent",
    "--tier",
    "--limit",
    "--new-agent",
    "--ro",
    "--format=json",
    "--help",
    "-h",
)
VALUES = ("json", "text", "yaml", "tool", "web", "cold", "7", "07", "-1", "x", "", "²")


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """What argparse holds for a line, or None when it refuses it (or prints help)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(build_parser(argv).parse_args(argv))
        except SystemExit:
            return None


def _line(rng: random.Random, words: tuple[str, ...]) -> list[str]:
    """A command line of a plain form: its words, its positionals and options (the form's
    own, with their values, or others) anywhere, now and then one too many or too few."""
    form = cli._PLAIN[words]
    many = [rng.randint(1, 3) if p.endswith("...") else 1 for p in form.positionals]
    line = [*words, *(rng.choice(WORDS) for n in many for _ in range(n))]
    if rng.random() < 0.2:
        del line[rng.randint(0, len(line) - 1)]
    ours = [*form.options, *plain.EVERYWHERE]
    for _ in range(rng.randint(0, 4)):
        option = rng.choice(ours) if rng.random() < 0.8 else rng.choice(OPTIONS)
        takes = form.options.get(option, ())
        value = rng.choice(takes if isinstance(takes, tuple) and takes else VALUES)
        at = rng.randint(0, len(line))
        line[at:at] = [option] if takes is plain.SWITCH else [option, value]
    return line


@pytest.mark.parametrize("words", list(cli._PLAIN), ids=" ".join)
def test_a_plain_line_holds_what_argparse_holds(words: tuple[str, ...]) -> None:
    rng = random.Random(" ".join(words))
    read = 0
    for _ in range(400):
        argv = _line(rng, words)
        found = plain.parse(argv, cli._PLAIN)
        if found is not None:
            read += 1
            assert vars(found) == _argparse(argv), argv
    assert read >= 40  # the plain reading is taken often, not only in the simplest lines


@pytest.mark.parametrize(
    "argv",
    [
        ["hot", "show", "ada"],
        ["hot", "show", "ada", "--format", "json", "--root", "r"],
        ["--now", "2026-01-01", "hot", "note", "-", "ada", "--new-agent", "--source", "tool"],
        ["hot", "--root", "r", "decide", "ada", "", "--source", "web"],
        ["hot", "unblock", "ada", "b1"],
        ["hot", "clear", "ada"],
        ["search", "release notes", "--limit", "3", "--tier", "wiki", "--agent", "ada"],
    ],
    ids=" ".join,
)
def test_the_lines_users_run_most_are_read_plainly(argv: list[str]) -> None:
    found = plain.parse(argv, cli._PLAIN)
    assert found is not None
    assert vars(found) == _argparse(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["hot", "show", "ada", "--help"],
        ["hot", "show", "-h"],
        ["hot", "show"],
        ["hot", "show", "ada", "bob"],
        ["hot", "show", "ada", "--format", "yaml"],
        ["hot", "show", "ada", "--form", "json"],
        ["hot", "show", "ada", "--format=json"],
        ["hot", "--format", "json", "show", "ada"],
        ["hot", "note", "ada", "-5"],
        ["hot", "note", "ada", "x", "--new-agent", "--new-agent"],
        ["hot", "note", "ada", "--", "-x"],
        ["hot", "set", "ada", "--task", "t"],
        ["search", "q", "--limit", "-1"],
        ["search", "q", "--limit", "²"],
        ["--root", "a", "search", "q", "--root", "b"],
        ["--version"],
        [],
    ],
    ids=lambda argv: " ".join(argv) or "nothing",
)
def test_help_mistakes_and_the_unusual_are_left_to_argparse(argv: list[str]) -> None:
    assert plain.parse(argv, cli._PLAIN) is None


def _parser_of(words: tuple[str, ...], whole: bool = False) -> argparse.ArgumentParser:
    """The parser of a command's words, from a tree built for them (or the whole tree)."""
    node = build_parser(None if whole else list(words))
    for word in words:
        node = next(
            a.choices[word] for a in node._actions if isinstance(a, argparse._SubParsersAction)
        )
    return node


@pytest.mark.parametrize("words", list(cli._PLAIN), ids=" ".join)
def test_a_plain_form_is_its_parser(words: tuple[str, ...]) -> None:
    """Each form takes the positionals, options, choices and defaults its parser takes."""
    form, parser = cli._PLAIN[words], _parser_of(words)
    positionals = [a.dest for a in parser._actions if not a.option_strings]
    assert [p.removesuffix("...") for p in form.positionals] == positionals
    options = {
        a.option_strings[-1]: a
        for a in parser._actions
        if a.option_strings and a.option_strings[-1] not in ("--help", *plain.EVERYWHERE)
    }
    assert set(form.options) == set(options)
    for name, action in options.items():
        takes = form.options[name]
        if takes is plain.SWITCH:
            assert isinstance(action, argparse._StoreTrueAction), name
        elif takes == plain.INT:
            assert action.type is int and action.choices is None, name
        else:
            assert tuple(action.choices or ()) == takes, name
    assert form.defaults() == {a.dest: a.default for a in options.values()}
    assert parser.get_default("handler") is form.handler


@pytest.mark.parametrize("words", list(cli._PLAIN), ids=" ".join)
def test_a_plain_command_s_help_is_the_whole_tree_s(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        cli.main([*words, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == _parser_of(words, whole=True).format_help()
