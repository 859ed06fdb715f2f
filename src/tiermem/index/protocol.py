"""The search index: what tiermem asks of it, and the units it holds.

The markdown files are the truth; an index is a cache derived from them that can be
deleted at any time. `Index` is what every step uses, thirteen methods; SQLite FTS5
(`fts.FtsIndex`) is the implementation, kept at `.squad/memory/index.sqlite`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, Unpack, runtime_checkable

from ..errors import ParseError
from ..storage import archive
from ..storage.entries import Entry

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from ..storage.layout import Layout
    from .tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class Doc:
    """One searchable unit: an entry of a tier file, or a chunk of an archive record."""

    id: str
    tier: str
    agent: str
    path: str
    title: str
    text: str
    cls: str = ""
    status: str = ""
    created: str = ""
    used: str = ""
    session: str = ""
    trust: str = ""
    tags: str = ""
    tokens: int = 0
    parent: str = ""  # the entry this one is a part of (see `entries.split_entry`)
    sources: str = ""  # comma-separated: the archive records (or files) it was made from
    passages: str = ""  # where its passages are, as the index stores them (`relevance.passages`)


@dataclass(frozen=True, slots=True)
class Hit:
    """A document that matched a query, and how well (higher is better)."""

    doc: Doc
    score: float


class Listing(TypedDict, total=False):
    """What `Index.docs` lists documents by: the fields of `Doc` it matches exactly
    (`LISTED`), and a tag (one of a document's comma-separated `tags`)."""

    tier: str | None
    agent: str | None
    path: str | None
    cls: str | None
    tag: str | None


LISTED = ("tier", "agent", "path", "cls")  # the fields of `Listing` matched exactly


@dataclass(frozen=True, slots=True)
class Scope:
    """The documents a search may return: of some tiers, of some agents (and, with
    `whole_wiki`, every wiki document besides theirs), only active ones, of one status.
    Each field left at its default leaves the documents open on that count."""

    tiers: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    active_only: bool = False
    status: str = ""  # only documents of this status (e.g. "superseded"), when given
    whole_wiki: bool = False  # with `agents`: the wiki's documents too, whoever wrote them

    def holds(self, tier: str, status: str, agent: str) -> bool:
        """Whether a document of this tier, status and agent is in the scope."""
        owned = not self.agents or agent in self.agents or (self.whole_wiki and tier == "wiki")
        return (
            owned
            and (not self.tiers or tier in self.tiers)
            and (not self.active_only or not status)
            and (not self.status or status == self.status)
        )


EVERYWHERE = Scope()  # every document the index holds


@dataclass(slots=True)
class SyncReport:
    """What a sync changed, and which files it could not read."""

    scanned: int = 0
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    stale: str = ""  # why the index was read as it stood, not brought up to date


@runtime_checkable
class Index(Protocol):
    """What tiermem asks of a search index: kept in step with the files, searched, and read
    by id, by entry and by date. `fts.FtsIndex` is the one `Memory` opens;
    `tiermem.testing.MemoryIndex` holds the documents in a list, for tests. Both derive from
    it, so each question's signature is written here; a search is asked within a `Scope`."""

    def sync(self) -> SyncReport:
        """Bring the index up to date with the files; re-read only what changed."""
        ...

    def rebuild(self, scrub: bool = False) -> SyncReport:
        """Drop the index and build it again from the files; with `scrub`, leave no trace of
        text no file holds any more in the index's own files (a purge)."""
        ...

    def check(self) -> list[str]:
        """Differences between the index and the files, without changing the index."""
        ...

    def search(self, query: str, scope: Scope = EVERYWHERE, limit: int = 10) -> list[Hit]:
        """The best `limit` documents of the scope matching any word of the query, best
        first; equal scores go to the newer document, then to the smaller id. An index that
        ranks one scope as it ranks several needs no `search` of its own."""
        return self.search_each(query, [scope], limit)[0]

    def search_each(self, query: str, scopes: Sequence[Scope], limit: int) -> list[list[Hit]]:
        """The best `limit` matches within each scope, ranked as `search` ranks them, or, for
        a query whose words are common in a large store, by its rarest words alone."""
        ...

    def docs(self, **where: Unpack[Listing]) -> list[Doc]:
        """All documents, or those of one tier, agent, file, class or tag (each named in
        `where` and not empty), in file order."""
        ...

    def by_ids(self, ids: Sequence[str], scope: Scope = EVERYWHERE) -> list[Doc]:
        """The documents of the scope with these ids, in the order of the ids (an id held in
        two files gives both)."""
        ...

    def newest(self, tiers: Sequence[str], agent: str | None, limit: int) -> list[Doc]:
        """The newest active documents of some tiers (of one agent, if named), newest first
        (equal dates by id)."""
        ...

    def parts(self, parent: str) -> list[Doc]:
        """The parts of one long entry, or the chunks of one section of an archived text, in
        file order (wiki pages first)."""
        ...

    def totals(self) -> list[tuple[str, str, int, int, int]]:
        """(agent, tier, entries, bytes, tokens) for every agent and tier, by agent and tier:
        a long entry's parts count once, an archive record once, whatever its chunks."""
        ...

    def token_counts(self, texts: list[str]) -> list[int]:
        """Token counts of texts (a cache may keep them by content)."""
        ...

    def uncounted(self) -> AbstractContextManager[None]:
        """For reads within it that need no token counts (ids, paths, text): a document
        whose count the index does not hold yet comes without one (`tokens` None) instead of
        being counted, which would load the encoding."""
        ...

    def close(self) -> None:
        """Release what the index holds open."""
        ...


class IndexFactory(Protocol):
    """Opens the index of a store: `FtsIndex` unless `Memory(index=...)` hands in another."""

    def __call__(
        self, layout: Layout, counter: TokenCounter, note: Callable[[str], None] | None = None
    ) -> Index:
        """The index of the store at `layout`, counting tokens with `counter`; `note` says
        what the user should know (an index read as it stood)."""
        ...


def entry_doc(entry: Entry, tier: str, agent: str, path: str) -> Doc:
    """The search unit of a tier entry."""
    return Doc(
        id=entry.id,
        tier=tier,
        agent=entry.agent or agent,
        path=path,
        title=entry.title,
        text=entry.text,
        cls=entry.cls,
        status=entry.status,
        created=entry.created,
        used=entry.used,
        session=entry.session,
        trust=entry.trust,
        tags=",".join(entry.tags),
        parent=dict(entry.extra).get("parent", ""),
        sources=",".join(entry.sources),
    )


def archive_docs(
    record: archive.Record, rel: str, retired: frozenset[int] = frozenset()
) -> list[Doc]:
    """The chunks of a record, less those retired (its header's and `retired`, the
    ledger's); the chunks of one section name its first chunk as parent."""
    pieces = archive.chunks(record.text)
    ids = [record.id if n == 0 else f"{record.id}#{n}" for n in range(len(pieces))]
    size = Counter(piece.section for piece in pieces)
    first: dict[int, str] = {}
    for n, piece in enumerate(pieces):
        first.setdefault(piece.section, ids[n])
    retired |= record.retired_chunks()  # `forget` took them out of search and spawns
    return [
        Doc(
            id=ids[n],
            tier="archive",
            agent=record.agent,
            path=rel,
            title=piece.title or record.title,
            text=piece.text,
            created=record.created,
            trust=record.trust,
            parent=first[piece.section] if size[piece.section] > 1 else "",
        )
        for n, piece in enumerate(pieces)
        if n not in retired
    ]
