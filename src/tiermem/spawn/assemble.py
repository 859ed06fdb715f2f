"""The spawn assembler: the prompt each agent gets, with only what its task needs.

Hot is always loaded. Policies that bear on the task are pinned first, each whole or not at
all (`relevance.pinning`). The rest of the room goes to passages of cold, wiki and archived
text, chosen by the relevance engine (`relevance`), each group under a short label of its
entry. With --auto
the situation read from the task weighs the tiers; without it, the flags name the tiers.
One budget bounds the whole prompt. The same store, task and flags give a byte-identical
prompt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..context import Context
from ..hot import view as render
from ..index import tokens
from ..index.protocol import Doc, Hit
from ..options import SpawnRequest as SpawnRequest  # where callers of the assembler find it
from ..relevance import candidates, engine, packing, pinning, query, situation
from ..relevance.candidates import Candidate
from ..relevance.packing import Group
from ..results.spawn import Loaded, SpawnResult
from ..storage.layout import TEAM
from ..team import agents, citations, use
from ..text.shown import control, fence_safe, meta
from . import prompt

# A <memory> fence, its section heading and the blank lines around them.
FENCE_TOKENS = 20
# Room kept for the escalation's list of ids left out, known only after packing.
LEFT_OUT_TOKENS = 60
MEMORY_TIERS = ("cold", "wiki", "archive")


def _named(request: SpawnRequest) -> set[str]:
    named = set()
    if request.include_cold:
        named.add("cold")
    if request.include_wiki is not None:
        named.add("wiki")
    if request.include_archive:
        named.add("archive")
    return named


# --- policies ------------------------------------------------------------------------


def _cost(counter: tokens.TokenCounter, doc: Doc) -> int:
    """Tokens of a whole entry's block: its text (counted when indexed) with the block's
    heading in place of the text's first line."""
    first, _, body = doc.text.partition("\n")
    heading = f"#### {prompt.heading_title(doc.title, body)}{prompt.marks(doc)}"
    return doc.tokens - _heading_tokens(counter, first) + _heading_tokens(counter, heading) + 2


# Pinning prices every policy, often the same ones again in a long-lived process (a server,
# a benchmark): their headings are counted once.
_heading_tokens = functools.lru_cache(maxsize=8192)(tokens.count)


@dataclass(slots=True)
class _Picked:
    """What the prompt's memory holds, and what bore on the task but did not fit."""

    policies: list[Doc] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    left: list[Doc] = field(default_factory=list)
    stale: dict[str, list[str]] = field(default_factory=dict)  # id -> cited paths now gone

    @property
    def left_out(self) -> list[str]:
        """Ids of relevant entries that did not fit, most relevant first."""
        return list(dict.fromkeys(d.parent or d.id for d in self.left))

    @property
    def used(self) -> list[Doc]:
        """Every entry the prompt holds a passage of, in prompt order."""
        return [*self.policies, *(g.doc for g in self.groups)]

    def stale_used(self) -> dict[str, list[str]]:
        """The loaded entries that cite files gone from the repository."""
        return {d.id: self.stale[d.id] for d in self.used if d.id in self.stale}


def _pin(counter: tokens.TokenCounter, groups: list[list[Doc]], budget: int) -> _Picked:
    picked = _Picked()
    spent = 0
    for group in groups:
        cost = sum(_cost(counter, d) for d in group)
        if spent + cost <= budget:
            picked.policies += group
            spent += cost
        else:
            picked.left.append(group[0])
    return picked


# --- the memory of the prompt ------------------------------------------------------------


def _paths(ctx: Context, topics: Sequence[str]) -> set[str]:
    return {ctx.layout.relative(ctx.layout.tier_file("wiki", t)) for t in topics}


def _pick(
    ctx: Context,
    request: SpawnRequest,
    weights: dict[str, float],
    hot_text: str,
    room: packing.Room,
) -> _Picked:
    """Pinned policies first, then the passages that fill the rest of the room best."""
    text = f"{request.task} {request.why}".strip()
    counter = ctx.tokens
    asked = query.build(text, hot_text, query.recent(ctx.index, request.agent))
    tiers = {"cold", "wiki", *weights}  # policies are pinned whatever tiers load
    found = candidates.find(ctx.index, request.agent, asked.task_text, sorted(tiers))
    pages = _paths(ctx, request.include_wiki or ())
    if pages:
        found = candidates.on_pages(ctx.index, found, pages)
    policies = pinning.policies(ctx.index, ctx.ranker, request.agent, found, text)
    picked = _pin(counter, policies, int(room.fill * pinning.POLICY_SHARE))
    spent = sum(_cost(counter, d) for d in picked.policies)
    fences = FENCE_TOKENS * (bool(picked.policies) + len(weights))
    if weights:
        pinned = {d.id for d in picked.policies}
        rest = [c for c in found if c.doc.id not in pinned]

        def related(facts: list[str]) -> list[Candidate]:
            more = candidates.related(ctx.index, request.agent, facts, sorted(weights))
            return [c for c in more if c.doc.tier != "wiki" or not pages or c.doc.path in pages]

        left = packing.Room(
            max(0, room.total - spent - fences),
            max(0, room.fill - spent - fences),
            int(max(0, room.total - spent - fences) * packing.WHOLE_SHARE),
        )
        held = [hot_text, *(d.text for d in picked.policies)]
        choice = engine.choose(
            rest, request.agent, asked, weights, left, related, held, ranker=ctx.ranker
        )
        picked.groups, picked.left = choice.groups, picked.left + choice.left_out
    _, picked.stale = citations.fresh_first(ctx, [Hit(d, 0.0) for d in picked.used])
    return picked


# --- rendering ------------------------------------------------------------------------


def _hot_section(ctx: Context, agent: str) -> tuple[str, str]:
    """The hot tier's text (empty when there is none) and its fenced block for the prompt."""
    view = render.hot_view(ctx, agent)
    if view is None and not agents.known(ctx, agent):
        return "", f"(no hot memory for {agent})"
    entries = view.entries if view is not None else ()
    started = view.started if view is not None else ""  # the newest session's start
    body = view.markdown if view is not None else render.hot_markdown(agent, [])
    label = f'agent="{agent}" as-of="{started[:10] or "now"}"'
    return body if entries else "", prompt.fenced("hot", label, [fence_safe(body)])


def _sections(request: SpawnRequest, picked: _Picked) -> dict[str, str]:
    """The fenced text of each memory section (empty where nothing was chosen): in each
    tier, the asking agent's own memory in its fence first, then each other owner's in a
    fence of its own (the wiki is the team's, one fence)."""
    sections: dict[str, str] = {}
    if picked.policies:
        blocks = [prompt.entry_block(d, picked.stale.get(d.id, ())) for d in picked.policies]
        sections["policy"] = prompt.fenced("policy", 'pinned="true"', blocks)
    for tier in MEMORY_TIERS:
        groups = [g for g in picked.groups if g.doc.tier == tier]
        if not groups:
            continue
        if request.refs:
            files = sorted({meta(g.doc.path) for g in groups})
            ids = ", ".join(meta(g.doc.parent or g.doc.id) for g in groups)
            sections[tier] = "\n".join(f"See: {p}" for p in files) + f"\n(relevant entries: {ids})"
            continue
        fences = []
        for owner, owned in _by_owner(tier, groups, request.agent):
            blocks = [prompt.passage_block(g, picked.stale.get(g.doc.id, ())) for g in owned]
            fences.append(prompt.fenced(tier, _fence_label(tier, owner), blocks))
        sections[tier] = "\n\n".join(fences)
    return sections


def _by_owner(tier: str, groups: list[Group], agent: str) -> list[tuple[str, list[Group]]]:
    """A tier's groups by whose they are: the agent's own first, then others in the order
    the prompt shows them; the wiki is the team's."""
    if tier == "wiki":
        return [(TEAM, groups)]
    owners: dict[str, list[Group]] = {agent: []}
    for group in groups:
        owners.setdefault(group.doc.agent or TEAM, []).append(group)
    return [(owner, owned) for owner, owned in owners.items() if owned]


def _fence_label(tier: str, owner: str) -> str:
    if tier == "wiki":
        return 'scope="team"'
    raw = 'kind="raw" ' if tier == "archive" else ""
    return f'{raw}agent="{owner}"'


def _frame(ctx: Context, request: SpawnRequest, chosen_for: str) -> prompt.Frame:
    charter = ctx.host.charter(request.agent) if request.charter else ""
    return prompt.Frame(
        request.agent, request.task, request.why, request.criteria, charter, chosen_for
    )


@dataclass(slots=True)
class _Prompt:
    text: str
    tokens: dict[str, int]


def _render(
    ctx: Context,
    request: SpawnRequest,
    frame: prompt.Frame,
    hot_block: str,
    picked: _Picked,
    shown: Sequence[str],
) -> _Prompt:
    """The prompt, and the exact tokens of each section and of the whole."""
    memory = _sections(request, picked)
    text = control(prompt.render(frame, hot_block, memory, shown, picked.left_out))
    sections = {"hot": hot_block, **memory}
    counted = ctx.tokens.count_many([*sections.values(), text])
    counts = dict.fromkeys(("hot", "policy", "cold", "wiki", "archive"), 0)
    counts |= dict(zip(sections, counted, strict=False))
    counts["total"] = counted[-1]
    return _Prompt(text, counts)


def _reason(seen: situation.Situation, picked: _Picked) -> str:
    """Why this memory: the signs in the task, then the entries the prompt holds from each
    tier (by id only: memory text never reaches the prompt outside a fence)."""
    found = list(seen.signs)
    for tier, what in (
        ("cold", "past sessions cover it"),
        ("wiki", "the wiki holds standing knowledge on it"),
        ("archive", "the archive holds earlier text on it"),
    ):
        ids = [g.doc.parent or g.doc.id for g in picked.groups if g.doc.tier == tier][:1]
        if ids:
            found.append(f"{what} ({', '.join(ids)})")
    return "; ".join(found) or "nothing in memory matches it"


def _chosen_for(name: str, seen: situation.Situation) -> str:
    """The prompt's line on the situation: its name and the signs in the task (the entries
    that bear on it are labelled below; memory text is never quoted outside a fence)."""
    return f"{name} ({'; '.join(seen.signs)})" if seen.signs else name


def _loaded(picked: _Picked) -> frozenset[str]:
    """The tiers the prompt holds passages of (pinned policies are a section of their own)."""
    return frozenset(g.doc.tier for g in picked.groups)


def _tiers(request: SpawnRequest, picked: _Picked) -> list[str]:
    """Hot, and every tier the prompt holds memory from (or the flags name)."""
    loaded = _loaded(picked)
    named = set() if request.auto else _named(request)
    return ["hot"] + [t for t in MEMORY_TIERS if t in loaded or (t in named and t != "archive")]


def assemble(ctx: Context, request: SpawnRequest) -> SpawnResult:
    """Render the spawn prompt for a request (its agent and budget already checked)."""
    agent = request.agent
    budget = request.budget if request.budget is not None else ctx.config.spawn.budget_tokens
    # Hot and the charter are read, and the wiki topics named checked, before the sync: a
    # broken hot file or a missing charter is the error the user sees, and nothing is written.
    hot_text, hot_block = _hot_section(ctx, agent)
    frame = _frame(ctx, request, "")
    _paths(ctx, request.include_wiki or ())
    ctx.sync()
    seen = situation.read(f"{request.task} {request.why}", hot_text)
    weights = situation.tier_weights(seen, _named(request), request.auto)
    bare = prompt.render(frame, hot_block, {}, [], [])
    kept = tokens.count(ctx.tokens, bare) + LEFT_OUT_TOKENS + _REASON_TOKENS * request.auto
    fill = int(budget * ctx.config.spawn.fill_share)
    room = packing.Room(max(0, budget - kept), max(0, fill - kept), 0)
    picked = _pick(ctx, request, weights, hot_text, room)
    name = seen.name if request.auto else "as requested"
    reason = _reason(seen, picked) if request.auto else "tiers named by flags"
    frame = replace(frame, chosen_for=_chosen_for(name, seen) if request.auto else "")
    shown = [t for t in ("cold", "wiki") if t in weights and not request.auto]
    out = _render(ctx, request, frame, hot_block, picked, shown)
    while out.tokens["total"] > budget and _drop(picked, out.tokens["total"] - budget):
        # Packing adds up estimated counts; the rendered prompt is the truth.
        out = _render(ctx, request, frame, hot_block, picked, shown)
    use.mark_used(ctx, picked.used)
    return SpawnResult(
        agent=agent,
        situation=name,
        reason=reason,
        tiers=_tiers(request, picked),
        prompt=out.text,
        tokens=out.tokens,
        baseline_tokens=ctx.host.load_tokens(agent),
        sources=[Loaded(d.tier, d.id, d.path) for d in picked.used],
        left_out=picked.left_out,
        stale=picked.stale_used(),
        memory_room=room.fill,
    )


# Room kept for the line saying which situation the task was read as, and which entries.
_REASON_TOKENS = 60


def _drop(picked: _Picked, over: int) -> bool:
    """Take the last chosen passages out (a group with its last one) until about `over`
    tokens are freed; False when there is nothing left to take out."""
    freed = 0
    while picked.groups and freed < over:
        group = picked.groups[-1]
        freed += group.pieces.pop().tokens
        if not group.pieces:
            picked.groups.pop()
            picked.left.insert(0, group.doc)
            freed += packing.label_tokens(group.label)
    return freed > 0
