"""What the API returns: one dataclass per result, with one JSON shape for every caller
(`base`), a module per part of the API, so that a command loads the results it returns and
no others: `hot`, `reading` (search, an entry by id, the wiki), `figures` (stats), `scribe`,
`upkeep` (forget, doctor), `spawn`, `report` and `imports`. It may import only the standard
library.
"""
