"""Every user-facing failure is one line on stderr and exit status 2, and leaves nothing
half-written: a full disk, a store's own files of the wrong type, links to nothing, names
too long, and fuzzed command lines on an intact store."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

import attacks
import failures
import fuzz
import hostile
from conftest import RunCli
from reliability import cli, files_text, snapshot


@pytest.fixture
def root(store_copy: Path) -> Path:
    return store_copy


@pytest.mark.parametrize("argv", failures.WRITES, ids=lambda a: " ".join(a[2:4]))
def test_a_full_disk_fails_in_one_line_and_leaves_the_store_whole(
    root: Path, argv: list[str]
) -> None:
    texts = files_text(root, ".squad")
    marks = {m for m in ("mark-disk-note",) if m in texts}
    for fail_at in (1, 2, 3, 5, 8):
        result = failures.full_disk(root, argv, fail_at)
        assert result["code"] in (0, 1, 2), result
        if result["code"] == 2:
            err = str(result["err"])
            assert err.count("\n") == 1 and "No space left on device" in err, err
        assert failures.temp_files(root) == []
        # The store loads, and the operation finishes when the disk has room again.
        for read in (["hot", "show", "flight"], ["search", "login"], ["stats"]):
            code, _, err = cli(["--root", str(root), *read])
            assert code == 0, (read, err)
        code, _, err = cli(["--root", str(root), *argv])
        assert code in (0, 1), err
        assert {m for m in marks if m not in files_text(root, ".squad")} == set()


def test_a_refused_write_on_a_full_disk_changes_nothing(root: Path) -> None:
    before = snapshot(root)
    result = failures.full_disk(root, ["hot", "note", "flight", "a note"], 1)
    assert result["code"] == 2
    assert snapshot(root) == before


@pytest.mark.parametrize("damage", sorted(failures.wrong_types()))
def test_a_store_file_of_the_wrong_type_fails_every_command_in_one_line(
    root: Path, damage: str
) -> None:
    failures.wrong_types()[damage](root / ".squad" / "memory")
    before = snapshot(root)
    for argv in attacks.COMMANDS:
        outcome = attacks.run(root, argv)
        assert not outcome.traceback, (argv, outcome.traceback)
        assert outcome.code in (0, 1, 2), (argv, outcome)
        if outcome.code == 2:
            assert outcome.err.count("\n") == 1, (argv, outcome.err)
        if argv[0] not in ("doctor",):
            assert snapshot(root) == before or outcome.code == 0, argv


@pytest.mark.parametrize("tier", ["hot", "cold", "wiki", "archive/flight"])
def test_a_link_to_nothing_in_a_tier_never_fails_a_command(root: Path, tier: str) -> None:
    folder = root / ".squad" / "memory" / tier
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ghost.md").symlink_to(root / "no-such-file.md")
    (folder / "a-0000000000.md").symlink_to(root / "no-such-file.md")
    for argv in [*attacks.COMMANDS, ["hot", "show", "ghost"], ["wiki", "show", "ghost"]]:
        outcome = attacks.run(root, argv)
        assert not outcome.traceback, (argv, outcome.traceback)
        assert outcome.code in (0, 1, 2), (argv, outcome)
        assert outcome.code != 2 or outcome.err.count("\n") == 1, (argv, outcome.err)


@pytest.mark.parametrize(
    "argv",
    [
        ["--root", "/" + "z" * 300],
        ["--root", "/tmp/" + "y" * 5000],
        ["merge-file", "x" * 300, "y", "z"],
        ["hot", "show", "x" * 300],
        ["wiki", "show", "é" * 200],
        ["search", "x" * 300, "--agent", "y" * 300],
    ],
    ids=["root-name", "root-path", "merge-file", "agent", "topic", "search"],
)
def test_names_too_long_fail_in_one_line(root: Path, argv: list[str]) -> None:
    argv = [*argv, "stats"] if argv[0] == "--root" else ["--root", str(root), *argv]
    code, _, err = cli(argv)
    assert code == 2 and err.count("\n") == 1, err


def test_fuzzed_command_lines_never_raise(root: Path) -> None:
    rng = random.Random(20260301)
    bad = []
    for n in range(300):
        if n % 60 == 0:
            shutil.rmtree(root)
            root.mkdir()
            hostile.build_template(root)
        argv = fuzz.random_argv(rng, root)
        verdict, detail = fuzz.verdict(argv)
        if verdict != "ok":
            bad.append((verdict, argv, detail[-300:]))
    assert bad == []


def _refuse_audit_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from tiermem.errors import StoreError
    from tiermem.storage import audit

    def full(*args: object, **kwargs: object) -> None:
        raise StoreError("cannot write tiermem-audit.jsonl: No space left on device")

    monkeypatch.setattr(audit, "append", full)


def test_an_audit_line_a_full_disk_refused_is_said_once_with_the_outcome(
    root: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_audit_lines(monkeypatch)
    code, _, err = run_cli("--root", str(root), "decision", "add", "--by", "flight", "mark-gap")
    assert code == 0
    assert err == (
        "tiermem: warning: 1 audit line(s) not written "
        "(cannot write tiermem-audit.jsonl: No space left on device)\n"
    )
    assert "mark-gap" in files_text(root)  # the memory itself was written


def test_a_failure_after_a_refused_audit_line_is_still_one_line(
    root: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiermem import doors
    from tiermem.context import Context
    from tiermem.errors import StoreError
    from tiermem.options import DecideRequest

    _refuse_audit_lines(monkeypatch)
    real = doors.decide

    def then_full(ctx: Context, request: DecideRequest) -> list[str]:
        real(ctx, request)
        raise StoreError("cannot write .squad/decisions.md: No space left on device")

    monkeypatch.setattr(doors, "decide", then_full)
    code, _, err = run_cli("--root", str(root), "decision", "add", "--by", "flight", "mark-gap")
    assert code == 2 and err.count("\n") == 1
    assert "No space left on device; 1 audit line(s) not written" in err
