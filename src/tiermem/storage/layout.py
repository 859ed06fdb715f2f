"""Where a store keeps each thing: the paths under `.squad/memory/`, from one root."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StoreError
from . import validate

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from ..vocabulary import FileTier, Queue, Tier

TEAM = validate.TEAM  # the owner of what the whole team shares: decisions, team policies
ENV_ROOT = "TIERMEM_ROOT"
LOCAL_FOLDER = "tiermem-local"
LEGACY_LOCAL_FOLDER = "local"


class Layout:
    """Paths of one store, rooted at the folder that holds `.squad/`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.squad = root / ".squad"
        self.memory = self.squad / "memory"
        self.locks = self.memory / ".locks"
        self.index = self.memory / "index.sqlite"
        # Not "audit.jsonl": Squad keeps its own log under that name and rotates it away.
        self.audit = self.memory / "tiermem-audit.jsonl"
        self.squad_audit = self.memory / "audit.jsonl"
        self.config = self.memory / "config.toml"
        # This clone's own state (last use of entries, the key that seals its index, its
        # report): never committed, never a cache. Not "local/": Squad's governed memory
        # keeps the team's memories there, and they are committed.
        self.local = self.memory / LOCAL_FOLDER
        self.used = self.local / "used"
        # Where a store made before kept that state, inside Squad's `local/` (see
        # `storage.local_state`, which moves it out).
        self.legacy_local = self.memory / LEGACY_LOCAL_FOLDER

    def tier_dir(self, tier: Tier | Queue) -> Path:
        """Folder of a tier (hot, cold, wiki, archive, queue)."""
        return self.memory / tier

    def tier_file(self, tier: FileTier | Queue, name: str) -> Path:
        """The markdown file of an agent's hot/cold tier, or of a wiki topic."""
        checked = validate.name(name, "topic") if tier == "wiki" else validate.owner(name)
        return self.memory / tier / f"{checked}.md"

    def relative(self, path: Path) -> str:
        """A path as the user sees it, relative to the root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def discover_root(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The folder holding `.squad/`: --root, TIERMEM_ROOT, else the nearest ancestor."""
    given = explicit if explicit is not None else os.environ.get(ENV_ROOT) or None
    try:
        if given is not None:
            root = Path(given).expanduser()
            if not root.is_dir():
                raise StoreError(f"root {_shown(root)} is not a directory")
            return root.resolve()
        here = (cwd or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / ".squad").is_dir():
                return folder
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, no permission
        reason = getattr(exc, "strerror", None) or exc
        raise StoreError(f"root {_shown(Path(str(given)))} cannot be used: {reason}") from None
    raise StoreError(f"no .squad/ folder in {here} or above; run `tiermem init` or pass --root")


def _shown(path: Path) -> str:
    """A path as an error shows it: a very long one shortened."""
    text = str(path)
    return text if len(text) <= 120 else text[:60] + "..." + text[-40:]
