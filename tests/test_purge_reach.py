"""How far a purge reaches: one section of an archived record goes and its neighbours stay;
the spawn log keeps no task or torn line quoting the text; Squad's own files are named, never
edited; and a purge asked twice, or of a section that is not there, writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reliability import cli, snapshot
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"
T1 = "2026-03-03T10:00:00Z"
SECRET = "quokkalanternwharf"  # a word the redactor cannot tell from any other
SECTIONS = 8


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """ada's session archived as a long record of several sections, the last holding the
    secret; a spawn whose task quotes it; Squad's history quoting it."""
    mem, _ = Memory.init(tmp_path, now=T0)
    mem.hot_set("ada", "Deploy")
    parts = [
        f"## Part {n}\n" + f"Paragraph {n} of the runbook explains step {n} carefully. " * 30
        for n in range(SECTIONS)
    ]
    mem.hot_add("ada", "note", "Runbook\n" + "\n\n".join(parts) + f"\n\nThe key is {SECRET} today.")
    mem.end_session("ada")
    mem.spawn("ada", f"rotate {SECRET} now")
    history = tmp_path / ".squad" / "agents" / "ada" / "history.md"
    history.parent.mkdir(parents=True)
    history.write_text(f"# ada\n\nThe key is {SECRET} today.\n", encoding="utf-8")
    mem.close()
    yield tmp_path


def forget(root: Path, *args: str) -> tuple[int, str, str]:
    return cli(["--root", str(root), "--now", T1, "forget", *args])


def secret_section(root: Path) -> str:
    mem = Memory(root)
    try:
        [hit] = mem.search(SECRET)
    finally:
        mem.close()
    assert hit.tier == "archive" and "#" in hit.id
    return hit.id


def archive_sections(root: Path) -> set[str]:
    mem = Memory(root)
    try:
        hits = mem.search("runbook paragraph explains step", tier="archive", limit=50)
    finally:
        mem.close()
    return {h.id for h in hits if "#" in h.id}


def store_holding(root: Path, needle: str) -> list[str]:
    memory = root / ".squad" / "memory"
    return sorted(
        p.relative_to(root).as_posix()
        for p in memory.rglob("*")
        if p.is_file() and needle.encode() in p.read_bytes()
    )


def test_a_purged_section_goes_and_the_record_keeps_its_other_sections(root: Path) -> None:
    section = secret_section(root)
    before = archive_sections(root)
    assert len(before) >= 4
    code, out, err = forget(root, section, "--purge", "--reason", "a leaked key")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    record = section.split("#")[0]
    assert lines[0] == f"purged {section}: {section}"
    assert lines[1] == f"archive records rewritten: archive/ada/{record}.md"
    assert lines[2].startswith("tombstone: archive/team/a-")
    assert store_holding(root, SECRET) == []
    after = archive_sections(root)
    assert section not in after and f"{record}#1" in after
    assert after < before


def test_squad_files_holding_the_text_are_named_and_left_to_the_team(root: Path) -> None:
    history = root / ".squad" / "agents" / "ada" / "history.md"
    kept = history.read_bytes()
    code, out, _ = forget(root, secret_section(root), "--purge", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["purged"] is True and report["archived"] == ""
    assert report["elsewhere"] == [".squad/agents/ada/history.md"]
    assert (
        "Squad's files holding some of the text: .squad/agents/ada/history.md"
        in (report["messages"])
    )
    assert history.read_bytes() == kept


def test_the_spawn_log_keeps_no_task_or_torn_line_quoting_the_text(root: Path) -> None:
    log = root / ".squad" / "memory" / "spawns.jsonl"
    with log.open("a", encoding="utf-8") as out:
        out.write('{"task": "half a line about ' + SECRET + " cut by a crash\n")
        out.write('{"agent": "ada", "task": "an unrelated task"}\n')
        out.write("not json, and nothing of the purged text\n")
    assert forget(root, secret_section(root), "--purge")[0] == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    assert SECRET not in log.read_text(encoding="utf-8")
    spawned = json.loads(lines[0])
    assert spawned["agent"] == "ada" and spawned["task"] == "[purged]"
    assert lines[1:] == [
        '{"agent": "ada", "task": "an unrelated task"}',
        "not json, and nothing of the purged text",
    ]


def test_the_purge_is_audited_with_its_reason_and_no_quote(root: Path) -> None:
    section = secret_section(root)
    assert forget(root, section, "--purge", "--reason", f"it showed {SECRET} in a log")[0] == 0
    trail = (root / ".squad" / "memory" / "tiermem-audit.jsonl").read_text(encoding="utf-8")
    [purge] = [json.loads(x) for x in trail.splitlines() if '"action": "purge"' in x]
    assert purge["reason"] == "it showed [purged] in a log"
    assert purge["ids"] == [section]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("{record}#99", "--purge"), "no archived text {record}#99"),
        (("{record}#99",), "no archived text {record}#99 (or it was forgotten before)"),
        (("{record}#x", "--purge"), "'{record}#x' is not an entry id"),
    ],
    ids=["no such section", "no such section to retire", "malformed section"],
)
def test_a_purge_that_finds_nothing_writes_nothing(
    root: Path, args: tuple[str, ...], said: str
) -> None:
    record = secret_section(root).split("#")[0]
    before = snapshot(root)
    code, out, err = forget(root, *(a.format(record=record) for a in args))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("tiermem: error: ") and said.format(record=record) in err
    assert snapshot(root) == before


def test_a_second_purge_of_the_same_section_is_refused(root: Path) -> None:
    section = secret_section(root)
    assert forget(root, section, "--purge")[0] == 0
    before = snapshot(root)
    code, _, err = forget(root, section, "--purge")
    assert code == 2
    assert err == f"tiermem: error: no archived text {section} (or it was forgotten before)\n"
    assert snapshot(root) == before
