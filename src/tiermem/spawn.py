"""The spawn assembler: the prompt each agent gets, with only what its task needs.

Hot is always loaded. Tiers decide what else loads by default (with --auto, read from the
task: past sessions, team knowledge), and relevance decides what earns its tokens: cold,
wiki and archived text compete for one budget, which bounds the whole prompt. Policies that
bear on the task are pinned first, each whole or not at all. The same store, task and flags
give a byte-identical prompt.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from . import agents, citations, prompt, render, tokens, use
from .context import Context
from .index import Doc, Hit, Scope
from .layout import TEAM
from .results import Loaded, SpawnResult
from .search import gist, once, shows
from .squad import baseline, team

# A <memory> fence, its section heading and the blank lines around them.
FENCE_TOKENS = 20
# Room kept for the escalation's list of ids left out, known only after packing.
LEFT_OUT_TOKENS = 60
POLICY_SHARE = 0.15
# Entries scoring under RELEVANCE_FLOOR x the best match only fill the first MIN_FILL of the
# budget (the ranker weighs the agent's own entries more: see `ranking`). Chosen on the four
# corpora's probes: against 0.45 and 2.0, replay coverage rose on three teams and stayed
# within 0.003 on the fourth, while median prompts shrank by 6-20% (docs/benchmarks.md).
RELEVANCE_FLOOR = 0.7
MIN_FILL = 0.3
# Raw archived text ranks a little below the same match in a finished tier, so it earns its
# tokens when it matches the task better than what the active tiers hold.
ARCHIVE_WEIGHT = 0.9
POOL = 60
_STOP = frozenset(
    "a an and are as at be by do for from how in into is it of on or the this to with "
    "what when why add fix make update new use via".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_]*")
_INCIDENT = re.compile(
    r"\b(incident|outage|post-?mortem|retro(spective)?|rca|root cause analysis|sev[0-9])\b", re.I
)
_KNOWLEDGE = re.compile(
    r"\b(spec|specification|adr|contract|convention|conventions|policy|policies|guideline|standard"
    r"|schema|protocol|design doc|onboard(ing)? (to|onto|into|the|a|new|us)|get up to speed"
    r"|architecture|api)\b",
    re.I,
)
_RECURRING = re.compile(
    r"\b(resume|continue|pick up|again|still|recurring|regression|flaky|debug\w*|bug|investigat\w*"
    r"|broke\w*|failing|follow[- ]?up|revisit|re-?open\w*)\b",
    re.I,
)


@dataclass(frozen=True)
class SpawnRequest:
    """What the coordinator asks for."""

    agent: str
    task: str
    why: str = ""
    criteria: tuple[str, ...] = ()
    include_cold: bool = False
    include_wiki: tuple[str, ...] | None = None  # None: no wiki; (): relevant pages; names
    include_archive: bool = False
    auto: bool = False
    budget: int | None = None  # tokens of the whole prompt (default from config)
    charter: bool = False
    refs: bool = False


def content_words(text: str) -> set[str]:
    """Lower-cased words of a task that say what it is about."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _strong(hit: Hit, words: set[str]) -> bool:
    """A hit that shares enough of the task's words to count as evidence."""
    text = f"{hit.doc.title} {hit.doc.text}".lower()
    shared = sum(1 for w in words if w in text)
    return shared >= min(2, len(words))


@dataclass(frozen=True)
class Situation:
    """Which tiers a task needs, and why."""

    name: str
    reason: str
    cold: bool
    wiki: bool
    archive: bool


@dataclass(frozen=True)
class _Found:
    """The task's matches in cold (this agent and the team), the wiki and the archive, and
    the superseded decisions it touches (whose raw text the archive still holds)."""

    cold: list[Hit]
    wiki: list[Hit]
    archive: list[Hit]
    superseded: list[Hit]


def _find(ctx: Context, agent: str, query: str) -> _Found:
    owners = (agent, TEAM)
    cold, wiki, archived, superseded = ctx.index.search_each(
        query,
        [
            Scope(tiers=("cold",), agents=owners, active_only=True),
            Scope(tiers=("wiki",), active_only=True),
            Scope(tiers=("archive",), agents=owners),
            Scope(tiers=("cold", "wiki"), status="superseded"),
        ],
        limit=POOL,
    )
    return _Found(cold, wiki, archived, superseded)


def _unretired(archived: list[Hit], superseded: list[Hit]) -> list[Hit]:
    """Archived text that holds no superseded entry: a decision the team replaced must not
    come back through the archive that keeps its raw text."""
    retired = [b for b in (gist(h.doc.text.partition("\n")[2]) for h in superseded) if len(b) > 20]
    return [h for h in archived if not any(b in gist(h.doc.text) for b in retired)]


def _evidence(hits: list[Hit], words: set[str]) -> Hit | None:
    """The first of the best three hits that shares enough of the task's words."""
    return next((h for h in hits[:3] if _strong(h, words)), None)


def situation(request: SpawnRequest, hot_text: str, found: _Found) -> Situation:
    """Choose tiers from the task's words, the hot state and what memory already holds."""
    task = f"{request.task} {request.why}"
    words = content_words(task)
    if incident := _INCIDENT.search(task):
        reason = f"the task names {incident.group(0)!r}"
        return Situation("post-incident review", reason, True, True, True)
    reasons = []
    cold = wiki = False
    if m := _RECURRING.search(task):
        cold = True
        reasons.append(f"the task says {m.group(0)!r}")
    if words and any(w in hot_text.lower() for w in words) and hot_text:
        cold = True
        reasons.append("it continues the task in hot")
    if m := _KNOWLEDGE.search(task):
        wiki = True
        reasons.append(f"the task names {m.group(0)!r}")
    if not cold and (hit := _evidence(found.cold, words)):
        cold = True
        reasons.append(f"past sessions cover it ({hit.doc.id}: {hit.doc.title[:60]})")
    if not wiki and (hit := _evidence(found.wiki, words)):
        wiki = True
        reasons.append(
            f"the wiki holds standing knowledge on it ({hit.doc.id}: {hit.doc.title[:60]})"
        )
    archive = cold or wiki
    if not archive and (hit := _evidence(found.archive, words)):
        archive = True
        reasons.append(f"the archive holds earlier text on it ({hit.doc.id}: {hit.doc.title[:60]})")
    if not cold and not wiki:
        reasons.insert(0, "no past session or wiki entry matches it")
    return Situation(_name(cold, wiki), "; ".join(reasons), cold, wiki, archive)


def _name(cold: bool, wiki: bool) -> str:
    if cold and wiki:
        return "recurring work under standing decisions"
    if cold:
        return "resuming or debugging something recurring"
    if wiki:
        return "implementing against a spec, ADR or convention"
    return "new task"


def _situation(request: SpawnRequest, hot_text: str, found: _Found) -> Situation:
    """The tiers to load: read from the task with --auto (flags add to it), else the flags."""
    cold, wiki = request.include_cold, request.include_wiki is not None
    archive = request.include_archive
    if not request.auto:
        return Situation("as requested", "tiers named by flags", cold, wiki, archive)
    seen = situation(request, hot_text, found)
    return replace(
        seen, cold=seen.cold or cold, wiki=seen.wiki or wiki, archive=seen.archive or archive
    )


# --- choosing entries -----------------------------------------------------------------


def _cost(counter: tokens.TokenCounter, doc: Doc) -> int:
    """Tokens of an entry's block: its text (counted when indexed) with the block's heading in
    place of the text's first line."""
    first, _, body = doc.text.partition("\n")
    heading = f"#### {prompt.heading_title(doc.title, body)}{prompt.marks(doc)}"
    return doc.tokens - _heading_tokens(counter, first) + _heading_tokens(counter, heading) + 2


# Packing prices every candidate, often the same ones again in a long-lived process (a server,
# a benchmark): their headings are counted once.
_heading_tokens = functools.lru_cache(maxsize=8192)(tokens.count)


@dataclass
class _Picked:
    """What packing chose (and left out) for the memory context."""

    policies: list[Hit] = field(default_factory=list)
    chosen: list[Hit] = field(default_factory=list)
    left: list[Hit] = field(default_factory=list)
    stale: dict[str, list[str]] = field(default_factory=dict)  # id -> cited paths now gone

    @property
    def left_out(self) -> list[str]:
        """Ids of relevant entries that did not fit, most relevant first."""
        return list(dict.fromkeys(h.doc.id for h in self.left))

    @property
    def used(self) -> list[Doc]:
        """Every entry the prompt holds, in prompt order."""
        return [h.doc for h in [*self.policies, *self.chosen]]

    def block(self, doc: Doc) -> str:
        """An entry's block, marked stale where it cites files that are gone."""
        return prompt.entry_block(doc, self.stale.get(doc.id, ()))

    def stale_used(self) -> dict[str, list[str]]:
        """The loaded entries that cite files gone from the repository."""
        return {d.id: self.stale[d.id] for d in self.used if d.id in self.stale}


def _policy_groups(ctx: Context, agent: str, found: _Found) -> list[list[Hit]]:
    """Policies that bear on the task, best first, each whole: all the parts of a long one.

    A policy the task's words do not reach is not pinned: its rule would cost tokens in
    every spawn for nothing. One split in parts is pinned whole or not at all, so the rule
    never arrives without its reasons, nor a pointer without its rule.
    """
    owners = (agent, TEAM)
    hits = [
        h
        for h in [*found.cold, *found.wiki]
        if h.doc.cls == "policy" and (h.doc.tier == "wiki" or h.doc.agent in owners)
    ]
    best = max((h.score for h in hits), default=0.0)
    groups: dict[str, list[Hit]] = {}
    for hit in ctx.ranker.rank([h for h in hits if h.score >= best * RELEVANCE_FLOOR], agent):
        key = hit.doc.parent or hit.doc.id
        if key not in groups:
            parts = ctx.index.parts(key) if hit.doc.parent else [hit.doc]
            groups[key] = [Hit(d, hit.score) for d in parts if not d.status]
    return list(groups.values())


def _pin(counter: tokens.TokenCounter, groups: list[list[Hit]], budget: int) -> _Picked:
    picked = _Picked()
    spent = 0
    for group in groups:
        cost = sum(_cost(counter, h.doc) for h in group)
        if spent + cost <= budget:
            picked.policies += group
            spent += cost
        else:
            picked.left.append(group[0])
    return picked


def _relevant(
    ctx: Context, request: SpawnRequest, found: _Found, seen: Situation, picked: _Picked
) -> list[Hit]:
    """Cold, wiki and archived matches in the order the agent should see them, each text
    once (from the tier that holds it in its most finished form), an entry citing files gone
    from the repository after fresh ones of equal relevance; policies are pinned apart."""
    candidates: list[Hit] = []
    if seen.cold:
        candidates += [h for h in found.cold if h.doc.cls != "policy"]
    if seen.wiki:
        candidates += _wiki_matches(ctx, found, request.include_wiki or ())
    if seen.archive:
        archived = _unretired(found.archive, found.superseded)
        candidates += [replace(h, score=h.score * ARCHIVE_WEIGHT) for h in archived]
    ranked = once(ctx.ranker.rank(candidates, request.agent))
    if seen.cold and not any(h.doc.tier == "cold" for h in ranked):
        ranked += _recent_cold(ctx, request.agent, 3)
    ranked, stale = citations.fresh_first(ctx, ranked)
    picked.stale |= stale
    return ranked


def _wiki_matches(ctx: Context, found: _Found, topics: tuple[str, ...]) -> list[Hit]:
    """Wiki matches, of the named topics if any (all their entries when none matched)."""
    paths = {ctx.layout.relative(ctx.layout.tier_file("wiki", t)) for t in topics}
    hits = [h for h in found.wiki if h.doc.cls != "policy" and (not paths or h.doc.path in paths)]
    if paths and not hits:
        hits = [
            Hit(d, 0.0)
            for d in ctx.index.docs(tier="wiki")
            if d.path in paths and not d.status and d.cls != "policy"
        ]
    return hits


def _recent_cold(ctx: Context, agent: str, n: int) -> list[Hit]:
    docs = [
        d for d in ctx.index.docs(tier="cold", agent=agent) if not d.status and d.cls != "policy"
    ]
    docs.sort(key=lambda d: (d.created, d.id), reverse=True)
    return [Hit(d, 0.0) for d in docs[:n]]


def _pack(
    counter: tokens.TokenCounter, picked: _Picked, candidates: Sequence[Hit], budget: int, fill: int
) -> None:
    """Take candidates in rank order while they fit, less archived texts the prompt already
    shows (an expired summary after the notes it was made from).

    Candidates scoring under RELEVANCE_FLOOR x the best are weak matches: they are only taken
    while less than `fill` tokens are spent, and are not reported as left out when they are
    not.
    """
    floor = max((h.score for h in candidates), default=0.0) * RELEVANCE_FLOOR
    seen = {d.id for d in picked.used}
    shown = [gist(d.text) for d in picked.used]
    spent = 0
    for cand in candidates:
        if cand.doc.id in seen or (cand.doc.tier == "archive" and shows(shown, cand.doc.text)):
            continue
        seen.add(cand.doc.id)
        weak = 0.0 < cand.score < floor
        if weak and spent >= fill:
            continue
        cost = _cost(counter, cand.doc)
        if spent + cost <= budget:
            picked.chosen.append(cand)
            shown.append(gist(cand.doc.text))
            spent += cost
        elif not weak:
            picked.left.append(cand)


def _pick(
    ctx: Context, request: SpawnRequest, found: _Found, seen: Situation, budget: int
) -> _Picked:
    """Pinned policies first, then the relevant entries, within the memory's budget."""
    counter = ctx.tokens
    picked = _pin(counter, _policy_groups(ctx, request.agent, found), int(budget * POLICY_SHARE))
    policies = sum(_cost(counter, h.doc) for h in picked.policies)
    fences = FENCE_TOKENS * (bool(picked.policies) + seen.cold + seen.wiki + seen.archive)
    _, picked.stale = citations.fresh_first(ctx, picked.policies)
    relevant = _relevant(ctx, request, found, seen, picked)
    room = budget - policies - fences
    _pack(counter, picked, relevant, room, int(room * MIN_FILL))
    return picked


# --- rendering ------------------------------------------------------------------------


def _hot_section(ctx: Context, agent: str) -> tuple[str, str]:
    """The hot tier's text (empty when there is none) and its fenced block for the prompt."""
    view = render.hot_view(ctx, agent)
    if view is None and not agents.known(ctx, agent):
        return "", f"(no hot memory for {agent})"
    entries = view.entries if view is not None else ()
    started = min((e.created for e in entries), default="")
    body = view.markdown if view is not None else render.hot_markdown(agent, [])
    label = f'agent="{agent}" as-of="{started[:10] or "now"}"'
    return body if entries else "", prompt.fenced("hot", label, [prompt.fence_safe(body)])


def _sections(request: SpawnRequest, picked: _Picked) -> dict[str, str]:
    """The fenced text of each memory section (empty where nothing was chosen)."""
    sections: dict[str, str] = {}
    if picked.policies:
        blocks = [picked.block(h.doc) for h in picked.policies]
        sections["policy"] = prompt.fenced("policy", 'pinned="true"', blocks)
    labels = {"cold": f'agent="{request.agent}"', "wiki": 'scope="team"', "archive": 'kind="raw"'}
    for tier, label in labels.items():
        docs = [h.doc for h in picked.chosen if h.doc.tier == tier]
        if not docs:
            continue
        if request.refs:
            files = sorted({d.path for d in docs})
            ids = ", ".join(d.id for d in docs)
            sections[tier] = "\n".join(f"See: {p}" for p in files) + f"\n(relevant entries: {ids})"
        else:
            sections[tier] = prompt.fenced(tier, label, [picked.block(d) for d in docs])
    return sections


def _shown(seen: Situation) -> list[str]:
    """The memory sections the situation asked for: shown even when nothing matched."""
    return [tier for tier in ("cold", "wiki") if getattr(seen, tier)]


def _frame(ctx: Context, request: SpawnRequest, seen: Situation) -> prompt.Frame:
    chosen_for = f"{seen.name}: {seen.reason}" if request.auto else ""
    charter = team.charter(ctx, request.agent) if request.charter else ""
    return prompt.Frame(
        request.agent, request.task, request.why, request.criteria, charter, chosen_for
    )


@dataclass
class _Prompt:
    text: str
    tokens: dict[str, int]


def _render(
    ctx: Context,
    request: SpawnRequest,
    frame: prompt.Frame,
    hot_block: str,
    picked: _Picked,
    seen: Situation,
) -> _Prompt:
    """The prompt, and the exact tokens of each section and of the whole."""
    memory = _sections(request, picked)
    text = prompt.render(frame, hot_block, memory, _shown(seen), picked.left_out)
    sections = {"hot": hot_block, **memory}
    counted = ctx.tokens.count_many([*sections.values(), text])
    counts = dict.fromkeys(("hot", "policy", "cold", "wiki", "archive"), 0)
    counts |= dict(zip(sections, counted, strict=False))
    counts["total"] = counted[-1]
    return _Prompt(text, counts)


def _tiers(seen: Situation, picked: _Picked) -> list[str]:
    """Hot, the tiers the situation loads, and the archive when archived text earned a place."""
    tiers = ["hot"] + [t for t in ("cold", "wiki") if getattr(seen, t)]
    return tiers + (["archive"] if any(d.tier == "archive" for d in picked.used) else [])


def assemble(ctx: Context, request: SpawnRequest) -> SpawnResult:
    """Render the spawn prompt for a request (its agent and budget already checked)."""
    agent = request.agent
    budget = request.budget if request.budget is not None else ctx.config.spawn.budget_tokens
    # Hot is read before the sync: a broken hot file is the error the user sees.
    hot_text, hot_block = _hot_section(ctx, agent)
    ctx.sync()
    found = _find(ctx, agent, f"{request.task} {request.why}".strip())
    seen = _situation(request, hot_text, found)
    frame = _frame(ctx, request, seen)
    bare = prompt.render(frame, hot_block, {}, [], [])
    room = budget - tokens.count(ctx.tokens, bare) - LEFT_OUT_TOKENS
    picked = _pick(ctx, request, found, seen, max(0, room))
    out = _render(ctx, request, frame, hot_block, picked, seen)
    while picked.chosen and out.tokens["total"] > budget:
        # Packing adds up counts stored per entry; the rendered prompt is the truth.
        picked.left.insert(0, picked.chosen.pop())
        out = _render(ctx, request, frame, hot_block, picked, seen)
    use.mark_used(ctx, picked.used)
    return SpawnResult(
        agent=agent,
        situation=seen.name,
        reason=seen.reason,
        tiers=_tiers(seen, picked),
        prompt=out.text,
        tokens=out.tokens,
        baseline_tokens=baseline.load_tokens(ctx, agent),
        sources=[Loaded(d.tier, d.id, d.path) for d in picked.used],
        left_out=picked.left_out,
        stale=picked.stale_used(),
    )
