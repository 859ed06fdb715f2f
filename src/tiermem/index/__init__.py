"""The search cache built from the files: the `Index` protocol and its documents
(`protocol`), SQLite FTS5 (`fts`) and its read-only check (`check`), the shape of the file
both read (`schema`), an entry cut into passages once, when indexed (`passages`), and token
counts (`tokens`, `o200k`). The files are the truth and the index can always be built again
from them. It may import `storage/`, `text/`, `results`, `record` and `errors`.
"""
