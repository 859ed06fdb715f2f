"""The decision path: team decisions into the team's cold tier, archived first."""

from __future__ import annotations

import re
from dataclasses import replace

from ..context import Context
from ..errors import ParseError
from ..storage import archive, files, store
from ..storage.layout import TEAM


def decide(ctx: Context, text: str, by: str) -> list[str]:
    """A decision a team member records: into the team's tier and Squad's decisions.md."""
    cleaned, kinds = ctx.clean(text, "decision")
    ctx.host.check_decision_log()  # a broken decisions.md stops us before any write
    ids = record(ctx, cleaned, by=by, source=f"decision:{by}")
    ctx.host.append_decision(cleaned, by)
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

    The host (`ctx.host`) cuts the text into decision blocks; `inbox_file` names the inbox
    file it came from, whose front matter and name give dates.
    """
    cleaned, kinds = ctx.clean(text, "decision")
    path = ctx.layout.tier_file("cold", TEAM)
    store.load(ctx.layout, "cold", path)  # a broken team file stops us before any write
    stamp = ctx.stamp()
    first = cleaned.split("\n", 1)[0]
    record = archive.new_record(TEAM, stamp, "decision", source, first, cleaned, trust=trust)
    archive.write(ctx.layout, record)
    made = ctx.host.decision_entries(
        cleaned, by=by, stamp=stamp, session=session, source=record.location, inbox_file=inbox_file
    )
    entries = [replace(entry, trust=trust) for entry in made]
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
