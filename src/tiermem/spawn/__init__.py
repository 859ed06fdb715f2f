"""Search and spawn: BM25 search with its excerpts (`search`), an entry read whole by id
(`lookup`), the spawn prompt assembled within its budget (`assemble`, `prompt`) and the log of
every spawn (`log`). It may import `team/`, `hot/`, the Context, `options`, `relevance/` and
everything below them.
"""
