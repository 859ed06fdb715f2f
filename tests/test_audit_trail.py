"""The audit trail as it is found after crashes, merges and older versions: torn and foreign
lines are passed over, the lines of stores from before tiermem had a file of its own are read
with it, and a purge takes a quote out of every line, torn ones too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiermem.memory import Memory
from tiermem.storage import audit

T0 = "2026-03-02T10:00:00Z"
SECRET = "quokkalanternwharf"


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    made, _ = Memory.init(tmp_path, now=T0)
    made.close()
    return Memory(tmp_path, now=T0)


def line(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True) + "\n"


def test_torn_and_foreign_lines_are_passed_over(mem: Memory) -> None:
    mem.layout.audit.write_text(
        line(time=T0, action="write", ids=["h-1"], tiers=["hot"])
        + "[1, 2, 3]\n"  # JSON, not a line of the trail
        + "9" * 5000
        + "\n"  # a number too long to read
        + '{"time": "2026-03-02T11:00:00Z", "action": "wri'  # torn by a crash
        + "\n"
        + line(time=T0, action="end-session", ids=["c-1"], tiers=["cold"]),
        encoding="utf-8",
    )
    assert [a["action"] for a in audit.read(mem.layout)] == ["write", "end-session"]


def test_a_trail_with_bytes_that_are_not_utf8_still_reads(mem: Memory) -> None:
    good = line(time=T0, action="write", ids=["h-1"], tiers=["hot"]).encode()
    mem.layout.audit.write_bytes(good + b'{"bad": "\xff\xfe"}\n' + good)
    read = audit.read(mem.layout)
    assert [a["action"] for a in read if "action" in a] == ["write", "write"]
    assert len(read) == 3


def test_lines_of_a_store_from_before_the_own_file_are_read_first(mem: Memory) -> None:
    mem.layout.squad_audit.write_text(
        line(time="2026-01-01T00:00:00Z", action="end-session", ids=["c-1"], tiers=["cold"])
        + line(timestamp="2026-01-02T00:00:00Z", **{"class": "decision"}, agent="ada")
        + line(time="2026-01-03T00:00:00Z", action="promote", ids=["w-1"], tiers=["wiki"]),
        encoding="utf-8",
    )
    mem.wiki_write("release", "# Tag releases\nEvery release is tagged.", by="ada")
    actions = [(a["time"], a["action"]) for a in audit.read(mem.layout)]
    assert actions[:2] == [
        ("2026-01-01T00:00:00Z", "end-session"),
        ("2026-01-03T00:00:00Z", "promote"),
    ]
    assert actions[2:] == [(T0, "wiki-write")]


@pytest.mark.parametrize("shape", ["folder", "link"])
def test_a_squad_audit_that_is_not_a_file_gives_no_lines_and_no_error(
    mem: Memory, tmp_path: Path, shape: str
) -> None:
    legacy = mem.layout.squad_audit
    if shape == "folder":
        legacy.mkdir()
    else:
        outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
        outside.write_text(line(time=T0, action="forged", ids=[], tiers=["hot"]), "utf-8")
        legacy.symlink_to(outside)
    mem.wiki_write("release", "# Tag releases\nEvery release is tagged.", by="ada")
    assert [a["action"] for a in audit.read(mem.layout)] == ["wiki-write"]


def test_a_session_end_appends_one_line_naming_ids_and_tiers_never_the_text(
    mem: Memory,
) -> None:
    mem.hot_set("ada", "Rotate the key")
    mem.hot_add("ada", "note", f"The new key is {SECRET}; the old one is revoked.")
    assert audit.read(mem.layout) == []  # hot writes are not Scribe's actions
    report = mem.end_session("ada")
    [ended] = audit.read(mem.layout)
    assert ended["time"] == T0 and ended["action"] == "end-session"
    assert ended["tiers"] == ["archive", "cold", "hot"] and ended["agent"] == "ada"
    assert ended["ids"] == sorted(report.cold + report.knowledge + report.decisions)
    assert isinstance(ended["raw_bytes"], int) and ended["raw_bytes"] > 0
    assert SECRET not in mem.layout.audit.read_text(encoding="utf-8")


def test_a_purge_takes_its_quote_out_of_every_line_torn_ones_too(mem: Memory) -> None:
    mem.hot_set("ada", "Deploy")
    mem.hot_add("ada", "note", f"The deploy key is {SECRET} for now.")
    [hit] = [h for h in mem.search(SECRET) if h.tier == "hot"]
    with mem.layout.audit.open("a", encoding="utf-8") as trail:
        trail.write(line(time=T0, action="note", ids=[], tiers=[], reason=f"saw {SECRET} here"))
        trail.write('{"time": "' + T0 + '", "reason": "torn ' + SECRET + "\n")
        trail.write(line(time=T0, action="note", ids=[], tiers=[], reason="nothing quoted"))
    mem.forget(hit.id, reason="leaked", purge=True)
    text = mem.layout.audit.read_text(encoding="utf-8")
    assert SECRET not in text
    reasons = [a.get("reason") for a in audit.read(mem.layout)]
    assert "saw [purged] here" in reasons and "nothing quoted" in reasons
    assert any(
        raw.startswith('{"time": "' + T0 + '", "reason": "torn') for raw in text.splitlines()
    )


def test_scrub_leaves_a_trail_without_the_text_byte_for_byte(mem: Memory) -> None:
    mem.wiki_write("release", "# Tag releases\nEvery release is tagged.", by="ada")
    before = mem.layout.audit.read_bytes()
    assert audit.scrub(mem.layout, lambda text: text.replace(SECRET, "[purged]")) is False
    assert mem.layout.audit.read_bytes() == before


def test_scrub_of_a_store_with_no_trail_writes_none(mem: Memory) -> None:
    assert not mem.layout.audit.exists()  # a new store has written no line yet
    assert audit.scrub(mem.layout, str.upper) is False
    assert not mem.layout.audit.exists()
