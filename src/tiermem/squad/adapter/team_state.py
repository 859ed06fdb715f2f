"""Where Squad keeps the team's state, as `.squad/config.json` says: here, in this working
tree's `.squad/`, or elsewhere.

tiermem works where the team's histories and decisions are files of this working tree. A
state backend that keeps them on the `squad-state` branch (`orphan`, `two-layer`, and
`git-notes`, which Squad reads as `two-layer`), state moved out of the repository
(`stateLocation: external`) or a `.squad/` that points to a team kept in another folder
(`teamRoot`) stops every command that writes, in one line, before anything is written: a
decision merged into a working-tree `decisions.md` would never reach the team's log.

One `teamRoot` is the team here all the same: an absolute path from another machine (a
checkout on Windows, `C:\\src\\MMO`, committed with the config) that does not exist here,
whose last name is this repository's folder name, while this `.squad/` holds the team
(`.squad/agents/`). That is said in a note, never refused.
"""

from __future__ import annotations

import json
import ntpath
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError

CONFIG = ".squad/config.json"
# What Squad reads as the team's state in this working tree ("worktree" and "external" are
# its old names for "local" and the stub that falls back to it).
LOCAL_BACKENDS = frozenset({"local", "worktree", "external", "external-stub"})


@dataclass(frozen=True, slots=True)
class TeamState:
    """What `.squad/config.json` says of where the team is, once it is known to be here."""

    note: str = ""  # said beside the result: a teamRoot read as this repository


def of_config(text: str | None, root: Path) -> TeamState:
    """The team's state from the config's text (None: no config, the team is here); a
    UsageError, one line, when it is kept anywhere but this working tree."""
    if text is None:
        return TeamState()
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{CONFIG} is not valid JSON ({exc}) (nothing was written)") from None
    if not isinstance(config, dict):
        raise UsageError(f"{CONFIG} is not a JSON object (nothing was written)")
    note = _team_root(config.get("teamRoot"), root)
    if config.get("stateLocation") == "external":
        raise UsageError(
            f"this team's Squad state is kept outside the repository (stateLocation "
            f"'external' in {CONFIG}); tiermem works with state kept in .squad/ "
            "(nothing was written)"
        )
    backend = config.get("stateBackend", "local")
    if backend not in LOCAL_BACKENDS:
        raise UsageError(
            f"Squad state backend '{backend}' (stateBackend in {CONFIG}) keeps histories and "
            "decisions off the working tree, on the squad-state branch; tiermem works with "
            "the local backend only (nothing was written)"
        )
    return TeamState(note)


def of_root(root: Path) -> TeamState:
    """The team's state of the repository at `root` (its config read without following a
    link; one that cannot be read is said in one line)."""
    from ...errors import TiermemError
    from ...storage import files, safepath

    path = root / CONFIG
    try:
        data = safepath.read_bytes(path) if files.exists(path) else None
    except TiermemError as exc:
        raise UsageError(f"{CONFIG} cannot be read: {exc} (nothing was written)") from None
    try:
        text = None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{CONFIG} is not valid UTF-8 (nothing was written)") from None
    return of_config(text, root)


def _team_root(team_root: object, root: Path) -> str:
    """'' when `teamRoot` leaves the team here as Squad reads it (absent, empty, `.`, `./`,
    or no string at all), a note when it is this repository's path on another machine; a
    UsageError when it names a team elsewhere."""
    if not isinstance(team_root, str) or not team_root:
        return ""
    if posixpath.normpath(team_root.replace("\\", "/")) == ".":
        return ""
    if _absolute(team_root) and _same_folder(Path(team_root), root):
        return ""
    if _absolute(team_root) and _this_repository_elsewhere(team_root, root):
        return (
            f"teamRoot {team_root!r} in {CONFIG} is this repository's own folder on the "
            "machine that wrote it (not here; the team is in this .squad/): read as the team "
            "here"
        )
    raise UsageError(
        f"this .squad/ points to a team kept elsewhere (teamRoot {team_root!r} in {CONFIG}): "
        "run tiermem in the team's own repository (nothing was written)"
    )


def _absolute(path: str) -> bool:
    """An absolute path as Windows or POSIX writes one (`C:\\src\\MMO`, `/home/me/MMO`)."""
    return ntpath.isabs(path) or posixpath.isabs(path)


def _this_repository_elsewhere(team_root: str, root: Path) -> bool:
    """Whether an absolute `teamRoot` names this repository's folder on another machine."""
    name = ntpath.basename(team_root.rstrip("\\/")) or posixpath.basename(team_root)
    if not name or name.casefold() != root.name.casefold():
        return False
    if not (root / ".squad" / "agents").is_dir():
        return False  # this .squad/ holds no team: it may well point to the real one
    try:
        return not Path(team_root).exists()  # a folder of this machine is no other's
    except OSError:
        return True


def _same_folder(path: Path, root: Path) -> bool:
    """Whether a path is this repository's own folder on this machine."""
    try:
        return path.exists() and path.resolve() == root.resolve()
    except OSError:
        return False
