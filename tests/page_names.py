"""Page names a person would not choose: the generic list the wiki's names are checked
against, on the fixtures and on every team the tests import."""

from __future__ import annotations

import re

# Words no page may be named by: the names a person would not choose that imports once made,
# and their kin.
GENERIC_PAGE_NAMES = frozenset(
    "general key important archived always every must latest major previous original options "
    "line name open match merged recommendations actions audit flex misc notes other summary "
    "update items core decision decisions learning learnings session status note new final "
    "recent current next misc stuff things".split()
)


def page_words(page: str) -> list[str]:
    """The words of a page name, a part number (`-2`) aside."""
    return re.sub(r"-\d+$", "", page).split("-")


def assert_named_by_the_team(pages: list[str], people: set[str]) -> None:
    for page in pages:
        found = set(page_words(page))
        assert not found & GENERIC_PAGE_NAMES, page
        assert not found & people, page
