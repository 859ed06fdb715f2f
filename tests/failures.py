"""The system failing under tiermem: a full disk at the N-th write, a store whose own files
are of the wrong type, links to nothing, names too long for the file system.

tests/test_failures.py tries each a few times; tests/stress.py (`failures`) every write of
every command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from reliability import ROOT, child_env

# Runs one command in a child whose N-th write to disk fails with "No space left on
# device": os.write, the fsync of every atomic write, and SQLite (by a file size limit).
FULL_DISK = textwrap.dedent(
    """
    import errno, json, os, resource, signal, sys, traceback
    sys.path.insert(0, sys.argv[3])
    from reliability import cli
    fail_at, argv = int(sys.argv[1]), json.loads(sys.argv[2])
    calls = [0]

    def failing(real):
        def call(*args, **kwargs):
            calls[0] += 1
            if calls[0] >= fail_at:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(*args, **kwargs)
        return call

    os.fsync = failing(os.fsync)
    os.write = failing(os.write)
    os.replace = failing(os.replace)
    os.link = failing(os.link)
    try:
        code, out, err = cli(argv)
    except BaseException:
        code, out, err = 99, "", traceback.format_exc()
    print(json.dumps({"code": code, "err": err, "calls": calls[0]}))
    """
)


def full_disk(root: Path, argv: list[str], fail_at: int) -> dict[str, object]:
    """The outcome of a command whose `fail_at`-th write to disk fails."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            FULL_DISK,
            str(fail_at),
            json.dumps(["--root", str(root), *argv]),
            str(ROOT / "tests"),
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if not lines:
        return {"code": 98, "err": proc.stderr[-1500:], "calls": 0}
    result: dict[str, object] = json.loads(lines[-1])
    return result


WRITES = [
    ["--now", "2026-03-02T11:00:00Z", "hot", "note", "flight", "mark-disk-note"],
    ["--now", "2026-03-02T11:00:00Z", "hot", "set", "eecom", "--task", "mark-disk-task"],
    ["--now", "2026-03-02T12:00:00Z", "scribe", "end-session", "--all"],
    ["--now", "2026-03-20T12:00:00Z", "scribe", "run"],
    ["--now", "2026-03-02T11:00:00Z", "decision", "add", "--by", "flight", "mark-disk-decision"],
    ["--now", "2026-03-02T11:00:00Z", "wiki", "write", "ci", "Pin actions\nmark-disk-wiki"],
    ["--now", "2026-03-02T11:00:00Z", "search", "login"],
    ["--now", "2026-03-02T11:00:00Z", "reindex"],
    ["--now", "2026-03-02T11:00:00Z", "import", "squad"],
    ["--now", "2026-03-02T11:00:00Z", "doctor", "--repair"],
]


def temp_files(root: Path) -> list[str]:
    """Temp files left under .squad (a killed or failed write's)."""
    return sorted(p.name for p in (root / ".squad").rglob(".tmp-*"))


def wrong_types() -> dict[str, Callable[[Path], None]]:
    """Ways to give a store's own file or folder the wrong type (given the memory folder)."""

    def locks_file(m: Path) -> None:
        shutil.rmtree(m / ".locks", ignore_errors=True)
        (m / ".locks").write_text("not a folder\n", encoding="utf-8")

    def audit_folder(m: Path) -> None:
        (m / "tiermem-audit.jsonl").unlink(missing_ok=True)
        (m / "tiermem-audit.jsonl").mkdir()

    def config_folder(m: Path) -> None:
        (m / "config.toml").unlink(missing_ok=True)
        (m / "config.toml").mkdir()

    def hot_file(m: Path) -> None:
        shutil.rmtree(m / "hot")
        (m / "hot").write_text("not a folder\n", encoding="utf-8")

    return {
        ".locks is a file": locks_file,
        "tiermem-audit.jsonl is a folder": audit_folder,
        "config.toml is a folder": config_folder,
        "hot is a file": hot_file,
    }
