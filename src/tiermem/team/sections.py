"""Which entries are versions of one section of a Squad file.

A Squad team keeps writing its files after an import: an agent appends to its history's
`## Learnings`, Scribe appends cross-agent updates. An entry made from a section names the
section it came from (metadata `section`: a digest of its file, heading, date and which of
the file's sections under that heading it is), so that the next import of the file replaces
the entry of a section that grew instead of adding a second one beside it. An entry imported
before sections were named is known by its heading, its date, and the file and line its
source record says it came from (`legacy_key`).

Two live entries of one tier file that are versions of one section are a duplicate, which
`doctor` names and `--repair` folds: the last one (the newest import) stays, the others'
text is archived first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..errors import TiermemError
from ..storage import archive
from ..storage.entries import Entry, content_id
from ..storage.layout import Layout

SECTION = "section"  # the metadata key an entry names its section by
_SOURCE = re.compile(
    r"archive/([A-Za-z0-9._-]{1,64})/(" + archive.RECORD_ID.pattern + r")\.md#L(\d+)"
)


def key(rel: str, title: str, date: str, occurrence: int) -> str:
    """The name of a section: its file, heading, date and occurrence under that heading."""
    return content_id("s", rel, " ".join(title.split()).casefold(), date, str(occurrence))


def of(entry: Entry) -> str:
    """The section an entry names ('' when it names none)."""
    return dict(entry.extra).get(SECTION, "")


class Occurrences:
    """Counts, as a file's sections go by, which section under one heading each is: a text
    seen before under the heading (a union merge's copy) is that same section again."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], list[str]] = {}

    def of(self, title: str, date: str, body: str) -> int:
        """Which section under this heading and date a body is (0 for the first)."""
        texts = self.seen.setdefault((" ".join(title.split()).casefold(), date), [])
        digest = content_id("b", " ".join(body.split()))
        if digest not in texts:
            texts.append(digest)
        return texts.index(digest)


class Sources:
    """What the import records entries cite were made from (their file), read once each."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.files: dict[str, str] = {}

    def file_of(self, location: str) -> str:
        """The Squad file an import record holds ('' when it is no import's record)."""
        if location not in self.files:
            self.files[location] = self._read(location)
        return self.files[location]

    def _read(self, location: str) -> str:
        agent, _, name = location.removeprefix("archive/").partition("/")
        try:
            fields = archive.header(archive.path_of(self.layout, agent, name.removesuffix(".md")))
        except TiermemError:  # a name that leads nowhere: no file tiermem can trust
            return ""
        return fields.get("source", "") if fields.get("kind") == "import" else ""


def legacy_key(entry: Entry, file_of: Callable[[str], str]) -> str:
    """How an entry imported before sections were named is known: its heading, date, and the
    file and line its import record names ('' for an entry no import made)."""
    for source in entry.sources:
        match = _SOURCE.fullmatch(source)
        if match is None:
            continue
        agent, record, line = match.groups()
        rel = file_of(f"archive/{agent}/{record}.md")
        if rel:
            return f"{rel}#L{line}#{' '.join(entry.title.split()).casefold()}#{entry.created}"
    return ""


def versions(entries: Iterable[Entry], file_of: Callable[[str], str]) -> list[list[Entry]]:
    """Groups of two or more live entries that are versions of one section, in file order."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        if not entry.active or entry.standing:
            continue  # a standing entry is one by its id; what is retired is no copy
        name = of(entry) or legacy_key(entry, file_of)
        if name:
            groups.setdefault(name, []).append(entry)
    return [group for group in groups.values() if len(group) > 1]


def replaced_by(
    entry: Entry, present: Iterable[Entry], file_of: Callable[[str], str]
) -> list[Entry]:
    """The live entries a new entry of a section replaces: earlier versions of its section
    (by name, or, imported before sections were named, by heading, date, file and line)."""
    name = of(entry)
    legacy = legacy_key(entry, file_of)
    return [
        old
        for old in present
        if old.id != entry.id
        and old.active
        and not old.standing
        and (_same(name, of(old)) or (not of(old) and _same(legacy, legacy_key(old, file_of))))
    ]


def _same(name: str, other: str) -> bool:
    return bool(name) and name == other
