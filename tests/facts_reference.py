"""Key facts found the way tiermem.text.facts found them as of commit d87628f: each pattern tried at
every position of the whole text. tiermem.text.facts.key_facts now looks only at marked words; the
tests hold it to this output, byte for byte, and tests/facts_timing.py times the two.

The patterns and trim_word are tiermem.text.facts' own (the rules did not change); the helpers
that changed are here as they were.
"""

import re

from tiermem.text.facts import (
    _ABBREVIATION,
    _FILE_SUFFIX,
    _SNAKE_JOINT,
    BACKTICK_SPAN,
    IDENTIFIER,
    ISSUE_REF,
    PATH_LIKE_WORD,
    VERSION,
    trim_word,
)

# The one pattern that changed: tiermem.text.facts now finds the capital of a joint first.
_CAMEL_JOINT = re.compile(r"[a-z][A-Z]")


def key_facts(text: str) -> set[str]:
    """Return the distinct lower-cased key facts of a text."""
    facts: set[str] = set()
    facts.update(ISSUE_REF.findall(text))
    facts.update(_backtick_facts(text))
    facts.update(version.lower() for version in set(VERSION.findall(text)))
    facts.update(_path_facts(text))
    facts.update(_identifier_facts(text))
    return facts


def _backtick_facts(text: str) -> set[str]:
    """Return the trimmed contents of inline code spans of 2 to 60 characters."""
    spans = set(BACKTICK_SPAN.findall(text))
    return {span.strip().lower() for span in spans if 2 <= len(span) <= 60 and span.strip()}


def _path_facts(text: str) -> set[str]:
    """Return the words that look like file names or paths."""
    words = {trim_word(raw) for raw in set(PATH_LIKE_WORD.findall(text))}
    return {word.lower() for word in words if is_path(word)}


def is_path(word: str) -> bool:
    """Tell whether an already trimmed word is a file name or a path."""
    if not any(char.isalpha() for char in word):
        return False
    if "/" in word:
        return True
    return bool(_FILE_SUFFIX.search(word)) and not _ABBREVIATION.match(word)


def _identifier_facts(text: str) -> set[str]:
    """Return the CamelCase and snake_case identifiers of a text."""
    tokens = {token.rstrip("_") for token in set(IDENTIFIER.findall(text))}
    return {token.lower() for token in tokens if is_snake_case(token) or is_camel_case(token)}


def is_camel_case(token: str) -> bool:
    """Tell whether a token has two capitals, one of them right after a lower-case letter."""
    if not _CAMEL_JOINT.search(token):
        return False
    return sum(1 for char in token if char.isupper()) >= 2


def is_snake_case(token: str) -> bool:
    """Tell whether a token joins letters or digits with an underscore and holds a letter."""
    return bool(_SNAKE_JOINT.search(token)) and any(char.isalpha() for char in token)
