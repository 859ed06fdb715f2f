"""The wiki: durable structured knowledge, one markdown page per subject."""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path

from ..context import Context
from ..errors import NotFoundError, ParseError
from ..hot import tier as hot
from ..results.reading import Page, WikiEntry
from ..storage import archive, files, store, validate
from ..storage.entries import Entry, content_id, render, render_entry
from . import agents, topics
from .classify import classify, is_structured

# A page stays readable and cheap to rewrite: past this size new entries go on a next page of
# the same topic (`release-2`, `release-3`...).
PAGE_MAX_BYTES = 32 * 1024
# New entries stop filling a page a little short of it: later marks (superseded, used) grow
# the entries already there.
PAGE_FILL_BYTES = PAGE_MAX_BYTES - 1024


def page_path(ctx: Context, topic: str) -> Path:
    """The file of a topic."""
    return ctx.layout.tier_file("wiki", topic)


def add(ctx: Context, topic: str, entries: list[Entry]) -> None:
    """Merge entries into a topic's pages (same id: the newer version is kept where it is);
    new entries fill the topic's last page up to PAGE_MAX_BYTES, then a next one."""
    for name, items in _placed(ctx, topic, entries).items():
        path = page_path(ctx, name)
        with store.update(
            ctx.layout, "wiki", path, functools.partial(store.blank, "wiki", name)
        ) as page:
            for entry in items:
                page.put(entry)


def _family(ctx: Context, topic: str) -> list[str]:
    """A topic's pages in order: `topic`, `topic-2`, `topic-3`..., those that exist."""
    names = [topic]
    while page_path(ctx, f"{topic}-{len(names) + 1}").exists():
        names.append(f"{topic}-{len(names) + 1}")
    return names


def _placed(ctx: Context, topic: str, entries: list[Entry]) -> dict[str, list[Entry]]:
    """Which page of the topic each entry goes on: where its id already is, else the last
    page while it holds under PAGE_FILL_BYTES, else a next one. The parts of one long entry
    share a page when they fit on one, and fill the pages in order when they do not."""
    names = _family(ctx, topic)
    holds: dict[str, str] = {}
    size = 0
    for name in names:
        page = store.load(ctx.layout, "wiki", page_path(ctx, name))
        holds |= {e.id: name for e in page.entries} if page else {}
        size = len(render(page).encode("utf-8")) if page else 0
    placed: dict[str, list[Entry]] = {}
    for group in _groups(entries):
        home = next((holds[e.id] for e in group if e.id in holds), None)
        if home is not None:
            placed.setdefault(home, []).extend(group)
            continue
        costs = [len(render_entry(e).encode("utf-8")) + 1 for e in group]
        if size and size + sum(costs) > PAGE_FILL_BYTES:
            names.append(f"{topic}-{len(names) + 1}")  # the group starts a page of its own
            size = 0
        for entry, cost in zip(group, costs, strict=True):
            if size and size + cost > PAGE_FILL_BYTES:
                names.append(f"{topic}-{len(names) + 1}")
                size = 0
            size += cost
            placed.setdefault(names[-1], []).append(entry)
    return placed


def _groups(entries: list[Entry]) -> list[list[Entry]]:
    """Entries with the parts of one long entry together: they share one page."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(_parent(entry) or entry.id, []).append(entry)
    return list(groups.values())


def write(ctx: Context, topic: str, text: str, by: str) -> WikiEntry:
    """An agent's explicit request for a wiki entry (allowed for any class and source)."""
    cleaned, kinds = ctx.clean(text, "wiki text")
    store.load(ctx.layout, "wiki", page_path(ctx, topic))  # a broken page stops us before writing
    first, _, rest = cleaned.strip("\n").partition("\n")
    title = hot.title_of(first) if first.strip() else topic
    body = rest.strip("\n") if first.startswith("#") or rest.strip() else cleaned.strip("\n")
    stamp = ctx.stamp()
    record = archive.new_record(by, stamp, "wiki-request", f"wiki/{topic}.md", topic, cleaned)
    archive.write(ctx.layout, record)
    cls = classify(title, body)
    entry = Entry(
        id=content_id("w", topic, cleaned),
        cls=cls if is_structured(cls) else "convention",
        title=title,
        body=body,
        agent=by,
        created=stamp,
        used=stamp,
        sources=(record.location,),
        tags=(topic,),
        extra=(("requested", "explicit"),),
    )
    add(ctx, topic, [entry])
    ctx.audit("wiki-write", [entry.id], ["archive", "wiki"], "explicit request", topic=topic, by=by)
    ctx.audit_redactions(kinds, "wiki")
    where = ctx.layout.relative(page_path(ctx, topic))
    return WikiEntry(entry.id, topic, entry.cls, entry.title, where)


def pages(ctx: Context) -> list[Page]:
    """Every topic page with its size; a page that cannot be read is skipped, and said."""
    found = []
    for path in files.memory_files(ctx.layout.tier_dir("wiki")):
        try:
            page = store.load(ctx.layout, "wiki", path)
        except ParseError as exc:
            ctx.skipped(f"{ctx.layout.relative(exc.path)}:{exc.line}: {exc.reason}")
            continue
        if page is not None:
            active = sum(1 for e in page.entries if e.active)
            found.append(Page(path.stem, len(page.entries), active, path.stat().st_size))
    return found


def read(ctx: Context, topic: str) -> str:
    """A topic page's markdown."""
    topic = validate.name(topic, "topic")
    text = files.read_text(ctx.layout, page_path(ctx, topic))
    if text is None:
        # The pages by name (none is read: a refusal says one line, whatever their state).
        found = files.memory_files(ctx.layout.tier_dir("wiki"))
        known = ", ".join(p.stem for p in found) or "none yet"
        raise NotFoundError(f"no wiki page {topic!r} (pages: {known})")
    return text


def vocabulary_for(ctx: Context, entries: list[Entry]) -> topics.Vocabulary:
    """The page names entries promoted together can take: the topics there are, the words
    they share; never the name of an agent or of a person on the team, nor a word of the
    team tool's own (`inbox`, `config`) that is not what the team works on."""
    existing = {_base(p.stem) for p in files.memory_files(ctx.layout.tier_dir("wiki"))}
    host = ctx.host
    names = {*agents.with_memory(ctx), *host.agent_folders(), *host.people()}
    names |= host.tool_words()
    names |= {w for e in entries for w in host.name_words(dict(e.extra).get("by", ""))}
    return topics.Vocabulary(entries, existing, names)


_CONTINUED = re.compile(r"-\d+$")


def _base(page: str) -> str:
    """The topic of a page (`release-2` is a next page of `release`)."""
    return _CONTINUED.sub("", page)


def _parent(entry: Entry) -> str:
    return dict(entry.extra).get("parent", "")


def _part_number(entry: Entry) -> int:
    number = dict(entry.extra).get("part", "1/1").split("/")[0]
    return int(number) if number.isdigit() else 1


def _pages_of_parents(
    ctx: Context, entries: list[Entry], vocabulary: topics.Vocabulary
) -> dict[str, str]:
    """One page for all parts of a long entry: where a part already is, else its first part's.

    A page per part would scatter one decision over several topics by the words of each part.
    """
    pages: dict[str, str] = {}
    for entry in sorted(entries, key=_part_number):
        parent = _parent(entry)
        if not parent or parent in pages:
            continue
        with ctx.index.uncounted():  # paths alone
            placed = [d.path for d in ctx.index.parts(parent) if d.tier == "wiki"]
        pages[parent] = _base(Path(placed[0]).stem) if placed else vocabulary.topic(entry)
    return pages


def placements(ctx: Context, entries: list[Entry]) -> dict[str, list[Entry]]:
    """The topic page each entry would go to (tagged with it), by topic; writes nothing."""
    by_topic: dict[str, list[Entry]] = {}
    vocabulary = vocabulary_for(ctx, entries)
    pages_of_parents = _pages_of_parents(ctx, entries, vocabulary)
    for entry in entries:
        topic = pages_of_parents.get(_parent(entry)) or vocabulary.topic(entry)
        tags = entry.tags if topic in entry.tags else (*entry.tags, topic)
        by_topic.setdefault(topic, []).append(replace(entry, tags=tags))
    return by_topic


def promote(
    ctx: Context, entries: list[tuple[str, Entry]], skipped: list[str] | None = None
) -> dict[str, list[str]]:
    """Move (cold file agent, entry) pairs to their topic pages; cold loses them after.

    A page that cannot be read takes nothing: its entries stay in cold, and `skipped` says so.
    """
    by_topic = placements(ctx, [e for _, e in entries])
    for topic, items in sorted(by_topic.items()):
        try:
            add(ctx, topic, items)
        except ParseError as exc:
            del by_topic[topic]
            if skipped is not None:
                skipped.append(f"promotion to wiki/{topic}.md: {exc}")
    placed = {e.id for items in by_topic.values() for e in items}
    moved: dict[str, set[str]] = {}
    for agent, entry in entries:
        if entry.id in placed:
            moved.setdefault(agent, set()).add(entry.id)
    for agent, ids in sorted(moved.items()):
        path = ctx.layout.tier_file("cold", agent)
        with store.update_existing(ctx.layout, "cold", path) as cold:
            if cold is not None:
                cold.remove(ids)
    return {t: [e.id for e in items] for t, items in by_topic.items()}
