"""`tiermem bench speed`: latency and throughput on generated stores of 1 K to 100 K entries.

Each store is written straight to its tier files, in the shape a team leaves after months
of work: per-agent cold session summaries, a team cold file, wiki pages of decisions and
conventions, one hot file per agent and archive records. Then the store is measured three
ways: its first index build, calls in process, and whole `tiermem` commands.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import accumulate, islice, pairwise
from pathlib import Path
from typing import Any, Generic, TypeVar

from .. import archive, files, hot
from ..clock import format_time, parse_time
from ..entries import Entry, TierFile, content_id, render
from ..errors import StoreError, UsageError
from ..layout import Layout
from ..memory import Memory

NOW = "2026-06-30T18:00:00Z"
HISTORY_DAYS = 240
SEED = "tiermem-bench-speed"
AGENTS = (
    "ada",
    "bo",
    "cleo",
    "dax",
    "eli",
    "fern",
    "gus",
    "hana",
    "ivo",
    "juno",
    "kai",
    "lena",
    "milo",
    "nia",
    "otto",
    "pia",
    "quinn",
    "rex",
    "sol",
    "tess",
)
TEAM = "team"
COLD_SHARE = 0.4
WIKI_SHARE = 0.2
HOT_PER_AGENT_MAX = 8
# Every record is fsynced; fsyncs of separate files overlap well, so writers run in threads.
ARCHIVE_WRITERS = 16
ARCHIVE_BATCH = 1000
TARGET_SIZE = 10_000
T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """A speed goal: a figure, in ms, that should stay under a limit on the reference store."""

    figure: str
    limit_ms: float


TARGETS = (
    Target("cli_hot_show_ms", 150.0),
    Target("cli_search_ms", 150.0),
    Target("search_p95_ms", 10.0),
    Target("spawn_p95_ms", 30.0),
    Target("cli_spawn_ms", 200.0),
)
_LIMITS = {t.figure: t.limit_ms for t in TARGETS}

# (figure, label, decimals): the rows of the report, in order.
ROWS: tuple[tuple[str, str, int], ...] = (
    ("documents", "documents indexed", 0),
    ("files", "memory files", 0),
    ("store_mb", "store size (MB, markdown)", 1),
    ("generate_s", "generate store (s)", 2),
    ("build_s", "first index build (s)", 2),
    ("build_docs_per_s", "build throughput (docs/s)", 0),
    ("sync_noop_p50_ms", "no-op sync p50 (ms)", 2),
    ("search_first_ms", "search, first use, median (ms)", 2),
    ("search_p50_ms", "search p50 (ms)", 2),
    ("search_p95_ms", "search p95 (ms)", 2),
    ("search_hits_mean", "search hits per query (limit 5)", 1),
    ("spawn_first_ms", "spawn, first use, median (ms)", 1),
    ("spawn_p50_ms", "spawn assembly p50 (ms)", 1),
    ("spawn_p95_ms", "spawn assembly p95 (ms)", 1),
    ("spawn_tokens_p50", "spawn prompt tokens p50", 0),
    ("cli_baseline_ms", "`python -c pass` median (ms)", 1),
    ("cli_hot_show_ms", "`tiermem hot show` median (ms)", 1),
    ("cli_search_ms", "`tiermem search` median (ms)", 1),
    ("cli_spawn_ms", "`tiermem spawn --auto` median (ms)", 1),
    ("cli_hot_show_ratio", "`hot show` / baseline", 2),
    ("cli_search_ratio", "`search` / baseline", 2),
    ("cli_spawn_ratio", "`spawn` / baseline", 2),
)
# Counts and the baseline say what was measured; growth is about the costs.
GROWTH_FIGURES = tuple(
    key
    for key, _, _ in ROWS
    if key not in ("documents", "files", "store_mb", "search_hits_mean", "cli_baseline_ms")
)

STEADY_NOTE = (
    f"Clock fixed at {NOW}. Search and spawn refresh the last-use time of what they return "
    "(a file write and a re-index): each query and task ran once untimed first ('first use'), "
    "so the timed runs are the steady state and write nothing. Whole commands ran once untimed "
    "first, with TIERMEM_NOW set to the same time and a private bytecode cache."
)


# --- vocabulary -----------------------------------------------------------------------
# Calibrated on the Squad corpora: there, no content word is in more than about a third of
# the sections, and the vocabulary grows with the project (new names, paths and issues).


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Domain words by the wiki page their knowledge is filed on.
DOMAINS = {
    "release": _words(
        "publish changeset provenance semver changelog nuget tagging versioning prerelease canary"
    ),
    "testing": _words(
        "vitest jest xunit harness coverage fixture snapshot playwright mock e2e smoke flakiness"
    ),
    "ci": _words("workflow matrix runner artifact lint nightly pipeline buildkite actions"),
    "security": _words("token secret oauth permission credential signing sandbox audit csp entra"),
    "docs": _words("readme tutorial docsite guide blog reference sample cookbook"),
    "architecture": _words(
        "adapter sdk schema event plugin module interface contract layer kernel"
    ),
    "process": _words("triage branch review proposal milestone label rota retro standup"),
    "team": _words("casting charter spawn roster coordinator ceremony handoff scribe persona"),
    "cli": _words("repl nap doctor shell prompt terminal completion argv flags init"),
    "data": _words("migration storage session sqlite index backup export import retention"),
    "ui": _words("sprite font theme glyph palette layout viewport cursor console widget"),
    "performance": _words("render startup allocation profiler throughput latency footprint warmup"),
    "dependencies": _words("lockfile package upgrade renovate dependabot vendoring peer pinning"),
    "networking": _words(
        "websocket http multiplayer ratelimit broadcast webhook grpc reconnect proxy dns"
    ),
}
COMPONENTS = _words(
    "pipeline bot suite gate step scanner callback model site layer surface registry bus"
    " template history command runner provider atlas renderer loop limiter scheduler queue"
    " client server store parser loader watcher exporter importer router mapper resolver"
    " planner indexer emitter guard hook plugin worker daemon api view panel dialog table grid"
    " cache config manifest report budget"
)
QUALIFIERS = _words(
    "windows linux macos arm64 nightly preview legacy v2 offline headless staging mobile"
)
SUFFIXES = _words(
    "Provider Manager Runner Resolver Store Client Adapter Factory Builder Watcher Parser"
    " Registry Queue Loader Writer Guard Planner Emitter Handler Options Context Snapshot"
    " Reporter Scheduler Service Controller Middleware Policy Spec Result"
)
NOUNS = _words(
    "lockfile manifest retry timeout fixture snapshot flag config schema payload header cursor"
    " buffer socket worker thread process handle path glob checksum hash signature tag branch"
    " commit changelog artifact bundle binary image container volume scope role cookie"
    " redirect endpoint route middleware registry query filter sort page limit offset batch"
    " stream chunk frame glyph palette viewport scroll charter roster budget summary decision"
    " convention contract ceremony label milestone approval rebase conflict banner locale"
    " timezone clock feed quota backoff jitter heartbeat handshake allocation leak trace log"
    " cache token secret session prompt migration index template plugin adapter provider"
    " callback webhook scheduler broadcast regression benchmark profile release review merge"
    " issue hook layout theme font sprite queue cursor mutex semaphore deadlock watchdog"
    " fallback default override alias shim polyfill codegen typings enum union generic"
    " decorator annotation serializer deserializer encoder decoder parser lexer tokenizer"
    " formatter linter transpiler bundler minifier sourcemap loader resolver walker visitor"
    " emitter listener subscriber publisher channel topic partition offset replica shard"
    " lease lock ttl expiry eviction prefetch warmup cooldown spinner progress prompt wizard"
    " dialog modal tooltip toast badge avatar thumbnail upload download mirror registry proxy"
    " tunnel certificate keychain vault nonce salt digest checksum quota budget estimate"
    " histogram percentile sample trace span metric alert dashboard runbook incident outage"
    " rollback rollout canary flagset experiment cohort baseline threshold guardrail"
)
VERBS = tuple(
    tuple(line.split())  # base, past, third person, gerund
    for line in """
fix fixed fixes fixing
cache cached caches caching
retry retried retries retrying
validate validated validates validating
parse parsed parses parsing
render rendered renders rendering
flush flushed flushes flushing
pin pinned pins pinning
bump bumped bumps bumping
split split splits splitting
merge merged merges merging
drop dropped drops dropping
rename renamed renames renaming
move moved moves moving
guard guarded guards guarding
debounce debounced debounces debouncing
batch batched batches batching
stream streamed streams streaming
rotate rotated rotates rotating
sign signed signs signing
publish published publishes publishing
revert reverted reverts reverting
skip skipped skips skipping
resolve resolved resolves resolving
load loaded loads loading
emit emitted emits emitting
schedule scheduled schedules scheduling
throttle throttled throttles throttling
migrate migrated migrates migrating
refactor refactored refactors refactoring
document documented documents documenting
deprecate deprecated deprecates deprecating
serialize serialized serializes serializing
normalize normalized normalizes normalizing
reconnect reconnected reconnects reconnecting
prefetch prefetched prefetches prefetching
inline inlined inlines inlining
memoize memoized memoizes memoizing
shard sharded shards sharding
quarantine quarantined quarantines quarantining
backfill backfilled backfills backfilling
vendor vendored vendors vendoring
sandbox sandboxed sandboxes sandboxing
index indexed indexes indexing
compress compressed compresses compressing
hydrate hydrated hydrates hydrating
dedupe deduped dedupes deduping
paginate paginated paginates paginating
""".strip().splitlines()
)
ADJECTIVES = _words(
    "flaky stale slow missing duplicated broken racy noisy strict lenient empty oversized"
    " truncated unsigned expired orphaned cold warm blocking nondeterministic case-sensitive"
    " locale-dependent unbounded redundant inconsistent undocumented brittle leaky silent"
    " partial stuck hung corrupted misconfigured outdated deprecated experimental unstable"
    " ambiguous overlapping circular recursive lazy eager verbose quiet flaky-on-retry"
    " intermittent reproducible"
)
PLATFORMS = (
    "windows-latest",
    "ubuntu-22.04",
    "macos-14",
    "node 20",
    "node 22",
    ".NET 8",
    "python 3.12",
    "arm64 runners",
    "the devcontainer",
    "Codespaces",
    "Firefox",
    "Safari",
    "staging",
    "WSL",
    "Alpine",
    "iOS",
    "Android",
    "Edge",
)
EXTENSIONS = _words("ts ts ts tsx py cs md yml json go rs")
DIRS = _words(
    "src src/cli src/core packages/sdk/src lib tests scripts .github/workflows docs tools app"
)
WHYS = (
    "users hit it on every {platform} install",
    "{page} review asked for it before {version}",
    "{agent} is blocked on it ({issue})",
    "keeps {noun} predictable",
    "last release shipped {adj} {noun}",
    "support tickets about {topic} doubled",
    "needed for {version}",
    "{issue} has been open since {date}",
)
FINDINGS = (
    "Fixed {adj} {noun} in `{path}` ({issue}).",
    "`{ident}` now {verb3} {noun} before {noun2}; see {pr}.",
    "Root cause for {issue}: `{func}` {verbed} {noun} while {noun2} was {adj}.",
    "Decision: {verb} {noun} through `{ident}`, not {noun2}.",
    "Open question: why is {noun} {adj} on {platform}? ({issue})",
    "Released {version} with {topic} {noun} changes.",
    "{Agent} reviewed {pr}; {noun2} needs a follow-up.",
    "`{ident}` only {verb3} {noun} when `{flag}` is set.",
    "Moved {noun} handling from `{path}` into `{path2}`.",
    "Measured {topic}: {ms} ms p95 on {platform} after {verbing} {noun}.",
    "Waiting for {agent} on {noun} ({issue}); workaround in `{func}`.",
    "Paired with {agent} on `{ident}`: {noun2} was {adj} due to a {adj2} {noun}.",
    "New test for {issue} in `{path}` covers {noun} on {platform}.",
    "Rule: never {verb} {noun} before {noun2} is ready.",
    "Reverted {pr} because `{func}` {verbed} {noun} twice.",
    "Renamed `{ident}` option {noun} to {noun2}.",
    "{Topic}: {noun} and {noun2} share one `{ident}` now.",
    "Perf regression in {topic} traced to {adj} {noun} ({issue}).",
    "Docs for `{func}` got a {noun} example.",
    "Dropped {adj} {noun} from {topic}; nothing depended on it.",
    "CI on {platform} went {adj} after {verbing} {noun}; pinned {version}.",
    "Agreed with {agent}: {topic} keeps {noun} per {noun2}.",
    "Tried {verbing} {noun} in `{func}`, too {adj}; backed out.",
    "Cleanup: {verbed} {ms} {noun} entries in `{path}`.",
    "{issue} closed: {noun} {verb3} correctly on {platform}.",
    "Learned: `{flag}` disables {noun} {verbing} in {topic}.",
)
SESSION_TITLES = (
    "{date} session: {topic} {noun} ({issue})",
    "{date} session: {verbed} {adj} {noun} in {topic}",
    "{date} session: `{ident}` {noun} work",
    "{date} session: {topic} for {version}",
    "{date} session: {issue} {noun} follow-up",
)
WIKI_TITLES = {
    "decision": ("Use `{ident}` for {topic} {noun}", "{Verb} {noun} in {topic} ({issue})"),
    "convention": ("{Topic}: name each {noun} after `{ident}`", "{Topic} {noun}s live in `{path}`"),
    "contract": ("`{ident}` contract: {noun} {verb3} {noun2}", "{Topic} API: `{func}` {verb3}"),
    "policy": ("Never {verb} {noun} without {noun2} review", "Always {verb} {topic} {noun}s in CI"),
    "learning": ("{Topic}: {noun} is {adj} on {platform}", "Why `{func}` {verb3} {noun}"),
}
WIKI_CLASSES = ("decision", "convention", "contract", "policy", "learning")
WIKI_CLASS_WEIGHTS = (40, 30, 14, 3, 13)
QUERIES = (
    "{ident} {noun}",
    "{topic}",
    "{issue} {word}",
    "why {verbed} {noun} {word}",
    "{func} {adj}",
    "{topic} {noun} {platform}",
    "{noun} {noun2} decision",
)
TASKS = (
    "Fix {adj} {noun} in {path} ({issue})",
    "Resume {topic}: {noun} is {adj} on {platform}",
    "Implement {ident} per {page} conventions",
    "Investigate regression in {func} after {version}",
    "Add {noun} support to {topic}",
    "Review {pr} touching {topic} {noun}",
    "Continue debugging {issue} in {topic}",
    "Write the {topic} ADR for {noun} handling",
)
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


def _write_tier(layout: Layout, tier: str, name: str, tier_file: TierFile) -> None:
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


# --- measuring ------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _ms(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _latency(
    name: str, calls: Sequence[Callable[[], object]], settle: Callable[[], object]
) -> dict[str, float]:
    """Each call once untimed (first use), then again timed: the steady state."""
    first = [_ms(call) for call in calls]
    settle()  # the last untimed call's refresh is re-indexed by the next sync: not timed
    steady = [_ms(call) for call in calls]
    return {
        f"{name}_first_ms": statistics.median(first),
        f"{name}_p50_ms": percentile(steady, 50),
        f"{name}_p95_ms": percentile(steady, 95),
    }


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


def _build(root: Path) -> tuple[float, int]:
    """Seconds of the first index build, and how many documents it indexed."""
    mem = Memory(root, now=NOW)
    try:
        start = time.perf_counter()
        mem.sync()
        seconds = time.perf_counter() - start
        documents = sum(row[2] for row in mem.context.index.totals())
    finally:
        mem.close()
    return seconds, documents


def in_process(root: Path, work: Workload, runs: int) -> dict[str, float]:
    """Sync, search and spawn latency, calling `Memory` directly."""
    mem = Memory(root, now=NOW)
    hits: list[int] = []
    prompt_tokens: list[int] = []

    def search(agent: str, query: str) -> Callable[[], object]:
        return lambda: hits.append(len(mem.search(query, agent=agent, limit=5)))

    def spawn(agent: str, task: str) -> Callable[[], object]:
        return lambda: prompt_tokens.append(mem.spawn(agent, task, auto=True).tokens["total"])

    try:
        sync = [_ms(mem.sync) for _ in range(runs + 1)][1:]
        figures = {"sync_noop_p50_ms": percentile(sync, 50)}
        figures |= _latency("search", [search(a, q) for a, q in work.queries], mem.sync)
        figures |= _latency("spawn", [spawn(a, t) for a, t in work.tasks], mem.sync)
    finally:
        mem.close()
    figures["search_hits_mean"] = statistics.fmean(hits)
    figures["spawn_tokens_p50"] = percentile(prompt_tokens, 50)
    return figures


def tiermem_command() -> list[str]:
    """How to start the CLI in a new process."""
    if (Path(__file__).resolve().parents[1] / "__main__.py").exists():
        return [sys.executable, "-m", "tiermem"]
    return [str(Path(sys.executable).with_name("tiermem"))]


def _environment(root: Path) -> dict[str, str]:
    """The store and clock for a child process, with a bytecode cache of its own.

    Without it, a stale `__pycache__` that may not be rewritten (PYTHONDONTWRITEBYTECODE,
    a read-only install) would be compiled again in every timed run.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "TIERMEM_ROOT": str(root),
        "TIERMEM_NOW": NOW,
        "PYTHONPYCACHEPREFIX": str(root / ".pycache"),
    }
    return env


def _run(argv: Sequence[str], root: Path) -> float:
    env = _environment(root)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip()
        raise StoreError(f"`{' '.join(argv)}` exited {done.returncode}: {error}")
    return elapsed


def _settle(root: Path) -> None:
    """Index what the untimed runs wrote, so no timed run pays for it."""
    mem = Memory(root, now=NOW)
    try:
        mem.sync()
    finally:
        mem.close()


def whole_commands(root: Path, work: Workload, runs: int) -> dict[str, float]:
    """Median wall time of whole `tiermem` processes, and of an empty Python beside them."""
    cli = tiermem_command()
    (agent, query), (spawn_agent, task) = work.queries[0], work.tasks[0]
    commands = {
        "baseline": [sys.executable, "-c", "pass"],
        "hot_show": [*cli, "hot", "show", agent],
        "search": [*cli, "search", query],
        "spawn": [*cli, "spawn", spawn_agent, "--task", task, "--auto"],
    }
    for argv in commands.values():
        _run(argv, root)  # bytecode and page caches, and the last-use refresh it writes
    _settle(root)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):  # interleaved, so drift in the machine hits every command alike
        for name, argv in commands.items():
            times[name].append(_run(argv, root))
    medians = {name: statistics.median(values) for name, values in times.items()}
    figures = {f"cli_{name}_ms": value for name, value in medians.items()}
    for name in ("hot_show", "search", "spawn"):
        figures[f"cli_{name}_ratio"] = medians[name] / medians["baseline"]
    return figures


def _footprint(root: Path) -> tuple[int, int]:
    """Markdown files of the store and their bytes."""
    files = size = 0
    for folder, _, names in os.walk(Layout(root).memory):
        for name in names:
            if name.endswith(".md"):
                files += 1
                size += os.stat(os.path.join(folder, name)).st_size
    return files, size


@dataclass
class StoreReport:
    """Every figure of one generated store."""

    entries: int
    figures: dict[str, float] = field(default_factory=dict)


def measure_store(entries: int, runs: int, say: Callable[[str], None]) -> StoreReport:
    """Generate, index and time one store; the store is deleted afterwards."""
    report = StoreReport(entries)
    work = workload(entries, runs)
    with tempfile.TemporaryDirectory(prefix=f"tiermem-speed-{entries}-") as folder:
        root = Path(folder)
        say(f"[{entries:,}] generating store")
        start = time.perf_counter()
        generate(root, entries, say)
        report.figures["generate_s"] = time.perf_counter() - start
        files, size = _footprint(root)
        report.figures |= {"files": files, "store_mb": size / 1e6}
        say(f"[{entries:,}] generated in {report.figures['generate_s']:.1f} s; first index build")
        build_s, documents = _build(root)
        report.figures |= {
            "build_s": build_s,
            "documents": documents,
            "build_docs_per_s": documents / build_s,
        }
        say(f"[{entries:,}] indexed {documents:,} documents in {build_s:.1f} s; in process")
        report.figures |= in_process(root, work, runs)
        say(f"[{entries:,}] whole commands ({runs} runs each)")
        report.figures |= whole_commands(root, work, runs)
    return report


def growth(reports: Sequence[StoreReport]) -> list[dict[str, Any]]:
    """For each pair of consecutive sizes, how much each cost grew."""
    steps = []
    for small, large in pairwise(reports):
        ratios = {
            key: large.figures[key] / small.figures[key]
            for key in GROWTH_FIGURES
            if small.figures.get(key) and key in large.figures
        }
        steps.append(
            {
                "from": small.entries,
                "to": large.entries,
                "size_ratio": large.entries / small.entries,
                "ratios": ratios,
            }
        )
    return steps


def checks(reports: Sequence[StoreReport]) -> list[dict[str, Any]]:
    """Every target against every size (the targets are set for the 10,000-entry store)."""
    return [
        {
            "figure": t.figure,
            "limit_ms": t.limit_ms,
            "entries": r.entries,
            "value": r.figures[t.figure],
            "met": r.figures[t.figure] < t.limit_ms,
            "reference": r.entries == TARGET_SIZE,
        }
        for t in TARGETS
        for r in reports
    ]


# --- reporting ------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--sizes takes comma-separated entry counts, not {text!r}") from None
    if not sizes:
        raise UsageError("--sizes needs at least one size")
    return sorted(set(sizes))


def _cell(report: StoreReport, key: str, decimals: int) -> str:
    value = report.figures.get(key)
    if value is None:
        return "-"
    missed = key in _LIMITS and value >= _LIMITS[key]
    return f"{value:,.{decimals}f}" + (" *" if missed else "  ")


def print_text(data: dict[str, Any], reports: Sequence[StoreReport]) -> None:
    """The report as tables for people."""
    machine = data["machine"]
    print(
        f"tiermem bench speed: {data['runs']} runs per figure, sizes in index documents; "
        f"{machine['cpus']} CPUs, load {machine['load_before']} before, "
        f"{machine['load_after']} after"
    )
    print(STEADY_NOTE)
    print()
    header = "".join(f"{r.entries:>14,}" for r in reports)
    print(f"{'figure':<38}{header}   target (10,000 entries)")
    for key, label, decimals in ROWS:
        cells = "".join(f"{_cell(r, key, decimals):>14}" for r in reports)
        target = f"< {_LIMITS[key]:.0f} ms" if key in _LIMITS else ""
        print(f"{label:<38}{cells}   {target}")
    print("* misses the target (targets are set for 10,000 entries; other sizes for comparison)")
    for step in data["growth"]:
        print()
        print(f"growth {step['from']:,} -> {step['to']:,} entries (x{step['size_ratio']:.3g} size)")
        labels = {key: label for key, label, _ in ROWS}
        for key, ratio in step["ratios"].items():
            print(f"  {labels[key]:<38}x{ratio:.2f}")
    reference = [c for c in data["checks"] if c["reference"]]
    if reference:
        missed = [c["figure"] for c in reference if not c["met"]]
        print()
        print(
            f"targets at {TARGET_SIZE:,} entries: {len(reference) - len(missed)} of "
            f"{len(reference)} met" + (f"; missed: {', '.join(missed)}" if missed else "")
        )


def _load() -> float:
    """The one-minute load average (0 where the system does not tell)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def _peak_rss_mb() -> float:
    """The most memory this process held, in MB (0 where the system does not tell)."""
    try:
        import resource
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1e6 if sys.platform == "darwin" else 1e3), 1)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_speed(args: argparse.Namespace) -> int:
    """Measure every size and print the figures (text or JSON)."""
    sizes = _sizes(args.sizes)
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    load_before = _load()
    reports = [measure_store(entries, args.runs, _say) for entries in sizes]
    data: dict[str, Any] = {
        "runs": args.runs,
        # Wall times depend on what else the machine runs; say how busy it was.
        "machine": {
            "cpus": os.cpu_count() or 0,
            "load_before": load_before,
            "load_after": _load(),
            "peak_rss_mb": _peak_rss_mb(),
        },
        "now": NOW,
        "note": STEADY_NOTE,
        "command": tiermem_command(),
        "targets": {t.figure: {"limit_ms": t.limit_ms, "entries": TARGET_SIZE} for t in TARGETS},
        "stores": [{"entries": r.entries, **r.figures} for r in reports],
        "growth": growth(reports),
        "checks": checks(reports),
    }
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print_text(data, reports)
    return 0
