"""`tiermem doctor`: each kind of damage is named once, in its own words, and a repair mends
only what tiermem can tell the meaning of; what it cannot is left byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reliability import cli, snapshot

T1 = "2026-03-03T10:00:00Z"


def memory(root: Path) -> Path:
    return root / ".squad" / "memory"


def doctor(root: Path, *options: str) -> tuple[int, list[dict[str, object]]]:
    """Doctor's findings as JSON (exit status 0: nothing serious left, 1: something)."""
    code, out, err = cli(["--root", str(root), "--now", T1, "doctor", *options, "--format", "json"])
    assert code in (0, 1) and err == "", err
    report = json.loads(out)
    assert report["repair"] == ("--repair" in options)
    findings: list[dict[str, object]] = report["findings"]
    return code, findings


def doctor_text(root: Path, *options: str) -> tuple[int, list[str]]:
    code, out, err = cli(["--root", str(root), "--now", T1, "doctor", *options])
    assert err == "", err
    return code, out.splitlines()


def aged(path: Path, seconds: float) -> Path:
    """`path` written `seconds` ago."""
    path.write_text("half a write", encoding="utf-8")
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


# --- damage tiermem cannot read its meaning from: named, never rewritten --------------------


def _bad_class(root: Path) -> Path:
    path = memory(root) / "cold" / "eecom.md"
    path.write_text("## x\n<!-- tiermem id=c-1 class=bogus -->\nbody\n", encoding="utf-8")
    return path


def _unclosed_comment(root: Path) -> Path:
    path = memory(root) / "queue" / "flight.md"
    path.write_text("## x\n<!-- tiermem id=q-1 class=learning\nbody\n", encoding="utf-8")
    return path


def _bad_config(root: Path) -> Path:
    path = memory(root) / "config.toml"
    path.write_text("[[[not toml\n", encoding="utf-8")
    return path


def _file_for_folder(name: str) -> Callable[[Path], Path]:
    """A damage: a file in place of one of the store's folders."""

    def damage(root: Path) -> Path:
        path = memory(root) / name
        shutil.rmtree(path)
        path.write_text("not a folder", encoding="utf-8")
        return path

    return damage


_local_is_a_file = _file_for_folder("tiermem-local")
_archive_is_a_file = _file_for_folder("archive")


def _audit_is_a_folder(root: Path) -> Path:
    path = memory(root) / "tiermem-audit.jsonl"
    path.unlink()
    path.mkdir()
    return path


@pytest.mark.parametrize(
    ("damage", "kind", "said"),
    [
        (_bad_class, "file", "line 2: unknown class 'bogus'"),
        (_unclosed_comment, "file", "line 2: metadata comment is not closed"),
        (_bad_config, "file", "line 1: "),
        (_local_is_a_file, "store", "is a file, not a folder; remove or replace it by hand"),
        (_audit_is_a_folder, "store", "is a folder, not a regular file; remove or replace it"),
        (_archive_is_a_file, "store", "is a file, not a folder"),
    ],
)
def test_damage_with_no_safe_repair_is_named_and_left_as_it_was(
    store_copy: Path, damage: Callable[[Path], Path], kind: str, said: str
) -> None:
    path = damage(store_copy)
    shown = path.relative_to(store_copy).as_posix()
    before = snapshot(store_copy)[shown] if path.is_file() else None
    code, findings = doctor(store_copy, "--repair")
    assert code == 1
    [finding] = [f for f in findings if f["path"] == shown]
    assert finding["kind"] == kind and finding["serious"] is True
    assert said in str(finding["problem"]) and finding["repaired"] == ""
    if before is not None:
        assert path.read_bytes() == before


def test_a_tier_file_that_cannot_be_read_says_it_is_never_rewritten(store_copy: Path) -> None:
    _bad_class(store_copy)
    code, lines = doctor_text(store_copy)
    assert code == 1
    [line] = [x for x in lines if "cold/eecom.md" in x and "class" in x]
    assert line.startswith("problem: .squad/memory/cold/eecom.md: line 2: ")
    assert line.endswith("tiermem never rewrites it: fix it by hand")
    assert lines[-1].startswith("doctor: ") and lines[-1].endswith("problem(s) left")


def test_a_broken_store_folder_stops_the_examination_before_the_files(store_copy: Path) -> None:
    """With a store folder out of place, nothing below is walked or counted."""
    _local_is_a_file(store_copy)
    (memory(store_copy) / "cold" / "eecom.md").write_text("## x\n<!-- tiermem id=\n", "utf-8")
    code, lines = doctor_text(store_copy)
    assert code == 1
    assert lines[0] == "doctor: checked the store"
    assert not any("eecom" in line for line in lines)


# --- temp files: how old, said in the unit a person reads ----------------------------------


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(20 * 60, "20 min"), (2 * 3600 + 60, "2 h"), (3 * 86400 + 60, "3 days")],
)
def test_a_stale_temp_file_says_how_long_ago_its_write_was_killed(
    store_copy: Path, seconds: float, said: str
) -> None:
    stale = aged(memory(store_copy) / "wiki" / ".tmp-77-abcdef", seconds)
    code, lines = doctor_text(store_copy)
    assert code == 1 and stale.exists()
    temp = ".squad/memory/wiki/.tmp-77-abcdef"
    expected = f"problem: {temp}: a temp file left by a write killed {said} ago"
    assert expected in lines
    code, lines = doctor_text(store_copy, "--repair")
    assert f"repaired: {expected.removeprefix('problem: ')}; removed" in lines
    assert not stale.exists()


def test_a_file_that_only_looks_like_a_temp_file_elsewhere_is_left_alone(store_copy: Path) -> None:
    """Only the store's own folders are swept: a stale temp name under `.squad/agents/` is a
    Squad file, never tiermem's to remove."""
    squad_file = aged(store_copy / ".squad" / "agents" / "flight" / ".tmp-1-aaaaaa", 86400)
    code, findings = doctor(store_copy, "--repair")
    assert code == 0, findings
    assert squad_file.exists()
    assert not [f for f in findings if f["kind"] == "temp"]


# --- damaged archive records ----------------------------------------------------------------


def test_an_archive_record_of_binary_bytes_is_set_aside_unchanged(store_copy: Path) -> None:
    record = memory(store_copy) / "archive" / "flight" / "a-0123456789.md"
    record.write_bytes(b"\xff\xfe not text at all")
    code, findings = doctor(store_copy)
    assert code == 1
    [finding] = [f for f in findings if f["kind"] == "archive"]
    assert finding["problem"] == "archive record has no tiermem-archive header"
    code, findings = doctor(store_copy, "--repair")
    [finding] = [f for f in findings if f["kind"] == "archive"]
    aside = memory(store_copy) / "damaged" / "archive" / "flight" / record.name
    assert finding["repaired"] == (
        f"moved to .squad/memory/damaged/archive/flight/{record.name}; "
        "its text is not readable as UTF-8, kept there as it was"
    )
    assert aside.read_bytes() == b"\xff\xfe not text at all" and not record.exists()
    assert code == 0
    assert doctor(store_copy)[0] == 0


def test_a_headerless_text_record_is_archived_again_as_recovered(store_copy: Path) -> None:
    record = memory(store_copy) / "archive" / "eecom" / "a-00000000ab.md"
    record.write_text("Hand-written note about the mark-recovered-x reader.\n", "utf-8")
    code, findings = doctor(store_copy, "--repair")
    assert code == 0, findings
    [finding] = [f for f in findings if f["kind"] == "archive"]
    repaired = str(finding["repaired"])
    assert "; its text archived again as archive/eecom/" in repaired
    searched = ["--root", str(store_copy), "search", "mark-recovered-x", "--format", "json"]
    code, out, _ = cli(searched)
    [hit] = json.loads(out)
    assert hit["tier"] == "archive" and hit["path"].endswith(repaired.rsplit("/", 1)[1])
    recovered = (store_copy / hit["path"]).read_text(encoding="utf-8")
    assert "kind=recovered" in recovered.splitlines()[0]


def test_a_record_folder_with_a_name_tiermem_never_reads_is_named(store_copy: Path) -> None:
    odd = memory(store_copy) / "archive" / "Not An Agent"
    odd.mkdir()
    (odd / "a-0000000001.md").write_text("text\n", encoding="utf-8")
    code, findings = doctor(store_copy, "--repair")
    assert code == 1
    [finding] = [f for f in findings if f["kind"] == "name"]
    assert finding["path"] == ".squad/memory/archive/Not An Agent"
    assert str(finding["problem"]).startswith("never read: ")
    assert (odd / "a-0000000001.md").read_text(encoding="utf-8") == "text\n"


# --- caches: the index and the clone key are taken out of the way, never followed -----------


@pytest.mark.parametrize("shape", ["folder", "link"])
def test_a_clone_key_that_is_not_a_file_is_cleared_and_made_again(
    store_copy: Path, shape: str
) -> None:
    key = memory(store_copy) / "tiermem-local" / "clone-key"
    key.unlink(missing_ok=True)
    target = store_copy.parent / "elsewhere"
    target.write_text("outside the store", encoding="utf-8")
    if shape == "folder":
        key.mkdir()
    else:
        key.symlink_to(target)
    code, findings = doctor(store_copy)
    assert code == 1
    [finding] = [f for f in findings if f["path"] == ".squad/memory/tiermem-local/clone-key"]
    assert finding["kind"] == ("link" if shape == "link" else "store")
    assert doctor_text(store_copy)[1][-1] == "doctor: 1 problem(s) left"  # named once
    code, findings = doctor(store_copy, "--repair")
    assert code == 0, findings
    assert target.read_text(encoding="utf-8") == "outside the store"
    assert not key.is_symlink() and not key.is_dir()
    assert cli(["--root", str(store_copy), "search", "release"])[0] == 0
    assert key.is_file() and not key.is_symlink()


def test_an_index_link_is_removed_and_what_it_pointed_at_kept(store_copy: Path) -> None:
    target = store_copy.parent / "some.sqlite"
    target.write_bytes(b"precious bytes")
    index = memory(store_copy) / "index.sqlite"
    index.unlink(missing_ok=True)
    index.symlink_to(target)
    code, findings = doctor(store_copy, "--repair")
    assert code == 0, findings
    [finding] = [f for f in findings if f["path"] == ".squad/memory/index.sqlite"]
    assert finding["kind"] == "link" and finding["repaired"] == "removed"
    assert target.read_bytes() == b"precious bytes"
    assert index.is_file() and not index.is_symlink()


def test_a_missing_index_is_a_note_and_a_repair_builds_it(store_copy: Path) -> None:
    index = memory(store_copy) / "index.sqlite"
    assert not index.exists()  # store_copy leaves it behind
    code, findings = doctor(store_copy)
    assert code == 0
    [note] = [f for f in findings if f["kind"] == "index"]
    assert note["serious"] is False and note["problem"] == "not built yet; the next read builds it"
    assert not index.exists()
    code, findings = doctor(store_copy, "--repair")
    assert code == 0 and index.is_file()
    assert not [f for f in findings if f["kind"] == "index"]


# --- the audit trail of repairs ------------------------------------------------------------


def audit_lines(root: Path) -> list[dict[str, object]]:
    text = (memory(root) / "tiermem-audit.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_repairs_are_written_to_the_audit_trail_and_a_check_writes_nothing(
    store_copy: Path,
) -> None:
    stale = aged(memory(store_copy) / "hot" / ".tmp-9-abcdef", 7200)
    before = audit_lines(store_copy)
    doctor(store_copy)
    assert audit_lines(store_copy) == before and stale.exists()
    doctor(store_copy, "--repair")
    [line] = audit_lines(store_copy)[len(before) :]
    assert line["action"] == "doctor" and line["reason"] == "repairs after a merge or a crash"
    repaired = line["repaired"]
    assert isinstance(repaired, list)
    assert ".squad/memory/hot/.tmp-9-abcdef: removed" in repaired


def test_a_repair_with_nothing_to_mend_leaves_no_audit_line(store_copy: Path) -> None:
    cli(["--root", str(store_copy), "search", "release"])  # the index built
    before = audit_lines(store_copy)
    code, findings = doctor(store_copy, "--repair")
    assert code == 0 and not [f for f in findings if f["serious"]]
    assert audit_lines(store_copy) == before
