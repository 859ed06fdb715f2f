"""What an import files where, and what it costs to keep: the figures `bench all` and
`bench shape` print for each team, beside the others.

- `decisions_as_status`: entries the import made whose heading names a decision, a review
  or an ADR as what it records (its words before the first `:`, `—`, `–` or `|`, at most
  five, hold one of those words) and that it filed as `status`;
- `tool_pages`: wiki pages named by one of Squad's own words (`inbox`, `config`, `squad`)
  that is not the team's subject (its project's name, see `agent_folders.subject_words`);
- `headless_bullets`: lines of cold that are a bullet starting with a later sentence of a
  bullet or paragraph of the text they were made from, without what that text said first
  (its bold lead-in, or the clause that says what it is about): "- Root cause: missing
  wiring" where the text said "**Tweet publishing 500 fixed**: ... Root cause: ...";
- `committed_bytes`: the store's files that git would commit (its `.gitignore` applied);
  `store_ratio` over the bytes of the Squad files the import read (`imported_bytes`), and
  `store_ratio_all` over every markdown file of `.squad/` (`squad_bytes`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..scribe.summarize import outline
from ..storage import archive, store
from ..storage.entries import Entry

# A heading that names what it records before its subject ("Lead Review — Issue #117").
_KIND_WORDS = re.compile(r"\b(decision|review|adr)\b", re.IGNORECASE)
_SEPARATOR = re.compile(r"\s*(?::|—|–|\|)\s*")
_LEAD_WORDS = 5
TOOL_WORDS = ("inbox", "config", "squad")


def says_decision(title: str) -> bool:
    """Whether a heading names a decision, a review or an ADR as what it records."""
    lead = _SEPARATOR.split(title.replace("**", ""), maxsplit=1)[0]
    return len(lead.split()) <= _LEAD_WORDS and bool(_KIND_WORDS.search(lead))


def decisions_as_status(planned: list[Entry]) -> list[str]:
    """Titles of the entries an import made that say they are decisions, filed as status."""
    unique = {e.id: e for e in planned}
    return sorted(e.title for e in unique.values() if e.cls == "status" and says_decision(e.title))


def tool_pages(mem: Memory) -> list[str]:
    """Wiki pages named by a word of Squad's own that is not what the team works on."""
    from ..squad.adapter.agent_folders import subject_words

    subject = subject_words(mem.context)
    pages = sorted(p.stem for p in mem.layout.tier_dir("wiki").glob("*.md"))
    return [
        p
        for p in pages
        if any(w in TOOL_WORDS and w not in subject for w in re.sub(r"-\d+$", "", p).split("-"))
    ]


def _norm(text: str) -> str:
    return " ".join(text.split())


class _Sentences:
    """Where each sentence of the texts cold entries were made from stands in its bullet or
    paragraph: (its place, the block's first sentence), read once per archive record."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self.read: dict[str, dict[str, tuple[int, str]]] = {}

    def of(self, location: str) -> dict[str, tuple[int, str]]:
        location = location.split("#")[0]
        if location not in self.read:
            record = archive.at(self.mem.layout, location)
            found: dict[str, tuple[int, str]] = {}
            for block in outline(record.text).blocks if record else []:
                for n, sentence in enumerate(block.sentences):
                    found.setdefault(_norm(sentence), (n, _norm(block.sentences[0])))
            self.read[location] = found
        return self.read[location]


def headless_bullets(mem: Memory) -> tuple[int, int, list[str]]:
    """(bullets of cold, those without their subject, a few of them) over every agent's and
    the team's cold tier."""
    sentences = _Sentences(mem)
    bullets = 0
    headless: list[str] = []
    for path in sorted(mem.layout.tier_dir("cold").glob("*.md")):
        loaded = store.load(mem.layout, "cold", path)
        for entry in loaded.entries if loaded else []:
            known: dict[str, tuple[int, str]] = {}
            for location in entry.sources:
                known.update(sentences.of(location))
            for line in entry.body.splitlines():
                if not line.startswith("- "):
                    continue
                bullets += 1
                blocks = outline(line).blocks
                first = _norm(blocks[0].sentences[0]) if blocks and blocks[0].sentences else ""
                place = known.get(first)
                if place is not None and place[0] > 0 and place[1] not in _norm(line):
                    headless.append(f"{path.stem}: {line[:120]}")
    return bullets, len(headless), headless[:5]


def committed_bytes(root: Path) -> tuple[int, int]:
    """(bytes, files) of `.squad/memory/` that git would commit: what its `.gitignore`
    leaves. A root that is no repository yet is made one (a benchmark's scratch folder)."""
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    command = ["git", "-C", str(root), "ls-files", "-z", "--others", "--cached"]
    listed = subprocess.run(
        [*command, "--exclude-standard", "--", ".squad/memory"],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")
    names = [n for n in listed.split("\0") if n]
    return sum((root / n).stat().st_size for n in names), len(names)


def squad_bytes(squad: Path) -> int:
    """Bytes of every markdown file of a team's `.squad/` (its own memory aside)."""
    found = (p for p in squad.rglob("*.md") if p.is_file())
    return sum(p.stat().st_size for p in found if p.relative_to(squad).parts[0] != "memory")


def imported_bytes(root: Path) -> int:
    """Bytes of the Squad files an import of `root` reads."""
    from ..squad.importer.import_sources import sources

    return sum(s.path.stat().st_size for s in sources(root / ".squad"))


def figures(root: Path, planned: list[Entry]) -> dict[str, Any]:
    """Every figure of an imported store (see the module docstring)."""
    mem = Memory(root)
    try:
        bullets, headless, examples = headless_bullets(mem)
        pages = tool_pages(mem)
    finally:
        mem.close()
    committed, count = committed_bytes(root)
    read, every = imported_bytes(root), squad_bytes(root / ".squad")
    as_status = decisions_as_status(planned)
    return {
        "decisions_as_status": len(as_status),
        "decisions_as_status_examples": as_status[:5],
        "tool_pages": pages,
        "cold_bullets": bullets,
        "headless_bullets": headless,
        "headless_examples": examples,
        "committed_bytes": committed,
        "committed_files": count,
        "imported_bytes": read,
        "squad_bytes": every,
        "store_ratio": round(committed / read, 3) if read else 0.0,
        "store_ratio_all": round(committed / every, 3) if every else 0.0,
    }


TARGETS = (
    "targets: 0 decisions filed as status; 0 pages named by inbox, config or squad unless the "
    "team works on it; 0 cold bullets without their subject; store <= 1.5x the Squad text "
    "imported; hot after six one-line writes <= 1.2x their bytes (the bytes its budget and "
    "`hot show` count; the file beside them keeps each entry's metadata too)"
)


def table(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One line per team: the import's figures against their targets."""
    lines = [
        f"{'import quality':<28}{'as status':>10}{'tool pages':>11}{'headless':>14}"
        f"{'store/read':>11}{'store/squad':>12}{'hot budget':>11}{'hot file':>10}"
    ]
    for name, f in rows:
        headless = f"{f['headless_bullets']}/{f['cold_bullets']}"
        hot = f.get("hot", {})
        lines.append(
            f"{name:<28}{f['decisions_as_status']:>10}{len(f['tool_pages']):>11}{headless:>14}"
            f"{f['store_ratio']:>11.3f}{f['store_ratio_all']:>12.3f}"
            f"{hot.get('budget_ratio', 0.0):>11.3f}{hot.get('file_ratio', 0.0):>10.3f}"
        )
    lines.append(TARGETS)
    return lines
