"""The store's upkeep: `doctor` (checks and repairs), `stats` (what each agent's memory holds)
and retiring an entry from every tier, the index and the spawn log (`forget`). It may import
`spawn/` and everything below it, never Squad or a front.
"""
