"""Import of a corpus's HEAD snapshot, for evaluating probes after an import."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

from ..clock import format_time
from ..memory import Memory
from .corpus import last_date, load_events


def import_snapshot(corpus: Path, out: Path) -> Path:
    """Copy the corpus's `.squad/` to `out` and import it with now = the last commit date."""
    from ..squad_import import plan, write

    target = out / ".squad"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(corpus / ".squad", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    now = format_time(last_date(load_events(corpus)))
    mem, _ = Memory.init(out, now=now)
    write(mem, plan(mem, dry_run=False))
    mem.close()
    return out
