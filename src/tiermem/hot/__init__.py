"""The hot tier: an agent's current session, its slots and their labels (`tier`), the writes
that keep it within its budget (`writes`), its Markdown view (`view`) and the sessions this
clone started (`clone_sessions`, clone-local state). It may import the Context, `index/`,
`storage/`, `text/`, `results` and `errors`; Scribe's checkpoint is reached through
`ctx.keeper`, never imported.
"""
