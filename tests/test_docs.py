"""The examples in the docs run, in order, against a scratch store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks(name: str) -> list[str]:
    return _BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


def test_api_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks("api.md")
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"root": tmp_path}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "must not contain" in printed  # the error examples printed their one-line messages
    assert "unknown agent 'nobody'" in printed


# --- the MCP tools the docs name --------------------------------------------------------------

_NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve thirteen "
_NUMBERS += "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
_TOOL_ROW = re.compile(r"^\| `(\w+)\(", re.MULTILINE)
_TOOL_COUNT = re.compile(r"server's (\w+) tools")


def served_tools(root: Path) -> set[str]:
    """The tools the real server lists, asked through the MCP SDK's own client."""
    import anyio
    from mcp import Client

    from tiermem.memory import Memory
    from tiermem.server.mcp_server import build_server

    async def names() -> set[str]:
        async with Client(build_server(Memory(root))) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    return anyio.run(names)


def test_the_docs_name_every_mcp_tool_the_server_lists_and_count_them(tmp_path: Path) -> None:
    from tiermem.memory import Memory
    from tiermem.squad.install import install_texts

    Memory.init(tmp_path)
    served = served_tools(tmp_path)
    mcp = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert set(_TOOL_ROW.findall(mcp)) == served  # one row per tool in the tools table
    squad = (DOCS / "squad.md").read_text(encoding="utf-8")
    counts = _TOOL_COUNT.findall(squad)
    assert counts and {_NUMBERS.split().index(c) for c in counts} == {len(served)}
    # Every tool the installed charter sections and skill tell agents to call exists.
    installed = install_texts.SKILL + install_texts.agent_memory_block("ada", False)
    installed += install_texts.agent_memory_block("scribe", True) + install_texts.spawn_block("")
    named = set(re.findall(r"`(\w+)`(?: tool|\s*\|)", installed))
    named |= set(re.findall(r"\(tool: `(\w+)`", installed))
    named |= set(re.findall(r"`(hot_\w+|wiki_\w+|read_\w+|end_session)`", installed))
    assert named and named <= served, named - served


def test_the_mcp_docs_name_result_fields_as_the_sdk_client_exposes_them() -> None:
    from mcp.types import CallToolResult

    mcp = (DOCS / "mcp.md").read_text(encoding="utf-8")
    fields = CallToolResult.model_fields
    attributes = set(re.findall(r"`result\.(\w+)`", mcp))
    assert attributes == {"structured_content", "is_error"}
    assert attributes <= set(fields)
    wire = {
        name
        for name in re.findall(r"`(\w+)(?:: true)?`", mcp)
        if name in ("structuredContent", "isError")
    }
    assert wire == {fields[a].alias for a in attributes}


# --- what the test command needs --------------------------------------------------------------

_NEEDY = """
import pytest

pytestmark = pytest.mark.ci_installs("Chromium")


def test_needs_a_browser() -> None:
    pytest.skip("chromium is not installed")


@pytest.mark.skipif(True, reason="no browser on this machine")
def test_skipped_by_its_mark() -> None:
    pass


def test_plain() -> None:
    pass
"""

_PLAIN = """
import pytest


def test_optional() -> None:
    pytest.skip("the shared corpora are absent")
"""


def run_pytest(folder: Path, ci: str | None) -> tuple[int, str]:
    """pytest on a folder of tests with this project's plugin, as CI (or a person) runs it."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_skips", "-rs", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_outside_ci_a_skip_says_why(tmp_path: Path, ci: str | None) -> None:
    (tmp_path / "test_needy.py").write_text(_NEEDY, encoding="utf-8")
    (tmp_path / "test_plain.py").write_text(_PLAIN, encoding="utf-8")
    code, out = run_pytest(tmp_path, ci)
    assert code == 0, out
    assert "1 passed, 3 skipped" in out
    for reason in ("chromium is not installed", "no browser on this machine", "corpora are absent"):
        assert "SKIPPED [1] " in out and reason in out


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_under_ci_a_test_ci_installs_for_fails_when_it_skips(tmp_path: Path, ci: str) -> None:
    (tmp_path / "test_needy.py").write_text(_NEEDY, encoding="utf-8")
    (tmp_path / "test_plain.py").write_text(_PLAIN, encoding="utf-8")
    code, out = run_pytest(tmp_path, ci)
    assert code == 1, out
    # A skip in the test fails it; a skip by its mark fails its setup (an error); the skip of
    # what CI does not install stays a skip.
    assert "1 failed, 1 passed, 1 skipped, 1 error" in out
    assert "CI installs Chromium for this test, yet it skipped: chromium is not installed" in out
    assert "yet it skipped: no browser on this machine" in out


def test_the_tests_that_need_what_ci_installs_are_marked() -> None:
    tests = Path(__file__).parent
    for name in ("test_squad_real.py", "test_report_browser.py"):
        assert "pytestmark = pytest.mark.ci_installs(" in (tests / name).read_text("utf-8")


def test_the_readme_says_what_the_test_command_needs_and_skips_say_why() -> None:
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    run = (root / ".ci" / "run").read_text(encoding="utf-8")
    installers = re.findall(r"^(\.ci/install-\w+)$", run, re.MULTILINE)
    assert installers and all(f"`{name}`" in readme for name in installers)
    assert "skip" in readme and "CI=true" in readme
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    flags = re.search(r'^addopts = ".*-r(\w+)', pyproject, re.MULTILINE)
    assert flags and {"s", "f", "E"} <= set(flags.group(1))  # skips, failures, errors
