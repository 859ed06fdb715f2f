"""A person's text as an FTS5 query, and the scope of a query as conditions on rows.

Any text is safe to search: each word is quoted, and any word may match. FTS5 narrows a
query to agents by their owner terms (`schema.owner_term`); tiers, status and files are
conditions on the `docs` rows the ranking is filtered to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..text.words import dropped, name_parts
from .protocol import EVERYWHERE, Scope
from .schema import WIKI_TERM, WORDS, owner_term

_WORD = re.compile(r"\w+", re.UNICODE)


_PHRASE = re.compile(r'"([^"]*)"')  # a quoted run of words


def fts_query(query: str) -> str:
    """Turn any user text into a safe FTS5 query: each word quoted, any word may match; a
    quoted run of words ("retry budget", a path) matches as a phrase."""
    stop = dropped(query)
    phrases = [" ".join(_WORD.findall(p.lower())) for p in _PHRASE.findall(query)]
    loose = _PHRASE.sub(" ", query).lower()
    words: list[str] = [p for p in dict.fromkeys(phrases) if p]
    for word in [*_WORD.findall(loose), *name_parts(_PHRASE.sub(" ", query))]:
        if word not in words and word not in stop:
            words.append(word)
    if not words:  # a query of stop words only still means something
        words = list(dict.fromkeys(_WORD.findall(loose)))
    return " OR ".join(f'"{w}"' for w in words)


def match(words: str, scope: Scope = EVERYWHERE) -> str:
    """The FTS5 query: any of the words, in a title or text, of one of the scope's agents if
    it names some (and of anyone in the wiki, with `whole_wiki`).

    FTS5 narrows by agent itself, skipping through the agent's short list of rows. Tier and
    status are left to `search_filter`: their terms would be in most rows, and BM25 reads the
    whole row list of every term in the query to weigh it.
    """
    match = f"{WORDS}: ({words})"
    if scope.agents:
        owners = [owner_term(a) for a in scope.agents] + ([WIKI_TERM] if scope.whole_wiki else [])
        match += f" AND owner: ({' OR '.join(owners)})"
    return match


def row_conditions(scope: Scope) -> tuple[list[str], list[object]]:
    """Conditions on `docs` rows by tier, owner and status, with their arguments."""
    found: list[str] = []
    args: list[object] = []
    if scope.active_only:
        found.append("status=''")
    for column, values in (("tier", scope.tiers), ("agent", scope.agents)):
        if values:
            condition = f"{column} IN ({','.join('?' * len(values))})"
            if column == "agent" and scope.whole_wiki:
                condition = f"({condition} OR tier='wiki')"
            found.append(condition)
            args.extend(values)
    if scope.status:
        found.append("status=?")
        args.append(scope.status)
    return found, args


def _rowid_filter(conditions: Sequence[str], args: list[object]) -> tuple[str, list[object]]:
    """An FTS5 query's filter to the rows that meet all the conditions.

    The filter is a set of rowids built once per query (the `+` keeps SQLite from looking the
    set up row by row through FTS5), so BM25 scores only the documents in scope.
    """
    if not conditions:
        return "", []
    where = " AND ".join(conditions)
    return f" AND +docs_fts.rowid IN (SELECT rowid FROM docs WHERE {where})", args


def search_filter(scope: Scope) -> tuple[str, list[object]]:
    """The filter of a search by tier and status; by agent only along with those (alone,
    the agents are narrowed by FTS5 itself: see `match`)."""
    if not (scope.tiers or scope.active_only or scope.status):
        scope = replace(scope, agents=())
    return _rowid_filter(*row_conditions(scope))


def scope_condition(scope: Scope) -> tuple[str, list[object]]:
    """The condition on `docs` rows of a scope, with its arguments."""
    found, args = row_conditions(scope)
    return " AND ".join(found) or "1", args
