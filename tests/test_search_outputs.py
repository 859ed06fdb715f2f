"""`tiermem search` in text states each hit the JSON holds, in the same order: score, tier,
agent, id and title on its head line, then where it is and where it came from; the filters
narrow both alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import RunCli

HEAD = re.compile(
    r"^ +(?P<score>\d+\.\d\d)  (?P<tier>\S+) +(?P<agent>\S+) +(?P<id>\S+)  (?P<title>.*)$"
)


def both(run_cli: RunCli, root: Path, *args: str) -> tuple[list[str], list[dict[str, object]]]:
    where = ("--root", str(root))
    code, text, err = run_cli("search", *args, *where)
    assert (code, err) == (0, ""), err
    code, out, err = run_cli("search", *args, *where, "--format", "json")
    assert (code, err) == (0, ""), err
    hits: list[dict[str, object]] = json.loads(out)
    return text.splitlines(), hits


def heads(lines: list[str]) -> list[dict[str, str]]:
    found = []
    for line in lines:
        match = HEAD.match(line)
        if match is not None:
            found.append(match.groupdict())
    return found


@pytest.mark.parametrize(
    "args",
    [
        ("login fix", "--limit", "3"),
        ("release tag",),
        ("reader chunk", "--tier", "cold"),
        ("login", "--agent", "flight", "--limit", "4"),
    ],
    ids=" ".join,
)
def test_each_hit_in_text_is_the_hit_in_json(
    store_copy: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    lines, hits = both(run_cli, store_copy, *args)
    shown = heads(lines)
    assert hits and len(shown) == len(hits)
    for head, hit in zip(shown, hits, strict=True):
        assert head["id"] == hit["id"] and head["tier"] == hit["tier"]
        assert head["agent"] == hit["agent"] and head["title"] == hit["title"]
        assert float(head["score"]) == pytest.approx(float(str(hit["score"])), abs=0.006)
    for hit in hits:
        assert any(line.strip().startswith(f"{hit['path']}: ") for line in lines)
        assert f"         from: {hit['origin']}" in lines


def test_scores_come_best_first(store_copy: Path, run_cli: RunCli) -> None:
    _, hits = both(run_cli, store_copy, "login fix release reader", "--limit", "20")
    scores = [float(str(h["score"])) for h in hits]
    assert len(scores) > 3 and scores == sorted(scores, reverse=True)


def kept_by(args: tuple[str, ...], hit: dict[str, object] | dict[str, str]) -> bool:
    """Whether a filter keeps a hit: a tier only its own; an agent its own memory, the
    team's and the wiki (as `--help` says)."""
    if args[0] == "--tier":
        return hit["tier"] == args[1]
    return hit["agent"] in (args[1], "team") or hit["tier"] == "wiki"


@pytest.mark.parametrize(
    "args",
    [("--tier", "hot"), ("--tier", "archive"), ("--agent", "eecom")],
    ids=" ".join,
)
def test_a_filter_keeps_only_its_hits_in_text_as_in_json(
    store_copy: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    query = ("login reader release step", "--limit", "50")
    _, everything = both(run_cli, store_copy, *query)
    lines, hits = both(run_cli, store_copy, *query, *args)
    assert hits and all(kept_by(args, h) for h in hits)
    assert all(kept_by(args, head) for head in heads(lines))
    assert len(hits) < len(everything)


def test_a_limit_keeps_the_first_hits_of_the_longer_answer(
    store_copy: Path, run_cli: RunCli
) -> None:
    _, longer = both(run_cli, store_copy, "login fix step", "--limit", "8")
    _, shorter = both(run_cli, store_copy, "login fix step", "--limit", "3")
    assert [h["id"] for h in shorter] == [h["id"] for h in longer[:3]]


def test_a_hit_from_hot_says_the_session_it_belongs_to(store_copy: Path, run_cli: RunCli) -> None:
    _, hits = both(run_cli, store_copy, "login fix", "--tier", "hot", "--limit", "1")
    [hit] = hits
    assert hit["session"] and str(hit["origin"]).endswith(str(hit["session"]))
    assert hit["path"] == ".squad/memory/hot/flight.md"


def test_several_words_or_ids_need_no_quotes(store_copy: Path, run_cli: RunCli) -> None:
    quoted = both(run_cli, store_copy, "login fix")[1]
    assert both(run_cli, store_copy, "login", "fix")[1] == quoted
    ids = [str(h["id"]) for h in quoted[:2]]
    assert len(ids) == 2
    lines, hits = both(run_cli, store_copy, *ids)
    assert sorted(str(h["id"]) for h in hits) == sorted(ids)
    assert [h["id"] for h in heads(lines)] == [h["id"] for h in hits]
