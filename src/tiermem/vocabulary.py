"""The names memory is sorted by: tiers, where a text came from, the slots of the hot tier,
and the trust a text is kept with.

Each is spelled here once, as a `Literal` type for the type checker and as the tuple of its
names for the code that runs, and so is each subset of them that a part acts on: the store,
`Memory`'s checks, the CLI's choices and the MCP tools' enums all read it, and
`tests/test_vocabulary.py` fails when a tier or the trust word is spelled as a list of names
anywhere else. It imports nothing of tiermem, so every part may, and nothing of `typing` at
run time: start-up stays free of it (`tests/test_startup.py`), and whoever reads annotations
at run time makes the types from the tuples (`types`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Literal

    Tier = Literal["hot", "cold", "wiki", "archive"]
    FileTier = Literal["hot", "cold", "wiki"]
    Queue = Literal["queue"]
    Source = Literal["agent", "user", "tool", "web"]
    HotKind = Literal["action", "decision", "blocker", "note"]
    Trust = Literal["", "untrusted"]

TIERS: tuple[Tier, ...] = ("hot", "cold", "wiki", "archive")  # what search covers
FILE_TIERS: tuple[FileTier, ...] = ("hot", "cold", "wiki")  # markdown files, one per owner
QUEUE: Queue = "queue"  # what waits for Scribe: a store folder, never searched

# The subsets of the tiers the parts act on, each named once.
TIER_FOLDERS: tuple[Tier | Queue, ...] = (*TIERS, QUEUE)  # the store's folders of memory
FILE_FOLDERS: tuple[FileTier | Queue, ...] = (*FILE_TIERS, QUEUE)  # its folders of markdown
# The folders holding one markdown file per agent (the wiki's files are topics).
AGENT_FOLDERS: tuple[FileTier | Queue, ...] = ("hot", "cold", QUEUE)
# The tiers whose entries outlast a session as markdown: what supersede, promotion and
# the use record act on, and where an import's entries land.
LASTING_TIERS: tuple[FileTier, ...] = ("cold", "wiki")
# What a spawn chooses from by its task (hot it loads whole), and the agent's own of them
# (the wiki is the team's).
RECALL_TIERS: tuple[Tier, ...] = ("cold", "wiki", "archive")
OWNED_RECALL_TIERS: tuple[Tier, ...] = ("cold", "archive")
# From the most finished text to the rawest: of copies of one text, search shows the first.
BY_FINISH: tuple[Tier, ...] = ("wiki", "cold", "hot", "archive")

SOURCES: tuple[Source, ...] = ("agent", "user", "tool", "web")  # where a text came from
UNTRUSTED_SOURCES: frozenset[Source] = frozenset({"tool", "web"})  # their text is kept as data

HOT_KINDS: tuple[HotKind, ...] = ("action", "decision", "blocker", "note")  # what hot_add records

# A text's trust: "" for the team's own, UNTRUSTED for data (marked in prompts, never promoted).
TRUSTS: tuple[Trust, ...] = ("", "untrusted")
TRUSTED: Trust = TRUSTS[0]
UNTRUSTED: Trust = TRUSTS[1]

# Each Literal type by name, with the tuple of its names (`types`).
TUPLES = {
    "Tier": TIERS,
    "FileTier": FILE_TIERS,
    "Queue": (QUEUE,),
    "Source": SOURCES,
    "HotKind": HOT_KINDS,
    "Trust": TRUSTS,
}


def trust_of_source(source: str) -> Trust:
    """The trust of a text from this source."""
    return UNTRUSTED if source in UNTRUSTED_SOURCES else TRUSTED


def trust_of_parts(trusts: Iterable[str]) -> Trust:
    """The trust of a text made of parts: untrusted when any part is (data stays data)."""
    return UNTRUSTED if any(trusts) else TRUSTED


def types() -> dict[str, object]:
    """The Literal types by name, made from their tuples, for reading annotations at run time
    (`typing.get_type_hints`); it loads `typing`, which only such a reader needs."""
    from typing import Literal

    return {name: Literal.__getitem__(names) for name, names in TUPLES.items()}
