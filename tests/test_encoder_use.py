"""The token encoding (tiktoken's o200k_base: about 0.35 s and 80 MB to make) is loaded only
by a command that must show the count of a text no process has counted yet.

Counts are kept by the index, by document and by the hash of the text, so a store read
before answers from them: writes to hot, Scribe's steps, the wiki, `forget`, `doctor`,
`log`, a search of what was counted, `stats` of a counted store and a spawn asked again as
it was load nothing. Each
command runs in a process of its own, as a user runs it, which then says whether tiktoken
was imported.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reliability import child_env

NOW = "2026-03-02T10:00:00Z"
RUNNER = (  # prints with repr, after the command's own output
    "import sys\n"
    "from tiermem.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "from tiermem.index import tokens\n"
    "print(repr({'code': code, 'tiktoken': 'tiktoken' in sys.modules,"
    " 'made': bool(tokens._LOADED)}))\n"
)


def run(root: Path, *argv: str) -> tuple[str, bool]:
    """A command in a process of its own: its output, and whether it loaded the encoding."""
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, "--root", str(root), "--now", NOW, *argv],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    *printed, last = done.stdout.splitlines()
    said = ast.literal_eval(last)
    assert said["code"] == 0, done.stderr
    assert said["tiktoken"] == said["made"]  # imported only to be made
    return "\n".join(printed), said["made"]


@pytest.fixture
def counted(tmp_path: Path) -> Path:
    """A store with every tier, whose texts a spawn has counted (as a team's store is after
    its first spawns): the commands below find the counts there."""
    made = (
        ["init"],
        ["hot", "set", "ada", "--new-agent", "--task", "Ship the release pipeline"],
        ["hot", "note", "ada", "The release pipeline signs every tag with the team key."],
        ["hot", "decide", "ada", "Release tags are signed by the pipeline, never by hand."],
        ["scribe", "end-session", "ada"],
        ["decision", "add", "--by", "ada", "Always sign release tags in the pipeline."],
        ["scribe", "run"],
        ["wiki", "write", "--by", "ada", "release", "Releases are cut from main on Tuesdays."],
        ["spawn", "ada", "--task", "Cut the next release", "--auto"],
        ["stats"],
    )
    for argv in made:
        run(tmp_path, *argv)
    return tmp_path


def _first_id(root: Path, query: str) -> str:
    printed, _ = run(root, "search", query, "--format", "json")
    hits = json.loads(printed)
    return str(hits[0]["id"])


def test_commands_that_show_no_new_count_never_load_the_encoding(counted: Path) -> None:
    wiki_id = _first_id(counted, "Tuesdays")
    steps = [
        ["stats"],  # every text counted already
        ["search", "signed", "release", "tags"],
        ["hot", "show", "ada"],
        ["hot", "set", "ada", "--task", "Feed the otters", "--why", "They are hungry."],
        ["hot", "note", "ada", "Otters hold hands while they sleep."],
        ["hot", "decide", "ada", "Otters are fed at noon, never at night."],
        ["hot", "action", "ada", "Fed the otters at the aquarium."],
        ["hot", "block", "ada", "Waiting on the otter keeper."],
        ["hot", "unblock", "ada", "Waiting on the otter keeper."],
        ["search", "signed", "release", "tags"],  # the new notes are not among its results
        ["decision", "add", "--by", "ada", "The keeper feeds the otters every day."],
        ["doctor"],
        ["wiki", "list"],
        ["wiki", "show", "release"],
        ["wiki", "write", "--by", "ada", "zoo", "Otters are fed at noon by the keeper."],
        ["log", "--entry", wiki_id],
        ["scribe", "end-session", "ada"],
        ["scribe", "run"],
        ["forget", "--reason", "wrong page", wiki_id],
        ["hot", "clear", "ada"],
    ]
    loaded = [" ".join(argv) for argv in steps if run(counted, *argv)[1]]
    assert loaded == []


def test_a_search_counts_what_it_shows_that_was_never_counted_once(counted: Path) -> None:
    run(counted, "hot", "note", "ada", "Zebras were moved to the north paddock.")
    printed, loaded = run(counted, "search", "zebras", "paddock", "--format", "json")
    assert loaded  # its result's tokens are the count of a text no process counted
    first = json.loads(printed)
    again, loaded_again = run(counted, "search", "zebras", "paddock", "--format", "json")
    assert not loaded_again  # kept by the first
    assert json.loads(again) == first
    assert first[0]["tokens"] > 0


def test_a_spawn_asked_again_as_it_was_counts_nothing_new(counted: Path) -> None:
    spawn = ["spawn", "ada", "--task", "Sign the zebra release tags", "--auto", "--format", "json"]
    first, loaded = run(counted, *spawn)
    assert loaded  # a new task, and a prompt no process counted
    again, loaded_again = run(counted, *spawn)
    assert not loaded_again  # the same task on the same memory: every count is kept
    assert json.loads(again)["prompt"] == json.loads(first)["prompt"]
    assert json.loads(again)["tokens"] == json.loads(first)["tokens"]
    other, loaded_other = run(counted, "spawn", "ada", "--task", "Feed the zebras", "--auto")
    assert loaded_other and "Feed the zebras" in other  # a new task is counted as before


def test_stats_counts_only_text_never_counted(counted: Path) -> None:
    before, loaded = run(counted, "stats", "--format", "json")
    assert not loaded
    run(counted, "hot", "note", "ada", "Zebras were moved to the north paddock.")
    after, loaded = run(counted, "stats", "--format", "json")
    assert loaded  # the note's tokens are a figure of stats
    again, loaded = run(counted, "stats", "--format", "json")
    assert not loaded
    assert json.loads(again) == json.loads(after) != json.loads(before)


SERVER = (  # the MCP server, which says at exit whether it loaded the encoding
    "import atexit, sys\n"
    "from pathlib import Path\n"
    "said = Path(sys.argv.pop())\n"
    "def say():\n"
    "    from tiermem.index import tokens\n"
    "    said.write_text(repr(['tiktoken' in sys.modules, bool(tokens._LOADED)]))\n"
    "atexit.register(say)\n"
    "from tiermem.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_the_mcp_server_starts_and_answers_a_search_without_the_encoding(
    counted: Path, tmp_path: Path
) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    said = tmp_path / "said"
    argv = ["-c", SERVER, "--root", str(counted), "--now", NOW, "serve", str(said)]
    server = StdioServerParameters(command=sys.executable, args=argv, env=child_env())

    async def session() -> dict[str, object]:
        async with Client(server) as client:
            await client.list_tools()
            found = await client.call_tool("search", {"query": "signed release tags"})
            assert not found.is_error and isinstance(found.structured_content, dict)
            hot = await client.call_tool("hot_show", {"agent": "ada"})
            assert not hot.is_error
            return found.structured_content

    answer = anyio.run(session)
    results = answer["results"]
    assert isinstance(results, list) and results
    assert ast.literal_eval(said.read_text()) == [False, False]
