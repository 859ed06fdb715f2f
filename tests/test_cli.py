"""The command line: help everywhere, errors in one line, finding the store, the clock,
hostile search queries and machine-readable output."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import pytest

from tiermem.cli.parser import build_parser
from tiermem.memory import Memory
from tiermem.storage import store as tiermem_store
from tiermem.storage.entries import Entry, TierFile, parse

RunCli = Callable[..., tuple[int, str, str]]
NOW = "2026-03-02T10:00:00Z"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


COMMANDS = list(_commands(build_parser()))


def one_line_error(code: int, out: str, err: str) -> bool:
    return code == 2 and out == "" and err.endswith("\n") and err.count("\n") == 1


def test_the_tree_has_the_main_verbs() -> None:
    top = {path[0] for path in COMMANDS if path}
    assert {"init", "hot", "scribe", "spawn", "search", "wiki", "import", "stats"} <= top
    assert {"bench", "serve", "reindex"} <= top
    assert ("hot", "note") in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "tiermem")
def test_every_command_has_help(run_cli: RunCli, path: tuple[str, ...]) -> None:
    code, out, err = run_cli(*path, "--help")
    assert (code, err) == (0, "")
    assert out.startswith("usage: tiermem")
    assert " ".join(("tiermem", *path)) in out.splitlines()[0]
    # A description, not just a usage line.
    assert len(out.splitlines()) > 3


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "tiermem")
def test_every_command_rejects_an_unknown_option_in_one_line(
    run_cli: RunCli, path: tuple[str, ...]
) -> None:
    assert one_line_error(*run_cli(*path, "--no-such-option"))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "tiermem")
def test_a_parser_built_for_one_command_parses_it_like_the_whole_parser(
    path: tuple[str, ...],
) -> None:
    def described(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
        shape = []
        for sub in [p for p in _commands(parser) if p[: len(path)] == path]:
            node = parser
            for name in sub:
                node = next(
                    a.choices[name]
                    for a in node._actions
                    if isinstance(a, argparse._SubParsersAction)
                )
            shape.append(
                (*sub, "|", *sorted(str(a.option_strings or a.dest) for a in node._actions))
            )
        return shape

    for argv in (path, ("--root", "hot", *path), ("--ro=x", "--now", "search", *path)):
        assert described(build_parser(argv)) == described(build_parser())


def test_a_command_run_in_process_closes_the_stores_it_opened(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last connection to close folds the index's log into it and removes the log: left
    # to the garbage collector, that happened at some later moment, under whatever ran then.
    Memory.init(tmp_path)[0].close()
    run_cli("hot", "note", "ada", "Retries cap at three.", "--root", str(tmp_path))
    assert run_cli("search", "retries", "--root", str(tmp_path))[0] == 0
    index = tmp_path / ".squad" / "memory" / "index.sqlite"
    assert index.exists() and not Path(f"{index}-wal").exists()

    closed: list[Memory] = []
    real_close = Memory.close

    def close(mem: Memory) -> None:
        closed.append(mem)
        real_close(mem)

    monkeypatch.setattr(Memory, "close", close)
    assert run_cli("spawn", "ghost", "--task", "retries", "--root", str(tmp_path))[0] == 2
    assert len(closed) == 1  # a refused command too


def test_a_refused_command_says_one_line_though_its_sync_skipped_a_file(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # A spawn's sync skips a link in the wiki, then the damaged config.toml stops it: the
    # skip is said only by a command that goes on to its end.
    Memory.init(tmp_path)[0].close()
    root, memory = str(tmp_path), tmp_path / ".squad" / "memory"
    run_cli("hot", "note", "ada", "Retries cap at three.", "--root", root)
    (memory / "wiki" / "elsewhere.md").symlink_to(tmp_path / "outside.md")
    config = memory / "config.toml"
    kept = config.read_text(encoding="utf-8")
    config.write_text("[spawn]\nbudget =\n", encoding="utf-8")
    code, _, err = run_cli("spawn", "ada", "--task", "retries", "--budget", "900", "--root", root)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("tiermem: error: ") and "config.toml" in err

    config.write_text(kept, encoding="utf-8")
    code, _, err = run_cli("spawn", "ada", "--task", "retries", "--root", root)
    assert code == 0
    assert err.startswith("tiermem: skipped ") and "elsewhere.md" in err


def test_version_is_known(run_cli: RunCli) -> None:
    code, out, err = run_cli("--version")
    assert code == 0
    assert (out + err) == f"tiermem {version('tiermem')}\n"


def test_version_goes_to_stdout(run_cli: RunCli) -> None:
    code, out, err = run_cli("--version")
    assert (code, out, err) == (0, f"tiermem {version('tiermem')}\n", "")


@pytest.mark.parametrize(
    "args",
    [
        ("bogus",),
        ("hot", "bogus", "ada"),
        ("hot", "note"),
        ("hot", "note", "ada"),
        ("search", "x", "--limit", "many"),
        ("search", "x", "--tier", "lukewarm"),
        ("search", "x", "--format", "yaml"),
        ("scribe", "end-session", "-\x00\tc\n\t\t<:\\"),  # read as an unknown option
        ("search", "x", "--tier", "co\nld\x1b[2J"),
        (),
    ],
    ids=lambda a: " ".join(a).encode("unicode_escape").decode() or "nothing",
)
def test_usage_errors_are_one_line(run_cli: RunCli, args: tuple[str, ...]) -> None:
    code, out, err = run_cli(*args)
    assert one_line_error(code, out, err)
    assert err.startswith("tiermem")
    assert "--help" in err


def test_unknown_command_names_it(run_cli: RunCli) -> None:
    code, _, err = run_cli("bogus")
    assert code == 2
    assert "'bogus'" in err


# --- finding the store -------------------------------------------------------------------


def test_root_env_and_discovery_find_the_same_store(
    store: Memory, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli("hot", "note", "ada", "found me", "--root", str(store.root))[0] == 0
    nested = tmp_path / "src" / "deep" / "er"
    nested.mkdir(parents=True)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    show = ("hot", "show", "ada", "--format", "json")

    monkeypatch.chdir(elsewhere)
    by_flag = run_cli(*show, "--root", str(store.root))
    by_flag_first = run_cli("--root", str(store.root), *show)
    monkeypatch.setenv("TIERMEM_ROOT", str(store.root))
    by_env = run_cli(*show)
    monkeypatch.delenv("TIERMEM_ROOT")
    monkeypatch.chdir(nested)
    by_discovery = run_cli(*show)

    assert by_flag[0] == 0
    assert json.loads(by_flag[1])["entries"][0]["title"] == "Note: found me"
    assert by_flag == by_flag_first == by_env == by_discovery


def test_root_flag_beats_the_environment(
    store: Memory, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    Memory.init(other)[0].close()
    monkeypatch.setenv("TIERMEM_ROOT", str(other))
    assert (
        run_cli("hot", "note", "ada", "into the flagged store", "--root", str(store.root))[0] == 0
    )
    assert store.layout.tier_file("hot", "ada").exists()
    assert not (other / ".squad" / "memory" / "hot" / "ada.md").exists()


def test_no_store_anywhere_hints_at_init(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bare" / "project"
    bare.mkdir(parents=True)
    assert not any((folder / ".squad").exists() for folder in (bare, *bare.parents))
    monkeypatch.chdir(bare)
    for args in (
        ("hot", "note", "ada", "text"),
        ("hot", "show", "ada"),
        ("search", "x"),
        ("stats",),
        ("reindex",),
    ):
        code, out, err = run_cli(*args)
        assert one_line_error(code, out, err), args
        assert "tiermem init" in err
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "bare", bare]


def test_root_that_is_not_a_folder_is_an_error(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert one_line_error(*run_cli("hot", "show", "ada", "--root", str(tmp_path / "missing")))
    monkeypatch.setenv("TIERMEM_ROOT", str(tmp_path / "missing"))
    assert one_line_error(*run_cli("hot", "show", "ada"))


# --- the clock ----------------------------------------------------------------------------


def _created(mem: Memory, agent: str) -> list[str]:
    text = mem.layout.tier_file("hot", agent).read_text(encoding="utf-8")
    return [e.created for e in parse(text).entries]


@pytest.mark.parametrize(
    ("where", "given", "stamp"),
    [
        ("flag", NOW, NOW),
        ("flag-first", NOW, NOW),
        ("env", NOW, NOW),
        ("flag", "2026-03-02T12:00:00+02:00", NOW),
        ("env", "2026-03-02", "2026-03-02T00:00:00Z"),
    ],
)
def test_now_sets_the_created_time(
    store: Memory,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    given: str,
    stamp: str,
) -> None:
    args = ["hot", "note", "ada", "what time is it", "--root", str(store.root)]
    if where == "flag":
        args += ["--now", given]
    elif where == "flag-first":
        args = ["--now", given, *args]
    else:
        monkeypatch.setenv("TIERMEM_NOW", given)
    code, _, err = run_cli(*args)
    assert (code, err) == (0, "")
    assert _created(store, "ada") == [stamp]
    text = store.layout.tier_file("hot", "ada").read_text(encoding="utf-8")
    assert f"created={stamp} " in text
    assert f"started={stamp}" in text


def test_now_flag_beats_the_environment(
    store: Memory, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIERMEM_NOW", "2030-01-01T00:00:00Z")
    code, _, _ = run_cli("hot", "note", "ada", "flag wins", "--now", NOW, "--root", str(store.root))
    assert code == 0
    assert _created(store, "ada") == [NOW]


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", ""])
def test_bad_now_is_an_error_and_writes_nothing(
    store: Memory, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    if bad:
        result = run_cli("hot", "note", "ada", "x", "--now", bad, "--root", str(store.root))
        assert one_line_error(*result)
    monkeypatch.setenv("TIERMEM_NOW", bad or "not a time")
    assert one_line_error(*run_cli("hot", "note", "ada", "x", "--root", str(store.root)))
    assert not store.layout.tier_file("hot", "ada").exists()


# --- search -------------------------------------------------------------------------------


@pytest.fixture
def searchable(store: Memory) -> Memory:
    store.hot_set("ada", "fix the flaky reader in the parser")
    store.hot_add("ada", "note", "ReadBuffer.fill drops the last chunk — 中文 naïve café")
    for n in range(7):
        store.hot_add("bo", "action", f"reviewed parser change {n}")
    return store


HOSTILE = [
    '"',
    '""',
    "*",
    "AND OR NOT",
    "NOT",
    "NEAR(",
    "NEAR(a b, 1",
    "^",
    "^parser",
    "title:parser",
    "parser*",
    "(",
    ")",
    "'",
    "a AND",
    '"unterminated phrase',
    "naïve 中文 café 😀",
    "\u200b\u00a0",
    "{}[]<>;\\",
    "x" * 10240,
    " ".join(f"w{n:x}" for n in range(1600))[:10240],
    ("parser " * 1500)[:10240],
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_never_error(searchable: Memory, run_cli: RunCli, query: str) -> None:
    root = ("--root", str(searchable.root))
    code, out, err = run_cli("search", query, *root)
    assert (code, err) == (0, "")
    assert out
    code, out, err = run_cli("search", query, "--format", "json", *root)
    assert (code, err) == (0, "")
    assert isinstance(json.loads(out), list)
    assert isinstance(searchable.search(query), list)


def test_dash_query_is_read_from_stdin(searchable: Memory, run_cli: RunCli) -> None:
    root = ("--root", str(searchable.root))
    code, out, err = run_cli("search", "-", "--format", "json", *root, stdin=b"-")
    assert (code, err) == (0, "")
    assert json.loads(out) == []
    code, out, err = run_cli("search", "-", "--format", "json", *root, stdin=b"ReadBuffer")
    assert (code, err) == (0, "")
    assert [hit["agent"] for hit in json.loads(out)] == ["ada"]


def test_search_finds_unicode_words(searchable: Memory, run_cli: RunCli) -> None:
    code, out, _ = run_cli("search", "中文", "--format", "json", "--root", str(searchable.root))
    assert code == 0
    assert [hit["tier"] for hit in json.loads(out)] == ["hot"]


def test_search_json_fields(searchable: Memory, run_cli: RunCli) -> None:
    code, out, err = run_cli(
        "search", "parser", "--format", "json", "--limit", "20", "--root", str(searchable.root)
    )
    assert (code, err) == (0, "")
    hits = json.loads(out)
    assert hits
    for hit in hits:
        assert set(hit) == {
            *("id", "tier", "agent", "path", "title", "text", "score"),
            *("class", "created", "tokens", "session", "sources", "origin", "spans", "trust"),
            "whole",
        }
        assert hit["tier"] in ("hot", "cold", "wiki", "archive")
        assert isinstance(hit["score"], float | int)
        assert (searchable.root / hit["path"]).is_file()
        assert "parser" in (hit["title"] + hit["text"]).lower()
    assert {hit["tier"] for hit in hits} == {"hot", "archive"}
    assert {hit["agent"] for hit in hits} == {"ada", "bo"}
    task = next(h for h in hits if h["title"] == "Task: fix the flaky reader in the parser")
    assert task["path"] == ".squad/memory/hot/ada.md"
    assert re.fullmatch(r"h-[0-9a-f]{10}", task["id"])


def test_search_filters(searchable: Memory, run_cli: RunCli) -> None:
    root = ("--root", str(searchable.root))
    code, out, _ = run_cli(
        "search", "parser", "--agent", "bo", "--tier", "hot", "--format", "json", *root
    )
    assert code == 0
    hits = json.loads(out)
    assert hits
    assert {(h["agent"], h["tier"]) for h in hits} == {("bo", "hot")}
    code, out, _ = run_cli("search", "parser", "--limit", "1", "--format", "json", *root)
    assert len(json.loads(out)) == 1
    assert one_line_error(*run_cli("search", "parser", "--limit", "0", *root))
    assert one_line_error(*run_cli("search", "parser", "--agent", "../x", *root))


def test_ties_in_score_go_to_the_newer_entry_even_across_the_limit(store: Memory) -> None:
    # Twelve entries with the same words to match and the same length score the same: a cut
    # at 5 falls inside the tie. (Their other word differs: the same text twice shows once.)
    twins = [
        Entry(
            f"c-{n:010x}",
            "learning",
            "parser retry",
            f"case {chr(97 + n)}",
            created=f"2026-01-{n + 1:02d}T00:00:00Z",
        )
        for n in range(12)
    ]
    shuffled = [twins[n] for n in (5, 0, 11, 3, 8, 1, 10, 6, 2, 9, 4, 7)]  # not in date order
    cold = TierFile(heading="ada: cold memory", meta={"tier": "cold"}, entries=shuffled)
    tiermem_store.save(store.layout, store.layout.tier_file("cold", "ada"), cold)
    newest_first = [e.id for e in sorted(twins, key=lambda e: e.created, reverse=True)]
    for limit in (1, 5, 11, 12, 50):
        hits = store.search("parser retry", tier="cold", limit=limit)
        assert [h.id for h in hits] == newest_first[:limit]


# --- stats ----------------------------------------------------------------------------------


def test_stats_json_per_agent_and_tier(searchable: Memory, run_cli: RunCli) -> None:
    code, out, err = run_cli("stats", "--format", "json", "--root", str(searchable.root))
    assert (code, err) == (0, "")
    report = json.loads(out)
    rows = {(r["agent"], r["tier"]): r for r in report["tiers"]}
    assert set(rows) == {("ada", "hot"), ("bo", "hot"), ("bo", "archive")}
    for row in report["tiers"]:
        assert set(row) == {"agent", "tier", "entries", "bytes", "tokens"}
        assert row["entries"] > 0
        assert 0 < row["tokens"] < row["bytes"]
    ada_hot = searchable.hot_view("ada").entries
    assert rows[("ada", "hot")]["entries"] == len(ada_hot)
    assert rows[("ada", "hot")]["bytes"] == sum(len(e.text.encode("utf-8")) for e in ada_hot)
    assert rows[("bo", "hot")]["entries"] == 5
    assert rows[("bo", "archive")]["entries"] == 2
    assert report["totals"]["hot"]["entries"] == len(ada_hot) + 5


def test_stats_text_table(searchable: Memory, run_cli: RunCli) -> None:
    code, out, err = run_cli("stats", "--root", str(searchable.root))
    assert (code, err) == (0, "")
    assert "ada" in out
    assert "archive" in out


def test_reindex_check_reports_drift(store: Memory, run_cli: RunCli) -> None:
    root = ("--root", str(store.root))
    store.hot_add("ada", "note", "indexed note")
    assert run_cli("reindex", *root)[0] == 0
    assert run_cli("reindex", "--check", *root) == (0, "index matches the files\n", "")
    store.hot_add("ada", "note", "a note the index has not seen")
    code, out, _ = run_cli("reindex", "--check", *root)
    assert code == 1
    assert "changed: .squad/memory/hot/ada.md" in out
    assert run_cli("reindex", *root)[0] == 0
    assert run_cli("reindex", "--check", *root)[0] == 0
