"""`tiermem squad install --uninstall` and the writers: the uninstall holds the store's lock
alone while it looks at the store and takes it away, so a write racing it is either refused
in one line or kept, never said to be saved and then deleted. Real processes throughout."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from install_races import AGENT, installed_team, race
from reliability import child_env

# The uninstall, stopped where it has decided the store holds no memory and is about to
# remove it, until the test lets it go on.
PAUSED = textwrap.dedent(
    """
    import os, sys, time
    from tiermem.cli.main import main
    from tiermem.squad.install import installer
    paused, go, root = sys.argv[1:4]
    real = installer.remove_store

    def remove_store(repo):
        open(paused, "w").close()
        while not os.path.exists(go):
            time.sleep(0.005)
        real(repo)

    installer.remove_store = remove_store
    sys.exit(main(["squad", "install", "--uninstall", "--root", root]))
    """
)


def _wait_for(path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def test_a_note_written_while_the_uninstall_removes_the_store_is_never_lost(
    tmp_path: Path,
) -> None:
    """A note started once the uninstall has found the store unused: it waits for the
    uninstall (it does not finish while the uninstall is stopped), then is refused in one
    line, as the store is gone; on 74616e5 it said "saved" and was deleted."""
    root = installed_team(tmp_path / "repo")
    paused, go = tmp_path / "paused", tmp_path / "go"
    uninstall = subprocess.Popen(
        [sys.executable, "-c", PAUSED, str(paused), str(go), str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    _wait_for(paused, 120)
    note = subprocess.Popen(
        [sys.executable, "-m", "tiermem", "--root", str(root), "hot", "note", AGENT, "mark-77"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    with contextlib.suppress(subprocess.TimeoutExpired):
        note.wait(timeout=5)
    waited = note.returncode is None
    go.touch()
    said = uninstall.communicate(timeout=120)
    assert uninstall.returncode == 0, said
    _, err = note.communicate(timeout=120)
    hot = root / ".squad/memory/hot" / f"{AGENT}.md"
    if note.returncode == 0:
        assert hot.is_file() and "mark-77" in hot.read_text("utf-8"), "said saved, then lost"
    assert waited, "the note did not wait for the uninstall"
    assert note.returncode == 2 and err.decode().count("\n") == 1, err
    assert "was removed" in err.decode() and "nothing was written" in err.decode()
    assert not hot.exists()


def test_uninstalls_racing_first_writes_lose_nothing(tmp_path: Path) -> None:
    found = race(tmp_path, trials=8)
    assert found["lost"] == 0, found["bad"]
    assert found["tracebacks"] == 0 and found["uninstall_failed"] == 0, found["bad"]
    assert found["refused_not_in_one_line"] == 0, found["refusals"]


def test_memory_written_without_the_lock_keeps_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a writer that takes no lock leaves in the store after the uninstall looked at it
    (here: an archive record) is never removed: the store stays, and the report says so."""
    from reliability import cli
    from tiermem.squad.install import installer

    root = installed_team(tmp_path / "repo")
    record = root / ".squad/memory/archive/ralph/a-0123456789.md"

    def unused_then_written(repo: object) -> bool:
        """The store was unused when the uninstall looked; the record came just after."""
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("written while the uninstall ran\n", "utf-8")
        return True

    monkeypatch.setattr(installer, "_unused_store", unused_then_written)
    code, out, err = cli(["squad", "install", "--uninstall", "--root", str(root)])
    assert (code, err) == (0, "")
    assert "kept      .squad/memory/: tiermem store (memory was written into it" in out
    assert record.read_text("utf-8") == "written while the uninstall ran\n"
    assert (root / ".squad/memory/config.toml").is_file()
