"""`tiermem doctor [--repair]`: what a merge or a crash left, and the repairs that are safe."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import attacks
from reliability import cli, files_text

T1 = "2026-03-03T10:00:00Z"


@pytest.fixture
def root(store_copy: Path) -> Path:
    return store_copy


def memory(root: Path) -> Path:
    return root / ".squad" / "memory"


def doctor(root: Path, *options: str) -> tuple[int, dict[str, object]]:
    code, out, err = cli(["--root", str(root), "--now", T1, "doctor", *options, "--format", "json"])
    assert code in (0, 1), err
    report: dict[str, object] = json.loads(out)
    return code, report


def kinds(report: dict[str, object], serious: bool = True) -> list[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [f["kind"] for f in findings if f["serious"] == serious and not f["repaired"]]


def test_a_sound_store_has_no_problem(root: Path) -> None:
    code, out, _ = cli(["--root", str(root), "doctor"])
    assert code == 0, out
    assert out.splitlines()[-1] == "doctor: no problems left"


def test_stale_temp_files_are_removed_and_a_write_in_progress_left_alone(root: Path) -> None:
    stale = memory(root) / "hot" / ".tmp-4242-aaaaaa"
    fresh = memory(root) / "cold" / ".tmp-4243-bbbbbb"
    for path in (stale, fresh):
        path.write_text("half a write", encoding="utf-8")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    code, report = doctor(root)
    assert code == 1 and kinds(report) == ["temp"]
    code, report = doctor(root, "--repair")
    assert code == 0
    assert not stale.exists() and fresh.exists()
    assert "temp" in kinds(report, serious=False)


def test_the_next_write_in_a_folder_removes_its_stale_temp_files(root: Path) -> None:
    stale = memory(root) / "hot" / ".tmp-4242-cccccc"
    stale.write_text("half a write", encoding="utf-8")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    code, _, err = cli(["--root", str(root), "hot", "note", "flight", "a note"])
    assert code == 0, err
    assert not stale.exists()


def test_an_id_held_twice_is_folded_and_the_loser_archived(root: Path) -> None:
    attacks.traversal_in_a_merge_loser(root)
    code, report = doctor(root)
    assert code == 1 and "ids" in kinds(report)
    code, report = doctor(root, "--repair")
    assert code == 0, report
    text = (memory(root) / "cold" / "eecom.md").read_text(encoding="utf-8")
    assert text.count("id=c-dup0000001 ") == 1
    assert "the older text" in files_text(root)  # archived, under the file's owner
    assert doctor(root)[0] == 0


def _damaged_record(root: Path) -> Path:
    """A record a git merge wrote into (its hash fails), cited by a cold entry."""
    cli(["--root", str(root), "--now", T1, "hot", "note", "flight", "Base note mark-base-x"])
    cli(["--root", str(root), "--now", T1, "scribe", "end-session", "flight"])
    [record] = [
        p
        for p in (memory(root) / "archive" / "flight").glob("*.md")
        if b"kind=hot-session" in p.read_bytes()[:300]
    ]
    with record.open("a", encoding="utf-8") as out:
        out.write(
            "\n## Note: Clone A note mark-merged-in\n<!-- tiermem id=h-1 class=learning -->\n"
        )
    return record


def test_a_record_a_merge_wrote_into_is_set_aside_and_its_text_recovered(root: Path) -> None:
    record = _damaged_record(root)
    code, out, _ = cli(["--root", str(root), "search", "mark-merged-in"])
    assert "mark-merged-in" not in out  # hidden: the record fails its hash
    code, report = doctor(root)
    # Written in place, the record also differs from what the index holds of it.
    assert code == 1 and set(kinds(report)) == {"archive", "index"}
    code, report = doctor(root, "--repair")
    assert code == 0, report
    assert not record.exists()
    aside = memory(root) / "damaged" / "archive" / "flight" / record.name
    assert aside.exists()
    code, out, _ = cli(["--root", str(root), "search", "mark-merged-in", "--format", "json"])
    [hit] = [h for h in json.loads(out) if "mark-merged-in" in h["text"]]
    assert hit["tier"] == "archive"
    # The entries that cited the damaged record cite the recovered one.
    cold = (memory(root) / "cold" / "flight.md").read_text(encoding="utf-8")
    assert record.stem not in cold
    assert hit["path"].split("/")[-1].removesuffix(".md") in cold
    assert doctor(root)[0] == 0


def test_links_are_named_and_only_those_in_place_of_caches_removed(root: Path) -> None:
    outside = attacks.outside_tree(root.parent / "outside")
    attacks.plant_link(root, outside, ".squad/memory/hot/flight.md")
    attacks.plant_link(root, outside, ".squad/memory/index.sqlite")
    code, report = doctor(root, "--repair")
    assert code == 1
    assert kinds(report) == ["link"]  # hot/flight.md: a person decides
    assert not (memory(root) / "index.sqlite").is_symlink()
    assert (memory(root) / "hot" / "flight.md").is_symlink()


def test_a_store_with_a_linked_folder_is_examined_no_further(root: Path) -> None:
    outside = attacks.outside_tree(root.parent / "outside")
    attacks.plant_link(root, outside, ".squad/memory/cold")
    before = attacks.fingerprint(outside)
    code, report = doctor(root, "--repair")
    assert code == 1 and "link" in kinds(report)
    assert attacks.fingerprint(outside) == before


@pytest.mark.parametrize("damage", ["not-a-database", "foreign", "folder", "behind"])
def test_a_bad_index_is_rebuilt(root: Path, damage: str) -> None:
    index = memory(root) / "index.sqlite"
    for side in ("", "-wal", "-shm"):
        Path(f"{index}{side}").unlink(missing_ok=True)
    if damage == "not-a-database":
        index.write_bytes(b"junk" * 1000)
    elif damage == "foreign":
        attacks.HOSTILE_NAMES["committed_foreign_index"](root)
    elif damage == "folder":
        index.mkdir()
    else:  # behind the files, as after any write: brought up to date, no problem
        cli(["--root", str(root), "search", "login"])
        cli(["--root", str(root), "hot", "note", "flight", "written after the last read"])
    code, report = doctor(root)
    assert code == (0 if damage == "behind" else 1), report
    assert damage == "behind" or {"index", "store"} & set(kinds(report)), report
    code, report = doctor(root, "--repair")
    assert code == 0, report
    code, out, err = cli(["--root", str(root), "reindex", "--check"])
    assert (code, out) == (0, "index matches the files\n"), err


def test_a_lock_folder_that_is_a_file_is_made_again(root: Path) -> None:
    shutil.rmtree(memory(root) / ".locks", ignore_errors=True)
    (memory(root) / ".locks").write_text("x", encoding="utf-8")
    assert cli(["--root", str(root), "hot", "note", "flight", "x"])[0] == 2
    code, _ = doctor(root, "--repair")
    assert code == 0
    assert cli(["--root", str(root), "hot", "note", "flight", "x"])[0] == 0


def test_names_tiermem_never_reads_and_missing_citations_are_named(root: Path) -> None:
    (memory(root) / "cold" / "x..y.md").write_text("# x\n", encoding="utf-8")
    attacks.HOSTILE_NAMES["sources_climb"](root)
    cold = memory(root) / "cold" / "eecom.md"
    cold.write_text(
        cold.read_text("utf-8")
        + "\n## Cited\n<!-- tiermem id=c-cite000001 class=learning "
        + "sources=archive/eecom/a-0000000000.md#L3 -->\nbody\n",
        "utf-8",
    )
    code, report = doctor(root, "--repair")
    assert code == 1
    assert sorted(set(kinds(report))) == ["citation", "name"]


def test_text_waiting_for_scribe_is_a_note(root: Path) -> None:
    for n in range(7):
        cli(["--root", str(root), "--now", T1, "hot", "action", "eecom", f"step {n}"])
    code, report = doctor(root)
    assert code == 0
    assert "queue" in kinds(report, serious=False)


def test_no_store_is_said(tmp_path: Path) -> None:
    code, out, _ = cli(["--root", str(tmp_path), "doctor"])
    assert code == 1 and "no tiermem store here" in out


def test_a_gitignore_that_lacks_lines_is_a_note_and_init_adds_them(root: Path) -> None:
    ignore = memory(root) / ".gitignore"
    ignore.write_text(ignore.read_text(encoding="utf-8").replace("damaged/\n", ""), "utf-8")
    code, report = doctor(root)
    assert code == 0 and "git" in kinds(report, serious=False)
    assert cli(["--root", str(root), "init"])[0] == 0
    assert "damaged/" in ignore.read_text(encoding="utf-8").splitlines()
    assert "git" not in kinds(doctor(root)[1], serious=False)


def test_this_clones_own_files_tracked_by_git_are_named(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    log = memory(root) / "spawns.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(root), "add", "-f", str(log)], check=True)
    code, report = doctor(root)
    found = report["findings"]
    assert isinstance(found, list)
    findings = [f for f in found if f["kind"] == "git"]
    assert code == 1 and [f["path"] for f in findings] == [".squad/memory/spawns.jsonl"]
    assert "git rm --cached .squad/memory/spawns.jsonl" in findings[0]["problem"]
