"""Wiki topics named from the team's own words, not from a fixed list of subjects.

An entry goes on the page its tag names; else on a page already named by a word of its
title; else on a page named by the title word that most of the entries promoted with it
share (the team's recurring subjects: "terminal", "territory", "publish"), or by its own
first title word when only a few are promoted; else on `general`. Words that say what kind
of note something is ("decision", "session", "update"), dates, numbers and agent names never
name a page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from . import validate
from .entries import Entry
from .errors import UsageError

GENERAL = "general"
# Words that say what kind of note something is, or how it went, not what it is about.
GENERIC = frozenset(
    "a an and are as at be by for from in into is it its of on or the this that to via vs with "
    "without was we what when where which who why how not no new add added adds fix fixed fixes "
    "fixing update updated updates use used using make made get set all any more most one two "
    "after before per over under about across decision decisions directive directives note notes "
    "learning learnings session sessions status summary summaries proposal proposed revised final "
    "complete completed done work working implementation implemented implement plan planned "
    "review reviewed team agent agents user users issue issues pr prs phase part wave step steps "
    "follow followup up change changes changed analysis research report reports context details "
    "overview design spec specs notes misc general other".split()
)
_WORD = re.compile(r"[a-z][a-z0-9]*(?:[+#-][a-z0-9]+)*")
# A word shared by more than this share of a large batch says little about any one entry.
COMMON_SHARE = 0.5
LARGE_BATCH = 10


def words(title: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """The words of a title that could name a page, in title order, each once."""
    found = [w for w in _WORD.findall(title.lower()) if len(w) > 2 or w in ("ci", "ui", "ux")]
    return list(dict.fromkeys(w for w in found if w not in GENERIC and w not in skip))


class Vocabulary:
    """The page names a batch of entries can take: existing pages and shared title words."""

    def __init__(
        self, titles: Iterable[str], pages: Iterable[str], skip: Iterable[str] = ()
    ) -> None:
        self.skip = frozenset(skip)
        self.pages = frozenset(pages)
        listed = [words(t, self.skip) for t in titles]
        self.shared = Counter(w for title_words in listed for w in title_words)
        self.size = len(listed)

    def topic(self, entry: Entry) -> str:
        """The page an entry belongs on."""
        if tag := _tagged(entry):
            return tag
        candidates = [w for w in words(entry.title, self.skip) if _valid(w)]
        named = [w for w in candidates if w in self.pages]
        if named:
            return named[0]
        shared = [w for w in candidates if self._names_a_subject(w)]
        return max(shared, key=lambda w: self.shared[w]) if shared else GENERAL

    def _names_a_subject(self, word: str) -> bool:
        count = self.shared[word]
        if self.size < LARGE_BATCH:
            return count > 0  # a few entries at a time: later ones find the page by its name
        # Many at once (an import): a word of one entry alone would scatter the wiki, one in
        # most of them names no subject.
        return 2 <= count <= self.size * COMMON_SHARE


def _tagged(entry: Entry) -> str:
    for tag in entry.tags:
        if _valid(tag):
            return validate.name(tag, "topic")
    return ""


def _valid(name: str) -> bool:
    try:
        validate.name(name, "topic")
    except UsageError:
        return False
    return True
