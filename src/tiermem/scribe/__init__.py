"""Scribe, the memory keeper: session ends and checkpoints (`session`, `keeper`), summaries
(`summarize`, `llm`), promotion, supersede and expiry (`maintenance`, `supersede`). It may
import `team/`, `hot/`, the Context and everything below them; Squad is reached through
`ctx.host`, never imported.
"""
