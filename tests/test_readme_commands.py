"""The README's command table is the parser's: every command is in it, as the parser takes
it, and every command and action has its help."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from tiermem.cli import parser as cli

ROOT = Path(__file__).resolve().parent.parent


def _script() -> object:
    spec = importlib.util.spec_from_file_location(
        "readme_commands", ROOT / "scripts/readme_commands.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_is_the_parsers() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    made = _script().with_table(text)  # type: ignore[attr-defined]
    assert made == text, "README.md's command table differs: run scripts/readme_commands.py"
    assert "| `tiermem demo" in text and "| `tiermem spawn --task TASK" in text


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    """(prog, help) of every command and action below a parser."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                found += [(sub.prog, helps.get(name)), *_commands(sub)]
    return found


def test_every_command_has_help_and_a_row() -> None:
    commands = _commands(cli.build_parser())
    assert len(commands) > 40  # every action of every command was walked
    assert [prog for prog, help_text in commands if not help_text] == []
    top = {prog.split()[1] for prog, _ in commands}
    # A command of operations not in _ABOUT is described by its declaration.
    assert set(cli._ABOUT) <= top and set(cli._HELP) < top
