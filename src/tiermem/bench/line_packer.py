"""The line packer of METRICS.md: a plain baseline that packs single lines by what their facts
are worth.

Every line of the earlier history (the agent's and the team's) and of the decisions is a
candidate. A line's score is plain BM25 of the line with its section heading, plus half of
its section's own BM25 score, against the query: the task's words, and the salient words of
the agent's last three sessions at weight 0.3. Each key fact is worth the best score of a line
holding it; lines are taken greedily by the worth of their new facts per token, and shown
under their headings. It knows nothing of which facts the work will use.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..text.facts import key_facts
from ..text.prose import STOP_WORDS
from .probes import WORDS

K1 = 1.2
B = 0.75
SECTION_SHARE = 0.5
CONTEXT_WEIGHT = 0.3
CONTEXT_SESSIONS = 3
CONTEXT_WORDS = 10


@dataclass(frozen=True, slots=True)
class Line:
    """One line of earlier text, under its section."""

    text: str
    section: int
    tokens: int
    facts: frozenset[str]
    words: Counter[str]  # the line's words with its heading's


@dataclass(slots=True)
class _Sect:
    heading: str
    heading_tokens: int
    words: Counter[str]


@dataclass
class _Bm25:
    """Document frequencies and lengths of one collection, grown as text comes in."""

    df: Counter[str] = field(default_factory=Counter)
    total_length: int = 0
    size: int = 0

    def add(self, words: Counter[str]) -> None:
        self.df.update(words.keys())
        self.total_length += sum(words.values())
        self.size += 1

    def score(self, words: Counter[str], query: Mapping[str, float]) -> float:
        if not self.size:
            return 0.0
        average = self.total_length / self.size or 1.0
        norm = K1 * (1 - B + B * sum(words.values()) / average)
        found = 0.0
        for word, weight in query.items():
            tf = words.get(word, 0)
            if tf:
                df = self.df[word]
                idf = math.log((self.size - df + 0.5) / (df + 0.5) + 1.0)
                found += weight * idf * tf * (K1 + 1) / (tf + norm)
        return found


class LinePool:
    """Every line of the team's earlier history and decisions, with what scoring them needs."""

    def __init__(self, count: Callable[[list[str]], list[int]]) -> None:
        self.count = count
        self.lines: list[Line] = []
        self.sections: list[_Sect] = []
        self._line_stats = _Bm25()
        self._section_stats = _Bm25()
        self._sessions: dict[str, list[str]] = {}  # agent -> text of each session it wrote

    def add_sections(self, texts: Iterable[str]) -> None:
        """Take in sections of earlier text (each from its heading, if any)."""
        for text in texts:
            self._add_section(text)

    def add_session(self, agent: str, text: str) -> None:
        """Note what an agent wrote in one session (its salient words are context)."""
        self._sessions.setdefault(agent, []).append(text)

    def _add_section(self, text: str) -> None:
        raw = [ln for ln in text.splitlines() if ln.strip()]
        if not raw:
            return
        heading = raw[0] if raw[0].startswith("#") else ""
        body = raw[1:] if heading else raw
        counts = self.count([heading, *body])
        heading_words = Counter(WORDS.findall(heading.lower()))
        number = len(self.sections)
        self.sections.append(_Sect(heading, counts[0], Counter(WORDS.findall(text.lower()))))
        self._section_stats.add(self.sections[-1].words)
        for line, tokens in zip(body, counts[1:], strict=True):
            words = Counter(WORDS.findall(line.lower())) + heading_words
            made = Line(line, number, tokens, frozenset(key_facts(line)), words)
            self.lines.append(made)
            self._line_stats.add(words)

    def query(self, task: str, agent: str) -> dict[str, float]:
        """The task's words at weight 1, the salient words of the agent's last sessions below."""
        weights = dict.fromkeys(dict.fromkeys(WORDS.findall(task.lower())), 1.0)
        recent = "\n".join(self._sessions.get(agent, [])[-CONTEXT_SESSIONS:])
        for word in self._salient(recent):
            weights.setdefault(word, CONTEXT_WEIGHT)
        return weights

    def _salient(self, text: str) -> list[str]:
        """The words most particular to a text: frequent in it, rare among the sections."""
        counts = Counter(w for w in WORDS.findall(text.lower()) if len(w) > 2 and not w.isdigit())
        n = self._section_stats.size or 1
        ranked = sorted(
            (w for w in counts if w not in STOP_WORDS),
            key=lambda w: (-counts[w] * math.log(1 + n / (1 + self._section_stats.df[w])), w),
        )
        return ranked[:CONTEXT_WORDS]

    def pack(self, task: str, agent: str, room: int) -> str:
        """The lines worth most for their tokens, within `room`, under their headings."""
        query = self.query(task, agent)
        section_scores = [
            SECTION_SHARE * self._section_stats.score(s.words, query) for s in self.sections
        ]
        scores = [
            self._line_stats.score(line.words, query) + section_scores[line.section]
            for line in self.lines
        ]
        worth: dict[str, float] = {}
        for line, score in zip(self.lines, scores, strict=True):
            for fact in line.facts:
                worth[fact] = max(worth.get(fact, 0.0), score)
        chosen = _greedy(self.lines, self.sections, worth, room)
        return self._render(chosen)

    def _render(self, chosen: Sequence[int]) -> str:
        by_section: dict[int, list[str]] = {}
        for n in sorted(chosen):
            by_section.setdefault(self.lines[n].section, []).append(self.lines[n].text)
        blocks = []
        for section, lines in by_section.items():
            heading = self.sections[section].heading
            blocks.append("\n".join([heading, *lines] if heading else lines))
        return "\n\n".join(blocks)


def _greedy(
    lines: Sequence[Line], sections: Sequence[_Sect], worth: Mapping[str, float], room: int
) -> list[int]:
    """Lazy greedy by the worth of a line's new facts per token (its heading's tokens too
    when its section is not shown yet)."""
    covered: set[str] = set()
    opened: set[int] = set()
    spent = 0
    taken: list[int] = []

    def cost(n: int) -> int:
        line = lines[n]
        heading = 0 if line.section in opened else sections[line.section].heading_tokens + 2
        return line.tokens + 1 + heading

    def value(n: int) -> float:
        return sum(worth[f] for f in lines[n].facts - covered) / cost(n)

    heap = [(-value(n), n) for n, line in enumerate(lines) if line.facts]
    heapq.heapify(heap)
    siblings: dict[int, list[int]] = {}
    for n, line in enumerate(lines):
        if line.facts:
            siblings.setdefault(line.section, []).append(n)
    while heap:
        negative, n = heapq.heappop(heap)
        now = value(n)
        if now <= 0:
            continue
        if now < -negative - 1e-12:
            heapq.heappush(heap, (-now, n))
            continue
        if spent + cost(n) > room:
            continue
        spent += cost(n)
        covered |= lines[n].facts
        taken.append(n)
        if lines[n].section not in opened:
            # Its section's heading is paid for now: the lines under it got cheaper.
            opened.add(lines[n].section)
            for m in siblings[lines[n].section]:
                if m != n:
                    heapq.heappush(heap, (-value(m), m))
    return taken
