"""The frame of a spawn prompt: charter, task, why and criteria appear only when given and in
that order; a charter that is missing or a link is refused in one line; a budget too small for
any memory still gives the hot tier and the frame, and says what it left out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.index.passages import Passage
from tiermem.index.protocol import Doc
from tiermem.memory import Memory
from tiermem.relevance.packing import Group
from tiermem.relevance.scoring import Piece
from tiermem.spawn.prompt import passage_block

T1 = "2026-03-03T10:00:00Z"
CHARTER = "# Flight\nShips releases and owns the login service.\n"


@pytest.fixture
def repo(store_copy: Path) -> Iterator[Path]:
    charter = store_copy / ".squad" / "agents" / "flight" / "charter.md"
    charter.write_text(CHARTER, encoding="utf-8")
    yield store_copy


def spawn(run_cli: RunCli, repo: Path, *args: str, stdin: bytes | None = None) -> dict[str, object]:
    code, out, err = run_cli(
        "spawn", *args, "--format", "json", "--root", str(repo), "--now", T1, stdin=stdin
    )
    assert (code, err) == (0, ""), err
    result: dict[str, object] = json.loads(out)
    return result


def headings(prompt: object) -> list[str]:
    assert isinstance(prompt, str)
    return [line for line in prompt.splitlines() if line.startswith("## ")]


def test_the_frame_holds_only_what_was_given_in_its_order(repo: Path, run_cli: RunCli) -> None:
    bare = spawn(run_cli, repo, "flight", "--task", "Ship it")
    assert headings(bare["prompt"]) == ["## Task", "## Memory", "## Escalation"]
    full = spawn(
        run_cli,
        repo,
        "flight",
        "--task",
        "Ship it",
        "--charter",
        "--why",
        "users wait for the fix",
        "--criteria",
        "tests pass",
        "--criteria",
        "the tag is pushed",
    )
    assert headings(full["prompt"]) == [
        "## Charter",
        "## Task",
        "## WHY",
        "## Success Criteria",
        "## Memory",
        "## Escalation",
    ]
    prompt = str(full["prompt"])
    assert "## Charter\n# Flight\nShips releases and owns the login service.\n" in prompt
    assert "## WHY\nusers wait for the fix\n" in prompt
    assert "## Success Criteria\n- tests pass\n- the tag is pushed\n" in prompt


def test_the_frame_counts_in_the_total_and_the_memory_stays_the_same(
    repo: Path, run_cli: RunCli
) -> None:
    bare = spawn(run_cli, repo, "flight", "--task", "Ship it")
    framed = spawn(run_cli, repo, "flight", "--task", "Ship it", "--charter", "--why", "users")
    bare_tokens, framed_tokens = bare["tokens"], framed["tokens"]
    assert isinstance(bare_tokens, dict) and isinstance(framed_tokens, dict)
    assert framed_tokens["total"] > bare_tokens["total"]
    for tier in ("hot", "policy", "cold", "wiki", "archive"):
        assert framed_tokens[tier] == bare_tokens[tier]


def test_a_task_read_from_stdin_is_the_task(repo: Path, run_cli: RunCli) -> None:
    piped = spawn(run_cli, repo, "flight", "--task", "-", stdin=b"Fix the reader\n")
    given = spawn(run_cli, repo, "flight", "--task", "Fix the reader")
    assert piped["prompt"] == given["prompt"]
    code, out, _ = run_cli("log", "--format", "json", "--root", str(repo))
    logged = [s["task"] for s in json.loads(out)["spawns"]]
    assert code == 0 and logged[:2] == ["Fix the reader", "Fix the reader"]  # its newline gone


@pytest.mark.parametrize(
    ("agent", "damage", "said"),
    [
        ("eecom", None, "no readable charter for eecom at .squad/agents/eecom/charter.md"),
        ("eecom", "link", "no readable charter for eecom at .squad/agents/eecom/charter.md"),
        ("flight", "folder", "no readable charter for flight"),
    ],
    ids=["missing", "a link", "a folder"],
)
def test_a_charter_that_cannot_be_read_is_refused_in_one_line(
    repo: Path, run_cli: RunCli, agent: str, damage: str | None, said: str
) -> None:
    charter = repo / ".squad" / "agents" / agent / "charter.md"
    if damage == "link":
        charter.parent.mkdir(parents=True, exist_ok=True)
        charter.symlink_to(repo / ".squad" / "agents" / "flight" / "charter.md")
    elif damage == "folder":
        charter.unlink()
        charter.mkdir()
    before = snapshot(repo)
    code, out, err = run_cli(
        "spawn", agent, "--task", "Ship it", "--charter", "--root", str(repo), "--now", T1
    )
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--task", "   "), "task is empty"),
        (("--task", "x", "--budget", "-5"), "budget must be zero or more tokens"),
        (("--task", "x", "--budget", "many"), "--budget"),
        (("--task", "x", "--refs", "--inline"), "not allowed with argument"),
    ],
)
def test_a_bad_spawn_request_is_refused_in_one_line(
    repo: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    before = snapshot(repo)
    code, out, err = run_cli("spawn", "flight", *args, "--root", str(repo), "--now", T1)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(repo) == before


@pytest.mark.parametrize("budget", ["0", "50"])
def test_a_budget_smaller_than_the_frame_gives_hot_alone_and_says_what_it_left(
    repo: Path, run_cli: RunCli, budget: str
) -> None:
    mem = Memory(repo, now=T1)
    mem.hot_add("flight", "note", "The login fix needs the staging keys from ops.")
    mem.end_session("flight")
    mem.hot_set("flight", "Ship the login fix")
    mem.close()
    roomy = spawn(run_cli, repo, "flight", "--task", "login fix staging keys", "--include-cold")
    tight = spawn(
        run_cli,
        repo,
        "flight",
        "--task",
        "login fix staging keys",
        "--include-cold",
        "--budget",
        budget,
    )
    assert roomy["sources"]  # with room, the cold summary is loaded
    assert tight["sources"] == []
    assert isinstance(tight["left_out"], list) and tight["left_out"]
    tokens = tight["tokens"]
    assert isinstance(tokens, dict) and tokens["cold"] == 0 and tokens["hot"] > 0
    assert "Ship the login fix" in str(tight["prompt"])


def test_a_title_line_the_label_shows_whole_is_not_said_twice() -> None:
    # A one-line note archived as its heading: its title line is its passage.
    text = "## Task: Publish v0.9.0 to npm\n<!-- meta -->\nThe pack step ran twice.\n"
    title = "Task: Publish v0.9.0 to npm"
    doc = Doc("a-0000000001-0000000001", "archive", "lead", "p", title, text)
    said = Piece(doc, Passage(3, 30, frozenset()), text[3:30], 9, 1.0)
    more = Piece(doc, Passage(44, 68, frozenset()), text[44:68], 7, 1.0)
    label = f"{title} (2026-03-03, a-0000000001-0000000001)"
    assert passage_block(Group(doc, label, [said, more])) == f"#### {label}\n{text[44:68]}"
    # Alone, it stays: a label with nothing under it says nothing more.
    assert passage_block(Group(doc, label, [said])) == f"#### {label}\n{title}"
    # A label that shows the title cut keeps the line whole under it.
    cut = Group(doc, "Task: Publish v0.9.0… (2026-03-03, a-0000000001-0000000001)", [said, more])
    assert f"\n{title}\n" in passage_block(cut)
