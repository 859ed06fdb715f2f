"""The per-entry merge of tier files (`tiermem merge-file`), three versions at a time.

tests/test_git_merge.py runs it under real git merges between clones; here each rule of the
three-way merge is checked on its own, in both directions.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import RunCli
from tiermem.storage import entries
from tiermem.storage.entries import Entry, TierFile
from tiermem.storage.merge import merge_file, merge_tier_files

T0 = "2026-03-01T09:00:00Z"


def entry(entry_id: str, body: str, used: str = T0, title: str = "Cache lifetime") -> Entry:
    return Entry(entry_id, "decision", title, body, agent="team", created=T0, used=used)


def tier(*items: Entry, session: str = "") -> str:
    meta = {"tier": "cold", "agent": "team"} | ({"session": session} if session else {})
    return entries.render(TierFile(heading="team: cold memory", meta=meta, entries=[*items]))


def merged(base: str, ours: str, theirs: str) -> TierFile:
    """The merge both ways round, which must give the same file; parsed."""
    one = merge_tier_files(base, ours, theirs)
    assert merge_tier_files(base, theirs, ours) == one
    return entries.parse(one)


A = entry("d-000000000a", "Cache answers for one hour.")
B = entry("d-000000000b", "Cache answers for five minutes.")
C = entry("d-000000000c", "Registry is slow.")


def test_entries_added_on_both_sides_are_all_kept() -> None:
    result = merged(tier(C), tier(C, A), tier(C, B))
    assert [e.id for e in result.entries] == ["d-000000000c", "d-000000000a", "d-000000000b"]
    assert not result.conflicts


def test_one_entry_added_on_both_sides_with_other_times_has_one_place_either_way() -> None:
    def new(entry_id: str, day: int) -> Entry:
        return Entry(entry_id, "decision", "New", "Same text.", created=f"2026-03-0{day}T09:00:00Z")

    early, late = new("d-000000000d", 2), new("d-000000000d", 9)
    ours, theirs = new("d-000000000e", 5), new("d-000000000f", 5)
    result = merged(tier(C), tier(C, early, ours), tier(C, theirs, late))
    ids = [e.id for e in result.entries]
    assert ids == ["d-000000000c", "d-000000000d", "d-000000000e", "d-000000000f"]
    assert result.entries[1] == late  # the same text: the newer metadata is kept


def test_an_edit_on_one_side_wins_over_the_unchanged_other() -> None:
    edited = entry("d-000000000c", "Registry is slow; cache it.")
    result = merged(tier(C), tier(edited), tier(C))
    assert result.entries == [edited]


def test_an_entry_removed_on_one_side_is_gone_unless_the_other_side_changed_it() -> None:
    assert merged(tier(C, A), tier(A), tier(C, A)).entries == [A]
    refreshed = entry("d-000000000c", "Registry is slow.", used="2026-03-05T09:00:00Z")
    assert merged(tier(C, A), tier(A), tier(refreshed, A)).entries == [refreshed, A]


def test_when_only_the_last_use_differs_the_newest_is_kept_without_a_conflict() -> None:
    early = entry("d-000000000c", "Registry is slow.", used="2026-03-03T09:00:00Z")
    late = entry("d-000000000c", "Registry is slow.", used="2026-03-04T09:00:00Z")
    result = merged(tier(C), tier(early), tier(late))
    assert result.entries == [late]
    assert not result.conflicts


def test_two_edits_of_one_entry_keep_both_versions_and_report_the_conflict() -> None:
    ours = entry("d-000000000c", "Registry is slow in a.")
    theirs = entry("d-000000000c", "Registry is slow in b.")
    result = merged(tier(C), tier(ours), tier(theirs))
    [kept] = result.entries
    [conflict] = result.conflicts
    assert {kept.body, conflict.lost.body if conflict.lost else ""} == {ours.body, theirs.body}


def test_file_metadata_changed_on_both_sides_settles_the_same_way() -> None:
    result = merged(tier(C), tier(C, session="s1"), tier(C, session="s2"))
    assert result.meta["session"] == "s2"


def test_a_version_that_is_not_a_tier_file_falls_back_to_a_union_merge(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("# notes\nshared line\n", encoding="utf-8")
    ours.write_text("# notes\nshared line\nours\n", encoding="utf-8")
    broken = "## Entry\n<!-- tiermem id=x-1 class=nonsense -->\n"
    theirs.write_text(f"# notes\nshared line\ntheirs\n{broken}", encoding="utf-8")
    assert merge_file(base, ours, theirs) is False
    text = ours.read_text(encoding="utf-8")
    assert "ours" in text and "theirs" in text and "<<<<<<<" not in text


def test_merge_file_command_merges_in_place(tmp_path: Path, run_cli: RunCli) -> None:
    paths = {}
    for name, text in (("base", tier(C)), ("ours", tier(C, A)), ("theirs", tier(C, B))):
        paths[name] = tmp_path / name
        paths[name].write_text(text, encoding="utf-8")
    code, out, err = run_cli("merge-file", *(str(paths[n]) for n in ("base", "ours", "theirs")))
    assert (code, out, err) == (0, "", "")
    ids = [e.id for e in entries.parse(paths["ours"].read_text(encoding="utf-8")).entries]
    assert ids == ["d-000000000c", "d-000000000a", "d-000000000b"]

    code, out, err = run_cli("merge-file", str(tmp_path / "missing"), str(paths["ours"]), "x")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_init_with_the_merge_driver_outside_git_is_refused_and_writes_nothing(
    tmp_path: Path, run_cli: RunCli
) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    code, _, err = run_cli("--root", str(tmp_path), "init", "--merge-driver")
    assert code == 2 and "merge driver" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_init_with_the_merge_driver_sets_up_this_clone_once(
    tmp_path: Path, run_cli: RunCli
) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code, out, _ = run_cli("--root", str(tmp_path), "init", "--merge-driver")
    assert code == 0 and "set git config merge.tiermem.driver" in out
    assert "wrote .git/info/attributes" in out
    attributes = (tmp_path / ".git/info/attributes").read_text(encoding="utf-8")
    assert ".squad/memory/cold/*.md merge=tiermem" in attributes
    config = subprocess.run(
        ["git", "config", "--get", "merge.tiermem.driver"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-m tiermem merge-file %O %A %B" in config
    code, out, _ = run_cli("--root", str(tmp_path), "init", "--merge-driver")
    assert (code, out.strip()) == (0, f"tiermem store already set up in {tmp_path}")
    assert (tmp_path / ".git/info/attributes").read_text(encoding="utf-8") == attributes
