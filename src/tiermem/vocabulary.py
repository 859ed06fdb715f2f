"""The names memory is sorted by: tiers, where a text came from, the slots of the hot tier.

Each is spelled here once; the store, `Memory`'s checks, the CLI's choices and the MCP
tools' enums all read it. It imports nothing, so every part may.
"""

from __future__ import annotations

TIERS = ("hot", "cold", "wiki", "archive")  # what search covers
FILE_TIERS = ("hot", "cold", "wiki")  # the tiers kept as markdown files, one per owner
QUEUE = "queue"  # what waits for Scribe: a store folder, never searched

SOURCES = ("agent", "user", "tool", "web")  # where a text came from
UNTRUSTED = frozenset({"tool", "web"})  # kept as data: marked in prompts, never promoted

HOT_KINDS = ("action", "decision", "blocker", "note")  # what hot_add records
