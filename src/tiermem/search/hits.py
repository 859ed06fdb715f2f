"""Search: BM25 over every tier and the archive, each result a place, each text once.

The index finds entries: a match in one part of a long entry finds the whole entry, and a
match in a chunk of an archived text its whole section. One text kept in several places (a
decision repeated by a union merge, or kept both in the archive and as an entry) counts
once, from the tier that holds it in its most finished form. What a result shows is a place
in one of those entries (`relevance.places`): the passages that answer, with the ones
around them; a long entry may give two places, never one passage twice.
"""

from __future__ import annotations

from dataclasses import replace

from ..context import Context
from ..index.protocol import Doc, Hit, Scope
from ..options import SearchRequest
from ..relevance import candidates, excerpts, places
from ..relevance.candidates import Candidate
from ..relevance.excerpts import Excerpt
from ..relevance.places import Place
from ..results.reading import Searched, SearchHit
from ..storage import audit
from ..storage.layout import TEAM
from ..storage.validate import entry_ids
from ..team import provenance, use
from ..text import shown, words
from ..text.words import gist
from ..vocabulary import BY_FINISH

# Copies of one text carry different headings (the raw `## 2026-03-04 — Title` of the archived
# file, the entry's bare title): what repeats is the body under them. A body shorter than this
# ("Done.") is too common to say that two texts are one.
_REPEAT_BODY_CHARS = 40
# The entries a search reads its places from, at least.
POOL = 40


def search(ctx: Context, request: SearchRequest) -> Searched:
    """A page of results: the `limit` best after the first `offset`, as every output shows
    them (`shown_hit`), with where the next page starts and what became of the entries a
    query of ids names that no result holds (`forgotten`). Using a cold or wiki entry
    refreshes it: the entries the page shows are marked used, and no others."""
    found, more = places_of(ctx, request)
    ids = entry_ids(request.query)
    hits = [shown_hit(ctx, place, whole=bool(ids)) for place in found]
    return Searched(hits, forgotten(ctx, ids, hits), more)


def places_of(ctx: Context, request: SearchRequest) -> tuple[list[Place], int | None]:
    """The page of places a search shows, and the offset of the next page (None after the
    last).

    With an agent, the search covers that agent's memory, the team's (the decisions and
    policies every agent works under) and the whole wiki, ranked for that agent. A query of
    nothing but entry ids reads those entries, whole; any other query shows places: the
    passages that match it with their neighbours, a short entry whole.
    """
    ctx.sync()
    agent, start, end = request.agent, request.offset, request.offset + request.limit
    owners = None if agent is None else sorted({agent, TEAM})
    scope = Scope((request.tier,) if request.tier else (), tuple(owners or ()), whole_wiki=True)
    if ids := entry_ids(request.query):
        hits, held = _distinct(ctx, [Hit(d, 0.0) for d in _by_ids(ctx, ids, scope)])
        kept = unshown(hits)
        use.mark_used(ctx, [doc for hit in kept[start:end] for doc in held[hit.doc.id]])
        found = [Place(h, Excerpt(h.doc.text, (), h.doc.tokens)) for h in kept[start:end]]
        return found, end if len(kept) > end else None
    # Room for repeats and parts folded away, and for the places: as many entries for any
    # small page, so that a page of results begins the longer list.
    pool = max(POOL, 2 * end + 10)
    while True:
        ranked = ctx.index.search(request.query, scope, pool)
        hits, held = _distinct(ctx, ctx.ranker.rank(ranked, agent))
        shown = _places(request.query, hits, end + 1)  # one more says whether a page follows
        if len(shown) >= end or len(ranked) < pool:
            page = shown[start:end]
            use.mark_used(ctx, [d for place in _entries(page) for d in held[place.hit.doc.id]])
            # A full pool may hold more than it gave: a page may follow then too.
            more = len(shown) > end or (len(shown) == end and len(ranked) == pool)
            return page, end if more else None
        pool *= 4  # so many repeats that the pool ran short: look further


def shown_hit(ctx: Context, place: Place, whole: bool = False) -> SearchHit:
    """A result as every output shows it: its metadata as one inert line each, the title
    that starts its text too (`text.shown`), its spans moved to match; `whole` when it was
    read by its id."""
    doc = place.hit.doc
    _, by = shown.titled(doc.text, doc.title)
    return SearchHit(
        shown.meta(doc.id),
        doc.tier,
        shown.meta(doc.agent),
        shown.meta(doc.path),
        shown.meta(doc.title),
        shown.titled(place.excerpt.text, doc.title)[0],
        round(place.hit.score, 4),
        doc.cls,
        doc.created,
        place.excerpt.tokens,
        shown.meta(doc.session),
        shown.metas(provenance.sources_of(doc)),
        shown.meta(provenance.origin(ctx, doc)),
        shown.moved(place.excerpt.spans, doc.title, by),
        doc.trust,
        whole,
    )


def forgotten(ctx: Context, ids: list[str], hits: list[SearchHit]) -> list[str]:
    """For the ids a query names: each one no hit holds that was forgotten or purged, when,
    why and where its text is kept (the audit trail's word for it, the latest)."""
    held = {h.id for h in hits} | {h.id.split("#")[0] for h in hits}
    missing = [i for i in ids if i not in held]
    if not missing:
        return []  # the common case: nothing more to read
    said: dict[str, str] = {}
    for line in audit.read(ctx.layout):
        gone = line.get("ids")
        if line.get("action") not in ("forget", "purge") or not isinstance(gone, list):
            continue
        for entry_id in set(missing) & set(map(str, gone)):
            said[entry_id] = _forgotten_line(entry_id, line)
    return [said[i] for i in missing if i in said]


def _forgotten_line(entry_id: str, line: dict[str, object]) -> str:
    when = str(line.get("time", ""))[:10] or "an unknown day"
    why = str(line.get("reason", "")) or "no reason given"
    if line.get("action") == "purge":
        return f"{entry_id} was purged on {when} ({why}): its text is gone"
    kept = f"; its text is kept in {line['record']}" if line.get("record") else ""
    return f"{entry_id} was forgotten on {when} ({why}){kept}"


def _by_ids(ctx: Context, ids: list[str], scope: Scope) -> list[Doc]:
    """The documents with these ids; for the id of an entry stored in parts (the id search
    and spawn show for it), its first part, which `_results` joins with the others."""
    docs = ctx.index.by_ids(ids, scope)
    have = {d.id for d in docs}
    for missing in (i for i in ids if i not in have):
        parts = [p for p in ctx.index.parts(missing) if scope.holds(p.tier, p.status, p.agent)]
        docs += parts[:1]
    order = {doc_id: n for n, doc_id in enumerate(ids)}
    return sorted(docs, key=lambda d: order.get(d.parent or d.id, len(order)))


def _places(query: str, hits: list[Hit], limit: int) -> list[Place]:
    """The best places in the entries found (see `relevance.places`); an entry the query
    names by its title shows whole."""
    terms = words.terms(query)
    named = candidates.named([Candidate(h.doc, 1.0) for h in hits], terms)
    whole = frozenset(doc_id for doc_id, lead in named if lead is None)
    return places.best(query, hits, limit, whole)


def _entries(found: list[Place]) -> list[Place]:
    """Each entry once, among results that may show two places of one."""
    return list({p.hit.doc.id: p for p in found}.values())


def _distinct(ctx: Context, ranked: list[Hit]) -> tuple[list[Hit], dict[str, list[Doc]]]:
    """The distinct entries found, whole, in rank order, and the documents each holds (an
    archived text a summary above it repeats is kept: its places show what the summary
    left out, and `relevance.places` shows no passage twice)."""
    wholes, held = _wholes(ctx, ranked)
    return once(wholes), held


def _wholes(ctx: Context, ranked: list[Hit]) -> tuple[list[Hit], dict[str, list[Doc]]]:
    """Each hit as its whole entry, parts joined, in rank order (an entry at the rank of its
    best part), with the documents each one holds; repeats are recognised whole, not by a
    first part."""
    wholes: list[Hit] = []
    held: dict[str, list[Doc]] = {}
    for hit in ranked:
        key = hit.doc.parent or hit.doc.id
        if key in held:
            continue
        held[key] = _parts(ctx, hit.doc) if hit.doc.parent else [hit.doc]
        wholes.append(replace(hit, doc=_joined(held[key])) if hit.doc.parent else hit)
    return wholes, held


def _parts(ctx: Context, part: Doc) -> list[Doc]:
    """The parts of a part's entry, from the one file that holds it (the wiki's, for an entry
    caught halfway through its promotion); the part alone when another process rewrote the
    entry since it matched."""
    parts = ctx.index.parts(part.parent)
    return [p for p in parts if p.path == parts[0].path] or [part]


def once(found: list[Hit]) -> list[Hit]:
    """Each entry and each text once, in rank order.

    One entry can sit in two tiers for a while (promoted in one clone, used in another,
    before Scribe runs after a merge), and one text in several places: each shows once, at
    the rank of its best match, from the tier that holds it in its most finished form.
    """
    groups: dict[str, list[Hit]] = {}
    first_of_id: dict[str, str] = {}
    for hit in found:
        key = first_of_id.setdefault(hit.doc.id, _repeat_key(hit.doc.text))
        groups.setdefault(key, []).append(hit)
    return [_most_finished(group) for group in groups.values()]


def unshown(found: list[Hit]) -> list[Hit]:
    """The hits in rank order, less archived texts that the hits above them already show
    (`excerpts.mostly_shown`).

    An entry of a tier is always kept: it is the finished form, and the use a search records
    keeps it from expiring.
    """
    kept: list[Hit] = []
    shown: list[str] = []
    for hit in found:
        if hit.doc.tier != "archive" or not excerpts.mostly_shown(hit.doc.text, shown):
            kept.append(hit)
            shown.append(gist(hit.doc.text))
    return kept


def _most_finished(group: list[Hit]) -> Hit:
    if len(group) == 1:
        return group[0]
    return replace(min(group, key=lambda h: BY_FINISH.index(h.doc.tier)), score=group[0].score)


def _repeat_key(text: str) -> str:
    """What two copies of one text share: the gist of the body under the heading line."""
    body = gist(text.partition("\n")[2])
    return body if len(body) >= _REPEAT_BODY_CHARS else gist(text)


def _joined(parts: list[Doc]) -> Doc:
    """One document for an entry stored in parts, or a section of an archived text stored in
    chunks: the first one's heading, every text."""
    glue = "" if parts[0].tier == "archive" else "\n\n"  # archive chunks are contiguous text
    return replace(
        parts[0],
        id=parts[0].parent,
        text=glue.join(p.text for p in parts),
        tokens=sum(p.tokens for p in parts),
        parent="",
    )
