"""Search: BM25 over every tier and the archive, each text once, each result a place in an
entry (the passages that answer, with their neighbours; `hits`, choosing them with
`relevance.places`), and an entry read whole by any id a search or a spawn gives (`lookup`).
It may import `team/`, the Context, `relevance/` and everything below them.
"""
