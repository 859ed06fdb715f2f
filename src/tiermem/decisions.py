"""The decision path: team decisions into the team's cold tier, archived first."""

from __future__ import annotations

import re
from dataclasses import replace

from . import archive, files, store
from .classify import classify, is_structured
from .context import Context
from .entries import Entry, content_id, split_entry
from .errors import ParseError
from .layout import TEAM
from .squad import decision_log
from .squad import parse as squad_parse

# A decision is read whole where it can be: only one longer than this (about 1,000 tokens) is
# split, at its own headings, into parts that each load on their own.
DECISION_PART_BYTES = 4096


def _sections(text: str, filename: str = "") -> list[squad_parse.Section]:
    parsed = (
        squad_parse.parse_inbox(text, filename) if filename else squad_parse.parse_decisions(text)
    )
    found = [s for s in parsed if s.kind == "decision"]
    if found:
        return found
    first = next((ln for ln in text.splitlines() if ln.strip()), "decision")
    title = first.lstrip("#").strip()[:200]
    return [
        squad_parse.Section("decision", title, None, text, 0, len(text.encode()), 1, 0, None, None)
    ]


def _created(date: str | None, fallback: str) -> str:
    if not date:
        return fallback
    if len(date) == 7:
        date += "-01"
    return f"{date}T00:00:00Z" if len(date) == 10 and "X" not in date else fallback


def _decision_body(section: squad_parse.Section) -> str:
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
    section: squad_parse.Section, by: str, stamp: str, session: str, source: str
) -> list[Entry]:
    """A decision block as team entries (class from its text: decision, policy, ...; a
    report of work done stays `status`, which never reaches the wiki).

    A block longer than DECISION_PART_BYTES is split into parts at its own headings, so every
    part stays loadable on its own and nothing is condensed away.
    """
    body = _decision_body(section)
    cls = classify(section.title, body)
    author = section.author or by
    whole = Entry(
        id=content_id("d", squad_parse.decision_key(section)),
        cls=cls if is_structured(cls) or cls == "status" else "decision",
        title=section.title[:200] or "decision",
        body=body,
        agent=TEAM,
        created=_created(section.date, stamp),
        used=stamp,
        session=session,
        sources=(source,),
        extra=(("by", author),) if author else (),
    )
    return split_entry(whole, DECISION_PART_BYTES)


def decide(ctx: Context, text: str, by: str) -> list[str]:
    """A decision a team member records: into the team's tier and Squad's decisions.md."""
    cleaned, kinds = ctx.clean(text, "decision")
    decision_log.check(ctx)  # a broken decisions.md stops us before any write
    ids = record(ctx, cleaned, by=by, source=f"decision:{by}")
    decision_log.append(ctx, cleaned, by)
    ctx.audit_redactions(kinds, "cold")
    return ids


def record(
    ctx: Context,
    text: str,
    *,
    by: str,
    source: str,
    session: str = "",
    trust: str = "",
    inbox_file: str = "",
) -> list[str]:
    """Archive decision text, then record each decision block as a team entry.

    `inbox_file` names a Squad inbox file, whose front matter and name give dates.
    """
    cleaned, kinds = ctx.clean(text, "decision")
    path = ctx.layout.tier_file("cold", TEAM)
    store.load(ctx.layout, "cold", path)  # a broken team file stops us before any write
    stamp = ctx.stamp()
    record = archive.new_record(TEAM, stamp, "decision", source, cleaned.split("\n", 1)[0], cleaned)
    archive.write(ctx.layout, record)
    entries = [
        replace(entry, trust=trust)
        for s in _sections(cleaned, inbox_file)
        for entry in decision_entries(s, by, stamp, session, record.location)
    ]
    in_wiki = promoted_ids(ctx)
    with store.update(ctx.layout, "cold", path, lambda: store.blank("cold", TEAM)) as cold:
        for entry in entries:
            if entry.id not in in_wiki and cold.get(entry.id) is None:
                cold.put(entry)
    ctx.audit(
        "decision", [e.id for e in entries], ["archive", "cold"], f"recorded from {source}", by=by
    )
    ctx.audit_redactions(kinds, "cold")
    return [e.id for e in entries]


def promoted_ids(ctx: Context) -> set[str]:
    """Ids already in the wiki (a decision that reached the wiki is not recorded again)."""
    found: set[str] = set()
    for path in files.memory_files(ctx.layout.tier_dir("wiki")):
        try:
            text = files.read_text(ctx.layout, path) or ""
        except ParseError:
            continue  # a damaged page is no reason to refuse a decision
        found.update(re.findall(r"<!-- tiermem id=(\S+)", text))
    return found
