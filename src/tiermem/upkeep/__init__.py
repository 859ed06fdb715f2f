"""Keeping a store whole and seen: `doctor` (checks and repairs), `stats`, retiring an entry
from every tier, the index and the spawn log (`forget`), and the HTML report (`report`). It
may import `scribe/`, `spawn/`, `team/` and everything below them, never Squad or a front.
"""
