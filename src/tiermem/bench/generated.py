"""The stores `tiermem bench speed` measures: generated, in the shape a team leaves.

Each store is written straight to its tier files, as after months of work: per-agent cold
session summaries, a team cold file, wiki pages of decisions and conventions, one hot file
per agent and archive records. The same seed gives the same store.
"""

from __future__ import annotations

import random
import tomllib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from itertools import accumulate, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import StoreError, UsageError
from ..hot import tier as hot
from ..memory import Memory
from ..storage import archive, files
from ..storage.clock import format_time, parse_time
from ..storage.entries import Entry, TierFile, content_id, render
from ..storage.layout import Layout

if TYPE_CHECKING:
    from ..vocabulary import FileTier

NOW = "2026-06-30T18:00:00Z"
HISTORY_DAYS = 240
SEED = "tiermem-bench-speed"
TEAM = "team"
COLD_SHARE = 0.4
WIKI_SHARE = 0.2
HOT_PER_AGENT_MAX = 8
# Every record is fsynced; fsyncs of separate files overlap well, so writers run in threads.
ARCHIVE_WRITERS = 16
ARCHIVE_BATCH = 1000
TARGET_SIZE = 10_000
T = TypeVar("T")


# --- vocabulary (calibrated on the Squad corpora: see vocabulary.toml) ------------------


def _vocabulary() -> dict[str, Any]:
    data = resources.files(__package__).joinpath("vocabulary.toml").read_text(encoding="utf-8")
    return tomllib.loads(data)


_VOCABULARY = _vocabulary()
AGENTS: tuple[str, ...] = tuple(_VOCABULARY["agents"])
DOMAINS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _VOCABULARY["domains"].items()}
COMPONENTS, QUALIFIERS, SUFFIXES, NOUNS, ADJECTIVES, PLATFORMS, EXTENSIONS, DIRS = (
    tuple(_VOCABULARY[key])
    for key in ("components qualifiers suffixes nouns adjectives platforms extensions dirs".split())
)
VERBS: tuple[tuple[str, ...], ...] = tuple(tuple(forms) for forms in _VOCABULARY["verbs"])
WHYS, FINDINGS, SESSION_TITLES, QUERIES, TASKS = (
    tuple(_VOCABULARY[key]) for key in "whys findings session_titles queries tasks".split()
)
WIKI_TITLES: dict[str, tuple[str, ...]] = {
    k: tuple(v) for k, v in _VOCABULARY["wiki_titles"].items()
}
WIKI_CLASSES = ("decision", "convention", "contract", "policy", "learning")
WIKI_CLASS_WEIGHTS = (40, 30, 14, 3, 13)
TOPICS_PER_ENTRY = 15
TOPICS_MIN = 200
# Zipf exponents: some topics are worked on far more than others; words are flatter.
TOPIC_SKEW = 0.8
WORD_SKEW = 0.5


class Pool(Generic[T]):
    """Items drawn with Zipf-like weights: the first are everywhere, the last are rare."""

    def __init__(self, items: Sequence[T], exponent: float) -> None:
        self.items = list(items)
        self.cum = list(accumulate(1.0 / (rank + 1) ** exponent for rank in range(len(items))))

    def pick(self, rng: random.Random) -> T:
        """One item."""
        return self.items[bisect_left(self.cum, rng.random() * self.cum[-1])]


@dataclass(frozen=True)
class Topic:
    """One thing the team works on, with the names, paths and issues that come with it."""

    phrase: str
    page: str
    idents: tuple[str, ...]
    funcs: tuple[str, ...]
    paths: tuple[str, ...]
    issues: tuple[str, ...]


def _camel(words: Sequence[str]) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words)


def _topic(rng: random.Random, page: str, domain: str, component: str) -> Topic:
    stem = [domain, component]
    idents = tuple(_camel([*stem, rng.choice(SUFFIXES)]) for _ in range(rng.randint(2, 4)))
    funcs = tuple(f"{rng.choice(VERBS)[0]}_{domain}_{component}" for _ in range(rng.randint(1, 3)))
    paths = tuple(
        f"{rng.choice(DIRS)}/{domain}/{component}{rng.choice(('', '-utils', '.test'))}."
        f"{rng.choice(EXTENSIONS)}"
        for _ in range(rng.randint(2, 3))
    )
    issues = tuple(f"#{rng.randint(100, 99_999)}" for _ in range(rng.randint(3, 8)))
    qualifier = rng.choice(QUALIFIERS) if rng.random() < 0.3 else ""
    return Topic(f"{qualifier} {domain} {component}".strip(), page, idents, funcs, paths, issues)


def _topics(rng: random.Random, count: int) -> list[Topic]:
    """Distinct (domain, component) topics: larger stores cover more of the project."""
    combos = [(page, d, c) for page, ds in DOMAINS.items() for d in ds for c in COMPONENTS]
    return [_topic(rng, *combo) for combo in rng.sample(combos, min(count, len(combos)))]


def _verb(prose: Prose, form: int) -> str:
    return prose.verbs.pick(prose.rng)[form]


# How each template slot is drawn; a template only pays for the slots it uses.
SLOTS: dict[str, Callable[[Prose, Topic], str]] = {
    "topic": lambda p, t: t.phrase,
    "Topic": lambda p, t: t.phrase[:1].upper() + t.phrase[1:],
    "page": lambda p, t: t.page,
    "word": lambda p, t: p.rng.choice(t.phrase.split()),
    "ident": lambda p, t: p.rng.choice(t.idents),
    "func": lambda p, t: p.rng.choice(t.funcs),
    "path": lambda p, t: p.rng.choice(t.paths),
    "path2": lambda p, t: p.rng.choice(t.paths),
    "issue": lambda p, t: p.rng.choice(t.issues),
    "pr": lambda p, t: f"PR #{p.rng.randint(100, 4999)}",
    "noun": lambda p, t: p.nouns.pick(p.rng),
    "noun2": lambda p, t: p.nouns.pick(p.rng),
    "adj": lambda p, t: p.adjs.pick(p.rng),
    "adj2": lambda p, t: p.adjs.pick(p.rng),
    "verb": lambda p, t: _verb(p, 0),
    "Verb": lambda p, t: _verb(p, 0).capitalize(),
    "verbed": lambda p, t: _verb(p, 1),
    "verb3": lambda p, t: _verb(p, 2),
    "verbing": lambda p, t: _verb(p, 3),
    "agent": lambda p, t: p.rng.choice(AGENTS),
    "Agent": lambda p, t: p.rng.choice(AGENTS).capitalize(),
    "platform": lambda p, t: p.rng.choice(PLATFORMS),
    "flag": lambda p, t: f"--{p.nouns.pick(p.rng)}-{p.rng.choice(('mode', 'limit', 'dir'))}",
    "version": lambda p, t: f"v{p.rng.randint(0, 3)}.{p.rng.randint(0, 24)}.{p.rng.randint(0, 15)}",
    "ms": lambda p, t: str(p.rng.randint(2, 900)),
}


class _Slots(dict[str, str]):
    """Template values drawn on first use."""

    def __init__(self, prose: Prose, topic: Topic, when: str) -> None:
        super().__init__(date=when[:10])
        self.prose = prose
        self.topic = topic

    def __missing__(self, key: str) -> str:
        value = self[key] = SLOTS[key](self.prose, self.topic)
        return value


class Prose:
    """Realistic project text from a seeded generator: the same seed, the same store."""

    rng: random.Random
    nouns: Pool[str]
    adjs: Pool[str]
    verbs: Pool[tuple[str, ...]]

    def __init__(self, seed: str, topics: int = TOPICS_MIN) -> None:
        self.rng = random.Random(seed)
        self.topics = _topics(self.rng, topics)
        by_page: dict[str, list[Topic]] = {}
        for topic in self.topics:
            by_page.setdefault(topic.page, []).append(topic)
        self.page_topics = {page: Pool(ts, TOPIC_SKEW) for page, ts in by_page.items()}
        self.any_topic = Pool(self.topics, TOPIC_SKEW)
        self.nouns = Pool(NOUNS, WORD_SKEW)
        self.adjs = Pool(ADJECTIVES, WORD_SKEW)
        self.verbs = Pool(VERBS, WORD_SKEW)

    def topic(self, page: str | None = None) -> Topic:
        """A topic, the popular ones more often (of one wiki page, when given)."""
        pool = self.any_topic if page is None else self.page_topics[page]
        return pool.pick(self.rng)

    def fill(self, template: str, topic: Topic, when: str = NOW) -> str:
        """A template with its slots drawn for this topic."""
        return template.format_map(_Slots(self, topic, when))

    def findings(self, topic: Topic, low: int, high: int) -> list[str]:
        """Some sentences of what a session found, mostly about its topic."""
        count = self.rng.randint(low, high)
        return [self.fill(self.rng.choice(FINDINGS), self._nearby(topic)) for _ in range(count)]

    def _nearby(self, topic: Topic) -> Topic:
        # Sessions wander: about one sentence in five is about something else.
        return topic if self.rng.random() < 0.8 else self.topic()

    def query(self) -> str:
        """A search an agent would type."""
        return self.fill(self.rng.choice(QUERIES), self.topic()).replace("`", "")

    def task(self) -> str:
        """A task a coordinator would hand out."""
        return self.fill(self.rng.choice(TASKS), self.topic())


def prose_for(entries: int) -> Prose:
    """The text source of a store size: its topics, and so its queries, depend on the size."""
    return Prose(f"{SEED}-{entries}", max(TOPICS_MIN, entries // TOPICS_PER_ENTRY))


# --- generating a store ---------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How many index documents of each kind a store of `entries` documents gets."""

    entries: int
    hot_per_agent: int
    cold: int
    wiki: int
    archive: int


def plan(entries: int) -> Plan:
    """Split a size into hot, cold (40%), wiki (20%) and archive (40%) documents."""
    if entries < 10 * len(AGENTS):
        raise UsageError(f"a store needs at least {10 * len(AGENTS)} entries, not {entries}")
    per_agent = min(HOT_PER_AGENT_MAX, max(2, entries // (50 * len(AGENTS))))
    rest = entries - per_agent * len(AGENTS)
    cold, wiki = round(rest * COLD_SHARE), round(rest * WIKI_SHARE)
    return Plan(entries, per_agent, cold, wiki, rest - cold - wiki)


def _stamp(n: int, total: int) -> str:
    """The n-th of `total` times spread evenly over the history: unique and ordered."""
    start = parse_time(NOW) - timedelta(days=HISTORY_DAYS)
    return format_time(start + timedelta(seconds=n * HISTORY_DAYS * 86400 // max(total, 1)))


def _session_entry(prose: Prose, owner: str, n: int, stamp: str) -> Entry:
    topic = prose.topic()
    title = prose.fill(prose.rng.choice(SESSION_TITLES), topic, stamp).replace("`", "")
    lines = [f"Task: {prose.fill(prose.rng.choice(TASKS), topic)}"]
    lines.append(f"Why: {prose.fill(prose.rng.choice(WHYS), topic)}")
    lines += [f"- {s}" for s in prose.findings(topic, 3, 7)]
    if prose.rng.random() < 0.3:
        lines.append(f"Open: {prose.fill('{adj} {noun} in {path} ({issue})', topic)}")
    roll = prose.rng.random()
    cls = "policy" if owner == TEAM and roll < 0.03 else "decision" if roll < 0.15 else "learning"
    return Entry(
        id=content_id("c", owner, title, str(n)),
        cls=cls,
        title=title,
        body="\n".join(lines),
        agent=owner,
        created=stamp,
        used=stamp,
        session=hot.session_id(stamp),
    )


def _cold_file(prose: Prose, owner: str, owners: int, first: int, total: int) -> TierFile:
    """Cold entries number first, first + owners, ...: each owner's share, oldest first."""
    tier_file = TierFile(f"{owner}: cold memory", {"tier": "cold", "agent": owner})
    for n in range(first, total, owners):
        tier_file.entries.append(_session_entry(prose, owner, n, _stamp(n, total)))
    return tier_file


def _wiki_entry(prose: Prose, page: str, n: int, stamp: str) -> Entry:
    topic = prose.topic(page)
    cls = prose.rng.choices(WIKI_CLASSES, weights=WIKI_CLASS_WEIGHTS)[0]
    title = prose.fill(prose.rng.choice(WIKI_TITLES[cls]), topic)
    body = "\n".join(f"- {s}" for s in prose.findings(topic, 1, 4))
    author = prose.rng.choice((*AGENTS, TEAM))
    return Entry(
        id=content_id("w", page, title, str(n)),
        cls=cls,
        title=title,
        body=body,
        agent=author,
        created=stamp,
        used=stamp,
        tags=(page,),
        sources=(f"archive/{author}/{content_id('a', title, str(n))}.md",),
    )


def _wiki_pages(prose: Prose, total: int) -> Iterator[TierFile]:
    """Wiki pages whose sizes follow how popular their topics are."""
    counts = Counter(prose.topic().page for _ in range(total))
    n = 0
    for page in sorted(counts):
        tier_file = TierFile(f"{page}: wiki", {"tier": "wiki", "topic": page})
        for _ in range(counts[page]):
            tier_file.entries.append(_wiki_entry(prose, page, n, _stamp(n, total)))
            n += 1
        yield tier_file


def _hot_file(prose: Prose, agent: str, count: int) -> TierFile:
    stamp = format_time(parse_time(NOW) - timedelta(hours=2))
    tier_file = hot.new_file(agent, hot.session_id(stamp), stamp)
    topic = prose.topic()
    texts = [
        ("task", prose.fill(prose.rng.choice(TASKS), topic)),
        ("why", prose.fill(prose.rng.choice(WHYS), topic)),
        ("talking-to", prose.rng.choice(AGENTS)),
        *[(slot, prose.findings(topic, 1, 1)[0]) for slot in ("decision", "action", "action")],
        ("blocker", prose.fill("Waiting on {agent} for the {noun} in {path} ({issue})", topic)),
        ("note", " ".join(prose.findings(topic, 2, 3))),
    ]
    session = tier_file.meta["session"]
    for n, (slot, text) in enumerate(texts[:count]):
        tier_file.entries.append(hot.make_entry(agent, slot, text, stamp, session, n))
    return tier_file


def _record(prose: Prose, n: int, total: int) -> archive.Record:
    """Raw session text: one heading, so one record is one index document."""
    agent, stamp, topic = AGENTS[n % len(AGENTS)], _stamp(n, total), prose.topic()
    title = prose.fill(prose.rng.choice(SESSION_TITLES), topic, stamp).replace("`", "")
    paragraph = " ".join(prose.findings(topic, 4, 10))
    bullets = "\n".join(f"- {s}" for s in prose.findings(topic, 1, 5))
    follow = prose.rng.choice(("Next", "Follow-ups", "Open items", "Todo", "Later"))
    text = f"## {title}\n_{stamp}, {agent}_\n\n{paragraph}\n\n**{follow}:**\n{bullets}\n"
    return archive.new_record(agent, stamp, "session", f"hot/{agent}.md", title, text)


def _write_archive(layout: Layout, prose: Prose, total: int) -> None:
    records = (_record(prose, n, total) for n in range(total))
    with ThreadPoolExecutor(ARCHIVE_WRITERS) as pool:
        while batch := list(islice(records, ARCHIVE_BATCH)):
            written = sum(pool.map(lambda r: archive.write(layout, r), batch))
            if written != len(batch):
                raise StoreError("generated archive records collided; the store would be short")


def _write_tier(layout: Layout, tier: FileTier, name: str, tier_file: TierFile) -> None:
    files.atomic_write(layout.tier_file(tier, name), render(tier_file))


def generate(root: Path, entries: int, say: Callable[[str], None]) -> Plan:
    """Write a store of `entries` index documents under root (which must be empty)."""
    sizes = plan(entries)
    Memory.init(root, now=NOW)
    layout = Layout(root)
    prose = prose_for(entries)
    owners = (*AGENTS, TEAM)
    for agent in AGENTS:
        _write_tier(layout, "hot", agent, _hot_file(prose, agent, sizes.hot_per_agent))
    for first, owner in enumerate(owners):
        _write_tier(layout, "cold", owner, _cold_file(prose, owner, len(owners), first, sizes.cold))
    say(f"  cold written ({sizes.cold:,} entries)")
    for page in _wiki_pages(prose, sizes.wiki):
        _write_tier(layout, "wiki", page.meta["topic"], page)
    say(f"  wiki written ({sizes.wiki:,} entries); archiving {sizes.archive:,} records")
    _write_archive(layout, prose, sizes.archive)
    return sizes


@dataclass(frozen=True)
class Workload:
    """The queries and tasks one store is measured with."""

    queries: tuple[tuple[str, str], ...]  # (agent, query)
    tasks: tuple[tuple[str, str], ...]  # (agent, task)


def workload(entries: int, runs: int) -> Workload:
    """`runs` different searches and spawn tasks, drawn like the store's own text."""
    prose = prose_for(entries)
    queries = tuple((AGENTS[n % len(AGENTS)], prose.query()) for n in range(runs))
    tasks = tuple((AGENTS[(n * 7) % len(AGENTS)], prose.task()) for n in range(runs))
    return Workload(queries, tasks)
