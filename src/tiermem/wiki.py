"""The wiki: durable structured knowledge, one markdown page per subject."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from . import archive, files, hot, store, validate
from .classify import classify, is_structured
from .context import Context
from .entries import Entry, content_id
from .errors import NotFoundError, ParseError
from .results import Page, WikiEntry

# Seed subjects: a page is chosen by the words an entry uses most. Projects differ, so an
# entry's own tags win, and anything that matches no subject goes to `general`.
SUBJECTS: dict[str, tuple[str, ...]] = {
    "release": (
        "release",
        "publish",
        "npm",
        "version",
        "versioning",
        "changeset",
        "semver",
        "tag",
        "nuget",
        "changelog",
    ),
    "testing": (
        "test",
        "tests",
        "testing",
        "vitest",
        "jest",
        "xunit",
        "coverage",
        "qa",
        "e2e",
        "playwright",
        "fixture",
    ),
    "ci": ("ci", "workflow", "workflows", "actions", "pipeline", "build", "github actions", "lint"),
    "security": (
        "security",
        "secret",
        "secrets",
        "auth",
        "authentication",
        "authorization",
        "token",
        "pii",
        "permission",
        "oauth",
        "entra",
    ),
    "docs": ("docs", "documentation", "readme", "blog", "guide", "tutorial", "website"),
    "architecture": (
        "architecture",
        "module",
        "modules",
        "sdk",
        "adapter",
        "interface",
        "layer",
        "design",
        "contract",
        "schema",
        "api",
    ),
    "process": (
        "process",
        "proposal",
        "review",
        "pr",
        "prs",
        "branch",
        "merge",
        "triage",
        "issue",
        "issues",
        "workflow",
    ),
    "team": (
        "team",
        "agent",
        "agents",
        "casting",
        "charter",
        "roster",
        "squad",
        "coordinator",
        "spawn",
        "ceremony",
    ),
    "cli": ("cli", "command", "commands", "shell", "repl", "terminal", "flag"),
    "data": ("database", "data", "storage", "sql", "migration", "cache", "table", "entity"),
    "ui": (
        "ui",
        "ux",
        "render",
        "rendering",
        "layout",
        "css",
        "component",
        "theme",
        "font",
        "sprite",
    ),
    "performance": ("performance", "latency", "memory", "speed", "throughput", "benchmark"),
    "dependencies": ("dependency", "dependencies", "package", "packages", "library", "upgrade"),
    "networking": ("network", "server", "client", "multiplayer", "websocket", "http", "protocol"),
}
_WORDS = re.compile(r"[a-z][a-z0-9-]+")


def topic_of(entry: Entry) -> str:
    """The wiki page an entry belongs on: its first tag, else its strongest subject."""
    for tag in entry.tags:
        try:
            return validate.name(tag, "topic")
        except Exception:
            continue
    title_words = Counter(_WORDS.findall(entry.title.lower()))
    body_words = Counter(_WORDS.findall(entry.body.lower()[:4000]))
    best, best_score = "general", 0.0
    for name, words in SUBJECTS.items():
        score = sum(3 * title_words[w] + min(body_words[w], 3) for w in words)
        if score > best_score:
            best, best_score = name, score
    return best


def page_path(ctx: Context, topic: str) -> Path:
    """The file of a topic."""
    return ctx.layout.tier_file("wiki", topic)


def add(ctx: Context, topic: str, entries: list[Entry]) -> None:
    """Merge entries into a topic page (same id: the newer version is kept)."""
    path = page_path(ctx, topic)
    with store.update(ctx.layout, "wiki", path, lambda: store.blank("wiki", topic)) as page:
        for entry in entries:
            page.put(entry)


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
    """Every topic page with its size."""
    found = []
    for path in sorted(ctx.layout.tier_dir("wiki").glob("*.md")):
        if files.is_temp(path):
            continue
        page = store.load(ctx.layout, "wiki", path)
        if page is not None:
            active = sum(1 for e in page.entries if e.active)
            found.append(Page(path.stem, len(page.entries), active, path.stat().st_size))
    return found


def read(ctx: Context, topic: str) -> str:
    """A topic page's markdown."""
    topic = validate.name(topic, "topic")
    text = files.read_text(ctx.layout, page_path(ctx, topic))
    if text is None:
        known = ", ".join(p.topic for p in pages(ctx)) or "none yet"
        raise NotFoundError(f"no wiki page {topic!r} (pages: {known})")
    return text


def _parent(entry: Entry) -> str:
    return dict(entry.extra).get("parent", "")


def _part_number(entry: Entry) -> int:
    number = dict(entry.extra).get("part", "1/1").split("/")[0]
    return int(number) if number.isdigit() else 1


def _pages_of_parents(ctx: Context, entries: list[Entry]) -> dict[str, str]:
    """One page for all parts of a long entry: where a part already is, else its first part's.

    A page per part would scatter one decision over several topics by the words of each part.
    """
    pages: dict[str, str] = {}
    for entry in sorted(entries, key=_part_number):
        parent = _parent(entry)
        if not parent or parent in pages:
            continue
        placed = [d.path for d in ctx.index.parts(parent) if d.tier == "wiki"]
        pages[parent] = Path(placed[0]).stem if placed else topic_of(entry)
    return pages


def promote(
    ctx: Context, entries: list[tuple[str, Entry]], skipped: list[str] | None = None
) -> dict[str, list[str]]:
    """Move (cold file agent, entry) pairs to their topic pages; cold loses them after.

    A page that cannot be read takes nothing: its entries stay in cold, and `skipped` says so.
    """
    by_topic: dict[str, list[Entry]] = {}
    pages_of_parents = _pages_of_parents(ctx, [e for _, e in entries])
    for _, entry in entries:
        topic = pages_of_parents.get(_parent(entry)) or topic_of(entry)
        tags = entry.tags if topic in entry.tags else (*entry.tags, topic)
        by_topic.setdefault(topic, []).append(replace(entry, tags=tags))
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
