"""Import of a corpus's HEAD snapshot, for evaluating probes after an import."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path
from typing import Any

from ..clock import format_time
from ..memory import Memory
from .corpus import last_date, load_events


def import_snapshot(corpus: Path, out: Path) -> Path:
    """Copy the corpus's `.squad/` to `out` and import it with now = the last commit date."""
    from ..importer import plan, write

    target = out / ".squad"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(corpus / ".squad", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    now = format_time(last_date(load_events(corpus)))
    mem, _ = Memory.init(out, now=now, squad_files=False)
    write(mem.context, plan(mem.context))
    mem.close()
    return out


def rebuild_check(root: Path) -> dict[str, Any]:
    """Rebuild every imported Squad file from the archive and compare it with the original.

    Byte for byte: a record holds the file's bytes as they were, even those that are not
    UTF-8. Redaction of credentials is the one deliberate change; a file that differs only
    by `[REDACTED:...]` markers counts as rebuilt with redactions.
    """
    from .. import archive
    from ..layout import Layout
    from ..redact import redact
    from ..squad.sources import sources

    layout = Layout(root)
    by_source = {}
    for path in archive.records(layout):
        data = path.read_bytes()
        record = archive.parse(data, path)
        if record.kind == "import":
            by_source[record.source] = archive.body(data)
    exact = redacted = missing = 0
    for source in sources(layout.squad):
        original = source.path.read_bytes()
        rebuilt = by_source.get(source.rel)
        escaped = original.decode("utf-8", "surrogateescape")
        if rebuilt is None:
            missing += 1
        elif rebuilt == original:
            exact += 1
        elif rebuilt == redact(escaped)[0].encode("utf-8", "surrogateescape"):
            redacted += 1
        else:
            missing += 1
    return {
        "files": exact + redacted + missing,
        "exact": exact,
        "redacted": redacted,
        "differ": missing,
    }


def import_retention(root: Path) -> dict[str, Any]:
    """Key-fact retention of cold + wiki against the history and decision text imported.

    The imported text is every history, decisions and inbox file the import read (its Squad
    session logs are reported apart: they hold little of either).
    """
    from ..layout import Layout
    from ..squad.sources import sources
    from .facts import key_facts
    from .quality import tier_text

    layout = Layout(root)
    read = {kind: "" for kind in ("history", "decisions", "inbox", "log")}
    for source in sources(layout.squad):
        read[source.kind] += source.path.read_bytes().decode("utf-8", "replace") + "\n"
    mem = Memory(root)
    kept = key_facts(tier_text(mem, ("cold", "wiki")))
    mem.close()
    imported = key_facts(read["history"] + read["decisions"] + read["inbox"])
    with_logs = imported | key_facts(read["log"])
    return {
        "imported_facts": len(imported),
        "retention": round(len(imported & kept) / max(1, len(imported)), 4),
        "retention_with_logs": round(len(with_logs & kept) / max(1, len(with_logs)), 4),
    }
