"""Fakes of the parts `Memory` is handed, for tests of code built on tiermem.

Each stands in for one constructor argument of `Memory` and is simple enough that a test
can say exactly what it will do:

- `WordCounter` (`tokens=`): one token per whitespace-separated word, so a budget can be
  checked by counting words;
- `ByScore` (`ranker=`): the index's scores as they are, with no preference for the asking
  agent's own memory, in a search or in a spawn's passages;
- `FirstWords` (`summarizer=`): a session's first words up to the budget, named "first-words";
- `MemoryIndex` (`index=`): the documents in a list, no SQLite, searched by counting
  words: lookups and totals as the real index gives them, a ranking that is simple to
  predict;
- `RecordingIndex` (`index=`): the real index, keeping every query it was asked.

    from tiermem import Memory
    from tiermem.testing import ByScore, WordCounter

    mem = Memory(root, tokens=WordCounter(), ranker=ByScore())
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, Unpack

from .index.protocol import EVERYWHERE, LISTED, Doc, Hit, Index, Listing, Scope, SyncReport
from .index.tokens import TokenCounter
from .storage.layout import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .storage.files import Folder

__all__ = ["ByScore", "FirstWords", "MemoryIndex", "RecordingIndex", "WordCounter"]


class WordCounter:
    """A fake token counter: one token per whitespace-separated word."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """The number of words in each text."""
        return [len(text.split()) for text in texts]


class ByScore:
    """A fake ranker: the index's scores as they are, best first, every entry weighing alike."""

    def weight(self, doc: Doc, agent: str | None) -> float:
        """1.0: no entry counts more for the agent asking."""
        return 1.0

    def rank(self, hits: Sequence[Hit], agent: str | None) -> list[Hit]:
        """Hits sorted by score alone (stable: ties keep their order)."""
        return sorted(hits, key=lambda h: -h.score)


class FirstWords:
    """A fake summarizer: the text's first words, as many as fit the budget."""

    name = "first-words"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """The leading words of `text` within `budget_bytes` UTF-8 bytes."""
        kept: list[str] = []
        size = -1
        for word in text.split():
            size += len(word.encode("utf-8")) + 1
            if size > budget_bytes:
                break
            kept.append(word)
        return " ".join(kept)


class RecordingIndex:
    """The shipped index (or one made by `inner`), keeping the queries it was asked.

    `Memory(root, index=RecordingIndex)` opens it; `mem.context.index.queries` is then
    every text searched, in order, by `search` and `search_each`.
    """

    def __init__(
        self,
        layout: Layout,
        counter: TokenCounter,
        note: Callable[[str], None] | None = None,
        inner: Callable[..., Index] | None = None,
    ) -> None:
        if inner is None:
            from .index.fts import FtsIndex

            inner = FtsIndex
        self.inner = inner(layout, counter, note=note)
        self.queries: list[str] = []

    def sync(self) -> SyncReport:
        """The inner index brought up to date."""
        return self.inner.sync()

    def rebuild(self, scrub: bool = False) -> SyncReport:
        """The inner index built again."""
        return self.inner.rebuild(scrub)

    def check(self) -> list[str]:
        """The inner index's differences from the files."""
        return self.inner.check()

    def search(self, query: str, *args: Any, **kwargs: Any) -> list[Hit]:
        """The inner index's matches, the query kept."""
        self.queries.append(query)
        return self.inner.search(query, *args, **kwargs)

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The inner index's matches per scope, the query kept."""
        self.queries.append(query)
        return self.inner.search_each(query, scopes, limit)

    def docs(self, *args: Any, **kwargs: Any) -> list[Doc]:
        """The inner index's documents."""
        return self.inner.docs(*args, **kwargs)

    def by_ids(self, ids: Sequence[str], *args: Any, **kwargs: Any) -> list[Doc]:
        """The inner index's documents with these ids."""
        return self.inner.by_ids(ids, *args, **kwargs)

    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The inner index's newest documents."""
        return self.inner.newest(tiers, agent, limit)

    def parts(self, parent: str) -> list[Doc]:
        """The inner index's parts of one entry."""
        return self.inner.parts(parent)

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """The inner index's totals by whole entry."""
        return self.inner.totals()

    def token_counts(self, texts: list[str]) -> list[int]:
        """The inner index's token counts."""
        return self.inner.token_counts(texts)

    def uncounted(self) -> AbstractContextManager[None]:
        """The inner index's reads without counting."""
        return self.inner.uncounted()

    def close(self) -> None:
        """The inner index released."""
        self.inner.close()


class MemoryIndex(Index):
    """A fake index: the store's documents held in a list, searched by counting words.

    It reads the files the real index reads, as it reads them (the same parsing, links never
    followed), and answers every question of `Index` from memory: lookups, dates and totals
    as the real one answers them; search by the query's words counted in each document's
    searched fields (`schema.SEARCHED`: a title word four times), weighed by how rare they
    are, with no stemming and no phrases.
    Nothing is written anywhere; every sync reads every file again.
    """

    def __init__(
        self, layout: Layout, counter: TokenCounter, note: Callable[[str], None] | None = None
    ) -> None:
        self.layout = layout
        self.counter = counter
        self._files: dict[str, tuple[str, list[Doc]]] = {}  # path -> (hash of its bytes, docs)
        self._docs: list[Doc] = []  # every document, in file order

    def sync(self) -> SyncReport:
        """Read every file; take in those whose bytes changed."""
        report, self._files = self._read()
        self._docs = [d for rel in sorted(self._files) for d in self._files[rel][1]]
        return report

    def rebuild(self, scrub: bool = False) -> SyncReport:
        """Forget every document and read the files again (there is nothing to scrub)."""
        self._files, self._docs = {}, []
        return self.sync()

    def check(self) -> list[str]:
        """What a sync would change, said as the real index says it."""
        report, _ = self._read()
        found = [f"changed: {p}" for p in report.changed]
        found += [f"removed: {p}" for p in report.removed]
        found += [f"unreadable: {e}" for e in report.errors]
        return found + [f"merge conflict: {c}" for c in sorted(set(report.conflicts))]

    def _read(self) -> tuple[SyncReport, dict[str, tuple[str, list[Doc]]]]:
        """What every file holds now, and how that differs from what is held."""
        from .errors import ParseError
        from .index import parsing
        from .storage import files

        report = SyncReport()
        found: dict[str, tuple[str, list[Doc]]] = {}
        for folder, tier in parsing.folders(self.layout, report):
            try:
                names = list(parsing.readable(files.listing(folder), report))
            except ParseError as exc:
                report.errors.append(exc)
                continue
            with files.Folder(folder) as reader:
                for name in names:
                    self._read_file(reader, name, tier, report, found)
        report.scanned = len(found)
        report.removed = sorted(set(self._files) - set(found))
        return report, found

    def _read_file(
        self,
        reader: Folder,
        name: str,
        tier: str,
        report: SyncReport,
        found: dict[str, tuple[str, list[Doc]]],
    ) -> None:
        """One file's documents into `found`, parsed again only when its bytes changed."""
        from .errors import ParseError
        from .index import schema
        from .storage import digest, retired

        rel = f"{self.layout.relative(reader.path)}/{name}"
        try:
            got = reader.read(name)
            if got is None:
                return  # gone since the listing
            sha = digest.sha256_hex(got[0])
            if tier == "archive":  # a record's documents change with the retired passages
                sha += ":" + retired.stamp(self.layout)
            held = self._files.get(rel)
            if held is not None and held[0] == sha:
                found[rel] = held
                return
            docs, conflicts = schema.file_docs(reader.path / name, rel, tier, got[0])
        except ParseError as exc:
            report.errors.append(exc)
            return
        counts = self.counter.count_many([d.text for d in docs])
        found[rel] = (sha, [replace(d, tokens=n) for d, n in zip(docs, counts, strict=True)])
        report.changed.append(rel)
        report.conflicts.extend(conflicts)

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The best `limit` matches within each scope."""
        return [
            self._ranked(
                query, [d for d in self._docs if s.holds(d.tier, d.status, d.agent)], limit
            )
            for s in scopes
        ]

    def _ranked(self, query: str, docs: list[Doc], limit: int) -> list[Hit]:
        """Documents by the query's words they hold, rare words weighing more (equal scores:
        the newer document, then the smaller id)."""
        words = set(_words(query))
        if not words or limit <= 0:
            return []
        held = [(d, _counted(d, words)) for d in self._docs]
        rarity = {w: math.log(1 + len(held) / (1 + sum(w in c for _, c in held))) for w in words}
        scores = {id(d): sum(n * rarity[w] for w, n in c.items()) for d, c in held}
        hits = [Hit(d, scores[id(d)]) for d in docs if scores[id(d)] > 0]
        hits.sort(key=lambda h: h.doc.id)
        hits.sort(key=lambda h: h.doc.created, reverse=True)
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def docs(self, **where: Unpack[Listing]) -> list[Doc]:
        """Every document, or those of one tier, agent, file, class or tag, in file order."""
        asked = [(f, v) for f, v in where.items() if f in LISTED and v]
        tag = where.get("tag")
        return [
            d
            for d in self._docs
            if all(v == getattr(d, f) for f, v in asked)
            and (not tag or tag in d.tags.split(","))
        ]

    def by_ids(self, ids: Sequence[str], scope: Scope = EVERYWHERE) -> list[Doc]:
        """The documents of the scope with these ids, in the order of the ids."""
        order = {doc_id: n for n, doc_id in enumerate(ids)}
        found = [d for d in self._docs if d.id in order and scope.holds(d.tier, d.status, d.agent)]
        return sorted(found, key=lambda d: order[d.id])

    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The newest active documents of some tiers (of one agent, if named)."""
        found = [
            d for d in self._docs if d.tier in tiers and not d.status and agent in (None, d.agent)
        ]
        found.sort(key=lambda d: d.id)
        found.sort(key=lambda d: d.created, reverse=True)
        return found[:limit]

    def parts(self, parent: str) -> list[Doc]:
        """The parts of one entry, wiki pages first, then by tier and file."""
        found = [d for d in self._docs if d.parent == parent]
        return sorted(found, key=lambda d: (d.tier != "wiki", d.tier, d.path))

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens), a long entry and a record counted once."""
        groups: dict[tuple[str, str], list[Doc]] = {}
        for doc in self._docs:
            groups.setdefault((doc.agent, doc.tier), []).append(doc)
        return [
            (agent, tier, len({_entry(d) for d in docs}), *_sizes(docs))
            for (agent, tier), docs in sorted(groups.items())
        ]

    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts, counted anew each time."""
        return self.counter.count_many(texts)

    def uncounted(self) -> AbstractContextManager[None]:
        """Nothing changes: every document was counted when it was read in."""
        return contextlib.nullcontext()

    def close(self) -> None:
        """Nothing is held open."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _counted(doc: Doc, words: set[str]) -> dict[str, float]:
    """How often each of the words occurs in a document's searched fields, each occurrence
    by the weight of its field (a title word four times, as the real index weighs it)."""
    from .index.schema import SEARCHED, searched

    found: dict[str, float] = {}
    for (_, weight), field in zip(SEARCHED, searched(doc.title, doc.text), strict=True):
        for word in _words(field) if weight else ():
            if word in words:
                found[word] = found.get(word, 0.0) + weight
    return found


def _entry(doc: Doc) -> str:
    """What a document is a part of: its record, its long entry, or itself."""
    return doc.path if doc.tier == "archive" else doc.parent or doc.id


def _sizes(docs: list[Doc]) -> tuple[int, int]:
    """The bytes and tokens of some documents' text."""
    return sum(len(d.text.encode("utf-8")) for d in docs), sum(d.tokens for d in docs)
