"""The spawn assembler: the prompt each agent gets, with only what its task needs.

Hot is always loaded. The relevance engine chooses the rest (`relevance.engine`): policies
that bear on the task, pinned first, each whole or not at all; then passages of cold, wiki
and archived text, each group under a short label of its entry, while the room lasts and
memory that bears on the task remains. With --auto the situation read from the task weighs
the tiers; without it, the flags name the tiers. One budget bounds the whole prompt. The same
store, task and flags give a byte-identical prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..context import Context
from ..hot import view as render
from ..index.protocol import Doc, Hit
from ..options import SpawnRequest as SpawnRequest  # where callers of the assembler find it
from ..relevance import candidates, engine, packing, pinning, query, situation
from ..relevance.candidates import Candidate
from ..relevance.packing import Group
from ..results.spawn import Loaded, SpawnResult
from ..team import citations, use
from ..text.facts import key_facts
from ..text.shown import control, fence_safe, meta
from ..vocabulary import LASTING_TIERS, RECALL_TIERS
from . import prompt
from .counts import count, counts

# A <memory> fence and the blank line before it.
FENCE_TOKENS = 12
# Room kept for the escalation's list of ids left out, known only after packing.
LEFT_OUT_TOKENS = 40
# A prompt that lists memory as left out for room should have used at least this share of
# its budget (METRICS.md): one that comes out shorter is packed again with what is left.
FULL_SHARE = 0.95


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


def _cost(ctx: Context, doc: Doc) -> int:
    """Tokens of a whole entry's block: its text (counted when indexed) with the block's
    heading in place of the text's first line."""
    first, _, body = doc.text.partition("\n")
    heading = f"#### {prompt.heading_title(doc.title, body)}{prompt.marks(doc)}"
    return doc.tokens - _heading_tokens(ctx, first) + _heading_tokens(ctx, heading) + 2


def _heading_tokens(ctx: Context, heading: str) -> int:
    return count(ctx, heading)


@dataclass(slots=True)
class _Picked:
    """What the prompt's memory holds, and what bore on the task but did not fit."""

    policies: list[Doc] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    left: list[Doc] = field(default_factory=list)
    full: bool = False  # the room ran out while memory that bears on the task remained
    reasons: dict[str, str] = field(default_factory=dict)  # entry id -> why it is shown
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


def _pin(ctx: Context, groups: list[list[Doc]], budget: int) -> _Picked:
    picked = _Picked()
    spent = 0
    for group in groups:
        cost = sum(_cost(ctx, d) for d in group)
        if spent + cost <= budget:
            picked.policies += group
            spent += cost
            picked.reasons.update((d.id, "a policy that bears on the task") for d in group)
        else:
            picked.left.append(group[0])
            picked.full = True
    return picked


# --- the memory of the prompt ------------------------------------------------------------


def _paths(ctx: Context, topics: Sequence[str]) -> set[str]:
    return {ctx.layout.relative(ctx.layout.tier_file("wiki", t)) for t in topics}


@dataclass(slots=True)
class _Sought:
    """What a spawn's passes over its room share: the query, the candidates and the pinned
    policies the index gave, and the entries the candidates' facts name (asked once per
    list of facts). A second pass packs a larger room from the same reads."""

    asked: query.Query
    weights: dict[str, float]
    hot_text: str
    found: list[Candidate]
    policies: list[list[Doc]]  # the groups pinned first, a policy with its parts
    related: Callable[[list[str]], list[Candidate]]


def _seek(
    ctx: Context, request: SpawnRequest, weights: dict[str, float], hot_text: str
) -> _Sought:
    """The index's reads a spawn chooses from, whatever its room."""
    text = f"{request.task} {request.why}".strip()
    asked = query.build(text, hot_text, query.recent(ctx.index, request.agent))
    tiers = {*LASTING_TIERS, *weights}  # policies are pinned whatever tiers load
    # Found by the task's own words: the context's (hot, the newest entries) weigh what is
    # found, but asked of the index they crowd out the entries the task names.
    found = candidates.find(ctx.index, request.agent, asked.task_text, sorted(tiers))
    pages = _paths(ctx, request.include_wiki or ())
    if pages:
        found = candidates.on_pages(ctx.index, found, pages)
    policies = pinning.policies(ctx.index, ctx.ranker, request.agent, found, text)
    asked_for: dict[tuple[str, ...], list[Candidate]] = {}

    def related(facts: list[str]) -> list[Candidate]:
        key = tuple(facts)
        if key not in asked_for:
            more = candidates.related(ctx.index, request.agent, facts, sorted(weights))
            asked_for[key] = [
                c for c in more if c.doc.tier != "wiki" or not pages or c.doc.path in pages
            ]
        return asked_for[key]

    return _Sought(asked, weights, hot_text, found, policies, related)


def _pick(ctx: Context, request: SpawnRequest, sought: _Sought, room: int) -> _Picked:
    """Pinned policies first, then the passages that fill the rest of the room best."""
    picked = _pin(ctx, sought.policies, int(room * pinning.POLICY_SHARE))
    spent = sum(_cost(ctx, d) for d in picked.policies)
    spent += FENCE_TOKENS * (bool(picked.policies) + 1)
    if sought.weights:
        pinned = {d.id for d in picked.policies}
        rest = [c for c in sought.found if c.doc.id not in pinned]
        held = [sought.hot_text, *(d.text for d in picked.policies)]
        facts = frozenset(key_facts(request.task))
        room_left = max(0, room - spent)
        ask = engine.Ask(sought.asked, request.agent, sought.weights, room_left, held, facts)
        choice = engine.choose(rest, ask, sought.related, ranker=ctx.ranker)
        picked.groups, picked.left = choice.groups, picked.left + choice.left_out
        picked.full = picked.full or choice.full
        picked.reasons.update(choice.reasons)
    _, picked.stale = citations.fresh_first(ctx, [Hit(d, 0.0) for d in picked.used])
    # An entry citing files gone from the repository is shown after those that do not.
    picked.groups.sort(key=lambda g: g.doc.id in picked.stale)
    return picked


# --- rendering ------------------------------------------------------------------------


def _hot_section(ctx: Context, agent: str) -> tuple[str, str, str]:
    """The hot tier's text (empty when there is none), its task, and its fenced block for
    the prompt (empty when hot holds nothing)."""
    view = render.hot_view(ctx, agent)
    if view is None or not view.entries:
        return "", "", ""
    started = view.started  # the newest session's start
    task = " ".join(e.body or e.title for e in view.entries if e.slot == "task")
    label = f'agent="{agent}" as-of="{started[:10] or "now"}"'
    return view.markdown, task, prompt.fenced("hot", label, [fence_safe(view.markdown)])


def _sections(request: SpawnRequest, picked: _Picked) -> dict[str, str]:
    """The fenced text of the pinned policies and of the recalled memory (empty where
    nothing was chosen). Recalled memory is one fence, most relevant first, each group's
    label saying whose it is, what kind, and when it was written."""
    sections: dict[str, str] = {}
    if picked.policies:
        blocks = [prompt.entry_block(d, picked.stale.get(d.id, ())) for d in picked.policies]
        sections["policy"] = prompt.fenced("policy", 'pinned="true"', blocks)
    if not picked.groups:
        return sections
    if request.refs:
        files = sorted({meta(g.doc.path) for g in picked.groups})
        ids = ", ".join(meta(g.doc.parent or g.doc.id) for g in picked.groups)
        sections["recalled"] = "\n".join(f"See: {p}" for p in files) + f"\n(relevant: {ids})"
        return sections
    blocks = [prompt.passage_block(g, picked.stale.get(g.doc.id, ())) for g in picked.groups]
    sections["recalled"] = prompt.fenced("recalled", f'for="{meta(request.agent)}"', blocks)
    return sections


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
    end: prompt.End,
) -> _Prompt:
    """The prompt, and the exact tokens of each section and of the whole."""
    memory = _sections(request, picked)
    text = control(prompt.render(frame, hot_block, memory, end))
    counted = counts(ctx, [hot_block, memory.get("policy", ""), text])
    shares = {"hot": counted[0], "policy": counted[1]}
    for tier in RECALL_TIERS:
        # The recalled memory is one fence, its groups of every tier: each tier's share is
        # the packing's count of its groups (none when the prompt names files instead).
        groups = [] if request.refs else [g for g in picked.groups if g.doc.tier == tier]
        shares[tier] = sum(g.tokens for g in groups)
    shares["total"] = counted[-1]
    return _Prompt(text, shares)


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
    return ["hot"] + [t for t in RECALL_TIERS if t in loaded or (t in named and t != "archive")]


def _end(picked: _Picked) -> prompt.End:
    """What the prompt says after memory: the entries left out when the room ran out while
    memory that bears on the task remained, else that nothing else bears on the task."""
    if picked.full and picked.left_out:
        return prompt.End(left_out=tuple(picked.left_out))
    return prompt.End(complete=bool(picked.used))


def assemble(ctx: Context, request: SpawnRequest) -> SpawnResult:
    """Render the spawn prompt for a request (its agent and budget already checked)."""
    agent = request.agent
    settings = ctx.config.spawn  # a damaged config.toml stops a spawn before anything is read
    budget = request.budget if request.budget is not None else settings.budget_tokens
    # Hot and the charter are read, and the wiki topics named checked, before the sync: a
    # broken hot file or a missing charter is the error the user sees, and nothing is written.
    hot_text, hot_task, hot_block = _hot_section(ctx, agent)
    frame = _frame(ctx, request, "")
    _paths(ctx, request.include_wiki or ())
    ctx.sync()
    seen = situation.read(f"{request.task} {request.why}", hot_task)
    weights = situation.tier_weights(seen, _named(request), request.auto)
    name = seen.name if request.auto else "as requested"
    if request.auto and seen.signs:
        frame = replace(frame, chosen_for=_chosen_for(name, seen))
    bare = prompt.render(frame, hot_block, {}, prompt.End(complete=True))
    kept = count(ctx, bare) + LEFT_OUT_TOKENS
    room = max(0, budget - kept)
    sought = _seek(ctx, request, weights, hot_text)
    picked, out, end = _filled(ctx, request, frame, hot_block, sought, room, budget)
    for _ in range(REFILLS):
        slack = budget - out.tokens["total"]
        if not (picked.full and slack > (1 - FULL_SHARE) * budget):
            break
        # Packing adds up estimated counts, and keeps room for a list of what it left out:
        # the prompt came out short of a room that was full, so it is packed again with the
        # room the rendering left.
        room += slack - REFILL_MARGIN
        picked, out, end = _filled(ctx, request, frame, hot_block, sought, room, budget)
    use.mark_used(ctx, picked.used)
    return SpawnResult(
        agent=agent,
        situation=name,
        reason=_reason(seen, picked) if request.auto else "tiers named by flags",
        tiers=_tiers(request, picked),
        prompt=out.text,
        tokens=out.tokens,
        baseline_tokens=ctx.host.load_tokens(agent),
        sources=[Loaded(d.tier, d.id, d.path, picked.reasons.get(d.id, "")) for d in picked.used],
        left_out=list(end.left_out),
        stale=picked.stale_used(),
        memory_room=room,
    )


# Tokens kept back when the room is packed again: the second estimate errs as the first did.
REFILL_MARGIN = 8
# Times the room is packed again at most (a pass that took a different set can fall short
# again, or be cut back to the budget).
REFILLS = 2


def _filled(
    ctx: Context,
    request: SpawnRequest,
    frame: prompt.Frame,
    hot_block: str,
    sought: _Sought,
    room: int,
    budget: int,
) -> tuple[_Picked, _Prompt, prompt.End]:
    """The memory chosen for a room, and the prompt rendered with it within the budget."""
    picked = _pick(ctx, request, sought, room)
    out = _render(ctx, request, frame, hot_block, picked, _end(picked))
    while out.tokens["total"] > budget and _drop(picked, out.tokens["total"] - budget):
        # Packing adds up estimated counts; the rendered prompt is the truth.
        out = _render(ctx, request, frame, hot_block, picked, _end(picked))
    end = _end(picked)
    return picked, out, end


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
            picked.full = True
            freed += packing.label_tokens(group.label)
    return freed > 0
