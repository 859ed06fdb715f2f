"""Packing: the passages that fill a prompt's room, grouped under their entries.

Greedy, by value per token: a passage is worth its score, and more for each concrete fact
(a path, an identifier, an issue number, a quoted command) the prompt does not hold yet,
since those are what the next piece of work looks up and reuses; a fact shown once is not
worth showing again. The first passage of an entry also pays for the entry's label. An
entry the task names (its title says what the task says) is shown whole, first. The room
is filled while passages remain: the budget is the user's limit, and what is worth showing
is chosen before packing (`engine`).
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..index.protocol import Doc
from .candidates import Named
from .scoring import Piece

# What a passage is worth for its match to the task alone (its score times this), besides
# the chances of the new facts it brings.
BASE_VALUE = 0.02
# The tokens a label costs beyond its text: heading marks and the line break.
LABEL_OVERHEAD = 4
# Entries the task names (shown whole) may take this share of the room.
WHOLE_SHARE = 0.5


@dataclass(slots=True)
class Group:
    """The passages chosen from one entry, in the order the entry holds them."""

    doc: Doc
    label: str
    pieces: list[Piece] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """What the group costs: its label, its passages and their leads."""
        leads = {p.passage.lead: p.lead_tokens for p in self.pieces if p.passage.lead}
        return label_tokens(self.label) + sum(p.tokens for p in self.pieces) + sum(leads.values())

    @property
    def ordered(self) -> list[Piece]:
        """Its passages in the entry's order."""
        return sorted(self.pieces, key=lambda p: p.passage.start)


@functools.lru_cache(maxsize=8192)
def label_tokens(label: str) -> int:
    """A label's tokens, estimated: about four characters a token in its words, but ids and
    dates (hexadecimal and digits) are about 1.7 characters a token (cached: the same
    labels come back spawn after spawn)."""
    coded = sum(len(m) for m in _CODED.findall(label))
    return LABEL_OVERHEAD + (len(label) - coded + 3) // 4 + (coded * 10 + 12) // 17


_CODED = re.compile(r"[0-9a-f]{6,}|\d{4}-\d\d-\d\d")


@dataclass(frozen=True, slots=True)
class Room:
    """The tokens memory may take: in all, and of them for the entries the task names."""

    total: int
    whole: int


@dataclass(slots=True)
class Packed:
    """The groups packed, and whether the room ran out while passages were still to show."""

    groups: list[Group]
    full: bool


@dataclass(slots=True)
class _State:
    covered: set[str]
    worth: Mapping[str, float]  # fact -> its chance of being used
    shown: set[str] = field(default_factory=set)
    leads: set[tuple[str, int]] = field(default_factory=set)  # (doc id, lead start) shown
    groups: dict[str, Group] = field(default_factory=dict)
    spent: int = 0
    capped: dict[str, int] = field(default_factory=dict)  # doc id -> tokens still allowed


def pack(
    pieces: Sequence[Piece],
    room: Room,
    labels: Mapping[str, str],
    worth: Mapping[str, float],
    caps: Mapping[str, int] | None = None,
    whole: Sequence[Named] = (),
) -> Packed:
    """The groups of passages to show within the room, most valuable first.

    `labels` gives each document's label; `worth` each fact's chance of being used; `caps`
    the most tokens some documents may take (an agent's standing knowledge). The documents
    in `whole` (entries and sections the task names: a document's id, and the lead of the
    section or None for the whole entry) are taken first and whole, while they fit in the
    room's share for them; passages then fill the rest of the room.
    """
    state = _State(set(), worth, capped=dict(caps or {}))
    costs = {doc_id: label_tokens(text) for doc_id, text in labels.items()}
    siblings: dict[str, list[int]] = {}
    for n, p in enumerate(pieces):
        siblings.setdefault(p.doc.id, []).append(n)
    taken = _take_whole(pieces, whole, siblings, state, costs, labels, room.whole)
    limit = room.total
    # Taken, or never to be: a passage is looked at while it may still be taken.
    closed = taken | {n for n, p in enumerate(pieces) if p.listed}
    heap = [(-_value(p, state, costs), n) for n, p in enumerate(pieces) if n not in closed]
    heapq.heapify(heap)
    full = False
    while heap:
        negative, n = heapq.heappop(heap)
        if n in closed:
            continue
        piece = pieces[n]
        value = _value(piece, state, costs)
        if value < -negative - 1e-12:
            heapq.heappush(heap, (-value, n))
            continue
        if value <= 0 or not (piece.topical or piece.passage.facts - state.covered):
            continue  # shown already; or no new name, and not a word of the task either
        if not _fits(piece, state, costs, limit):
            full = full or state.spent + _cost(piece, state, costs) > limit
            continue
        closed.add(n)
        if _take(piece, state, costs, labels):  # opening its group made its siblings cheaper
            cheaper = (m for m in siblings[piece.doc.id] if m not in closed)
            heap.extend((-_value(pieces[m], state, costs), m) for m in cheaper)
            heapq.heapify(heap)
    return Packed(list(state.groups.values()), full)


def _take_whole(
    pieces: Sequence[Piece],
    whole: Sequence[Named],
    siblings: Mapping[str, list[int]],
    state: _State,
    costs: Mapping[str, int],
    labels: Mapping[str, str],
    room: int,
) -> set[int]:
    """Take every passage of each entry or section in `whole`, in order, while one fits whole
    (less what those taken before it show already); of one too long to fit, the passages
    worth most for their tokens, while they fit."""
    taken: set[int] = set()
    for doc_id, lead in whole:
        members = [
            n
            for n in siblings.get(doc_id, [])
            if n not in taken
            and (lead is None or pieces[n].passage.lead == lead)
            and not _repeats(pieces[n], state)
        ]
        cost = costs[doc_id] + sum(pieces[n].tokens + pieces[n].lead_tokens for n in members)
        if not members:
            continue
        if state.spent + cost > room:
            members = _best_that_fit(pieces, members, state, costs, room)
        for n in members:
            _take(pieces[n], state, costs, labels)
            taken.add(n)
    return taken


def _best_that_fit(
    pieces: Sequence[Piece],
    members: list[int],
    state: _State,
    costs: Mapping[str, int],
    room: int,
) -> list[int]:
    """The passages of one entry to show when it cannot be shown whole: greedily the worth
    most for their tokens (as the entry's group would price them), in the entry's order."""
    chosen: list[int] = []
    trial = _State(set(state.covered), state.worth, set(state.shown), set(state.leads))
    trial.groups = dict(state.groups)
    trial.spent = state.spent
    left = list(members)
    while left:
        best = max(left, key=lambda n: _value(pieces[n], trial, costs))
        left.remove(best)
        if _value(pieces[best], trial, costs) <= 0 or not _fits(pieces[best], trial, costs, room):
            continue
        chosen.append(best)
        piece = pieces[best]
        trial.spent += _cost(piece, trial, costs)
        trial.covered |= piece.passage.facts
        trial.shown |= sentences(piece.text)
        if piece.passage.lead is not None:
            trial.leads.add((piece.doc.id, piece.passage.lead[0]))
        trial.groups.setdefault(piece.doc.id, Group(piece.doc, ""))
    return sorted(chosen)


def _repeats(piece: Piece, state: _State) -> bool:
    """Whether every sentence of a passage is shown already."""
    return sentences(piece.text) <= state.shown


def _cost(piece: Piece, state: _State, costs: Mapping[str, int]) -> int:
    """A passage's tokens, its label's when it would open its group, and its lead's when
    the group does not show it yet."""
    label = 0 if piece.doc.id in state.groups else costs[piece.doc.id]
    return piece.tokens + label + (0 if _lead_shown(piece, state) else piece.lead_tokens)


def _lead_shown(piece: Piece, state: _State) -> bool:
    lead = piece.passage.lead
    return lead is None or (piece.doc.id, lead[0]) in state.leads


def _value(piece: Piece, state: _State, costs: Mapping[str, int]) -> float:
    if sentences(piece.text) <= state.shown:
        return 0.0
    new = sum(state.worth.get(f, 0.0) for f in piece.passage.facts - state.covered)
    return (piece.score * BASE_VALUE + new) / _cost(piece, state, costs)


def _fits(piece: Piece, state: _State, costs: Mapping[str, int], room: int) -> bool:
    if sentences(piece.text) <= state.shown:
        return False
    cap = state.capped.get(piece.doc.id)
    if cap is not None and piece.tokens > cap:
        return False
    return state.spent + _cost(piece, state, costs) <= room


def _take(piece: Piece, state: _State, costs: Mapping[str, int], labels: Mapping[str, str]) -> bool:
    """Add a passage to its group; whether that opened the group or a lead of it (which
    makes its siblings cheaper)."""
    state.spent += _cost(piece, state, costs)
    state.covered |= piece.passage.facts
    state.shown |= sentences(piece.text)
    opened_lead = not _lead_shown(piece, state)
    if piece.passage.lead is not None:
        state.leads.add((piece.doc.id, piece.passage.lead[0]))
    if piece.doc.id in state.capped:
        state.capped[piece.doc.id] -= piece.tokens
    group = state.groups.get(piece.doc.id)
    if group is None:
        group = state.groups[piece.doc.id] = Group(piece.doc, labels[piece.doc.id])
        group.pieces.append(piece)
        return True
    group.pieces.append(piece)
    return opened_lead


@functools.lru_cache(maxsize=65536)
def sentences(text: str) -> frozenset[str]:
    """The gists of a passage's sentences: a passage all of whose sentences the prompt shows
    already (in a summary's line, a note's paragraph) is a repeat."""
    found = (gist(_MARKER.sub("", s)) for s in _SENTENCE_END.split(text))
    return frozenset(s for s in found if s)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def gist(text: str) -> str:
    """A text as compared for repeats: lower case, its spaces folded."""
    return " ".join(text.lower().split())
