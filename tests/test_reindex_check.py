"""`tiermem reindex --check`: one line per file whose rows differ, saying how, exit 1; the
check itself changes nothing (asked twice, it says the same), and `reindex` makes it match."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot


def memory(root: Path) -> Path:
    return root / ".squad" / "memory"


def check(run_cli: RunCli, root: Path) -> tuple[int, list[str]]:
    code, out, err = run_cli("reindex", "--check", "--root", str(root))
    assert code in (0, 1) and err == "", err
    return code, out.splitlines()


@pytest.fixture
def indexed(store_copy: Path, run_cli: RunCli) -> Path:
    """The shared store with its index built by a read and matching the files."""
    assert run_cli("search", "release", "--root", str(store_copy))[0] == 0
    assert check(run_cli, store_copy) == (0, ["index matches the files"])
    return store_copy


def _append(root: Path) -> None:
    with (memory(root) / "wiki" / "release.md").open("a", encoding="utf-8") as page:
        page.write("\nA line written by hand.\n")


def _remove(root: Path) -> None:
    (memory(root) / "cold" / "eecom.md").unlink()


def _add(root: Path) -> None:
    text = (memory(root) / "cold" / "eecom.md").read_text(encoding="utf-8")
    (memory(root) / "cold" / "capcom.md").write_text(text.replace("eecom", "capcom"), "utf-8")


@pytest.mark.parametrize(
    ("damage", "lines"),
    [
        (_append, ["changed: .squad/memory/wiki/release.md"]),
        (_remove, ["removed: .squad/memory/cold/eecom.md"]),
        (_add, ["changed: .squad/memory/cold/capcom.md"]),
    ],
    ids=["edited", "removed", "added"],
)
def test_each_drift_is_one_line_and_reindex_mends_it(
    indexed: Path, run_cli: RunCli, damage: Callable[[Path], None], lines: list[str]
) -> None:
    damage(indexed)
    assert check(run_cli, indexed) == (1, lines)
    code, out, err = run_cli("reindex", "--root", str(indexed))
    assert (code, err) == (0, "") and out.startswith("indexed ") and out.endswith(" files\n")
    assert check(run_cli, indexed) == (0, ["index matches the files"])


def test_drift_in_several_files_is_said_for_each(indexed: Path, run_cli: RunCli) -> None:
    for damage in (_append, _add, _remove):
        damage(indexed)
    code, lines = check(run_cli, indexed)
    assert code == 1
    assert sorted(lines) == [
        "changed: .squad/memory/cold/capcom.md",
        "changed: .squad/memory/wiki/release.md",
        "removed: .squad/memory/cold/eecom.md",
    ]


def test_a_check_changes_nothing_and_says_the_same_twice(indexed: Path, run_cli: RunCli) -> None:
    _append(indexed)
    index = memory(indexed) / "index.sqlite"
    before_files, before_index = snapshot(indexed), index.read_bytes()
    first = check(run_cli, indexed)
    assert check(run_cli, indexed) == first
    assert snapshot(indexed) == before_files
    assert index.read_bytes() == before_index


def test_an_index_not_built_yet_differs_in_every_file(store_copy: Path, run_cli: RunCli) -> None:
    code, lines = check(run_cli, store_copy)
    assert code == 1 and lines
    tier_files = sorted(
        p.relative_to(store_copy).as_posix()
        for tier in ("hot", "cold", "wiki", "archive")
        for p in (memory(store_copy) / tier).rglob("*.md")
    )
    assert sorted(line.removeprefix("changed: ") for line in lines) == tier_files


def test_a_file_that_cannot_be_read_is_named_with_its_line(indexed: Path, run_cli: RunCli) -> None:
    page = memory(indexed) / "wiki" / "release.md"
    page.write_text("## x\n<!-- tiermem id=w-1 class=bogus -->\nbody\n", encoding="utf-8")
    code, lines = check(run_cli, indexed)
    assert code == 1
    [unreadable] = [line for line in lines if line.startswith("unreadable: ")]
    assert unreadable.endswith(
        "release.md:2: unknown class 'bogus' (expected one of policy, "
        "decision, convention, contract, learning, action, status)"
    )


@pytest.mark.parametrize("args", [("--check", "extra"), ("--format", "json")])
def test_reindex_takes_no_other_argument(
    indexed: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    code, out, err = run_cli("reindex", *args, "--root", str(indexed))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "unrecognized arguments" in err
