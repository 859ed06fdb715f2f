"""`.squad/memory/config.toml` as people edit it: every mistake is named with its line, every
command refuses a store whose config it cannot read in one line and writes nothing, and what a
setting says is what the store does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.errors import ParseError
from tiermem.memory import Memory
from tiermem.storage import config

T0 = "2026-03-02T10:00:00Z"


def load(tmp_path: Path, data: bytes | str) -> config.Config:
    path = tmp_path / "config.toml"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return config.load(path)


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        ("[hot]\nbudget_bytes = 8192\n[colder]\nttl_days = 3\n", 3, "unknown section [colder]"),
        ("[hot]\nbudget_bites = 8192\n", 2, "unknown key hot.budget_bites"),
        ("hot = 5\n", 1, "[hot] must be a table"),
        ("# a comment\n[hot]\nbudget_bytes = '8192'\n", 3, "hot.budget_bytes must be int"),
        ("[hot]\n\nmax_actions = true\n", 3, "hot.max_actions must be int"),
        ("[summarizer]\ntimeout_seconds = 'soon'\n", 2, "summarizer.timeout_seconds must be float"),
        ("[summarizer]\nkind = 3\n", 2, "summarizer.kind must be str"),
        ("[hot]\nbudget_bytes = 8192\nbudget_bytes = 4096\n", 3, "(at line 3, column 20)"),
        ("# settings\n[hot\nbudget_bytes = 1\n", 2, "(at line 2, column 5)"),
    ],
    ids=[
        "unknown section",
        "unknown key",
        "not a table",
        "text for a number",
        "true for a number",
        "text for a number of seconds",
        "number for a name",
        "key set twice",
        "unclosed table",
    ],
)
def test_a_mistake_in_the_config_is_named_with_its_line(
    tmp_path: Path, text: str, line: int, said: str
) -> None:
    with pytest.raises(ParseError) as caught:
        load(tmp_path, text)
    assert caught.value.line == line
    assert said in caught.value.reason


def test_a_key_an_earlier_version_wrote_still_loads(tmp_path: Path) -> None:
    # tiermem init wrote spawn.fill_share until memory came to fill the whole budget.
    loaded = load(tmp_path, "[spawn]\nbudget_tokens = 3000\nfill_share = 0.71\n")
    assert loaded.spawn.budget_tokens == 3000


def test_a_config_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not valid UTF-8"):
        load(tmp_path, b"[hot]\nbudget_bytes = 8192 # \xff\n")


@pytest.mark.parametrize(
    ("text", "section", "key", "value"),
    [
        ("[summarizer]\ntimeout_seconds = 2\n", "summarizer", "timeout_seconds", 2.0),
        ("[hot]\nbudget_bytes = 512\n", "hot", "budget_bytes", 512),  # the lowest it takes
        ("[scribe]\npromote_after_days = 0\n", "scribe", "promote_after_days", 0),
        ("[spawn]\nbudget_tokens = 0\n", "spawn", "budget_tokens", 0),
    ],
)
def test_values_at_the_edges_are_taken_and_the_rest_keep_their_defaults(
    tmp_path: Path, text: str, section: str, key: str, value: float
) -> None:
    loaded = load(tmp_path, text)
    got = getattr(getattr(loaded, section), key)
    assert got == value and type(got) is type(value)
    default = config.Config()
    for other in ("hot", "cold", "scribe", "spawn", "summarizer"):
        if other != section:
            assert getattr(loaded, other) == getattr(default, other)


def test_an_empty_config_is_every_default(tmp_path: Path) -> None:
    assert load(tmp_path, "") == config.Config()
    assert load(tmp_path, "# only a comment\n") == config.Config()


@pytest.mark.parametrize(
    "args",
    [
        ("hot", "note", "ada", "a note"),
        ("hot", "action", "ada", "ran the suite"),
        ("spawn", "ada", "--task", "ship it"),
        ("scribe", "run"),
        ("scribe", "end-session", "ada"),
    ],
    ids=" ".join,
)
def test_a_command_that_follows_the_config_refuses_one_it_cannot_read(
    tmp_path: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    mem, _ = Memory.init(tmp_path, now=T0)
    mem.hot_set("ada", "Ship the release")
    mem.close()
    mem.layout.config.write_text("[hot]\nbudget_bytes = 'big'\n", encoding="utf-8")
    before = snapshot(tmp_path)
    code, out, err = run_cli(*args, "--root", str(tmp_path), "--now", T0)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("tiermem: error: ")
    assert "config.toml" in err and "hot.budget_bytes must be int" in err
    assert snapshot(tmp_path) == before


# --- what a setting says is what the store does ----------------------------------------------


def test_the_spawn_budget_of_the_config_bounds_every_spawn(tmp_path: Path, run_cli: RunCli) -> None:
    mem, _ = Memory.init(tmp_path, now=T0)
    mem.hot_set("ada", "Ship the release")
    for n in range(30):
        mem.wiki_write("release", f"# Step {n}\nRelease step {n} is checked twice. " * 3, by="ada")
    mem.close()
    root = ("--root", str(tmp_path), "--now", T0)
    budgets = []
    for budget in (600, 3000):
        mem.layout.config.write_text(f"[spawn]\nbudget_tokens = {budget}\n", encoding="utf-8")
        spawn = ("spawn", "ada", "--task", "release steps", "--auto", "--format", "json")
        code, out, err = run_cli(*spawn, *root)
        assert (code, err) == (0, "")
        spawned = json.loads(out)
        assert spawned["tokens"]["total"] <= budget
        budgets.append(spawned["tokens"]["total"])
    assert budgets[0] < budgets[1]


def test_the_hot_budget_of_the_config_bounds_the_hot_file(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=T0)
    mem.layout.config.write_text("[hot]\nbudget_bytes = 1024\nmax_actions = 2\n", "utf-8")
    mem.close()
    mem = Memory(tmp_path, now=T0)
    try:
        mem.hot_set("ada", "Ship the release")
        for n in range(12):
            mem.hot_add("ada", "note", f"Observation {n}: the release step {n} took long. " * 2)
            mem.hot_add("ada", "action", f"ran step {n}")
        size = mem.hot_view("ada").bytes  # the text a spawn loads, which the budget bounds
        actions = [e for e in mem.hot_view("ada").entries if e.slot == "action"]
    finally:
        mem.close()
    assert size <= 1024
    assert [a.title for a in actions] == ["Action: ran step 10", "Action: ran step 11"]
