"""`tiermem demo` explains each step and ends with what to try next; `--help` of the main
commands carries examples."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

RunCli = Callable[..., tuple[int, str, str]]


def test_the_demo_explains_each_step_and_ends_with_what_to_try(run_cli: RunCli) -> None:
    code, out, err = run_cli("demo")
    assert (code, err) == (0, "")
    sections = out.split("\n== ")[1:]
    assert len(sections) >= 6
    for section in sections:
        heading, _, rest = section.partition("\n")
        explanation = rest.lstrip().split("\n", 1)[0]
        assert explanation.endswith((".", ":")) and len(explanation.split()) >= 6, heading
    assert out.rstrip().split("What to try next:")[1].count("tiermem ") >= 4


def test_the_demo_pins_only_a_policy_the_npm_task_needs(run_cli: RunCli) -> None:
    _, out, _ = run_cli("demo")
    prompt = out.split("# Spawn: lead", 1)[1]
    pinned = re.search(r'<memory tier="policy" pinned="true">\n(.*?)</memory>', prompt, re.S)
    assert pinned, "the release policy is pinned"
    assert "npm" in pinned.group(1) and "timers" not in pinned.group(1)


def test_the_demo_kept_tells_where_to_go(run_cli: RunCli, tmp_path: Path) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    code, out, _ = run_cli("demo", "--root", str(folder), "--keep")
    assert code == 0 and f"cd {folder} && tiermem hot show lead" in out
    assert run_cli("--root", str(folder), "hot", "show", "tester")[0] == 0


@pytest.mark.parametrize(
    "command", [("hot",), ("spawn",), ("search",), ("scribe",), ("import", "squad"), ("init",)]
)
def test_main_commands_show_examples_in_their_help(
    run_cli: RunCli, command: tuple[str, ...]
) -> None:
    code, out, _ = run_cli(*command, "--help")
    assert code == 0
    examples = out.split("examples:\n", 1)[1]
    assert examples.strip().startswith(("tiermem", "cd ", "git "))
    assert f"tiermem {command[0]}" in examples
