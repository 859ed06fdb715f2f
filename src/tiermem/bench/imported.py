"""Import of a corpus's HEAD snapshot, for evaluating probes after an import."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..storage.clock import format_time
from ..storage.entries import Entry
from ..vocabulary import LASTING_TIERS
from .corpus import last_date, load_events


def import_snapshot(corpus: Path, out: Path) -> Path:
    """Copy the corpus's `.squad/` to `out` and import it with now = the last commit date."""
    return import_planned(corpus, out)[0]


def import_planned(corpus: Path, out: Path) -> tuple[Path, list[Entry]]:
    """`import_snapshot`, and every entry the import made (wherever it landed)."""
    from ..squad.importer.squad_import import plan, write

    target = out / ".squad"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(corpus / ".squad", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    now = format_time(last_date(load_events(corpus)))
    mem, _ = Memory.init(out, now=now, squad_files=False)
    planned = plan(mem.context)
    write(mem.context, planned)
    mem.close()
    return out, [item.entry for item in planned.planned]


def rebuild_check(root: Path) -> dict[str, Any]:
    """Rebuild every imported Squad file from the archive (a large one from its parts, in
    order) and compare it with the original.

    Byte for byte: a record holds the file's bytes as they were, even those that are not
    UTF-8. Redaction of credentials is the one deliberate change; a file that differs only
    by `[REDACTED:...]` markers counts as rebuilt with redactions.
    """
    from ..squad.importer.import_sources import sources
    from ..storage import archive, audit
    from ..storage.layout import Layout
    from ..text.redact import redact

    layout = Layout(root)
    # The latest import of each file (a large one archived in parts, N/M): the records the
    # last audit line of an import names for it. Records are dated by their file's last
    # commit, not by the import, so two imports of a changed file cannot be told by date.
    found: dict[str, tuple[archive.Record, bytes]] = {}
    for path in archive.records(layout):
        data = path.read_bytes()
        record = archive.parse(data, path)
        if record.kind == "import":
            found[record.id] = (record, archive.body(data))
    latest: dict[str, dict[int, bytes]] = {}
    for line in audit.read(layout):
        ids = line.get("records")
        if line.get("action") != "import" or not isinstance(ids, list):
            continue
        named = [found[str(i)] for i in ids if str(i) in found]
        for rel in {record.source for record, _ in named}:
            latest[rel] = {
                int(record.part.split("/")[0]) if record.part else 1: data
                for record, data in named
                if record.source == rel
            }
    by_source = {rel: b"".join(p[n] for n in sorted(p)) for rel, p in latest.items()}
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
    """Key-fact retention of cold + wiki after an import, by what the team wrote.

    `retention`: of the decision log and the inbox (the team's current record, which the
    import files in its tiers); `history_retention`: of the agents' histories, whose latest
    sessions and standing knowledge start in cold while the rest stays in the archive, by
    design; `all_retention`: of everything read, decision archives and session logs too.
    """
    from ..squad.importer.import_sources import sources
    from ..storage.layout import Layout
    from .facts import key_facts
    from .quality import tier_text

    layout = Layout(root)
    read: dict[str, str] = {}
    for source in sources(layout.squad):
        text = source.path.read_bytes().decode("utf-8", "replace")
        read[source.kind] = read.get(source.kind, "") + text + "\n"
    mem = Memory(root)
    kept = key_facts(tier_text(mem, LASTING_TIERS))
    mem.close()
    current = key_facts(read.get("decisions", "") + read.get("inbox", ""))
    history = key_facts(read.get("history", ""))
    every = key_facts("".join(read.values()))
    return {
        "imported_facts": len(current),
        "retention": _share(current, kept),
        "history_facts": len(history),
        "history_retention": _share(history, kept),
        "all_facts": len(every),
        "all_retention": _share(every, kept),
    }


def _share(facts: set[str], kept: set[str]) -> float:
    return round(len(facts & kept) / max(1, len(facts)), 4)
