"""Summarizers: one small interface, a deterministic extractive default.

The extractive summarizer keeps the session's own sentences and bullets, whole, chosen for
what they say: the ones that carry its facts (issue numbers, paths, backticked names,
versions, code identifiers) with the words around them, and those that state a decision, a
cause, a result or what is left open. A heading or a lead-in comes with what it introduces,
and a table row is read with its header. A bullet keeps its subject: a later sentence of it
is shown after its bold lead-in, or the clause that says what it is about ("**Tweet
publishing 500 fixed**: … Root cause: ..."), never alone. A text of up to SMALL_BYTES is
kept whole. A line of bare identifiers is never written: it says that things exist, not
what was done with them. Output is a pure function of the input, so replays give
byte-identical stores.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..host import Summarizer as Summarizer  # the protocol every summarizer here meets
from ..text.facts import key_facts
from ..text.prose import (
    HEADING,
    LIST_MARK,
    PROSE_WORDS,
    clean_title,
    cut_at_word,
    introduces,
    is_table_row,
    is_table_rule,
    plain_words,
    readable,
)

if TYPE_CHECKING:
    from ..context import Context

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`*\"'(\[])")
_CUES = re.compile(
    r"\b(decid\w*|decision|chose|chosen|root cause|because|fix\w*|block\w*|todo|next|open"
    r"|must|always|never|learn\w*|pattern|result\w*|outcome|shipped|merged|released|broke\w*"
    r"|fail\w*|regress\w*|prefer\w*|instead|avoid|contract|api|convention|policy|rule)\b",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--.*?-->")
_FENCE = re.compile(r"^\s*(```|~~~)")
VERBATIM_BYTES = 600
SMALL_BYTES = 2048
FLOOR_RATIO = 5
# Room for a session dense with names: about this many bytes of sentence for each of its
# facts (within the 5:1 floor), so that each can be kept with what was said of it.
BYTES_PER_FACT = 48
# What a sentence is worth: each new fact it carries, each cue word (at most three), being
# the first sentence of its section.
FACT_VALUE = 3.0
CUE_VALUE = 1.0
FIRST_VALUE = 1.0


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def budget_for(raw: str, target_ratio: int) -> int:
    """Summary size: a text of up to SMALL_BYTES whole (cutting a short session saves little
    and loses the phrase a reader needs), else about raw/target, more for text dense with
    facts, never over raw/5."""
    raw_bytes = _size(raw)
    if raw_bytes <= SMALL_BYTES:
        return raw_bytes
    dense = BYTES_PER_FACT * len(key_facts(raw))
    wanted = max(raw_bytes // target_ratio, dense, VERBATIM_BYTES)
    return min(raw_bytes // FLOOR_RATIO, wanted)


@dataclass
class _Block:
    """A paragraph, a list item or a table row of a section, cut into its sentences."""

    section: int
    sentences: list[str]
    lead: str = ""  # the line that introduces it (a lead-in, a table's header)
    chosen: set[int] = field(default_factory=set)

    @property
    def subject(self) -> str:
        """What the block is about, shown before a later sentence of it: its bold lead-in,
        else the clause of its first sentence before a colon or a dash, else that sentence."""
        return subject_of(self.sentences[0]) if self.sentences else ""


# A bold lead-in at the start of a bullet, after a date or a mark if any
# ("2026-03-23T05:39:03Z — **Tweet publishing 500 fixed**: ...").
_BOLD_SUBJECT = re.compile(r"^(?:[^*_\n]{0,40}?\s)?(\*\*|__)[^*_\n]+?\1\s*:?")
# A clause that names what the rest is about: up to a colon or a spaced dash.
_CLAUSE_SUBJECT = re.compile(r"^[^:;—–]{3,80}?(?::|\s[—–-]\s)(?=\s)")
SEPARATOR = " … "
# A first sentence with no lead-in or clause of its own is the subject whole up to this
# many characters; a longer one gives its opening words (a later sentence, shown after
# them, still says what it is about without paying for the whole first sentence).
SUBJECT_CHARS = 80
OPENING_CHARS = 60


def subject_of(sentence: str) -> str:
    """The part of a block's first sentence that says what the block is about: its bold
    lead-in, else its clause before a colon or a dash, else the sentence, or its opening
    words cut at a word with `…` when it is long."""
    found = _BOLD_SUBJECT.match(sentence) or _CLAUSE_SUBJECT.match(sentence)
    if found is not None and len(plain_words(found.group(0))) >= 1:
        return found.group(0).rstrip()
    return sentence if len(sentence) <= SUBJECT_CHARS else cut_at_word(sentence, OPENING_CHARS)


@dataclass
class _Outline:
    """A text as sections of blocks, each section under its heading."""

    headings: list[str] = field(default_factory=lambda: [""])
    blocks: list[_Block] = field(default_factory=list)


def outline(text: str) -> _Outline:
    """Read a Markdown text into sections of blocks (code and comments left out)."""
    found = _Outline()
    reader = _Reader(found)
    in_code = False
    for raw in _COMMENT.sub("", text).splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            reader.pause()
            continue
        if not in_code:
            reader.line(raw)
    reader.pause()
    return found


class _Reader:
    """Reads lines into an outline, one at a time."""

    def __init__(self, into: _Outline) -> None:
        self.into = into
        self.lead = ""
        self.header = ""  # the header row of the table being read
        self.current: list[str] | None = None

    def line(self, raw: str) -> None:
        stripped = raw.strip().lstrip(">").strip()
        heading = HEADING.match(stripped)
        if not stripped:
            self.pause()
        elif heading:
            self._close(drop_lead=True)
            self.into.headings.append(clean_title(heading.group(2), 200))
        elif is_table_row(stripped):
            self._row(stripped)
        elif introduces(stripped):
            self._close()
            self.lead = stripped
        elif LIST_MARK.match(raw) and not raw.startswith("    "):
            self._close()
            self.current = [LIST_MARK.sub("", stripped)]
        elif self.current is None:
            self.current = [stripped]
        else:
            self.current.append(stripped)

    def _row(self, row: str) -> None:
        self._close()
        if is_table_rule(row):
            return
        if not self.header:
            self.header = row
            return
        names = _cells(self.header)
        cells = _cells(row)
        said = [f"{n}: {c}" if n else c for n, c in zip(names, cells, strict=False) if c]
        self.into.blocks.append(_Block(self._section, ["; ".join(said) + "."], self.lead))

    def pause(self) -> None:
        """A blank line or a fence: the block ends, and so does a table (a lead-in stays for
        the list after it)."""
        self._close()
        self.header = ""

    def _close(self, drop_lead: bool = False) -> None:
        if self.current:
            text = " ".join(self.current)
            sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
            self.into.blocks.append(_Block(self._section, sentences, self.lead))
        self.current = None
        if drop_lead:
            self.lead = ""
            self.header = ""

    @property
    def _section(self) -> int:
        return len(self.into.headings) - 1


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


@dataclass(order=True)
class _Candidate:
    """A sentence of a block, as the greedy choice weighs it."""

    key: float
    block: int = field(compare=False)
    sentence: int = field(compare=False)


class ExtractiveSummarizer:
    """Deterministic: the session's sentences that say most per byte, whole, in its order.

    A sentence is worth the facts it carries that no chosen sentence carries yet (only where
    it says something of them: a list of names is worth nothing), its cue words (decided,
    because, fixed, failed, must...) and being the first of its section; sentences are taken
    greedily by worth per byte while the budget holds, and shown in the text's order under
    their headings and lead-ins.
    """

    name = "extractive"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """A summary of text in at most about budget_bytes UTF-8 bytes."""
        text = readable(untitled(text, title))
        if _size(text) <= budget_bytes:
            return text.strip("\n")
        found = outline(text)
        _choose(found, budget_bytes, clean_title(title, 200))
        return readable("\n".join(_render(found, clean_title(title, 200))))


def untitled(text: str, title: str) -> str:
    """The text without a first heading that says what the title says (the entry's heading
    shows it)."""
    first, _, rest = text.lstrip("\n").partition("\n")
    heading = HEADING.match(first.strip())
    if heading and clean_title(heading.group(2), 200) == clean_title(title, 200):
        return rest
    return text


def _worth(sentence: str, new_facts: int, first: bool) -> float:
    if len(plain_words(sentence)) < PROSE_WORDS:
        new_facts = 0
    cues = min(3, len(_CUES.findall(sentence)))
    return FACT_VALUE * new_facts + CUE_VALUE * cues + (FIRST_VALUE if first else 0.0)


def _choose(found: _Outline, budget: int, title: str) -> None:
    """Mark the sentences to keep, greedily by worth per byte (lazily re-weighed as facts
    are covered)."""
    covered: set[str] = set()
    shown_leads: set[str] = set()
    shown_sections: set[int] = set()
    spent = 0
    facts = {(b, s): frozenset(key_facts(t)) for b, s, t in _sentences(found)}
    firsts = {(b, 0) for b, block in enumerate(found.blocks) if _opens(found, b)}
    subjects = [frozenset(key_facts(block.subject)) for block in found.blocks]

    def shows(b: int, s: int) -> frozenset[str]:
        """The facts a sentence shows: its own, and its block's subject's before it."""
        block = found.blocks[b]
        return facts[b, s] | subjects[b] if s and not block.chosen else facts[b, s]

    def key(b: int, s: int) -> float:
        value = _worth(found.blocks[b].sentences[s], len(shows(b, s) - covered), (b, s) in firsts)
        return -value / _cost(found, b, s, shown_leads, shown_sections, title)

    heap = [_Candidate(key(b, s), b, s) for b, s, _ in _sentences(found)]
    heapq.heapify(heap)
    while heap:
        top = heapq.heappop(heap)
        now = key(top.block, top.sentence)
        if now > top.key + 1e-12:  # worth less than when it was queued: queue it again
            heapq.heappush(heap, _Candidate(now, top.block, top.sentence))
            continue
        if now >= 0:
            break
        cost = _cost(found, top.block, top.sentence, shown_leads, shown_sections, title)
        if spent + cost > budget:
            continue
        block = found.blocks[top.block]
        covered |= shows(top.block, top.sentence)
        if top.sentence and not block.chosen and block.subject == block.sentences[0]:
            block.chosen.add(0)  # its subject is its whole first sentence, shown as one
        block.chosen.add(top.sentence)
        spent += cost
        shown_leads.add(block.lead)
        shown_sections.add(block.section)


def _opens(found: _Outline, b: int) -> bool:
    """Whether a block is the first of its section."""
    return b == 0 or found.blocks[b - 1].section != found.blocks[b].section


def _sentences(found: _Outline) -> Iterator[tuple[int, int, str]]:
    for b, block in enumerate(found.blocks):
        for s, sentence in enumerate(block.sentences):
            yield b, s, sentence


def _cost(found: _Outline, b: int, s: int, leads: set[str], sections: set[int], title: str) -> int:
    """A sentence's bytes, with its block's line, lead-in and heading when it opens them."""
    block = found.blocks[b]
    cost = _size(block.sentences[s]) + 1
    if not block.chosen:
        cost += 3
        if s > 0:  # a later sentence is shown after the block's subject
            cost += _size(block.subject) + len(SEPARATOR)
    if block.lead and block.lead not in leads:
        cost += _size(block.lead) + 1
    heading = found.headings[block.section]
    if block.section not in sections and heading and heading != title:
        cost += _size(heading) + 5
    return cost


def _render(found: _Outline, title: str) -> list[str]:
    """The chosen sentences in the text's order, each block a bullet, under the headings
    and lead-ins that introduce them (a heading the title says already is left out)."""
    lines: list[str] = []
    section, lead = -1, ""
    for block in found.blocks:
        if not block.chosen:
            continue
        heading = found.headings[block.section]
        if block.section != section:
            section, lead = block.section, ""
            if heading and heading != title:
                lines.append(f"**{heading}**")
        if block.lead and block.lead != lead:
            lines.append(block.lead)
        lead = block.lead
        kept = " ".join(t for n, t in enumerate(block.sentences) if n in block.chosen)
        if 0 not in block.chosen:
            kept = _after_subject(block.subject, kept)
        lines.append(f"- {kept}")
    return lines


def _after_subject(subject: str, kept: str) -> str:
    """A block's later sentences after its subject: the whole first sentence as its own,
    a lead-in or a clause with `…` for what is left out after it."""
    if subject.endswith((".", "!", "?", "…")):
        return f"{subject} {kept}"
    return f"{subject}{SEPARATOR}{kept}"


class FallbackSummarizer:
    """Tries a model-backed summarizer; on any failure uses the extractive one and says why."""

    def __init__(self, primary: Summarizer, on_fallback: Callable[[str], None]) -> None:
        self.primary = primary
        self.name = primary.name
        self._fallback = ExtractiveSummarizer()
        self._on_fallback = on_fallback

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """The primary's summary, or the extractive one when the primary fails."""
        try:
            summary = self.primary.summarize(text, title=title, budget_bytes=budget_bytes)
            if not summary.strip():
                raise ValueError("empty summary")
            return summary
        except Exception as exc:  # any failure of a remote model must not lose the session
            self._on_fallback(f"{type(exc).__name__}: {str(exc)[:200]}")
            self.name = "extractive"
            return self._fallback.summarize(text, title=title, budget_bytes=budget_bytes)


def configured(ctx: Context) -> Summarizer:
    """The summarizer `[summarizer] kind` names (a model's output redacted)."""
    return _MAKERS[ctx.config.summarizer.kind](ctx)


def _extractive(ctx: Context) -> Summarizer:
    return ExtractiveSummarizer()


def _openai(ctx: Context) -> Summarizer:
    """The OpenAI-compatible summarizer, falling back to the extractive one (said and
    audited) when it cannot be made or a call fails."""
    settings = ctx.config.summarizer

    def fell_back(reason: str) -> None:
        ctx.audit("summarizer-fallback", [], ["cold"], reason, model=settings.model)
        ctx.note(f"summarizer openai:{settings.model} failed ({reason}); used extractive")

    try:
        from .llm import OpenAICompatibleSummarizer

        primary: Summarizer = OpenAICompatibleSummarizer.from_config(settings)
    except Exception as exc:
        # No model was called: the audit line names none.
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
        ctx.audit("summarizer-fallback", [], ["cold"], reason)
        ctx.note(f"summarizer openai not used ({reason}); used extractive")
        return ExtractiveSummarizer()
    return _Redacting(FallbackSummarizer(primary, fell_back), ctx)


# What each `[summarizer] kind` makes (config validation accepts exactly these kinds).
_MAKERS: dict[str, Callable[[Context], Summarizer]] = {
    "extractive": _extractive,
    "openai": _openai,
}


class _Redacting:
    """Model output is a write path too: redact it before it reaches a tier."""

    def __init__(self, inner: FallbackSummarizer, ctx: Context) -> None:
        self.inner = inner
        self.ctx = ctx

    @property
    def name(self) -> str:
        """The summarizer that wrote the last summary (extractive after a fallback)."""
        return self.inner.name

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """The inner summary with credentials redacted (and audited), then cut to budget."""
        from .llm import fit_to_budget

        summary = self.inner.summarize(text, title=title, budget_bytes=budget_bytes)
        cleaned, kinds = self.ctx.redact(summary)
        if kinds:
            self.ctx.audit("redact", [], ["cold"], "credential-shaped text in summary", kinds=kinds)
        return fit_to_budget(cleaned, budget_bytes)
