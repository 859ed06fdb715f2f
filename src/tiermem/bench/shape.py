"""`tiermem bench shape`: what an import of a team makes of its memory, against Squad's model.

Decisions are shared, knowledge is personal: after `import squad` the wiki should hold the
team's structured knowledge only (policies, decisions, conventions, contracts from its
decision log, inbox and skills), none of an agent's history, on pages a person would name,
each within the page bound, and be a fraction of what the team wrote; the dry run should say
where every section goes. The figures, for one corpus (its `.squad/` snapshot imported into
a scratch folder with now = its last commit date):

- `max_page_bytes`, `pages_over_bound`: the largest wiki page, and pages over 32 KB;
- `unnamed_pages`: pages named by a word of NO_PAGE_NAMES (split at `-`, a part number
  aside), `personal_pages`: by an agent's or a person's name (Squad's folders, team.md);
- `wiki_classes`, `from_history`: wiki entries per class, and those made from an agent's
  history (Core Context, Learnings);
- `wiki_share`: wiki bytes over the bytes of every `.md` file under `.squad/`;
- `dry_run_sections`, `dry_run_placed`: sections with text in the team's files, and how many
  of them the dry run names a tier, agent and page for.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..squad.adapter import agent_folders
from ..squad.importer import squad_import
from ..squad.importer.import_sources import Source, sources
from ..squad.importer.placement import body_of, content
from ..squad.reading import squad_markdown
from ..storage import store
from ..storage.entries import STRUCTURED
from ..team import wiki
from . import import_quality
from .corpus import load_events
from .hot_writes import hot_figures
from .import_quality import squad_bytes

# Words no page should be named by: what kind of note something is, how it went, words any
# text holds (the names seen on pages before, and their kin).
NO_PAGE_NAMES = frozenset(
    "general key important archived always every must latest major previous original options "
    "line name open match merged recommendations misc notes other summary update items core "
    "decision decisions learning learnings session status note misc".split()
)


def _sections_of(source: Source) -> list[squad_markdown.Section]:
    text = source.path.read_bytes().decode("utf-8", "replace")  # a lone \r is no line end
    if source.kind == "history":
        return squad_markdown.parse_history(text)
    if source.kind == "log":
        return squad_markdown.parse_log(text, source.path.name)
    if source.kind == "skill":
        return [squad_markdown.Section("skill", "", None, text, 0, 0, 1, 0, None, None)]
    if source.kind == "inbox":
        return squad_markdown.parse_inbox(text, source.path.name)
    return squad_markdown.parse_decisions(text)


def sections_with_text(squad: Path) -> set[tuple[str, int]]:
    """(file, line) of every section of the files an import reads that holds any text."""
    found: set[tuple[str, int]] = set()
    for source in sources(squad):
        found |= {(source.rel, s.line) for s in _sections_of(source) if content(body_of(s))}
    return found


def _page_words(page: str) -> list[str]:
    return re.sub(r"-\d+$", "", page).split("-")


def wiki_shape(mem: Memory) -> dict[str, Any]:
    """The figures of a store's wiki after an import (see the module docstring)."""
    ctx = mem.context
    names = {*agent_folders.folders(ctx), *agent_folders.people(ctx)}
    pages = {p.stem: p for p in sorted(ctx.layout.tier_dir("wiki").glob("*.md"))}
    sizes = {name: path.stat().st_size for name, path in pages.items()}
    classes: dict[str, int] = {}
    from_history = 0
    for path in pages.values():
        loaded = store.load(ctx.layout, "wiki", path)
        for entry in loaded.entries if loaded else []:
            classes[entry.cls] = classes.get(entry.cls, 0) + 1
            from_history += entry.agent != "team" or any("/agents/" in s for s in entry.sources)
    wiki_bytes = sum(sizes.values())
    total = squad_bytes(ctx.layout.squad)
    return {
        "pages": len(pages),
        "max_page_bytes": max(sizes.values(), default=0),
        "pages_over_bound": sorted(p for p, n in sizes.items() if n > wiki.PAGE_MAX_BYTES),
        "unnamed_pages": sorted(
            p for p in pages if any(w in NO_PAGE_NAMES for w in _page_words(p))
        ),
        "personal_pages": sorted(p for p in pages if any(w in names for w in _page_words(p))),
        "wiki_classes": dict(sorted(classes.items())),
        "unstructured_entries": sum(n for c, n in classes.items() if c not in STRUCTURED),
        "from_history": from_history,
        "wiki_bytes": wiki_bytes,
        "squad_bytes": total,
        "wiki_share": round(wiki_bytes / total, 4) if total else 0.0,
        "page_names": sorted(pages),
    }


def shape_of(corpus: Path, now: str) -> dict[str, Any]:
    """A corpus's `.squad/` dry-run, then imported, in a scratch folder: every figure."""
    with tempfile.TemporaryDirectory(prefix="tiermem-shape-") as folder:
        root = Path(folder)
        shutil.copytree(corpus / ".squad", root / ".squad")
        for path in [root / ".squad", *(root / ".squad").rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        wanted = sections_with_text(root / ".squad")
        plan = Memory(root, now=now).import_squad(dry_run=True)
        placed = {(r.file, r.line) for r in plan.sections if r.tier and r.agent and r.page}
        mem, _ = Memory.init(root, now=now, squad_files=False)
        planned = squad_import.plan(mem.context)
        squad_import.write(mem.context, planned)
        figures = wiki_shape(mem)
        mem.close()
        quality = import_quality.figures(root, [item.entry for item in planned.planned])
    quality["hot"] = hot_figures(load_events(corpus), now)
    figures["dry_run_sections"] = len(wanted)
    figures["dry_run_placed"] = len(wanted & placed)
    return {"corpus": corpus.name, "now": now, **figures, "import_quality": quality}


def command(args: argparse.Namespace) -> int:
    """`tiermem bench shape CORPUS...`: the figures of each corpus, as text or JSON."""
    from ..storage.clock import format_time
    from .corpus import corpus_folder, last_date, load_events

    results = []
    for name in args.corpus:
        corpus = corpus_folder(name)
        results.append(shape_of(corpus, format_time(last_date(load_events(corpus)))))
    if args.format == "json":
        print(json.dumps(results, indent=2))
        return 0
    for line in table(results):
        print(line)
    print()
    for line in import_quality.table([(r["corpus"], r["import_quality"]) for r in results]):
        print(line)
    return 0


def table(results: list[dict[str, Any]]) -> list[str]:
    """One row per corpus: the figures against their targets."""
    lines = [
        f"{'corpus':<28}{'max page':>9}{'unnamed':>8}{'personal':>9}{'classes ok':>11}"
        f"{'from hist':>10}{'wiki/squad':>11}{'dry run':>10}"
    ]
    for f in results:
        placed = f"{f['dry_run_placed']}/{f['dry_run_sections']}"
        lines.append(
            f"{f['corpus']:<28}{f['max_page_bytes']:>9,}{len(f['unnamed_pages']):>8}"
            f"{len(f['personal_pages']):>9}{f['unstructured_entries'] == 0!s:>11}"
            f"{f['from_history']:>10}{f['wiki_share']:>11.3f}{placed:>10}"
        )
    lines.append(
        "targets: max page <= 32,768; 0 unnamed and personal pages; every wiki entry a "
        "policy, decision, convention or contract; 0 from history; wiki/squad <= 0.400; "
        "dry run places every section"
    )
    return lines
