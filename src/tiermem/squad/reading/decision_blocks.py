"""Squad's decision blocks as team entries: `### date: title` sections of decisions.md, an
inbox file, or a decision recorded by hand."""

from __future__ import annotations

from ...storage.entries import Entry, content_id, split_entry
from ...storage.layout import TEAM
from ...team.classify import classify, is_structured
from ...text.prose import clean_title, readable
from . import squad_markdown

# A decision is read whole where it can be: only one longer than this (about 1,000 tokens) is
# split, at its own headings, into parts that each load on their own.
DECISION_PART_BYTES = 4096


def _sections(text: str, filename: str = "") -> list[squad_markdown.Section]:
    parsed = (
        squad_markdown.parse_inbox(text, filename)
        if filename
        else squad_markdown.parse_decisions(text)
    )
    found = [s for s in parsed if s.kind == "decision"]
    if found:
        return found
    first = next((ln for ln in text.splitlines() if ln.strip()), "decision")
    title = first.lstrip("#").strip()[:200]
    return [
        squad_markdown.Section(
            "decision", title, None, text, 0, len(text.encode()), 1, 0, None, None
        )
    ]


def _created(date: str | None, fallback: str) -> str:
    if not date:
        return fallback
    if len(date) == 7:
        date += "-01"
    return f"{date}T00:00:00Z" if len(date) == 10 and "X" not in date else fallback


def _decision_body(section: squad_markdown.Section) -> str:
    """A decision's text under its title: without its heading, and without the first line
    of a text with no heading, which is its title (said once, not again as its body)."""
    if section.level:
        return section.text.split("\n", 1)[1].strip("\n") if "\n" in section.text else ""
    first, _, rest = section.text.strip("\n").partition("\n")
    return (
        rest.strip("\n")
        if first.lstrip("#").strip()[:200] == section.title
        else section.text.strip("\n")
    )


def decision_entries(
    section: squad_markdown.Section, by: str, stamp: str, session: str, source: str
) -> list[Entry]:
    """A decision block as team entries (class from its text: decision, policy, ...; a
    report of work done stays `status`, which never reaches the wiki).

    A block longer than DECISION_PART_BYTES is split into parts at its own headings, so every
    part stays loadable on its own and nothing is condensed away.
    """
    body = readable(_decision_body(section))
    cls = classify(section.title, body)
    author = section.author or by
    whole = Entry(
        id=content_id("d", squad_markdown.decision_key(section)),
        cls=cls if is_structured(cls) or cls == "status" else "decision",
        title=clean_title(section.title, 200) or "decision",
        body=body,
        agent=TEAM,
        created=_created(section.date, stamp),
        used=stamp,
        session=session,
        sources=(source,),
        extra=(("by", author),) if author else (),
    )
    return split_entry(whole, DECISION_PART_BYTES)


def entries_of(
    text: str, *, by: str, stamp: str, session: str, source: str, inbox_file: str = ""
) -> list[Entry]:
    """The team entries of every decision block in a text (an inbox file's, when named)."""
    return [
        entry
        for section in _sections(text, inbox_file)
        for entry in decision_entries(section, by, stamp, session, source)
    ]
