"""When git last committed each Squad file: the latest a text in it can have been written.

An imported section is dated by its own date; a section without one is no older than its
file's last commit, and a date later than that commit is a typo (a history's `2027-03-10` in
a file last committed in 2026), never trusted to age an entry. A file git does not track, or
one changed since its last commit, has no such date: its text may be as new as today.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UsageError
from ...storage.clock import format_time, parse_time
from ...team.citations import git_output

_GIT_TIMEOUT_SECONDS = 60  # a long history's log, once per import


def _git(top: Path, *args: str) -> bytes | None:
    """A git command's output in `top` (None: no git, no repository, or it failed)."""
    return git_output(top, *args, timeout=_GIT_TIMEOUT_SECONDS)


def last_commits(top: Path, folder: str, now: str) -> dict[str, str]:
    """Path (from `top`) -> when git last committed it, for each file under `folder` that git
    tracks unchanged since; a commit later than `now` (a replay of the past) counts as none."""
    log = _git(top, "log", "-z", "--relative", "--name-only", "--format=%x01%cI", "--", folder)
    if log is None:
        return {}
    found: dict[str, str] = {}
    when = ""
    for item in log.decode("utf-8", "surrogateescape").split("\0"):
        item = item.strip("\n")
        if item.startswith("\x01"):
            when, _, item = item[1:].partition("\n")
            when = _utc(when.strip())
        if item and when and item not in found:
            found[item] = when
    for rel in _changed(top, folder):
        found.pop(rel, None)
    return {rel: when for rel, when in found.items() if when <= now}


def _changed(top: Path, folder: str) -> list[str]:
    """Files under `folder` that differ from their last commit, or that git does not track."""
    status = _git(top, "status", "-z", "--porcelain", "--untracked-files=all", "--", folder)
    if status is None:
        return []
    prefix = (_git(top, "rev-parse", "--show-prefix") or b"").decode("utf-8", "replace").strip()
    found = []
    for item in status.decode("utf-8", "surrogateescape").split("\0"):
        path = item[3:] if len(item) > 3 else ""
        found.append(path.removeprefix(prefix))
    return found


def _utc(text: str) -> str:
    try:
        return format_time(parse_time(text))
    except UsageError:
        return ""
