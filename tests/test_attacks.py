"""A repository is untrusted input: committed links and hostile names never lead tiermem out
of `.squad/`, and each command meets them with exit 0, 1 or 2 and at most one line.

The attacks are in tests/attacks.py; tests/stress.py (`attacks`) runs every one of them
against every command.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import attacks
from hostile import OUTSIDE_MARK


@pytest.fixture
def scene(store_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    return store_copy, attacks.outside_tree(tmp_path / "outside")


# A few commands per link keep the suite fast; the stress run tries every command.
SUITE_COMMANDS = [
    ["hot", "note", "flight", "a note"],
    ["search", "login notes private"],
    ["scribe", "end-session", "--all"],
    ["scribe", "run"],
    ["decision", "add", "--by", "flight", "Use pnpm"],
    ["import", "squad"],
    ["spawn", "flight", "--task", "login notes", "--charter"],
    ["doctor", "--repair"],
]


@pytest.mark.parametrize("link", sorted(attacks.LINKS))
def test_a_committed_link_is_never_followed(scene: tuple[Path, Path], link: str) -> None:
    root, outside = scene
    attacks.plant_link(root, outside, link)
    before = attacks.fingerprint(outside)
    for argv in SUITE_COMMANDS:
        outcome = attacks.run(root, argv)
        assert attacks.problems(outcome, before, outside) == [], (argv, outcome)
    assert not attacks.memory_holds_outside_text(root), "outside text was read into memory"


def test_a_link_in_the_store_is_refused_in_one_line_naming_it(scene: tuple[Path, Path]) -> None:
    root, outside = scene
    attacks.plant_link(root, outside, ".squad/memory/hot")
    outcome = attacks.run(root, ["hot", "note", "flight", "a note"])
    assert outcome.code == 2
    assert outcome.err.count("\n") == 1
    assert ".squad/memory/hot: is a symbolic link" in outcome.err


def test_the_chained_attack_runs_nothing(scene: tuple[Path, Path]) -> None:
    """The audit trail linked to a shell rc file, and an inbox file whose name is a command:
    the audit line naming the merged file would have been appended to the rc file."""
    root, outside = scene
    attacks.plant_link(root, outside, ".squad/memory/tiermem-audit.jsonl")
    attacks.HOSTILE_NAMES["inbox_name_runs_a_command"](root)
    rc_before = (outside / "rc").read_bytes()
    outcome = attacks.run(root, ["scribe", "run"])
    assert outcome.code == 2 and outcome.err.count("\n") == 1, outcome
    assert (outside / "rc").read_bytes() == rc_before
    subprocess.run(["sh", "-c", f". {outside / 'rc'}"], cwd=outside, check=False)
    assert not attacks.pwned(outside) and not attacks.pwned(root)


def test_an_inbox_file_named_like_a_command_is_left_alone(scene: tuple[Path, Path]) -> None:
    root, _ = scene
    attacks.HOSTILE_NAMES["inbox_name_runs_a_command"](root)
    outcome = attacks.run(root, ["scribe", "run"])
    assert outcome.code == 0, outcome
    inbox = root / ".squad" / "decisions" / "inbox"
    assert (inbox / f"flight-$(touch {attacks.PWNED}).md").exists()  # not merged, not removed
    assert not (inbox / "flight-cache.md").exists()  # the plain one was merged
    audit = (root / ".squad" / "memory" / "tiermem-audit.jsonl").read_text(encoding="utf-8")
    assert "$(" not in audit and "`" not in audit


def test_a_merge_loser_naming_an_agent_out_of_the_repository_stays_in_it(
    scene: tuple[Path, Path],
) -> None:
    root, _ = scene
    target = attacks.traversal_in_a_merge_loser(root)
    for argv in (["hot", "note", "eecom", "x"], ["scribe", "end-session", "eecom"]):
        outcome = attacks.run(root, argv)
        assert outcome.code == 0, outcome
    assert not target.exists()
    assert not any(p.name == "OUTSIDE" for p in root.parent.rglob("*"))
    # The losing version is archived with the file's owner, its text kept.
    kept = (root / ".squad" / "memory" / "archive" / "eecom").rglob("*.md")
    assert any(b"the older text" in p.read_bytes() for p in kept)


@pytest.mark.parametrize("attack", sorted(attacks.HOSTILE_NAMES))
def test_hostile_names_and_metadata_stay_inside(scene: tuple[Path, Path], attack: str) -> None:
    root, outside = scene
    attacks.HOSTILE_NAMES[attack](root)
    before = attacks.fingerprint(outside)
    above = sorted(p.name for p in root.parent.iterdir())
    for argv in attacks.COMMANDS:
        outcome = attacks.run(root, argv)
        assert attacks.problems(outcome, before, outside) == [], (argv, outcome)
    assert sorted(p.name for p in root.parent.iterdir()) == above
    assert not attacks.pwned(root)
    assert OUTSIDE_MARK not in "".join(p.name for p in root.rglob("*"))
