"""The search cache built from the files: the `Index` protocol and its documents
(`protocol`); SQLite FTS5 (`fts`), made of parts: the file trusted or built again
(`database`), its shape declared once (`schema`), a sync of the files (`sync`, what it reads
in `parsing`, the rows it writes in `rows`), the questions it answers (`queries`, in the
terms of `matching`), what is derived from a document's text on first read (`derived`), and
its read-only check (`check`); an entry cut into passages once, when indexed (`passages`),
and o200k_base token counts, by tiktoken (`tokens`). The files are the truth and the index
can always be built again from them. It may import `storage/`, `text/`, `results` and
`errors`.
"""
