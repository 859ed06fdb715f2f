"""Every command the same way: typos in agent names, a reader that stops early, an entry read
by id, a dry run's words, a name with spaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import copy_of
from tiermem.memory import Memory

RunCli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def repo(built_store: Path, tmp_path: Path) -> Path:
    """A copy of the shared store (agents eecom and flight, every tier, a logged spawn)."""
    root = copy_of(built_store, tmp_path)
    mem = Memory(root, now="2026-03-02T12:00:00Z")
    mem.spawn("flight", "Ship the login fix", auto=True)
    mem.close()
    return root


# --- a typo in an agent's name ----------------------------------------------------------------

# Every command that names an agent, with the typo `flite` (the team has `flight`).
TYPOS = [
    ("hot", "show", "flite"),
    ("hot", "note", "flite", "a note"),
    ("hot", "clear", "flite"),
    ("spawn", "flite", "--task", "ship it"),
    ("search", "login", "--agent", "flite"),
    ("log", "--agent", "flite"),
    ("scribe", "end-session", "flite"),
    ("decision", "add", "--by", "flite", "Use tags"),
    ("wiki", "write", "release", "Tag it\nbody", "--by", "flite"),
    ("report", "--agent", "flite", "--task", "ship it"),
]


@pytest.mark.parametrize("args", TYPOS, ids=lambda a: " ".join(a[:2]))
def test_every_command_that_names_an_agent_refuses_a_typo_the_same_way(
    repo: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    before = snapshot(repo)
    code, out, err = run_cli(*args, "--root", str(repo))
    assert (code, out) == (2, "")
    assert err.startswith("tiermem: error: unknown agent 'flite'; did you mean 'flight'?")
    assert err.count("\n") == 1
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    "args",
    [("decision", "add", "--by", "capcom", "Use tags"), ("wiki", "write", "release", "T\nb")],
)
def test_a_writer_new_to_the_team_says_so(
    repo: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    extra = () if "--by" in args else ("--by", "capcom")
    code, _, err = run_cli(*args, *extra, "--root", str(repo))
    assert code == 2 and "unknown agent 'capcom'" in err
    code, _, err = run_cli(*args, *extra, "--new-agent", "--root", str(repo))
    assert (code, err) == (0, "")


@pytest.mark.parametrize("name", ["comic book guy", "Comic Book Guy", " comic  book guy"])
def test_a_name_with_spaces_gets_the_dashed_name(repo: Path, run_cli: RunCli, name: str) -> None:
    code, _, err = run_cli("hot", "set", name, "--task", "x", "--new-agent", "--root", str(repo))
    assert code == 2
    assert err.rstrip().endswith("did you mean 'comic-book-guy'?")


# --- a reader that stops early ----------------------------------------------------------------

PIPED = [
    ("log",),
    ("log", "--format", "json"),
    ("search", "release login"),
    ("stats",),
    ("hot", "show", "flight"),
    ("wiki", "show", "release"),
    ("wiki", "list"),
    ("spawn", "flight", "--task", "Ship the login fix", "--auto"),
    ("doctor",),
    ("--help",),
    ("search", "--help"),
]


@pytest.mark.parametrize("args", PIPED, ids=" ".join)
def test_a_closed_pipe_ends_any_command_quietly(repo: Path, args: tuple[str, ...]) -> None:
    env = {**os.environ, "TIERMEM_ROOT": str(repo)}
    command = [sys.executable, "-m", "tiermem", *args]
    # The reader is gone before the first byte is written: every write meets a closed pipe.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(command, stdout=writer, stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr.decode()) == (0, "")


# --- search by id -----------------------------------------------------------------------------


def test_search_by_id_prints_the_whole_entry_in_text_as_in_json(
    repo: Path, run_cli: RunCli
) -> None:
    mem = Memory(repo)
    long_text = "The login fix needs the staging keys. " + "More detail follows here. " * 40
    mem.hot_add("flight", "note", long_text)
    mem.end_session("flight")
    found = [h for h in mem.search("staging keys detail") if h.tier == "archive"]
    mem.close()
    record = found[0].id
    cold = next(h.id for h in Memory(repo).search("staging keys detail", tier="cold"))
    for ids in (record, cold, f"{record} {cold}"):
        code, out, _ = run_cli("search", ids, "--format", "json", "--root", str(repo))
        assert code == 0
        texts = [hit["text"].rstrip() for hit in json.loads(out)]
        code, out, err = run_cli("search", ids, "--root", str(repo))
        assert (code, err) == (0, "")
        for text in texts:
            assert text in out  # whole, lines and all
        assert sum(t.count("More detail follows here.") for t in texts) == out.count(
            "More detail follows here."
        )


def test_search_by_id_shows_control_characters_as_escapes(repo: Path, run_cli: RunCli) -> None:
    mem = Memory(repo)
    mem.hot_add("flight", "note", "colours \x1b[31mred\x1b[0m from a tool", source="tool")
    mem.end_session("flight")
    hit = next(h for h in mem.search("colours red tool") if h.tier == "cold")
    mem.close()
    code, out, _ = run_cli("search", hit.id, "--root", str(repo))
    assert code == 0 and "\x1b" not in out and "\\x1b[31mred" in out


# --- a dry run says what the run does ---------------------------------------------------------


def test_a_dry_run_of_scribe_says_what_the_run_then_does(tmp_path: Path, run_cli: RunCli) -> None:
    mem, _ = Memory.init(tmp_path, now="2026-01-01T10:00:00Z")
    mem.hot_set("ada", "Pin the toolchain")
    mem.hot_add("ada", "decision", "Pin Node 22 in every workflow")
    mem.hot_add("ada", "decision", "Run the linter before the tests")
    mem.end_session("ada")
    mem.close()
    common = ("--root", str(tmp_path), "--now", "2026-03-01T10:00:00Z")
    _, dry, _ = run_cli("scribe", "run", "--dry-run", *common)
    _, done, _ = run_cli("scribe", "run", *common)
    promote = [line for line in dry.splitlines() if line.startswith("promote:")]
    assert promote == [
        line.replace("promote: ", "promote: would ")
        for line in done.splitlines()
        if line.startswith("promote:")
    ]
    assert "(ies)" not in dry + done and "(s)" not in dry + done


def test_a_dry_run_that_promotes_nothing_names_no_page(store: Memory, run_cli: RunCli) -> None:
    code, out, _ = run_cli("scribe", "run", "--dry-run", "--root", str(store.root))
    assert code == 0
    assert "promote: would move 0 entries to 0 wiki pages" in out.splitlines()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the root and its bytes (the index and lock files left out)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if (
            path.is_file()
            and not path.name.startswith("index.sqlite")
            and ".locks" not in str(path)
        ):
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found
