"""What search, an entry read by its id and the wiki return."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import TRUST, Result, about

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


@dataclass(slots=True)
class SearchHit(Result):
    """One search result: an entry or a section of an archived text, whole when short (or
    read by its id), else the passages that match the query (`spans` says where)."""

    id: str = field(metadata=about("Entry or archive record id; searching an id reads its entry."))
    tier: str
    agent: str
    path: str = field(metadata=about("The file it lives in, relative to the repository."))
    title: str
    text: str
    score: float = field(
        metadata=about("Relevance; higher is better (0 for an entry read by its id).")
    )
    cls: str = field(
        default="", metadata=about("The entry's class (empty for archived text).", json="class")
    )
    created: str = field(
        default="", metadata=about("When the entry or the archived text was made.")
    )
    tokens: int = field(default=0, metadata=about("Tokens of the text shown (o200k_base)."))
    session: str = field(default="", metadata=about("The session the entry came from, if any."))
    sources: tuple[str, ...] = field(
        default=(),
        metadata=about("Archive records holding the text it was made from (`#L12`: a line)."),
    )
    origin: str = field(
        default="", metadata=about("Where it came from, in words (from its first source).")
    )
    spans: tuple[tuple[int, int], ...] = field(
        default=(),
        metadata=about(
            "Where the passages shown sit in the whole text (character offsets, start and end); "
            "empty when the text is shown whole. `search ID` reads it whole."
        ),
    )
    trust: str = field(default="", metadata=TRUST)
    whole: bool = field(
        default=False,
        metadata=about("Read whole: the query named it by its id, and its text is all of it."),
    )


class Searched(list[SearchHit], Result):
    """A page of search results, best first, and what the page leaves unsaid: what became of
    the entries a query of ids names that no result holds (`forgotten`: forgotten or purged,
    when, why, where the text is kept) and where the next page starts (`next_offset`, None
    after the last). A list of its results, as callers that iterate them expect."""

    __slots__ = ("forgotten", "next_offset")

    def __init__(
        self,
        hits: Iterable[SearchHit] = (),
        forgotten: Iterable[str] = (),
        next_offset: int | None = None,
    ) -> None:
        super().__init__(hits)
        self.forgotten = list(forgotten)
        self.next_offset = next_offset

    def to_json(self) -> dict[str, Any]:
        """The results, where the next page starts, and what was forgotten."""
        return {
            "results": [h.to_json() for h in self],
            "next_offset": self.next_offset,
            "forgotten": self.forgotten,
        }


@dataclass(slots=True)
class EntryText(Result):
    """Any id a search returns, read: a tier entry, an archived record, or a section of one."""

    id: str
    tier: str
    agent: str
    path: str = field(metadata=about("The file it lives in, relative to the repository."))
    title: str
    text: str = field(
        metadata=about(
            "Its text (archived text byte for byte as archived; an entry's title, which "
            "starts its text, as `title` shows it)."
        )
    )
    cls: str = field(
        default="", metadata=about("The entry's class (empty for archived text).", json="class")
    )
    created: str = ""
    source: str = field(default="", metadata=about("What an archived text came from."))
    offset: int = field(default=0, metadata=about("Where this text starts, in characters."))
    total_chars: int = field(default=0, metadata=about("Characters of the whole text."))
    next_offset: int | None = field(
        default=None, metadata=about("Where the rest starts, when the text was cut; else null.")
    )
    trust: str = field(default="", metadata=TRUST)


@dataclass(slots=True)
class Page(Result):
    """A wiki topic and how much it holds."""

    topic: str
    entries: int
    active: int = field(metadata=about("Entries neither superseded nor expired."))
    bytes: int


@dataclass(slots=True)
class WikiEntry(Result):
    """The wiki entry a request produced."""

    id: str
    topic: str
    cls: str = field(metadata=about("policy, decision, convention or contract.", json="class"))
    title: str
    path: str = field(metadata=about("The page file, relative to the repository."))
