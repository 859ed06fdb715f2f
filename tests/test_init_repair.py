"""`tiermem init` on a store a person or a merge left incomplete: it makes again only what is
missing and says each thing it made, keeps every hand edit, and refuses, writing nothing, where
something else stands in the place of a folder it needs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    mem, _ = Memory.init(tmp_path, now=T0)
    mem.hot_set("ada", "Fix the reader")
    mem.close()
    return tmp_path


def init(run_cli: RunCli, root: Path) -> tuple[int, list[str], str]:
    code, out, err = run_cli("init", "--root", str(root))
    return code, out.splitlines(), err


def memory(root: Path) -> Path:
    return root / ".squad" / "memory"


@pytest.mark.parametrize(
    "missing",
    [
        ["queue"],
        ["queue", "wiki"],
        [".gitignore"],
        [".gitattributes", "config.toml"],
    ],
    ids=["a folder", "two folders", "the ignore file", "two files"],
)
def test_only_what_is_missing_is_made_and_each_is_said(
    root: Path, run_cli: RunCli, missing: list[str]
) -> None:
    kept = snapshot(root)
    for name in missing:
        path = memory(root) / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    code, lines, err = init(run_cli, root)
    assert (code, err) == (0, "")
    said = {line.removeprefix("created .squad/memory/").rstrip("/") for line in lines}
    assert said == set(missing)
    assert snapshot(root) == kept  # made again as init first made it


def test_a_hand_edited_config_survives_an_init_that_repairs(root: Path, run_cli: RunCli) -> None:
    config = memory(root) / "config.toml"
    config.write_text("[hot]\nbudget_bytes = 8192\n", encoding="utf-8")
    shutil.rmtree(memory(root) / "queue")
    code, lines, _ = init(run_cli, root)
    assert code == 0 and lines == ["created .squad/memory/queue/"]
    assert config.read_text(encoding="utf-8") == "[hot]\nbudget_bytes = 8192\n"


def test_hot_memory_survives_an_init_that_repairs(root: Path, run_cli: RunCli) -> None:
    hot = memory(root) / "hot" / "ada.md"
    before = hot.read_bytes()
    (memory(root) / ".gitignore").unlink()
    assert init(run_cli, root)[0] == 0
    assert hot.read_bytes() == before


def test_a_complete_store_is_said_to_be_set_up(root: Path, run_cli: RunCli) -> None:
    before = snapshot(root)
    code, lines, err = init(run_cli, root)
    assert (code, err) == (0, "")
    assert lines == [f"tiermem store already set up in {root}"]
    assert snapshot(root) == before


@pytest.mark.parametrize("folder", ["wiki", "archive"])
def test_a_file_in_place_of_a_folder_is_refused_and_nothing_is_written(
    root: Path, run_cli: RunCli, folder: str
) -> None:
    path = memory(root) / folder
    shutil.rmtree(path)
    path.write_text("not a folder", encoding="utf-8")
    (memory(root) / ".gitignore").unlink()  # something init would make, if it went on
    before = snapshot(root)
    code, lines, err = init(run_cli, root)
    assert (code, lines) == (2, [])
    assert err == f"tiermem: error: {path}: is not a folder (run `tiermem doctor` for what to do)\n"
    assert snapshot(root) == before
