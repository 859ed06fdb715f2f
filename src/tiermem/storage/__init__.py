"""The store on disk: where every file of `.squad/` lives (`layout`), every path checked
(`safepath`, `validate`), atomic writes and locks (`files`), tier files and their entries
(`entries`, `store`), the create-only archive (`archive`) and its retired passages
(`retired`), the audit trail (`audit`), the merge driver (`merge`), `config.toml`
(`config`), the clock (`clock`), short digests without OpenSSL (`digest`), this clone's own
files (`clone`, `local_state`), Squad's governed memory read as the team's (`governed`) and
the skeleton `init` lays (`bootstrap`). It may import `text/`, `results` and `errors`;
nothing here knows of the index, the Context or a step.
"""
