"""`tiermem report`: one self-contained HTML page of what a team's agents remember.

The page shows, for a person who has never opened `.squad/memory/`: each agent's memory per
tier against its budgets; what a Squad spawn loads today against what a tiermem spawn loads;
Scribe's work over time, from the audit trail, as charts; the wiki by topic; the entries
that need a look (citing files git no longer tracks, superseded, expired); recent spawns
from this clone's log; optionally the spawn a task would get, entry by entry; and every
entry, paged and searchable, with where it came from and which spawns loaded it.

It is one file: no server, no network. CSS, script and charts (inline SVG drawn from
`charts`) are in the page, so it opens from disk and as a CI artifact. Jinja2 renders it
with autoescaping on: memory text is untrusted, and reaches the page only as escaped text
(the entries for the browser as JSON in a data block, which the script reads with
`textContent`, never as markup).
"""

from __future__ import annotations

import io
import os
import re
import statistics
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Generic, TextIO, TypeVar

from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from ..context import Context
from ..errors import ParseError, TiermemError, UsageError
from ..index.protocol import Doc
from ..options import SpawnRequest
from ..relevance import candidates
from ..relevance.pinning import POLICY_SHARE
from ..render import charts
from ..results.figures import TierRow, Totals
from ..results.report import ReportResult
from ..results.spawn import SpawnRecord, SpawnResult
from ..scribe.maintenance import budgeted
from ..spawn import log as spawn_log
from ..spawn.assemble import assemble
from ..storage import archive, files, safepath, store, validate
from ..storage.entries import Entry, render_entry
from ..storage.layout import TEAM
from ..team import agents, citations, provenance
from ..text.shown import control
from ..upkeep import stats
from ..vocabulary import FILE_TIERS, RECALL_TIERS, TIERS
from . import trail

PAGE_NAME = "report.html"
TEXT_SHOWN = 3000  # characters of an entry's text in the page (search reads it whole)
LIST_SHOWN = 100  # rows of a list before the rest is left to the entry browser
TITLES_SHOWN = 200  # entry titles per wiki topic
RECENT_SPAWNS = 20
_TIERS = FILE_TIERS
_ALL_TIERS = TIERS
AUDIT_NAME = "tiermem-audit.jsonl"
T = TypeVar("T")


# --- what the page shows --------------------------------------------------------------------


@dataclass
class EntryView:
    """One entry (a long entry's parts joined), as the page shows it."""

    id: str
    agent: str
    tier: str
    path: str
    cls: str
    status: str
    title: str
    text: str
    created: str
    used: str
    session: str
    sources: list[str]
    superseded_by: str
    trust: str
    tokens: int
    bytes: int
    parts: int = 1
    part_ids: list[str] = field(default_factory=list)
    topic: str = ""
    stale: list[str] = field(default_factory=list)
    spawns: int = 0
    origin: str = ""

    def as_json(self) -> dict[str, Any]:
        """The entry for the page's browser (short keys: the page carries thousands)."""
        cut = len(self.text) > TEXT_SHOWN
        return {
            "i": self.id,
            "a": self.agent,
            "t": self.tier,
            "c": self.cls,
            "s": self.status,
            "h": self.title,
            "x": self.text[:TEXT_SHOWN] + ("\n…" if cut else ""),
            "k": self.tokens,
            "b": self.bytes,
            "d": self.created[:10],
            "u": self.used[:10],
            "p": self.path,
            "o": self.origin,
            "se": self.session,
            "src": self.sources,
            "sb": self.superseded_by,
            "st": self.stale,
            "n": self.spawns,
            "pt": self.parts,
            "tp": self.topic,
            "tr": self.trust,
        }


@dataclass(frozen=True)
class Gauge:
    """A measure against its budget (budget 0: none)."""

    used: int
    budget: int
    unit: str

    @property
    def percent(self) -> float:
        """How full, in percent (capped at 100 for drawing)."""
        return min(100.0, 100.0 * self.used / self.budget) if self.budget else 0.0

    @property
    def over(self) -> bool:
        """Over its budget."""
        return bool(self.budget) and self.used > self.budget


@dataclass(frozen=True)
class Cell:
    """One agent's memory in one tier."""

    entries: int = 0
    bytes: int = 0
    tokens: int = 0
    gauge: Gauge | None = None


@dataclass
class AgentRow:
    """One agent's memory across the tiers."""

    agent: str
    cells: dict[str, Cell]
    squad_tokens: int | None = None
    spawn_most: int = 0  # hot + the spawn budget: the most a spawn of it loads
    spawn_median: int | None = None  # median total of its logged spawns
    spawns: int = 0


class Capped(Generic[T]):
    """A list the page shows the first few of, and how many there are in all: the store's
    size never decides how much of it is held in memory."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.items: list[T] = []
        self.count = 0

    def append(self, item: T) -> None:
        self.count += 1
        if len(self.items) < self.keep:
            self.items.append(item)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, where: slice) -> list[T]:
        return self.items[where]


@dataclass
class Topic:
    """A wiki topic as a table of contents shows it: its name in words, its pages (a topic
    that outgrew one page goes on to `-2`), its current entries, then those retired (titles;
    the browser shows the text)."""

    name: str
    entries: Capped[EntryView]
    retired: Capped[EntryView]
    active: int = 0
    bytes: int = 0
    title: str = ""
    pages: list[str] = field(default_factory=list)


@dataclass
class Considered:
    """An entry a spawn preview weighed: what it is, its score, and what became of it."""

    id: str
    tier: str
    title: str
    cls: str
    tokens: int
    score: float | None
    rank: int | None
    verdict: str  # loaded, left out, not loaded
    why: str
    stale: list[str] = field(default_factory=list)


@dataclass
class Preview:
    """The spawn a task would get, entry by entry."""

    agent: str
    task: str
    result: SpawnResult
    budget: int
    rows: list[Considered]


@dataclass
class Page:
    """Everything the template draws."""

    root: str
    generated: str
    config: dict[str, int]
    totals: dict[str, Totals]
    records: int
    agents: list[AgentRow]
    squad_chart: charts.Chart
    history: list[charts.Chart]
    history_totals: dict[str, int]
    topics: list[Topic]
    stale: Capped[EntryView]
    superseded: Capped[EntryView]
    expired: Capped[EntryView]
    git: bool
    recent: list[SpawnRecord]
    spawns_logged: int
    preview: Preview | None
    browser: Iterable[Markup]
    left_out: dict[str, Capped[str]]  # lines of the audit trail and spawn log not drawn


# --- building the page --------------------------------------------------------------------


def build(
    ctx: Context, out: Path, agent: str | None, task: str | None, local: bool = False
) -> ReportResult:
    """Write the report page into `out`; return where, and what it holds.

    The page is written as it is drawn, and the entry browser's data goes through a
    temporary file: memory stays bounded whatever the size of the store (a store of 100,000
    entries makes a page of some 60 MB).
    """
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        page = collect(ctx, agent, task, spool)
        path = out / PAGE_NAME
        with files.atomic_stream(path) as handle:
            written = _write(render(page), handle)
    entries = sum(t.entries for name, t in page.totals.items() if name != "archive")
    return ReportResult(
        path=str(path),
        bytes=written,
        entries=entries,
        records=page.records,
        agents=len(page.agents),
        stale=len(page.stale),
        superseded=len(page.superseded),
        preview=page.preview is not None,
        local=local,
    )


def output_folder(ctx: Context, out: str | Path | None) -> tuple[Path, bool]:
    """Where the page goes, made if missing; and whether it is the default folder.

    By default that is `.squad/memory/tiermem-local/report/`: local to this clone and
    git-ignored (the store ignores `tiermem-local/`, and the folder ignores itself), reached
    from `.squad` down through no link, as every path of the store. A folder given with
    `--out` is the user's choice, but never a symbolic link, nor reached through one from the
    repository's root down: a committed link must not carry the page out of the repository.
    """
    if out is None:
        folder = ctx.layout.local / REPORT_FOLDER
        files.ensure_folder(folder)
        ignore = folder / ".gitignore"
        if not files.exists(ignore):
            files.atomic_write(ignore, _SELF_IGNORED)
        return folder, True
    folder = Path(os.path.abspath(Path(out).expanduser()))
    _refuse_links(Path(ctx.layout.root), folder)
    if safepath.SQUAD in folder.parts:
        files.ensure_folder(folder)
    else:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise UsageError(f"{folder} is not a folder (nothing was written)") from None
        except OSError as exc:
            raise UsageError(f"cannot make {folder}: {exc.strerror}") from None
    if safepath.kind(folder) != "folder":
        raise UsageError(f"{folder} is not a folder (nothing was written)")
    return folder, False


REPORT_FOLDER = "report"
_SELF_IGNORED = "# tiermem report: made again by `tiermem report`, never committed\n*\n"


def _refuse_links(root: Path, folder: Path) -> None:
    """Refuse a folder that is a link, or lies below the root through one."""
    parts = [folder]
    if folder.is_relative_to(root):
        below = folder.relative_to(root).parts
        parts = [root.joinpath(*below[: n + 1]) for n in range(len(below))]
    for part in parts:
        if safepath.kind(part) == "link":
            raise UsageError(
                f"{part} is a symbolic link; tiermem writes no page through a link "
                "(nothing was written)"
            )


def _write(pieces: Iterable[str], handle: BinaryIO) -> int:
    """The page's pieces into a file, in batches (a control character in memory shown as
    its escape, never written into the page); how many bytes were written."""
    written, batch, held = 0, [], 0
    for piece in pieces:
        batch.append(control(piece))
        held += len(piece)
        if held >= 1 << 20:
            written += handle.write("".join(batch).encode("utf-8"))
            batch, held = [], 0
    return written + handle.write("".join(batch).encode("utf-8"))


def collect(
    ctx: Context, agent: str | None = None, task: str | None = None, spool: TextIO | None = None
) -> Page:
    """What the page shows, read from the store (and this clone's spawn log): every entry
    once, its browser row into `spool` (memory when none is given)."""
    ctx.sync()
    logged, log_left = spawn_log.read_checked(ctx.layout)
    rows = stats.rows(ctx)
    browser = _Browser(spool if spool is not None else io.StringIO())
    seen = _Seen()
    loaded_by = _loaded_by(logged)
    for view in _entries(ctx):
        view.spawns = len(set().union(*(loaded_by.get(i, ()) for i in view.part_ids)))
        browser.add(view)
        seen.add(view)
    records = sum(browser.add(view) for view in _records(ctx))
    drawn, trail_left = trail.checked(ctx)
    preview = _preview(ctx, agent, task) if agent and task else None
    agent_rows = _agent_rows(ctx, rows, logged)
    config = ctx.config
    return Page(
        root=str(ctx.layout.root),
        generated=ctx.stamp(),
        config={
            "hot": config.hot.budget_bytes,
            "cold": config.cold.budget_bytes,
            "spawn": config.spawn.budget_tokens,
            "ttl": config.cold.ttl_days,
        },
        totals={tier: stats.totals_of(rows).get(tier, Totals(0, 0, 0)) for tier in _ALL_TIERS},
        records=records,
        agents=agent_rows,
        squad_chart=_squad_chart(agent_rows),
        history=trail.history(drawn),
        history_totals=trail.totals(drawn),
        topics=seen.topics(ctx),
        stale=seen.stale,
        superseded=seen.superseded,
        expired=seen.expired,
        git=citations.tracked(ctx.layout) is not None,
        recent=list(reversed(logged[-RECENT_SPAWNS:])),
        spawns_logged=len(logged),
        preview=preview,
        browser=browser,
        left_out={
            "audit": _capped(f"{AUDIT_NAME} {why}" for why in trail_left),
            "spawns": _capped(f"{spawn_log.LOG_NAME}:{why}" for why in log_left),
        },
    )


def _capped(items: Iterable[str]) -> Capped[str]:
    kept: Capped[str] = Capped(LIST_SHOWN)
    for item in items:
        kept.append(item)
    return kept


def render(page: Page) -> Iterator[str]:
    """The page as HTML, piece by piece (autoescaped: memory text is untrusted)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("tiermem", "report"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda v: f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"
    return env.get_template("report.html.j2").generate(page=page, shown=LIST_SHOWN)


class _Browser:
    """The entry browser's rows: written to a spool as they are made, read back as the page
    is written, as one JSON array that is safe inside a script element."""

    def __init__(self, spool: TextIO) -> None:
        self.spool = spool
        self.rows = 0

    def add(self, view: EntryView) -> int:
        self.spool.write(htmlsafe_json_dumps(view.as_json(), sort_keys=True) + "\n")
        self.rows += 1
        return 1

    def __iter__(self) -> Iterator[Markup]:
        self.spool.seek(0)
        yield Markup("[")
        for n, line in enumerate(self.spool):
            yield Markup(("," if n else "") + line.rstrip("\n"))
        yield Markup("]")


class _Seen:
    """What the page lists of the entries (the first few of each list, and counts), kept as
    the entries go by without their text."""

    def __init__(self) -> None:
        self.stale: Capped[EntryView] = Capped(LIST_SHOWN)
        self.superseded: Capped[EntryView] = Capped(LIST_SHOWN)
        self.expired: Capped[EntryView] = Capped(LIST_SHOWN)
        self.pages: dict[str, Topic] = {}
        self.written: Counter[str] = Counter()  # words the wiki's titles write with capitals

    def add(self, view: EntryView) -> None:
        view.text = ""  # in the browser's row already; the lists show titles
        if view.stale:
            self.stale.append(view)
        if view.status == "superseded":
            self.superseded.append(view)
        elif view.status == "expired":
            self.expired.append(view)
        if view.tier == "wiki":
            self._topic(view)

    def _topic(self, view: EntryView) -> None:
        """A wiki entry under its topic (`release-2` is a next page of `release`)."""
        name = re.sub(r"-\d+$", "", view.topic)
        topic = self.pages.get(name)
        if topic is None:
            topic = self.pages[name] = Topic(name, Capped(TITLES_SHOWN), Capped(TITLES_SHOWN))
        if view.topic not in topic.pages:
            topic.pages.append(view.topic)
        (topic.retired if view.status else topic.entries).append(view)
        topic.active += not view.status
        words = re.findall(r"[\w+#.]+", view.title)
        self.written.update(w for w in words if w[1:] != w[1:].lower())

    def topics(self, ctx: Context) -> list[Topic]:
        """Each wiki topic in the order of their names, with its pages and their size."""
        found = []
        for name, topic in sorted(self.pages.items()):
            topic.pages.sort(key=lambda page: (len(page), page))
            topic.bytes = sum(_size(ctx.layout.tier_file("wiki", page)) for page in topic.pages)
            topic.title = _in_words(name, self.written)
            found.append(topic)
        return found


def _in_words(topic: str, written: Counter[str]) -> str:
    """A topic's name as a heading, each word as the team writes it in the wiki's titles
    (`CLI`, `LinkedIn`): `proposal-first` is "Proposal first"."""
    shown = []
    for word in topic.replace("_", "-").split("-"):
        forms = [(n, form) for form, n in written.items() if form.lower() == word]
        shown.append(max(forms)[1] if forms else word)
    text = " ".join(shown)
    return text[:1].upper() + text[1:]


# --- entries ------------------------------------------------------------------------------


def _entries(ctx: Context) -> Iterator[EntryView]:
    """Every entry of hot, cold and the wiki, a long entry's parts joined, file by file."""
    known = citations.tracked(ctx.layout)
    origins: dict[str, str] = {}
    for tier in _TIERS:
        for path in files.memory_files(ctx.layout.tier_dir(tier)):
            rel = ctx.layout.relative(path)
            items = _load(ctx, tier, path)
            tokens = dict(
                zip(
                    [e.id for e in items],
                    ctx.index.token_counts([e.text for e in items]),
                    strict=True,
                )
            )
            for group in _groups(items):
                view = _view(ctx, tier, path.stem, rel, group, tokens, origins)
                if known is not None:
                    view.stale = known.missing(citations.cited_paths(f"{view.title}\n{view.text}"))
                yield view


def _load(ctx: Context, tier: str, path: Path) -> list[Entry]:
    try:
        loaded = store.load(ctx.layout, tier, path)
    except ParseError:
        return []  # a damaged file: the sync before has warned about it
    return loaded.entries if loaded else []


def _groups(items: list[Entry]) -> list[list[Entry]]:
    """Entries of a file, the parts of a long entry together, in file order."""
    groups: dict[str, list[Entry]] = {}
    for item in items:
        groups.setdefault(dict(item.extra).get("parent", item.id), []).append(item)
    return list(groups.values())


def _view(
    ctx: Context,
    tier: str,
    name: str,
    rel: str,
    group: list[Entry],
    tokens: dict[str, int],
    origins: dict[str, str],
) -> EntryView:
    first = group[0]
    whole = dict(first.extra).get("parent", first.id)
    text = "\n\n".join(e.text for e in group) if len(group) > 1 else first.text
    title = first.title
    body = text.split("\n", 1)[1] if "\n" in text else ""
    sources = list(first.sources)
    return EntryView(
        id=whole,
        agent=first.agent or (name if tier != "wiki" else TEAM),
        tier=tier,
        path=rel,
        cls=first.cls,
        status=first.status,
        title=title,
        text=body,
        created=first.created,
        used=max(e.used for e in group),
        session=first.session,
        sources=sources,
        superseded_by=first.superseded_by,
        trust=first.trust,
        tokens=sum(tokens.get(e.id, 0) for e in group),
        bytes=sum(len(e.text.encode("utf-8")) for e in group),
        parts=len(group),
        part_ids=[e.id for e in group],
        topic=name if tier == "wiki" else "",
        origin=_origin(ctx, tier, first, origins),
    )


def _origin(ctx: Context, tier: str, entry: Entry, seen: dict[str, str]) -> str:
    if not entry.sources:
        doc = Doc(entry.id, tier, entry.agent, "", entry.title, "", session=entry.session)
        return provenance.origin(ctx, doc)
    first = entry.sources[0]
    if first not in seen:
        seen[first] = provenance.record_origin(ctx, first)
    said = seen[first]
    more = len(entry.sources) - 1
    if more:
        said += f" (and {more} more source{'s' if more > 1 else ''})"
    return f"{said}; session {entry.session}" if entry.session else said


# An owner's archive of up to this much text is read at once; a larger one (a long history
# imported, 50 MB in 100,000 chunks) a record at a time, so its chunks are never all held.
_OWNER_AT_ONCE_BYTES = 8_000_000


def _records(ctx: Context) -> Iterator[EntryView]:
    """Every archive record (no text: the page lists them; search reads them), one owner's
    records at a time, so that only one owner's indexed chunks are held at once, or one
    record's, for an owner whose archive is large."""
    held = {a: (n, size) for a, tier, n, size, _ in ctx.index.totals() if tier == "archive"}
    owners = sorted(held)
    batches = [owners] if "" in owners else [[owner] for owner in owners]
    for batch in batches:
        one = batch[0] if len(batch) == 1 else None
        if one is not None and held[one][1] > _OWNER_AT_ONCE_BYTES:
            found = _record_by_record(ctx, one)
            if len(found) == held[one][0]:  # else some lie outside its folder: read them all
                yield from found
                continue
        docs = ctx.index.docs(tier="archive", agent=one)
        chunks: dict[str, list[Doc]] = defaultdict(list)
        for doc in docs:
            chunks[doc.path].append(doc)
        del docs
        for rel, parts in sorted(chunks.items()):
            yield _record(ctx, rel, parts)


def _record_by_record(ctx: Context, owner: str) -> list[EntryView]:
    """An owner's records in its archive folder, the chunks of one read at a time."""
    try:
        folder = ctx.layout.tier_dir("archive") / validate.owner(owner)
        paths = files.memory_files(folder)
    except TiermemError:
        return []
    found = []
    for path in paths:
        rel = ctx.layout.relative(path)
        parts = [d for d in ctx.index.docs(tier="archive", path=rel) if d.agent == owner]
        if parts:
            found.append(_record(ctx, rel, parts))
    return found


def _record(ctx: Context, rel: str, parts: list[Doc]) -> EntryView:
    fields = archive.header(ctx.layout.root / rel)
    first = parts[0]
    return EntryView(
        id=first.id.split("#")[0],
        agent=first.agent,
        tier="archive",
        path=rel,
        cls=fields.get("kind", ""),
        status="purged" if fields.get("purged") else "",
        title=first.title or fields.get("title", ""),
        text="",
        created=first.created,
        used="",
        session="",
        sources=[fields.get("source", "")],
        superseded_by="",
        trust="",
        tokens=sum(p.tokens for p in parts),
        bytes=int(fields.get("bytes", "0") or 0),
        parts=len(parts),
        origin=provenance.describe(fields) if fields else "",
    )


def _loaded_by(logged: list[SpawnRecord]) -> dict[str, set[int]]:
    """Entry id (or part id) -> the logged spawns that loaded it (by their place in the log)."""
    found: dict[str, set[int]] = defaultdict(set)
    for n, spawn in enumerate(logged):
        for entry_id in spawn.entries:
            found[entry_id].add(n)
    return found


# --- per agent and tier ---------------------------------------------------------------------


def _agent_rows(ctx: Context, rows: list[TierRow], logged: list[SpawnRecord]) -> list[AgentRow]:
    """Each agent's memory per tier (the figures `tiermem stats` prints), its budgets, and
    its spawns: Squad's today, tiermem's at most and as logged."""
    config = ctx.config
    names = sorted(({r.agent for r in rows} | set(agents.with_memory(ctx))) - {""})
    squad = {load.agent: load.tokens for load in ctx.host.loads([n for n in names])}
    cells = {(r.agent, r.tier): Cell(r.entries, r.bytes, r.tokens) for r in rows}
    found = []
    for name in names:
        mine: dict[str, Cell] = {t: cells.get((name, t), Cell()) for t in _ALL_TIERS}
        mine["hot"] = _with_gauge(mine["hot"], _hot_bytes(ctx, name), config.hot.budget_bytes)
        if name != TEAM:
            summaries = _summary_bytes(ctx, name)
            mine["cold"] = _with_gauge(mine["cold"], summaries, config.cold.budget_bytes)
        totals = [s.tokens.get("total", 0) for s in logged if s.agent == name]
        found.append(
            AgentRow(
                agent=name,
                cells=mine,
                squad_tokens=squad.get(name),
                spawn_most=mine["hot"].tokens + config.spawn.budget_tokens,
                spawn_median=int(statistics.median(totals)) if totals else None,
                spawns=len(totals),
            )
        )
    return found


def _with_gauge(cell: Cell, used: int, budget: int) -> Cell:
    return Cell(cell.entries, cell.bytes, cell.tokens, Gauge(used, budget, "bytes"))


def _hot_bytes(ctx: Context, agent: str) -> int:
    """What the hot budget counts of an agent's hot tier (`hot.tier.size`)."""
    from ..hot import tier

    try:
        hot = store.load(ctx.layout, "hot", ctx.layout.tier_file("hot", agent))
    except (ParseError, OSError, ValueError):
        return 0
    return tier.size(hot) if hot is not None else 0


def _summary_bytes(ctx: Context, agent: str) -> int:
    """What Scribe holds to the cold budget: the session summaries, as written."""
    try:
        cold = store.load(ctx.layout, "cold", ctx.layout.tier_file("cold", agent))
    except ParseError:
        return 0
    summaries = [e for e in cold.entries if budgeted(e)] if cold else []
    return sum(len(render_entry(e).encode("utf-8")) + 1 for e in summaries)


def _squad_chart(rows: list[AgentRow]) -> charts.Chart:
    compared = [
        (r.agent, float(r.squad_tokens), float(r.spawn_most)) for r in rows if r.squad_tokens
    ]
    return charts.hbars(
        "tokens a spawn loads: Squad today against the most a tiermem spawn loads",
        compared,
        ("Squad today", "tiermem at most"),
    )


# --- the wiki -------------------------------------------------------------------------------


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# --- a spawn preview ------------------------------------------------------------------------


def _preview(ctx: Context, agent: str, task: str) -> Preview:
    """The spawn `spawn AGENT --task T --auto` builds, and why each entry is in or out.

    The spawn says what it loaded, why (the relevance engine's reason for each), and what it
    left out for lack of room; the matches come
    from the same candidates the relevance engine weighs (the index's best matches in the
    agent's, the team's and the wiki's scopes, 1 for the best).
    """
    result = assemble(ctx, SpawnRequest(agent=agent, task=task, auto=True))
    budget = ctx.config.spawn.budget_tokens
    found = candidates.matches(ctx.index, agent, task, RECALL_TIERS)
    ranked = sorted(found, key=lambda c: -c.match)
    place = {c.doc.id: (n + 1, round(c.match, 4)) for n, c in enumerate(ranked)}
    loaded = {s.id for s in result.sources}
    reasons = {s.id: s.why for s in result.sources}  # the relevance engine's own words
    left = set(result.left_out)
    shown = [s.id for s in result.sources] + result.left_out
    shown += [c.doc.id for c in ranked if c.doc.id not in loaded | left][:10]
    docs = {d.id: d for d in ctx.index.by_ids(shown)}
    rows = []
    for doc_id in dict.fromkeys(shown):
        doc = docs.get(doc_id)
        if doc is None:
            continue
        rank, score = place.get(doc_id, (None, None))
        verdict, why = _verdict(doc, doc_id in loaded, doc_id in left, result, score, budget)
        why = reasons.get(doc_id) or why
        stale = citations.stale_paths(ctx, doc)
        rows.append(
            Considered(
                doc_id, doc.tier, doc.title, doc.cls, doc.tokens, score, rank, verdict, why, stale
            )
        )
    return Preview(agent, task, result, budget, rows)


def _verdict(
    doc: Doc, loaded: bool, left: bool, result: SpawnResult, score: float | None, budget: int
) -> tuple[str, str]:
    """Loaded, left out or not loaded, and why, as the spawn's rules tell it."""
    if loaded and doc.cls == "policy":
        return (
            "loaded",
            f"a policy that bears on the task: pinned first, within {POLICY_SHARE:.0%} of the room",
        )
    if loaded and score is None:
        return "loaded", "one of the newest entries: the next piece of work often builds on them"
    if loaded:
        return "loaded", "its passages hold the most the task may use for their tokens"
    if left and doc.cls == "policy":
        return "left out", f"a policy beyond the {POLICY_SHARE:.0%} of the room kept for policies"
    if left:
        return (
            "left out",
            "it matches the task, but memory's room "
            f"({result.memory_room:,} of the {budget:,}-token budget) went to passages "
            "worth more per token",
        )
    if doc.tier not in result.tiers:
        return "not loaded", f"the situation ({result.situation}) does not load {doc.tier}"
    return "not loaded", "its passages held less for their tokens than those loaded"
