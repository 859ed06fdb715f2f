"""Readable memory, measured (METRICS.md, "Carried in prose"): a key fact counts only where a
line that holds it says something of it in the source's own words.

A line carries a fact in prose when it shares at least two plain words (or all of them, when
the sentence has fewer) with a sentence of the source text that holds the same fact. A line
of three or more facts and fewer than two plain words is a fact-list line: it says that
things exist, not what was said of them. A fragment is a heading, a bold lead-in or a line
ending in `:` shown without any of what it introduces.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ..text.prose import PROSE_WORDS, is_fact_list, plain_words

__all__ = ["is_fact_list", "plain_words"]

MIN_SHARED = PROSE_WORDS
# A source is split at line breaks and after `.`, `!`, `?`, `;`, `:` followed by a space.
_SENTENCE_BREAK = re.compile(r"\n|(?<=[.!?;:]) ")


def source_sentences(text: str) -> list[str]:
    """A source text's sentences, as the measure splits them."""
    return [s for s in _SENTENCE_BREAK.split(text) if s.strip()]


@dataclass
class Source:
    """The text written so far, in sentences, searchable by the facts they hold."""

    _chunks: list[tuple[str, list[int], list[str]]] = field(default_factory=list)

    def add(self, text: str) -> None:
        """Take in more source text."""
        sentences = source_sentences(text)
        if not sentences:
            return
        starts, at = [], 0
        for s in sentences:
            starts.append(at)
            at += len(s) + 1
        self._chunks.append(("\n".join(s.lower() for s in sentences), starts, sentences))

    def words_holding(self, fact: str) -> list[frozenset[str]]:
        """The plain words of each source sentence that holds the fact."""
        found = []
        for low, starts, sentences in self._chunks:
            at = low.find(fact)
            while at >= 0:
                n = bisect.bisect_right(starts, at) - 1
                found.append(plain_words(sentences[n]))
                at = low.find(fact, starts[n + 1] if n + 1 < len(starts) else len(low))
        return found


def carried(facts: Iterable[str], text: str, source: Source) -> set[str]:
    """The facts that a line of the text carries in prose."""
    lines = [(line.lower(), line) for line in text.splitlines() if line.strip()]
    found = set()
    for fact in facts:
        holding = [plain_words(line) for low, line in lines if fact in low]
        if holding and _shares(holding, source.words_holding(fact)):
            found.add(fact)
    return found


def _shares(lines: Sequence[AbstractSet[str]], sentences: Sequence[AbstractSet[str]]) -> bool:
    """Whether a line shares enough plain words with a sentence holding the same fact."""
    for sentence in set(map(frozenset, sentences)):
        need = min(MIN_SHARED, len(sentence))
        if any(len(line & sentence) >= need for line in lines):
            return True
    return False


# --- readability of a prompt's memory -------------------------------------------------------

_FENCE_OPEN = re.compile(r"^<memory\b")
_FENCE_CLOSE = "</memory>"
GAP = "…"
_HEADING = re.compile(r"^(#{1,6})\s")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A line that is only bold text (an optional list mark before, a colon inside or after).
_BOLD_LEAD = re.compile(r"^\s*(?:[-*+]\s+)?\*\*[^*]+\*\*:?\s*$")


def memory_blocks(prompt: str) -> list[list[str]]:
    """The non-blank lines of each <memory> fence of a prompt, fence tags left out."""
    blocks: list[list[str]] = []
    inside = False
    for line in prompt.splitlines():
        if _FENCE_OPEN.match(line):
            inside = True
            blocks.append([])
        elif line.strip() == _FENCE_CLOSE:
            inside = False
        elif inside and line.strip():
            blocks[-1].append(line)
    return blocks


def fragments(lines: Sequence[str]) -> list[int]:
    """The positions of lines that introduce something (a heading, a bold lead-in, a line
    ending in `:`) with none of it after them: the next line is a gap, the end of the block,
    or a heading no deeper than theirs."""
    found = []
    for n, line in enumerate(lines):
        level = _introduces(line)
        if level is None:
            continue
        following = lines[n + 1] if n + 1 < len(lines) else None
        if following is None or following.strip() == GAP or _ends(following, level):
            found.append(n)
    return found


def _introduces(line: str) -> int | None:
    """How deep a line introduces (a heading's level; 7 for a lead-in), or None."""
    heading = _HEADING.match(line)
    if heading:
        return len(heading.group(1))
    if _BOLD_LEAD.match(line) or line.rstrip().endswith(":"):
        return 7
    return None


def _ends(line: str, level: int) -> bool:
    heading = _HEADING.match(line)
    return heading is not None and len(heading.group(1)) <= level


@dataclass(frozen=True)
class Readability:
    """A prompt's memory lines, and how many are fact lists or fragments."""

    lines: int
    fact_lists: int
    fragments: int


def readability(prompt: str) -> Readability:
    """Count the memory lines of a prompt that a reader could not act on."""
    blocks = memory_blocks(prompt)
    lines = sum(1 for block in blocks for line in block if line.strip() != GAP)
    lists = sum(is_fact_list(line) for block in blocks for line in block)
    broken = sum(len(fragments(block)) for block in blocks)
    return Readability(lines, lists, broken)


# --- titles -------------------------------------------------------------------------------

_TITLE_DATE = re.compile(r"^\W*\d{4}-\d\d")
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\w)|(?<=\w)\*(?![\w*])")


def title_defects(title: str, full: str, date: str) -> list[str]:
    """What is wrong with a shown title: a list mark, emphasis marks, a leading date (the
    entry carries its date apart), or a cut inside a word (`full` is the title it was cut
    from)."""
    found = []
    if _LIST_MARK.match(title):
        found.append("list mark")
    if _EMPHASIS.search(title):
        found.append("emphasis")
    if _TITLE_DATE.match(title):
        found.append("repeated date")
    kept = title.removesuffix(GAP).rstrip()
    if title.endswith(GAP) and full.startswith(kept) and full[len(kept) : len(kept) + 1].isalnum():
        found.append("cut word")
    return found
