"""Summarizers: one small interface, a deterministic extractive default.

The extractive summarizer keeps what later tasks search for: section headings, the
sentences that carry decisions, fixes, causes and open items, and the identifiers that
matter (issue numbers, paths, backticked names, versions, code identifiers). Output is a
pure function of the input, so replays give byte-identical stores.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..host import Summarizer as Summarizer  # the protocol every summarizer here meets
from ..text.facts import fact_surfaces, key_facts

if TYPE_CHECKING:
    from ..context import Context

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`*\"'(\[])")
_CUES = re.compile(
    r"\b(decid\w*|decision|chose|chosen|root cause|because|fix\w*|block\w*|todo|next|open"
    r"|must|always|never|learn\w*|pattern|result\w*|outcome|shipped|merged|released|broke\w*"
    r"|fail\w*|regress\w*|prefer\w*|instead|avoid|contract|api|convention|policy|rule)\b",
    re.IGNORECASE,
)
_NOISE = re.compile(r"\*\*|__|<!--.*?-->|^>\s*")
VERBATIM_BYTES = 600
SMALL_BYTES = 2048
FLOOR_RATIO = 5


@dataclass(frozen=True)
class _Unit:
    section: int
    order: int
    text: str
    score: float
    facts: frozenset[str]


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def budget_for(raw: str, target_ratio: int) -> int:
    """Summary size: about raw/target, more for identifier-dense text, never over raw/5."""
    raw_bytes = _size(raw)
    if raw_bytes <= VERBATIM_BYTES:
        return raw_bytes
    dense = sum(_size(s) + 1 for s in compact_surfaces(raw))
    wanted = max(raw_bytes // target_ratio, dense, VERBATIM_BYTES)
    # Under 2 KB the ratio matters little and every identifier counts; above, hold 5:1.
    ceiling = raw_bytes if raw_bytes <= SMALL_BYTES else raw_bytes // FLOOR_RATIO
    return min(ceiling, wanted)


def compact_surfaces(text: str) -> list[str]:
    """Identifiers as written, without backticks where the bare word is the same fact."""
    out = []
    for surface in fact_surfaces(text):
        if surface.startswith("`") and " " not in surface:
            bare = surface.strip("`")
            if bare.lower() in key_facts(bare):
                surface = bare
        out.append(surface)
    return out


def _clean(line: str) -> str:
    line = _BULLET.sub("", line)
    line = _NOISE.sub("", line)
    return " ".join(line.split())


def _sections(text: str) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_code = False
    for raw in text.splitlines():
        if raw.strip().startswith("```"):
            in_code = not in_code
            continue
        match = None if in_code else _HEADING.match(raw)
        if match:
            sections.append((_clean(match.group(2)), []))
        elif raw.strip() and not in_code:
            sections[-1][1].extend(s for s in _SENTENCE_END.split(_clean(raw)) if s)
    return [s for s in sections if s[0] or s[1]]


def _score(sentence: str, facts: int, first: bool) -> float:
    cues = len(_CUES.findall(sentence))
    length_penalty = max(1.0, _size(sentence) / 160)
    return (2.0 * facts + 1.5 * min(cues, 3) + (2.0 if first else 0.0)) / length_penalty


def _units(sections: list[tuple[str, list[str]]]) -> list[_Unit]:
    units = []
    for s, (_, sentences) in enumerate(sections):
        for n, sentence in enumerate(sentences):
            facts = frozenset(key_facts(sentence))
            units.append(_Unit(s, n, sentence, _score(sentence, len(facts), n == 0), facts))
    return units


def _shorten(text: str, limit: int) -> str:
    if _size(text) <= limit:
        return text
    cut = text.encode("utf-8")[: max(0, limit - 3)].decode("utf-8", "ignore")
    return cut.rsplit(" ", 1)[0] + "…"


class ExtractiveSummarizer:
    """Deterministic: headings, then identifiers, then the sentences that carry them best.

    Retention comes first: every identifier is budgeted before any sentence. A sentence
    is then added when its bytes, less the identifiers it already carries, still fit, so
    identifier-dense sentences replace bare identifiers with their context.
    """

    name = "extractive"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        """A summary of text in at most about budget_bytes UTF-8 bytes."""
        if _size(text) <= budget_bytes:
            return text.strip("\n")
        sections = _sections(text)
        headings = self._fit_headings([_shorten(h, 100) for h, _ in sections], budget_bytes // 2)
        have = key_facts(" ".join(headings))
        spent = sum(_size(h) + 7 for h in headings if h) + 7
        refs = self._fit_refs(
            [s for s in compact_surfaces(text) if not key_facts(s) <= have], budget_bytes - spent
        )
        spent += sum(_size(r) + 1 for r in refs)
        ref_keys = {r: frozenset(key_facts(r)) for r in refs}
        chosen: set[tuple[int, int]] = set()
        for unit in sorted(_units(sections), key=lambda u: (-u.score, u.section, u.order)):
            carried = [r for r in refs if ref_keys[r] <= unit.facts]
            net = min(_size(unit.text), 240) + 1 - sum(_size(r) + 1 for r in carried)
            if spent + net > budget_bytes:
                continue
            if _size(unit.text) > 240 and carried:
                continue  # a cut sentence may lose the identifiers it was chosen for
            chosen.add((unit.section, unit.order))
            if carried:
                gone = set(carried)
                refs = [r for r in refs if r not in gone]
            spent += net
        body = "\n".join(self._render(sections, headings, chosen))
        return (body + ("\nRefs: " + " ".join(refs) if refs else "")).strip("\n")

    @staticmethod
    def _fit_headings(headings: list[str], budget: int) -> list[str]:
        """Headings in order while they fit; the rest are left out (their section stays)."""
        kept, spent = [], 0
        for heading in headings:
            cost = _size(heading) + 7
            kept.append(heading if heading and spent + cost <= budget else "")
            spent += cost if kept[-1] else 0
        return kept

    @staticmethod
    def _fit_refs(surfaces: list[str], budget: int) -> list[str]:
        """Keep as many identifiers as fit, dropping the longest first; order is kept."""
        total = sum(_size(s) + 1 for s in surfaces)
        dropped: set[int] = set()
        for i in sorted(range(len(surfaces)), key=lambda i: (-_size(surfaces[i]), i)):
            if total <= budget:
                break
            dropped.add(i)
            total -= _size(surfaces[i]) + 1
        return [s for i, s in enumerate(surfaces) if i not in dropped]

    @staticmethod
    def _render(
        sections: list[tuple[str, list[str]]], headings: list[str], chosen: set[tuple[int, int]]
    ) -> list[str]:
        lines = []
        for s, (_, sentences) in enumerate(sections):
            picked = [_shorten(t, 240) for n, t in enumerate(sentences) if (s, n) in chosen]
            if not headings[s] and not picked:
                continue
            head = f"**{headings[s]}**" if headings[s] else ""
            lines.append("- " + " ".join(p for p in [head, *picked] if p))
        return lines


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
