"""Key facts of a text, and the retention and coverage figures built on them.

A key fact is a distinct, lower-cased string of one of these kinds:

- issue or PR reference: ``#`` followed by digits (``#977``);
- backticked span: the content between two backticks on one line, 2 to 60 characters,
  with surrounding blanks trimmed (`` `squad nap` `` gives ``squad nap``);
- file name or path: a *word* that contains a letter and either contains ``/`` or ends in
  a dot and 1 to 5 ASCII letters (``nap.ts``, ``src/cli/index.ts``,
  ``.squad/decisions.md``);
- version: optional ``v``, digits, dot, digits, optionally dot and digits (``v0.9.1``),
  not preceded by a letter, digit, underscore or dot, so ``net8.0`` and the tail of
  ``1.2.3.4`` are not versions;
- identifier: a maximal run of ASCII letters, digits and underscores that starts with a
  letter once leading underscores are dropped, and is either
  CamelCase (two or more capitals, one of them right after a lower-case letter:
  ``StorageProvider``, ``getUserName``; not ``IRenderer`` or ``API``) or snake_case
  (an underscore between two letters or digits: ``history_shadow``, ``MAX_SIZE``), with
  leading and trailing underscores dropped so that ``_emphasis_`` marks stay out.

A *word* is a run of characters delimited by whitespace or by one of
`` ( ) [ ] { } < > " ` | , ; ``: markdown wraps paths in these (``(#977)``,
``[docs](docs/a.md)``, `` `nap.ts` ``) and paths seldom hold them. Then ``* ' : ! ?`` are
trimmed from both ends and ``.`` from the end only, since a leading dot starts a path such
as ``.squad/`` while a trailing one ends a sentence (``**v0.9.1**`` gives ``v0.9.1``,
``nap.ts.`` gives ``nap.ts``). Dotted abbreviations such as ``e.g.`` and ``i.e.`` are not
file names.
"""

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

ISSUE_REF = re.compile(r"#\d+")
# Spans of any length are matched so backticks pair up left to right; length is checked after.
BACKTICK_SPAN = re.compile(r"`([^`\n]*)`")
VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?", re.IGNORECASE)
# A name-like run: a letter first once leading underscores are dropped (a digit first makes a
# number or a hex literal such as 0xBF), then a CamelCase joint before the first underscore or
# an underscore followed by more of the name. Plain words fail inside the regex engine, which
# is what keeps a megabyte of text fast.
IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_])_*(?=[A-Za-z])"
    r"(?=[A-Za-z0-9]*(?:[a-z][A-Z]|_+[A-Za-z0-9]))"
    r"([A-Za-z0-9_]+)"
)
_SEPARATORS = r"\s()\[\]{}<>\"`|,;"
# Only words holding a slash or a dot can be paths, so only those are matched, whole.
PATH_LIKE_WORD = re.compile(rf"(?<![^{_SEPARATORS}])[^{_SEPARATORS}]*[./][^{_SEPARATORS}]*")

# Markdown emphasis, quotes and sentence punctuation that hug a path without being part of it.
_LEADING_TRIM = "*':!?"
_TRAILING_TRIM = "*':!?."
_FILE_SUFFIX = re.compile(r"\.[A-Za-z]{1,5}$")
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]?\.?$")
_CAMEL_JOINT = re.compile(r"[a-z][A-Z]")
_SNAKE_JOINT = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]")


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
    # Repeated words are common in a history, so each distinct one is checked once.
    words = {trim_word(raw) for raw in set(PATH_LIKE_WORD.findall(text))}
    return {word.lower() for word in words if is_path(word)}


def trim_word(word: str) -> str:
    """Strip the emphasis marks, quotes and sentence punctuation around a word."""
    return word.lstrip(_LEADING_TRIM).rstrip(_TRAILING_TRIM)


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


def retention(derived: str, raw: str) -> float:
    """Return the share of the raw text's key facts that the derived text keeps as facts."""
    raw_facts = key_facts(raw)
    if not raw_facts:
        return 1.0
    return len(key_facts(derived) & raw_facts) / len(raw_facts)


def coverage(facts: AbstractSet[str], text: str) -> float:
    """Share of facts found in the lower-cased text: how probes check prompts and results."""
    return coverages([facts], text)[0]


def coverages(fact_sets: Sequence[AbstractSet[str]], text: str) -> list[float]:
    """Return the coverage of each fact set against one text, looking each fact up once."""
    # Many probes are scored against one large text (a `.squad` folder, an agent's files),
    # so it is lower-cased once and a fact that several probes share is searched once.
    present = present_facts(set().union(*fact_sets), text)
    return [_share_present(facts, present) for facts in fact_sets]


def present_facts(facts: Iterable[str], text: str) -> set[str]:
    """Return the facts that occur as substrings of the lower-cased text."""
    haystack = text.lower()
    # A fact without whitespace can only sit inside one whitespace-free run of the text, and
    # memory text repeats its runs a lot, so searching the distinct runs is several times
    # faster than searching the text; the newline that joins them is in no such fact.
    runs = set(haystack.split())
    distinct_runs = "\n".join(runs)
    return {fact for fact in facts if _occurs(fact, haystack, runs, distinct_runs)}


def _occurs(fact: str, haystack: str, runs: AbstractSet[str], distinct_runs: str) -> bool:
    """Tell whether a lower-cased fact occurs in the haystack, via its runs when it can."""
    if any(char.isspace() for char in fact):
        return fact in haystack
    return fact in runs or fact in distinct_runs


def _share_present(facts: AbstractSet[str], present: AbstractSet[str]) -> float:
    """Return the share of facts that are present; an empty fact set counts as covered."""
    if not facts:
        return 1.0
    return len(facts & present) / len(facts)


def fact_surfaces(text: str) -> list[str]:
    """The key facts as written in the text (backticks kept), distinct, in order of appearance."""
    found: list[tuple[int, str, str]] = []
    for match in ISSUE_REF.finditer(text):
        found.append((match.start(), match.group(), match.group().lower()))
    for match in BACKTICK_SPAN.finditer(text):
        span = match.group(1)
        if 2 <= len(span) <= 60 and span.strip():
            found.append((match.start(), match.group(), span.strip().lower()))
    for match in VERSION.finditer(text):
        found.append((match.start(), match.group(), match.group().lower()))
    for match in PATH_LIKE_WORD.finditer(text):
        word = trim_word(match.group())
        if is_path(word):
            found.append((match.start(), word, word.lower()))
    for match in IDENTIFIER.finditer(text):
        token = match.group(1).rstrip("_")
        if is_snake_case(token) or is_camel_case(token):
            found.append((match.start(1), token, token.lower()))
    seen: set[str] = set()
    surfaces = []
    for _, surface, key in sorted(found, key=lambda f: (f[0], -len(f[1]))):
        if key not in seen:
            seen.add(key)
            surfaces.append(surface)
    return surfaces
