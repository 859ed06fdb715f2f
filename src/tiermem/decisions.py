"""The decision path: team decisions into tiers, supersession, and Squad's decision inbox."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import archive, squad_parse, store
from .classify import classify, is_structured
from .entries import Entry, TierFile, content_id, split_entry
from .errors import ParseError
from .store import TEAM

if TYPE_CHECKING:
    from .memory import Memory

_WORD = re.compile(r"[a-z0-9]+")
_DATE = re.compile(r"\b20\d\d-\d\d(-\d\d)?(t[\d:z+-]*)?\b")
# Words that say what kind of note something is, not what it is about.
_GENERIC = frozenset(
    "a an and are as at be by decision decisions directive for from in into is it its "
    "key learning learnings new note notes of on or proposal proposed revised session "
    "status summary the this to update updated updates user via vs was we what why with "
    "work final team agent complete completed done fix fixes added add implementation".split()
)


@dataclass
class InboxReport:
    """What merging the Squad decision inbox did."""

    merged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)


def subject(title: str) -> frozenset[str] | None:
    """What a structured entry is about: its title's content words (None when too generic)."""
    words = [w for w in _WORD.findall(_DATE.sub(" ", title.lower())) if w not in _GENERIC]
    content = frozenset(w for w in words if not w.isdigit() and len(w) > 1)
    return content if len(content) >= 2 else None


def same_subject(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    """Two subjects are the same when their words match (or nearly, for long titles)."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    return min(len(a), len(b)) >= 3 and len(a & b) / len(a | b) >= 0.8


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


def decision_entries(
    section: squad_parse.Section, by: str, stamp: str, session: str, source: str
) -> list[Entry]:
    """A decision block as team entries (class from its text: decision, policy, ...).

    A block too long for a prompt is split into parts at its own headings, so every part
    stays loadable on its own and nothing is condensed away.
    """
    body = (
        section.text.split("\n", 1)[1] if section.level and "\n" in section.text else section.text
    ).strip("\n")
    cls = classify(section.title, body)
    author = section.author or by
    whole = Entry(
        id=content_id("d", squad_parse.decision_key(section)),
        cls=cls if is_structured(cls) else "decision",
        title=section.title[:200] or "decision",
        body=body,
        agent=TEAM,
        created=_created(section.date, stamp),
        used=stamp,
        session=session,
        sources=(source,),
        extra=(("by", author),) if author else (),
    )
    return split_entry(whole)


def record_decisions(
    mem: Memory,
    text: str,
    *,
    by: str,
    source: str,
    squad_log: bool,
    session: str = "",
    trust: str = "",
    inbox_file: str = "",
) -> list[str]:
    """Archive decision text, then record each decision block as a team entry.

    `inbox_file` names a Squad inbox file, whose front matter and name give dates.
    """
    mem._require_store()
    cleaned, kinds = mem._clean(text, "decision")
    path = mem.layout.tier_file("cold", TEAM)
    store.load(mem.layout, "cold", path)  # a broken team file stops us before any write
    if squad_log and _squad_decisions(mem).exists():
        store.read_text(mem.layout, _squad_decisions(mem))
    stamp = mem.clock.stamp()
    record = archive.new_record(TEAM, stamp, "decision", source, cleaned.split("\n", 1)[0], cleaned)
    archive.write(mem.layout, record)
    entries = [
        replace(entry, trust=trust)
        for s in _sections(cleaned, inbox_file)
        for entry in decision_entries(s, by, stamp, session, record.location)
    ]
    if squad_log:
        _append_to_squad_log(mem, cleaned, by)
    in_wiki = promoted_ids(mem)
    fresh = [e for e in entries if e.id not in in_wiki]
    with store.locked(mem.layout, path):
        cold = store.load(mem.layout, "cold", path) or TierFile(
            "team: decisions", {"tier": "cold", "agent": TEAM}
        )
        for entry in fresh:
            if cold.get(entry.id) is None:
                cold.put(entry)
        store.save(mem.layout, path, cold)
    mem._audit(
        "decision", [e.id for e in entries], ["archive", "cold"], f"recorded from {source}", by=by
    )
    mem._audit_redactions(kinds, "cold")
    return [e.id for e in entries]


def promoted_ids(mem: Memory) -> set[str]:
    """Ids already in the wiki (a decision that reached the wiki is not recorded again)."""
    found: set[str] = set()
    for path in sorted(mem.layout.tier_dir("wiki").glob("*.md")):
        if not store.is_temp(path):
            text = store.read_text(mem.layout, path) or ""
            found.update(re.findall(r"<!-- tiermem id=(\S+)", text))
    return found


def _squad_decisions(mem: Memory) -> Path:
    return mem.layout.squad / "decisions.md"


def _append_to_squad_log(mem: Memory, text: str, by: str) -> None:
    path = _squad_decisions(mem)
    with store.locked(mem.layout, path):
        current = path.read_text(encoding="utf-8") if path.exists() else "# Decisions\n"
        name = f"{by or 'tiermem'}-decision.md"
        if not any(s.kind == "decision" for s in squad_parse.parse_decisions(text)):
            # Plain text: its first line is the title of Squad's canonical dated block.
            first, _, rest = text.strip("\n").partition("\n")
            text = squad_parse.render_decision(mem.clock.stamp()[:10], first.lstrip("# "), rest)
        merged, _ = squad_parse.merge_inbox(current, [(name, text)], mem.clock.stamp()[:10])
        if merged != current:
            store.atomic_write(path, merged)


def merge_inbox(mem: Memory, dry_run: bool = False) -> InboxReport:
    """Merge `.squad/decisions/inbox/*.md` into decisions.md, then remove what was merged."""
    report = InboxReport()
    folder = mem.layout.squad / "decisions" / "inbox"
    files = sorted(p for p in folder.glob("*.md") if p.is_file()) if folder.is_dir() else []
    inbox: list[tuple[str, str]] = []
    for path in files:
        try:
            inbox.append((path.name, path.read_bytes().decode("utf-8")))
        except (OSError, UnicodeDecodeError):
            report.skipped.append(f"{mem.layout.relative(path)}: not readable as UTF-8")
    if not inbox:
        return report
    target = _squad_decisions(mem)
    with store.locked(mem.layout, target):
        current = target.read_text(encoding="utf-8") if target.exists() else "# Decisions\n"
        merged_text, merged = squad_parse.merge_inbox(current, inbox, mem.clock.stamp()[:10])
        report.merged = merged
        if dry_run:
            return report
        if merged_text != current:
            store.atomic_write(target, merged_text)
    texts = dict(inbox)
    for name in merged:
        by = name.split("-", 1)[0]
        report.recorded += record_decisions(
            mem,
            texts[name],
            by=by,
            source=f".squad/decisions/inbox/{name}",
            squad_log=False,
            inbox_file=name,
        )
        (folder / name).unlink(missing_ok=True)
    mem._audit(
        "inbox-merge", report.recorded, ["cold"], "Squad decision inbox merged", files=merged
    )
    return report


# --- supersession ---------------------------------------------------------------------


@dataclass
class _Located:
    entry: Entry
    path: Path
    tier: str


def _structured(mem: Memory) -> list[_Located]:
    found: list[_Located] = []
    for tier in ("cold", "wiki"):
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            if store.is_temp(path):
                continue
            try:
                tier_file = store.load(mem.layout, tier, path)
            except ParseError:
                continue
            if tier_file is not None:
                found += [
                    _Located(e, path, tier) for e in tier_file.entries if is_structured(e.cls)
                ]
    return found


def supersessions(mem: Memory) -> list[tuple[Entry, Entry]]:
    """(older, newer) pairs: an active entry and the newer one on the same subject."""
    located = [x for x in _structured(mem) if x.entry.active]
    groups: dict[str, list[tuple[frozenset[str], _Located]]] = {}
    for item in located:
        key = subject(item.entry.title)
        if key is not None:
            groups.setdefault(item.entry.agent, []).append((key, item))
    pairs: list[tuple[Entry, Entry]] = []
    for members in groups.values():
        members.sort(key=lambda m: (m[1].entry.created, m[1].entry.id))
        for i, (key, older) in enumerate(members):
            newer = next(
                (
                    n
                    for k, n in members[i + 1 :]
                    if same_subject(key, k)
                    and _root(n.entry) != _root(older.entry)
                    # Text from tools or the web never retires what the team decided.
                    and not (n.entry.trust and not older.entry.trust)
                ),
                None,
            )
            if newer is not None and newer.entry.id != older.entry.id:
                pairs.append((older.entry, newer.entry))
    return pairs


def _root(entry: Entry) -> str:
    """The decision an entry is part of (itself when it is whole)."""
    return dict(entry.extra).get("parent", entry.id)


def apply_supersessions(mem: Memory, pairs: list[tuple[Entry, Entry]]) -> None:
    """Mark each older entry superseded with a link forward, and the newer one back."""
    forward = {old.id: new.id for old, new in pairs}
    back: dict[str, list[str]] = {}
    for old, new in pairs:
        back.setdefault(new.id, []).append(old.id)
    for tier in ("cold", "wiki"):
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            if store.is_temp(path):
                continue
            with store.locked(mem.layout, path):
                tier_file = store.load(mem.layout, tier, path)
                if tier_file is None:
                    continue
                changed = False
                for entry in list(tier_file.entries):
                    updated = entry
                    if entry.id in forward and entry.active:
                        updated = replace(
                            updated, status="superseded", superseded_by=forward[entry.id]
                        )
                    if entry.id in back:
                        merged = tuple(sorted(set(entry.supersedes) | set(back[entry.id])))
                        updated = replace(updated, supersedes=merged)
                    if updated != entry:
                        tier_file.put(updated)
                        changed = True
                if changed:
                    store.save(mem.layout, path, tier_file)
    if pairs:
        mem._audit(
            "supersede",
            [i for pair in pairs for i in (pair[0].id, pair[1].id)],
            ["cold", "wiki"],
            "newer entry on the same subject",
        )
