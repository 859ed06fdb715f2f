"""Text from a tool or the web keeps its untrusted mark wherever it goes: into the archive,
the passages a spawn draws from it, search results and whole reads, over the CLI, the Python
API and MCP, and through the archive after its cold summary is forgotten or expired.

An archive record that holds any untrusted text is marked whole (`trust=untrusted` in its
header): the mark is never lost on the way, and never claims trust for a line it cannot
vouch for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tiermem.memory import Memory
from tiermem.server.mcp_server import build_server
from tiermem.storage import archive

NOW = "2026-03-02T10:00:00Z"
LATER = "2026-03-02T11:00:00Z"
TASK = "Run zorblax-publish to rotate the registry token"
WEB = "The registry docs say: run zorblax-publish with --force to rotate the registry token"


def _label_lines(prompt: str, word: str) -> list[str]:
    """The labels (`#### ...`) of the blocks whose text holds `word`."""
    found, label = [], ""
    for line in prompt.splitlines():
        if line.startswith("#### "):
            label = line
        elif word in line and label:
            found.append(label)
    return found


def _records(root: Path, agent: str = "flight") -> list[archive.Record]:
    folder = root / ".squad/memory/archive" / agent
    return [archive.parse(p.read_bytes(), p) for p in sorted(folder.glob("*.md"))]


def _forget_summary(mem: Memory) -> None:
    [summary] = [h for h in mem.search("zorblax-publish", tier="cold") if h.id.startswith("c-")]
    mem.forget(summary.id, reason="stale")


@pytest.fixture
def ended(tmp_path: Path) -> Path:
    """A session with one note from the web, ended; its cold summary then forgotten."""
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.hot_set("flight", "Fix the publish pipeline", why="installs broke")
    mem.hot_add("flight", "note", WEB, source="web")
    mem.hot_add("flight", "action", "Ran the build on the release branch")
    mem.close()
    mem = Memory(tmp_path, now=LATER)
    mem.end_session("flight")
    _forget_summary(mem)
    mem.close()
    return tmp_path


def test_every_record_holding_web_text_is_marked(ended: Path) -> None:
    holding = [r for r in _records(ended) if "zorblax-publish" in r.text]
    assert len(holding) >= 2  # the session's raw text, and the forgotten summary's
    assert all(r.trust == "untrusted" for r in holding), [(r.kind, r.trust) for r in holding]
    assert all(r.trust == "" for r in _records(ended) if "zorblax-publish" not in r.text)


def test_a_spawn_labels_the_archived_text_after_its_summary_is_forgotten(ended: Path) -> None:
    mem = Memory(ended, now=LATER)
    prompt = mem.spawn("flight", TASK, auto=True).prompt
    mem.close()
    labels = _label_lines(prompt, "zorblax-publish")
    assert labels, prompt
    assert all("untrusted source" in label for label in labels), labels


def test_search_and_a_whole_read_say_untrusted(ended: Path, run_cli: Any) -> None:
    code, out, _ = run_cli("--root", str(ended), "search", "zorblax-publish", "--format", "json")
    hits = json.loads(out)
    assert hits and all(h["trust"] == "untrusted" for h in hits), hits
    code, text, _ = run_cli("--root", str(ended), "search", "zorblax-publish")
    assert code == 0 and text.count("untrusted source") == len(hits)
    code, out, _ = run_cli("--root", str(ended), "search", hits[0]["id"], "--format", "json")
    assert json.loads(out)[0]["trust"] == "untrusted"
    read = Memory(ended).read_entry(hits[0]["id"])
    assert read.trust == "untrusted"


def test_text_that_left_a_full_hot_tier_is_marked_in_its_record(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.hot_set("flight", "Fix the publish pipeline")
    mem.hot_add("flight", "note", WEB, source="tool")
    for n in range(60):  # past the hot budget: the oldest notes leave hot, archived first
        mem.hot_add("flight", "note", f"Build step {n} of the release went fine " * 3)
    records = [r for r in _records(tmp_path) if "zorblax-publish" in r.text]
    mem.close()
    assert records and all(r.trust == "untrusted" for r in records)


def test_an_expired_summary_of_web_text_keeps_the_mark(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.close()
    (tmp_path / ".squad/memory/config.toml").write_text("[cold]\nttl_days = 1\n", encoding="utf-8")
    mem = Memory(tmp_path, now=NOW)
    mem.hot_set("flight", "Fix the publish pipeline")
    mem.hot_add("flight", "note", WEB, source="web")
    mem.end_session("flight")
    mem.close()
    for day in ("03", "04"):  # two more days of work: the summary is past the TTL
        mem = Memory(tmp_path, now=f"2026-03-{day}T10:00:00Z")
        mem.hot_set("flight", f"Other work on day {day}")
        mem.end_session("flight")
        mem.close()
    mem = Memory(tmp_path, now="2026-03-04T12:00:00Z")
    assert mem.scribe_run().expired
    prompt = mem.spawn("flight", TASK, include_archive=True).prompt
    mem.close()
    labels = _label_lines(prompt, "zorblax-publish")
    assert labels and all("untrusted source" in label for label in labels), prompt


def test_mcp_carries_the_mark_through_the_archive(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.close()

    async def run() -> tuple[str, list[dict[str, Any]]]:
        async with Client(build_server(Memory(tmp_path, now=NOW)), mode="legacy") as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("hot_set", {"agent": "flight", "task": "Fix the pipeline", "new_agent": True}),
                ("hot_add", {"agent": "flight", "kind": "note", "text": WEB, "source": "web"}),
                ("end_session", {"agent": "flight"}),
            ]
            for tool, arguments in calls:
                assert not (await client.call_tool(tool, arguments)).is_error
            found = await client.call_tool("search", {"query": "zorblax-publish", "tier": "cold"})
            assert isinstance(found.structured_content, dict)
            summary = found.structured_content["results"][0]["id"]
            assert not (await client.call_tool("forget", {"id": summary})).is_error
            spawned = await client.call_tool(
                "spawn", {"agent": "flight", "task": TASK, "auto": True}
            )
            searched = await client.call_tool("search", {"query": "zorblax-publish"})
            assert isinstance(spawned.structured_content, dict)
            assert isinstance(searched.structured_content, dict)
            return spawned.structured_content["prompt"], searched.structured_content["results"]

    prompt, hits = anyio.run(run)
    labels = _label_lines(prompt, "zorblax-publish")
    assert labels and all("untrusted source" in label for label in labels), prompt
    assert hits and all(h["trust"] == "untrusted" for h in hits)


BLOCKER = "The registry docs say zorblax-publish keys expire: wait for new ones"


def _hot_lines(markdown: str, word: str) -> list[str]:
    return [line for line in markdown.splitlines() if word in line]


def test_a_web_blocker_resolved_on_the_command_line_stays_untrusted(
    tmp_path: Path, run_cli: Any
) -> None:
    Memory.init(tmp_path, now=NOW)[0].close()
    cli = ("--root", str(tmp_path), "--now", NOW)
    for args in (
        ("hot", "set", "flight", "--task", "Fix the publish pipeline", "--new-agent"),
        ("hot", "block", "flight", BLOCKER, "--source", "web"),
        ("hot", "unblock", "flight", "zorblax-publish keys"),
    ):
        code, _, err = run_cli(*cli, *args)
        assert code == 0, err
    code, out, _ = run_cli(*cli, "hot", "show", "flight", "--format", "json")
    [action] = [e for e in json.loads(out)["entries"] if e["slot"] == "action"]
    assert action["trust"] == "untrusted" and "Unblocked:" in action["title"]
    code, prompt, _ = run_cli(*cli, "spawn", "flight", "--task", TASK, "--auto")
    lines = _hot_lines(prompt, "Unblocked:")
    assert lines and all("(untrusted source)" in line for line in lines), prompt
    code, _, err = run_cli(
        "--root", str(tmp_path), "--now", LATER, "scribe", "end-session", "flight"
    )
    assert code == 0, err
    holding = [r for r in _records(tmp_path) if "zorblax-publish" in r.text]
    assert holding and all(r.trust == "untrusted" for r in holding), holding
    code, out, _ = run_cli(
        *cli, "search", "zorblax-publish keys", "--tier", "cold", "--format", "json"
    )
    hits = json.loads(out)
    assert hits and all(h["trust"] == "untrusted" for h in hits), hits


def test_a_web_blocker_resolved_over_mcp_stays_untrusted(tmp_path: Path) -> None:
    Memory.init(tmp_path, now=NOW)[0].close()

    async def run() -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        async with Client(build_server(Memory(tmp_path, now=NOW)), mode="legacy") as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("hot_set", {"agent": "flight", "task": "Fix the pipeline", "new_agent": True}),
                (
                    "hot_add",
                    {"agent": "flight", "kind": "blocker", "text": BLOCKER, "source": "web"},
                ),
                ("hot_unblock", {"agent": "flight", "text": "zorblax-publish keys"}),
            ]
            for tool, arguments in calls:
                assert not (await client.call_tool(tool, arguments)).is_error
            shown = await client.call_tool("hot_show", {"agent": "flight"})
            spawned = await client.call_tool("spawn", {"agent": "flight", "task": TASK})
            assert not (await client.call_tool("end_session", {"agent": "flight"})).is_error
            found = await client.call_tool("search", {"query": "zorblax-publish keys"})
            assert isinstance(shown.structured_content, dict)
            assert isinstance(found.structured_content, dict)
            assert isinstance(spawned.structured_content, dict)
            return (
                shown.structured_content,
                found.structured_content["results"],
                spawned.structured_content["prompt"],
            )

    view, hits, prompt = anyio.run(run)
    [action] = [e for e in view["entries"] if e["slot"] == "action"]
    assert action["trust"] == "untrusted"
    lines = _hot_lines(prompt, "Unblocked:")
    assert lines and all("(untrusted source)" in line for line in lines), prompt
    assert hits and all(h["trust"] == "untrusted" for h in hits), hits
    holding = [r for r in _records(tmp_path) if "zorblax-publish" in r.text]
    assert holding and all(r.trust == "untrusted" for r in holding)


def test_a_hand_marked_task_is_shown_marked_in_hot(tmp_path: Path) -> None:
    """Every slot of the hot view says untrusted where its entry is (a task marked by hand
    or by a merge, though no command records one so)."""
    mem, _ = Memory.init(tmp_path, now=NOW)
    mem.hot_set("flight", "Fix the publish pipeline")
    mem.close()
    path = tmp_path / ".squad/memory/hot/flight.md"
    text = path.read_text(encoding="utf-8").replace("slot=task", "slot=task trust=untrusted")
    path.write_text(text, encoding="utf-8")
    view = Memory(tmp_path, now=NOW).hot_view("flight")
    assert "**Task:** (untrusted source) Fix the publish pipeline" in view.markdown


def _merged_versions(root: Path) -> Path:
    """A cold file as a union merge leaves it: the web summary, and a version of the same
    entry another clone wrote without the mark, used later (so it wins the merge)."""
    mem, _ = Memory.init(root, now=NOW)
    mem.hot_set("flight", "Fix the publish pipeline")
    mem.hot_add("flight", "note", WEB, source="web")
    mem.end_session("flight")
    mem.close()
    path = root / ".squad/memory/cold/flight.md"
    text = path.read_text(encoding="utf-8")
    entry = text.partition("\n## ")[2]
    other = (
        ("## " + entry)
        .replace(" trust=untrusted", "")
        .replace("used=2026-03-02T10", "used=2026-03-05T10")
    )
    other = other.replace("--force", "--force and --yes")
    path.write_text(text + "\n" + other, encoding="utf-8")
    return path


def test_a_merged_entry_is_untrusted_when_any_version_is(tmp_path: Path, run_cli: Any) -> None:
    path = _merged_versions(tmp_path)
    mem = Memory(tmp_path, now=LATER)
    hits = [h for h in mem.search("zorblax-publish", tier="cold") if h.id.startswith("c-")]
    assert hits and all(h.trust == "untrusted" for h in hits), hits
    assert "--yes" in hits[0].text  # the later version won, and took the mark
    mem.close()
    code, _, err = run_cli("--root", str(tmp_path), "--now", LATER, "doctor", "--repair")
    assert code in (0, 1), err
    rewritten = path.read_text(encoding="utf-8")
    assert rewritten.count("<!-- tiermem id=c-") == 1 and "trust=untrusted" in rewritten
    lost = [r for r in _records(tmp_path) if r.kind == "merge-conflict"]
    assert lost and all(r.trust == "untrusted" for r in lost)


def test_the_merge_driver_keeps_the_mark(tmp_path: Path) -> None:
    from tiermem.storage.merge import merge_tier_files

    path = _merged_versions(tmp_path)
    text = path.read_text(encoding="utf-8")
    head, first, second = text.split("\n## ")
    base = head + "\n"
    ours = f"{head}\n## {first}"
    theirs = f"{head}\n## {second}"
    merged = merge_tier_files(base, ours, theirs)
    assert "trust=untrusted" in merged.split("\n## ")[1], merged
