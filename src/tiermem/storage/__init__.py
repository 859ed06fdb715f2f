"""The store on disk: where every file of `.squad/` lives (`layout`), every path checked
(`safepath`, `validate`), atomic writes and locks (`files`), tier files and their entries
(`entries`, `store`), the create-only archive (`archive`), the audit log, the merge driver,
`config.toml`, the clock, this clone's own files (`clone`) and the skeleton `init` lays
(`bootstrap`). It may import `text/`, `results` and `errors`; nothing here knows of
the index, the Context or a step.
"""
