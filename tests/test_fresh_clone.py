"""A fresh clone's first reads: the first one builds the index, and a process started while
it builds neither waits out the build (at most `database.BUILD_WAIT_SECONDS`, then one line
saying so) nor corrupts it; a command that needs no index never waits for it. Every command
here is a real process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reliability import child_env
from tiermem.bench.generated import NOW, generate
from tiermem.index import database
from tiermem.storage import files
from tiermem.storage.layout import LOCAL_FOLDER, Layout

ENTRIES = 3000  # a store whose build takes a noticeable while, made once


def tiermem(root: Path, *argv: str) -> list[str]:
    return [sys.executable, "-m", "tiermem", "--root", str(root), "--now", NOW, *argv]


def run(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tiermem(root, *argv), capture_output=True, text=True, env=child_env(), check=False
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated") / "repo"
    root.mkdir()
    generate(root, ENTRIES, lambda _: None)
    return root


@pytest.fixture
def fresh(generated: Path, tmp_path: Path) -> Path:
    """A copy of the generated store as a clone brings it: no index, no clone-local state."""
    root = tmp_path / "clone"
    left_out = shutil.ignore_patterns("index.sqlite*", LOCAL_FOLDER)  # as git leaves them out
    shutil.copytree(generated, root, ignore=left_out)
    return root


def _building(root: Path) -> list[Path]:
    return list((root / ".squad" / "memory").glob(f"{database.BUILDING}*"))


def test_a_read_while_another_process_builds_says_so_within_a_second(fresh: Path) -> None:
    layout = Layout(fresh)
    turns = files.open_lock(layout, files._lock_name(layout, layout.memory / database.TURNS))
    files.acquire(turns, "a build in progress")  # what a build holds from start to end
    try:
        began = time.monotonic()
        searched = run(fresh, "search", "release", "pipeline")
        waited = time.monotonic() - began
        noted = run(fresh, "hot", "note", "ada", "Zebras moved to the north paddock.")
    finally:
        os.close(turns)  # closing the descriptor releases the lock
    # Before, it waited out the lock's 60 seconds; now a second or so, then says why.
    assert waited < 15, waited
    assert searched.returncode == 2, searched
    assert searched.stderr == f"tiermem: error: {database.BUILDING_ELSEWHERE}\n"
    assert not (layout.memory / "index.sqlite").exists() and not _building(fresh)
    assert noted.returncode == 0, noted.stderr  # a note needs no index: it never waits for one
    found = run(fresh, "search", "zebras", "paddock")  # the build is done: it takes the note
    assert found.returncode == 0 and "north paddock" in found.stdout


def test_a_second_process_during_a_real_build_neither_waits_it_out_nor_corrupts_it(
    fresh: Path,
) -> None:
    first = subprocess.Popen(
        tiermem(fresh, "search", "release", "pipeline"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    deadline = time.monotonic() + 120
    while not _building(fresh) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    during = bool(_building(fresh))
    second = run(fresh, "search", "release", "notes")
    first_still_building = first.poll() is None
    noted = run(fresh, "hot", "note", "ada", "Zebras moved to the north paddock.")
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert noted.returncode == 0, noted.stderr
    if second.returncode != 0:  # it came while the build ran, and said so instead of waiting
        assert during and first_still_building
        assert second.stderr == f"tiermem: error: {database.BUILDING_ELSEWHERE}\n"
    # Nothing was corrupted: the index matches the files, the first answer is the answer,
    # and the note written during the build is found.
    assert run(fresh, "search", "release", "pipeline").stdout == out
    check = run(fresh, "reindex", "--check")
    assert (check.returncode, check.stdout) == (0, "index matches the files\n"), check
    assert "north paddock" in run(fresh, "search", "zebras", "paddock").stdout
    assert not _building(fresh)
