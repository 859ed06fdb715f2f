"""Search: BM25 over every tier and the archive, each result a whole entry and each text once,
with its excerpts (`hits`), and an entry read whole by any id a search or a spawn gives
(`lookup`). It may import `team/`, the Context, `relevance/` and everything below them.
"""
