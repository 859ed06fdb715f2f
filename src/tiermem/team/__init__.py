"""Team memory: agents and their charters (`agents`), decisions into the team's tier
(`decisions`), wiki pages and their topics (`wiki`, `topics`), entry classes (`classify`),
cited paths (`citations`), last use (`use`), where an entry came from (`provenance`) and
which entries are versions of one section of a Squad file (`sections`). It may import
`hot/` and everything below it; Squad is reached through `ctx.host`.
"""
