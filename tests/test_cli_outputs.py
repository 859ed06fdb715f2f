"""What the commands print: the text a person reads states the figures the JSON carries, a dry
run's words match its plan and write nothing, and the merge driver's refusals are one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.memory import Memory

T1 = "2026-03-03T10:00:00Z"


@pytest.fixture
def repo(store_copy: Path) -> Path:
    """The shared store with two logged spawns (one loads a cold entry, one loads nothing)."""
    mem = Memory(store_copy, now=T1)
    mem.spawn("flight", "Ship the login fix", auto=True)
    mem.spawn("eecom", "reader retries")
    mem.close()
    return store_copy


def text_and_json(run_cli: RunCli, repo: Path, *args: str) -> tuple[str, object]:
    """A command's text output and its JSON output, both run successfully."""
    where = ("--root", str(repo), "--now", T1)
    code, text, err = run_cli(*args, *where)
    assert (code, err) == (0, ""), err
    code, out, err = run_cli(*args, *where, "--format", "json")
    assert (code, err) == (0, ""), err
    return text, json.loads(out)


# --- the same figures in text and JSON ------------------------------------------------------


def test_wiki_list_text_rows_say_each_pages_counts(repo: Path, run_cli: RunCli) -> None:
    mem = Memory(repo, now=T1)
    mem.wiki_write("testing", "# Run the suite\nRun it before every merge.", by="flight")
    mem.wiki_write("testing", "# Pin the runner\nThe CI runner image is pinned.", by="eecom")
    mem.close()
    text, pages = text_and_json(run_cli, repo, "wiki", "list")
    assert isinstance(pages, list)
    assert [p["topic"] for p in pages] == ["release", "testing"]
    rows = text.splitlines()
    assert len(rows) == len(pages)
    for row, page in zip(rows, pages, strict=True):
        words = row.split()
        assert words[0] == page["topic"]
        numbers = [int(w) for w in words if w.isdigit()]
        assert numbers == [page["active"], page["entries"], page["bytes"]]
    assert pages[1]["entries"] == 2


def test_log_text_says_each_spawn_the_json_holds(repo: Path, run_cli: RunCli) -> None:
    text, log = text_and_json(run_cli, repo, "log")
    assert isinstance(log, dict) and log["skipped"] == []
    spawns = log["spawns"]
    heads = [line for line in text.splitlines() if not line.startswith("  ")]
    assert len(heads) == len(spawns) == 2
    for head, spawn in zip(heads, spawns, strict=True):
        tokens = spawn["tokens"]["total"]
        assert head == f"{spawn['time']}  {spawn['agent']}  {tokens} tokens  {spawn['task']!r}"
    loaded = [line.strip() for line in text.splitlines() if line.startswith("  loaded: ")]
    assert loaded[0] == "loaded: (no cold, wiki or policy entry)"
    assert loaded[1] == "loaded: " + ", ".join(spawns[1]["entries"])


@pytest.mark.parametrize(
    ("filters", "agents"),
    [(("--agent", "flight"), ["flight"]), (("--agent", "eecom"), ["eecom"])],
)
def test_log_filtered_by_agent_holds_only_its_spawns(
    repo: Path, run_cli: RunCli, filters: tuple[str, ...], agents: list[str]
) -> None:
    text, log = text_and_json(run_cli, repo, "log", *filters)
    assert isinstance(log, dict)
    assert [s["agent"] for s in log["spawns"]] == agents
    assert log["agent"] == agents[0]
    assert all(f"  {agents[0]}  " in line for line in text.splitlines() if line[:1].isdigit())


def test_log_of_an_entry_lists_the_spawns_that_loaded_it(repo: Path, run_cli: RunCli) -> None:
    _, log = text_and_json(run_cli, repo, "log")
    assert isinstance(log, dict)
    loaded = log["spawns"][1]["entries"][0]
    text, by_entry = text_and_json(run_cli, repo, "log", "--entry", loaded)
    assert isinstance(by_entry, dict) and by_entry["entry"] == loaded
    assert [s["agent"] for s in by_entry["spawns"]] == ["flight"]
    assert "'Ship the login fix'" in text and "reader retries" not in text


def test_hot_show_text_is_the_markdown_the_json_carries(repo: Path, run_cli: RunCli) -> None:
    text, view = text_and_json(run_cli, repo, "hot", "show", "flight")
    assert isinstance(view, dict)
    assert text == view["markdown"] + "\n"
    slots = [e["slot"] for e in view["entries"]]
    assert slots[0] == "task" and slots.count("blocker") == 1
    # The bytes its budget counts: the text a spawn loads, each write once.
    assert view["bytes"] == len((view["markdown"] + "\n").encode("utf-8"))


def test_stats_text_rows_are_the_json_rows(repo: Path, run_cli: RunCli) -> None:
    text, stats = text_and_json(run_cli, repo, "stats")
    assert isinstance(stats, dict)
    cells = {
        tuple(c.strip() for c in line.strip("│").split("│"))
        for line in text.splitlines()
        if line.startswith("│")
    }
    for row in stats["tiers"]:
        figures = (row["entries"], row["bytes"], row["tokens"])
        assert (row["agent"], row["tier"], *map(str, figures)) in cells


# --- a dry run's words ----------------------------------------------------------------------

DRY_WORDS = re.compile(r"^would \D*(\d+)")  # the first count each step says it would act on


def test_a_scribe_dry_run_says_its_plan_and_writes_nothing(repo: Path, run_cli: RunCli) -> None:
    before = snapshot(repo)
    text, plan = text_and_json(run_cli, repo, "scribe", "run", "--dry-run")
    assert snapshot(repo) == before
    assert isinstance(plan, dict) and plan["dry_run"] is True
    lines = dict(line.split(": ", 1) for line in text.splitlines())
    counted = {}
    for step, said in lines.items():
        match = DRY_WORDS.match(said)
        assert match is not None, said
        counted[step] = int(match.group(1))
    assert counted["checkpoints"] == len(plan["checkpoints"]) == 1
    assert counted["inbox"] == len(plan["inbox_merged"]) == 1
    assert counted["supersede"] == len(plan["superseded"])
    assert counted["expire"] == len(plan["expired"])
    assert counted["cold budget"] == len(plan["over_budget"])
    assert "into .squad/decisions.md" in lines["inbox"]


def test_the_run_after_a_dry_run_does_what_it_said(repo: Path, run_cli: RunCli) -> None:
    _, plan = text_and_json(run_cli, repo, "scribe", "run", "--dry-run")
    code, out, err = run_cli("scribe", "run", "--format", "json", "--root", str(repo), "--now", T1)
    assert (code, err) == (0, "")
    done = json.loads(out)
    assert isinstance(plan, dict) and done["dry_run"] is False
    for key in ("checkpoints", "inbox_merged", "superseded", "expired", "over_budget"):
        assert done[key] == plan[key], key
    assert not (repo / ".squad" / "decisions" / "inbox" / "flight-cache.md").exists()


# --- the merge driver ------------------------------------------------------------------------


# A comment tiermem's parser refuses: the file is merged as git would merge any text.
BROKEN = "## x\n<!-- tiermem id=c-1 class=learning\n"


def three_versions(folder: Path, texts: tuple[str, str, str]) -> list[Path]:
    paths = []
    for name, text in zip(("base", "ours", "theirs"), texts, strict=True):
        path = folder / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def test_a_missing_version_is_refused_in_one_line_and_ours_untouched(
    tmp_path: Path, run_cli: RunCli
) -> None:
    base, ours, theirs = three_versions(tmp_path, ("a\n", "b\n", "c\n"))
    theirs.unlink()
    code, out, err = run_cli("merge-file", str(base), str(ours), str(theirs))
    assert (code, out) == (2, "")
    assert err == f"tiermem: error: no such file: {theirs}\n"
    assert ours.read_text(encoding="utf-8") == "b\n"


def test_a_folder_in_place_of_a_version_is_refused(tmp_path: Path, run_cli: RunCli) -> None:
    base, ours, theirs = three_versions(tmp_path, ("a\n", "b\n", "c\n"))
    base.unlink()
    base.mkdir()
    code, _, err = run_cli("merge-file", str(base), str(ours), str(theirs))
    assert code == 2 and err == f"tiermem: error: no such file: {base}\n"


def test_a_file_that_is_no_tier_file_is_merged_by_union_with_a_warning(
    tmp_path: Path, run_cli: RunCli
) -> None:
    base, ours, theirs = three_versions(
        tmp_path, (BROKEN, BROKEN + "ours added\n", BROKEN + "theirs added\n")
    )
    code, out, err = run_cli("merge-file", str(base), str(ours), str(theirs))
    assert (code, out) == (0, "")
    assert err == f"warning: {ours} is not a tier file; merged line by line (union)\n"
    merged = ours.read_text(encoding="utf-8").splitlines()
    assert merged[:2] == BROKEN.splitlines() and {"ours added", "theirs added"} <= set(merged)
    assert theirs.read_text(encoding="utf-8") == BROKEN + "theirs added\n"


def test_the_merge_of_two_clones_keeps_both_new_entries(tmp_path: Path, run_cli: RunCli) -> None:
    """Both sides add an entry to a cold file: the merged file holds each once."""
    (tmp_path / "repo").mkdir()
    mem, _ = Memory.init(tmp_path / "repo", now=T1)
    mem.hot_set("ada", "Base task")
    mem.hot_add("ada", "note", "A note both clones have.")
    mem.end_session("ada")
    cold = mem.layout.tier_file("cold", "ada")
    base_text = cold.read_text(encoding="utf-8")
    texts = []
    for note in ("The parser lives in src/parse.ts.", "The cache lives in src/cache.ts."):
        mem.hot_set("ada", "Side task")
        mem.hot_add("ada", "note", note)
        mem.end_session("ada")
        texts.append(cold.read_text(encoding="utf-8"))
        cold.write_text(base_text, encoding="utf-8")
    mem.close()
    folder = tmp_path / "merge"
    folder.mkdir()
    base, ours, theirs = three_versions(folder, (base_text, texts[0], texts[1]))
    code, _, err = run_cli("merge-file", str(base), str(ours), str(theirs))
    assert (code, err) == (0, "")
    merged = ours.read_text(encoding="utf-8")
    ids = re.findall(r"tiermem id=(\S+)", merged)
    assert len(ids) == len(set(ids))
    assert set(re.findall(r"tiermem id=(\S+)", texts[0])) | set(
        re.findall(r"tiermem id=(\S+)", texts[1])
    ) == set(ids)
