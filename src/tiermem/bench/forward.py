"""Forward probes (METRICS.md): does a spawn carry what the team already knew and then used?

A forward probe is a history event whose first section holds key facts already written in
earlier sessions. During a replay, just before that event's session is written, the agent's
spawn for the event's heading is asked for, and scored by the share of those known facts its
prompt holds. Four baselines see the same earlier text at the same moment, each cut to the
prompt's tokens: the agent's newest history (`recent`), plain BM25 over the agent's history
and the decisions (`bm25`), the best packing knowing the facts (`oracle`), and everything
uncapped (`everything`).
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..render.progress import track
from ..storage.clock import format_time
from ..text.facts import key_facts, present_facts
from . import carried_in_prose
from .corpus import Event, Session, load_events, sessions
from .line_packer import LinePool
from .probes import MIN_PROBE_FACTS, SECTION_HEADING, WORDS, clean_heading, first_section
from .replay import ReplaySummary, mem_agent, replay

# A known fact: one the team had already written down before the probe's session.
MIN_KNOWN_FACTS = 2
BM25_K1 = 1.2
BM25_B = 0.75
_SECTION_START = re.compile(r"^#{2,3} ", re.MULTILINE)


@dataclass(frozen=True)
class ForwardProbe:
    """An agent about to write a section, and the facts of it the team already knew."""

    agent: str
    query: str
    known: frozenset[str]
    seq: int


@dataclass(frozen=True)
class Section:
    """A part of earlier text from a `##` or `###` heading to the next, as baselines cut it."""

    text: str
    tokens: int
    facts: frozenset[str]
    words: Counter[str]


@dataclass(frozen=True)
class Covered:
    """The share of a probe's known facts a text holds: anywhere, and carried in prose."""

    raw: float
    prose: float
    present: frozenset[str] = frozenset()
    in_prose: frozenset[str] = frozenset()


@dataclass
class ProbeFigures:
    """One probe's coverage and tokens for tiermem and each baseline, and how readable
    tiermem's prompt is."""

    probe: ForwardProbe
    tokens: int
    situation: str
    covered: dict[str, Covered]  # tiermem and each baseline
    everything_tokens: int
    readable: carried_in_prose.Readability
    prompt: str = field(repr=False, default="")
    budget: int = 0  # the spawn's budget, which the prompt's tokens are a share of
    left_out: bool = False  # the prompt lists memory as left out for room

    def page(self) -> str:
        """The probe's prompt under what it was asked and which known facts it carries, for
        reading a prompt beside its figures."""
        mine = self.covered["tiermem"]
        facts = sorted(self.probe.known)
        marks = [
            f"{f} ({'prose' if f in mine.in_prose else 'raw' if f in mine.present else '-'})"
            for f in facts
        ]
        return (
            f"<!-- {self.probe.agent}: {self.probe.query}\n"
            f"known: {'; '.join(marks)}\n"
            f"raw {mine.raw:.3f}, in prose {mine.prose:.3f}, {self.tokens} tokens -->\n\n"
            + self.prompt
        )


def sections_of(text: str) -> list[str]:
    """The sections of a text: each starts at a `##` or `###` heading (text before the first
    heading is a section of its own)."""
    starts = [m.start() for m in _SECTION_START.finditer(text)]
    bounds = [0, *starts] if not starts or starts[0] != 0 else starts
    parts = [text[a:b] for a, b in zip(bounds, [*bounds[1:], len(text)], strict=True)]
    return [p.strip() for p in parts if p.strip()]


class Written:
    """What the team had written before the current session: its text, to tell which facts
    already occur in it, and the agents that had written history."""

    def __init__(self) -> None:
        self.writers: set[str] = set()
        self._text: list[str] = []
        self._joined = ""

    def add(self, events: Iterable[Event]) -> None:
        """Take in one session's events (after its probes were asked)."""
        for event in events:
            self._text.append(event.text.lower())
            if event.kind == "history" and event.agent:
                self.writers.add(mem_agent(event.agent))
        self._joined = ""

    def occurs(self, fact: str) -> bool:
        """Whether a (lower-cased) fact occurs anywhere in the earlier text, as METRICS.md
        says: inside a longer path or name too, and whether or not it was a key fact there."""
        if not self._joined and self._text:
            self._joined = "\n".join(self._text)
        return fact in self._joined


def probe_of(event: Event, written: Written) -> ForwardProbe | None:
    """The forward probe of a history event, or None when it makes none."""
    if event.kind != "history" or not event.agent or mem_agent(event.agent) not in written.writers:
        return None
    section = first_section(event.text)
    if section is None:
        return None
    facts = key_facts(section)
    known = {f for f in facts if written.occurs(f)}
    query = clean_heading(section.splitlines()[0][len(SECTION_HEADING) :])
    if len(facts) < MIN_PROBE_FACTS or len(known) < MIN_KNOWN_FACTS or not query:
        return None
    return ForwardProbe(mem_agent(event.agent), query, frozenset(known), event.seq)


class EarlierText(Written):
    """What the team had written before the current session, cut into sections."""

    def __init__(self, count: Callable[[list[str]], list[int]]) -> None:
        super().__init__()
        self.count = count
        self.history: dict[str, list[Section]] = {}
        self.decisions: list[Section] = []
        self.source = carried_in_prose.Source()
        self.lines = LinePool(count)
        self._seen_decisions: set[str] = set()

    def add(self, events: Iterable[Event]) -> None:
        """Take in one session's events (after its probes were asked)."""
        events = list(events)
        super().add(events)
        for event in events:
            self.source.add(event.text)
            if event.kind == "history" and event.agent:
                agent = mem_agent(event.agent)
                cut = sections_of(event.text)
                self.history.setdefault(agent, []).extend(self._made(cut))
                self.lines.add_sections(cut)
                self.lines.add_session(agent, event.text)
            elif event.kind in ("decision", "inbox"):
                # The team's tools rewrite and merge the decision log: a repeat is folded.
                fresh = [s for s in sections_of(event.text) if s not in self._seen_decisions]
                self._seen_decisions.update(fresh)
                self.decisions.extend(self._made(fresh))
                self.lines.add_sections(fresh)

    def _made(self, texts: list[str]) -> list[Section]:
        counts = self.count(texts) if texts else []
        return [
            Section(t, n, frozenset(key_facts(t)), Counter(WORDS.findall(t.lower())))
            for t, n in zip(texts, counts, strict=True)
        ]


def take_while_fits(ordered: Iterable[Section], room: int) -> list[Section]:
    """Sections in order, each whole, while one still fits (a section too long for what is
    left is passed over for the shorter ones after it: the stronger reading of the cut)."""
    taken: list[Section] = []
    spent = 0
    for section in ordered:
        if spent + section.tokens <= room:
            taken.append(section)
            spent += section.tokens
    return taken


def bm25_order(pool: Sequence[Section], query: str) -> list[Section]:
    """The pool ranked by plain BM25 on the query (ties keep the pool's order)."""
    words = list(dict.fromkeys(WORDS.findall(query.lower())))
    if not pool or not words:
        return list(pool)
    lengths = [sum(s.words.values()) for s in pool]
    average = sum(lengths) / len(pool) or 1.0
    idf = {w: _idf(sum(1 for s in pool if w in s.words), len(pool)) for w in words}
    scores = [_bm25(s, n / average, words, idf) for s, n in zip(pool, lengths, strict=True)]
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    return [pool[i] for i in order]


def _idf(df: int, n: int) -> float:
    return math.log((n - df + 0.5) / (df + 0.5) + 1.0)


def _bm25(
    section: Section, relative_length: float, words: list[str], idf: dict[str, float]
) -> float:
    norm = BM25_K1 * (1 - BM25_B + BM25_B * relative_length)
    score = 0.0
    for w in words:
        tf = section.words.get(w, 0)
        if tf:
            score += idf[w] * tf * (BM25_K1 + 1) / (tf + norm)
    return score


def oracle_sections(pool: Sequence[Section], known: frozenset[str], room: int) -> list[Section]:
    """Greedy, knowing the facts: the section adding most known facts per token, while one
    fits (a section holds a fact where the fact occurs in its text, as in a prompt)."""
    got: set[str] = set()
    taken: list[Section] = []
    spent = 0
    holds = {id(s): present_facts(known, s.text) for s in pool}
    candidates = [s for s in pool if holds[id(s)]]
    while True:
        fits = [s for s in candidates if spent + s.tokens <= room and holds[id(s)] - got]
        if not fits:
            return taken
        best = max(fits, key=lambda s: len(holds[id(s)] - got) / max(1, s.tokens))
        candidates.remove(best)
        taken.append(best)
        spent += best.tokens
        got |= holds[id(best)]


def covered(known: frozenset[str], text: str, source: carried_in_prose.Source) -> Covered:
    """The share of the known facts a text holds, raw and carried in prose."""
    present = present_facts(known, text)
    in_prose = carried_in_prose.carried(present, text, source) if present else set()
    return Covered(
        len(present) / len(known),
        len(in_prose) / len(known),
        frozenset(present),
        frozenset(in_prose),
    )


def baselines(earlier: EarlierText, probe: ForwardProbe, room: int) -> dict[str, Covered]:
    """Each baseline's coverage of the probe's known facts within `room` tokens."""
    own = earlier.history.get(probe.agent, [])
    pool = [*own, *earlier.decisions]

    def cover(taken: Iterable[Section]) -> Covered:
        return covered(probe.known, "\n\n".join(s.text for s in taken), earlier.source)

    return {
        "recent": cover(take_while_fits(reversed(own), room)),
        "bm25": cover(take_while_fits(bm25_order(pool, probe.query), room)),
        "oracle": cover(oracle_sections(pool, probe.known, room)),
        "lines": covered(
            probe.known, earlier.lines.pack(probe.query, probe.agent, room), earlier.source
        ),
        "everything": cover(pool),
    }


@dataclass
class ForwardRun:
    """Every probe of one corpus, and the replay they were asked during."""

    corpus: str
    results: list[ProbeFigures] = field(default_factory=list)
    replay: ReplaySummary | None = None

    def write_prompts(self, folder: Path) -> None:
        """Each probe's prompt as a page of its own, under its figures."""
        folder.mkdir(parents=True, exist_ok=True)
        for n, figures in enumerate(self.results, 1):
            name = f"{n:03d}-{figures.probe.agent}.md"
            (folder / name).write_text(figures.page(), encoding="utf-8")

    def summary(self) -> dict[str, Any]:
        """Means of coverage raw and in prose, token medians and p90s, tiermem against the
        baselines (in prose, the figure goals are set on), and its prompts' readability."""
        r = self.results
        mean = {k: _mean(x.covered[k].raw for x in r) for k in KINDS}
        in_prose = {k: _mean(x.covered[k].prose for x in r) for k in KINDS}
        best = max(in_prose["recent"], in_prose["bm25"])
        gains = [x.covered["tiermem"].prose - _best_baseline(x) for x in r]
        lines = sum(x.readable.lines for x in r) or 1
        return {
            "corpus": self.corpus,
            "probes": len(r),
            "coverage": mean,
            "coverage_in_prose": in_prose,
            "tokens_median": _median([x.tokens for x in r]),
            "tokens_p90": _p90([x.tokens for x in r]),
            "everything_tokens_median": _median([x.everything_tokens for x in r]),
            "ratio_to_best_baseline": round(in_prose["tiermem"] / best, 3) if best else None,
            "wins": sum(g > 0 for g in gains),
            "losses": sum(g < 0 for g in gains),
            "fact_list_lines": round(sum(x.readable.fact_lists for x in r) / lines, 4),
            "fragments": round(sum(x.readable.fragments for x in r) / lines, 4),
            "memory_lines": lines,
            "situations": dict(Counter(x.situation for x in r).most_common()),
            **_room(r),
        }


KINDS = ("tiermem", "recent", "bm25", "lines", "oracle", "everything")


def _room(results: Sequence[ProbeFigures]) -> dict[str, Any]:
    """How much of its budget each prompt used, and of the prompts that list memory as left
    out for room (METRICS.md: those should have used at least 95 % of it) the share and the
    least used."""
    used = [x.tokens / x.budget for x in results if x.budget]
    listing = [x.tokens / x.budget for x in results if x.budget and x.left_out]
    return {
        "room_used_median": round(statistics.median(used), 3) if used else 0.0,
        "left_out_share": round(len(listing) / len(results), 3) if results else 0.0,
        "left_out_room_used_min": round(min(listing), 3) if listing else None,
    }


def _best_baseline(figures: ProbeFigures) -> float:
    return max(figures.covered["recent"].prose, figures.covered["bm25"].prose)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return round(sum(items) / len(items), 4) if items else 0.0


def _median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _p90(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[int(0.9 * (len(ordered) - 1))]) if ordered else 0.0


def chosen_probes(corpus: Path, sample: int | None, seed: int) -> set[int] | None:
    """The events whose probes a sampled run asks (None: every probe): `sample` of them,
    drawn with `seed` from every forward probe of the corpus."""
    if sample is None:
        return None
    written = Written()
    every: list[int] = []
    for session in sessions(load_events(corpus)):
        every += [e.seq for e in session.events if probe_of(e, written)]
        written.add(session.events)
    return set(random.Random(seed).sample(every, min(sample, len(every))))


def run_forward(
    corpus: Path,
    out: Path,
    limit: int | None = None,
    progress: bool = False,
    sample: int | None = None,
    seed: int = 7,
) -> ForwardRun:
    """Replay a corpus into `out`, asking every forward probe (or a sample of them, or the
    first `limit`) just before its session."""
    from ..index.tokens import O200K

    earlier = EarlierText(O200K.count_many)
    run = ForwardRun(corpus.name)
    chosen = chosen_probes(corpus, sample, seed)

    def before(session: Session) -> None:
        probes = [p for e in session.events if (p := probe_of(e, earlier))]
        if chosen is not None:
            probes = [p for p in probes if p.seq in chosen]
        if limit is not None:
            probes = probes[: max(0, limit - len(run.results))]
        if probes:
            run.results.extend(_ask(out, session, probes, earlier))
        earlier.add(session.events)

    run.replay = replay(corpus, out, progress=progress, before=before)
    return run


def _ask(
    out: Path, session: Session, probes: list[ForwardProbe], earlier: EarlierText
) -> list[ProbeFigures]:
    """Each probe's spawn, as `spawn AGENT --task QUERY --auto` at the session's date."""
    from ..spawn.assemble import SpawnRequest, assemble

    mem = Memory(out, now=format_time(session.date))
    found = []
    for probe in probes:
        # The step itself, not the door: an agent the store has not seen write yet is still
        # the agent the coordinator would spawn.
        result = assemble(mem.context, SpawnRequest(probe.agent, probe.query, auto=True))
        room = result.tokens["total"]
        seen = baselines(earlier, probe, room)
        found.append(
            ProbeFigures(
                probe=probe,
                tokens=room,
                situation=result.situation,
                covered={"tiermem": covered(probe.known, result.prompt, earlier.source), **seen},
                everything_tokens=_everything_tokens(earlier, probe.agent),
                readable=carried_in_prose.readability(result.prompt),
                prompt=result.prompt,
                budget=mem.context.config.spawn.budget_tokens,
                left_out=bool(result.left_out),
            )
        )
    mem.close()
    return found


def _everything_tokens(earlier: EarlierText, agent: str) -> int:
    own = earlier.history.get(agent, [])
    return sum(s.tokens for s in own) + sum(s.tokens for s in earlier.decisions)


def run_corpora(
    corpora: Sequence[Path],
    out: Path,
    limit: int | None,
    progress: bool,
    sample: int | None = None,
    seed: int = 7,
) -> list[ForwardRun]:
    """Forward probes of each corpus, each replayed into its own folder under `out`."""
    runs = []
    for corpus in track(list(corpora), "forward probes", progress and len(corpora) > 1):
        runs.append(run_forward(corpus, out / corpus.name, limit, progress, sample, seed))
    return runs
