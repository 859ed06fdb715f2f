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
from itertools import repeat
from operator import add

ISSUE_REF = re.compile(r"#\d+")
# Spans of any length are matched so backticks pair up left to right; length is checked after.
BACKTICK_SPAN = re.compile(r"`([^`\n]*)`")
VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?", re.IGNORECASE)
# A name-like run: a letter first once leading underscores are dropped (a digit first makes a
# number or a hex literal such as 0xBF), then a CamelCase joint before the first underscore or
# an underscore followed by more of the name. fact_surfaces, which needs where each fact
# stands, tries this and PATH_LIKE_WORD at every position; key_facts finds the same names and
# words from marks (below).
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
# The capital first: capitals are rarer than lower-case letters, so fewer places are tried.
_CAMEL_JOINT = re.compile(r"[A-Z](?<=[a-z][A-Z])")
_SNAKE_JOINT = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]")


def key_facts(text: str) -> set[str]:
    """Return the distinct lower-cased key facts of a text."""
    facts: set[str] = set()
    if "#" in text:
        facts.update(ISSUE_REF.findall(text))
    if "`" in text:
        facts.update(_backtick_facts(text))
    data = b" " + text.encode("utf-8", "surrogatepass") + b" "
    if "." in text or "/" in text:
        for word in _marked_words(data, _path_marks(data)):
            _add_word_facts(word, facts)
    # With no underscore and no capital (islower), a text holds no identifier.
    if "_" in text or not text.islower():
        for name in _marked_words(data, _name_marks(data)):
            if token := _identifier(name.decode("ascii")):
                facts.add(token.lower())
    return facts


def _backtick_facts(text: str) -> set[str]:
    """Return the trimmed contents of inline code spans of 2 to 60 characters."""
    spans = set(BACKTICK_SPAN.findall(text))
    return {span.strip().lower() for span in spans if 2 <= len(span) <= 60 and span.strip()}


# Every rule but the backtick one looks inside one word, or one name-like run, at a time, and
# only a word holding one of a few telling characters can hold a fact. So key_facts maps the
# text's bytes one for one to marks (a space where a word ends, \x01 on a telling character)
# with bytes.translate, finds each marked word's first mark and end with one literal scan (the
# regex engine's fastest kind) and its start with rfind, and puts only the distinct marked
# words through the exact rules. Patterns tried at every position of the text, as before,
# cost about five times more on the teams' memory (tests/facts_timing.py).
_ASCII_SEPARATORS = b' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f()[]{}<>"`|,;'
_NAME_CHARACTERS = b"_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _path_mark(byte: int) -> int:
    """Mark a byte for paths and versions, which need a slash (marked 1) or a dot (marked 2)."""
    if byte in _ASCII_SEPARATORS:
        return ord(" ")
    # A dot becomes \x01 only once those ending a sentence are dropped (see _path_marks).
    return {ord("/"): 1, ord("."): 2}.get(byte, ord("x"))


def _name_mark(byte: int) -> int:
    """Mark a byte for names, which need an underscore (marked 1) or a CamelCase joint."""
    if byte == ord("_"):
        return 1
    if byte not in _NAME_CHARACTERS:
        return ord(" ")
    # Letters become their case so that the capital of each joint can be marked in one pass.
    character = chr(byte)
    return ord("a" if character.islower() else "A" if character.isupper() else "0")


_PATH_MARKS = bytes(map(_path_mark, range(256)))
_NAME_MARKS = bytes(map(_name_mark, range(256)))
_DOTS_MARKED = bytes.maketrans(b"\x02", b"\x01")
_MARKED = re.compile(rb"\x01[^ ]*")
_MATCH_START, _MATCH_END = re.Match.start, re.Match.end
_WORD_SEPARATORS = re.compile(rf"[{_SEPARATORS}]+")
# A version's digit, dot and digit, found from the dot: words hold fewer dots than characters.
_VERSION_CORE = re.compile(r"\.(?<=\d\.)\d")


def _path_marks(data: bytes) -> bytes:
    """Mark the dots and slashes of the words of an encoded text, bar sentence-ending dots."""
    # No path or version ends in its only dot, so a word whose only mark ends a sentence is
    # left unmarked; the last word of a text is followed by a space too.
    return data.translate(_PATH_MARKS).replace(b"\x02 ", b"x ").translate(_DOTS_MARKED)


def _name_marks(data: bytes) -> bytes:
    """Mark the underscores and CamelCase joints of the name-like runs of an encoded text."""
    return data.translate(_NAME_MARKS).replace(b"aA", b"a\x01")


def _marked_words(data: bytes, marks: bytes) -> set[bytes]:
    """Return the distinct words of data that hold a mark; marks has a space where words end."""
    if 1 not in marks:
        return set()
    found = list(_MARKED.finditer(marks))
    # A match runs from a word's first mark to its end; the word starts after the space before.
    spaces = map(marks.rfind, repeat(b" "), repeat(0), map(_MATCH_START, found))
    starts = map(add, spaces, repeat(1))
    return set(map(data.__getitem__, map(slice, starts, map(_MATCH_END, found))))


def _add_word_facts(encoded: bytes, facts: set[str]) -> None:
    """Add the versions and the path of a marked word, or of the words it holds."""
    text = encoded.decode("utf-8", "surrogatepass")
    # Only ASCII separators ended the marked word: a Unicode space inside splits it further.
    for word in [text] if encoded.isascii() else _WORD_SEPARATORS.split(text):
        if _VERSION_CORE.search(word):
            facts.update(map(str.lower, VERSION.findall(word)))
        word = trim_word(word)
        if is_path(word):
            facts.add(word.lower())


def _identifier(run: str) -> str | None:
    """Return the identifier a name-like run makes, if it is CamelCase or snake_case."""
    name = run.lstrip("_")
    if not name[:1].isalpha():
        return None
    token = name.rstrip("_")
    return token if is_snake_case(token) or is_camel_case(token) else None


def trim_word(word: str) -> str:
    """Strip the emphasis marks, quotes and sentence punctuation around a word."""
    return word.lstrip(_LEADING_TRIM).rstrip(_TRAILING_TRIM)


def is_path(word: str) -> bool:
    """Tell whether an already trimmed word is a file name or a path."""
    if "/" in word:
        return any(map(str.isalpha, word))
    # A file suffix holds a letter, so only a slashed word needs looking for one.
    return bool(_FILE_SUFFIX.search(word)) and not _ABBREVIATION.match(word)


def is_camel_case(token: str) -> bool:
    """Tell whether a token has two capitals, one of them right after a lower-case letter."""
    joint = _CAMEL_JOINT.search(token)
    if not joint:
        return False
    # Look for a capital besides the joint's, stopping at the first.
    capital = joint.start()
    return any(map(str.isupper, token[:capital])) or any(map(str.isupper, token[capital + 1 :]))


def is_snake_case(token: str) -> bool:
    """Tell whether a token joins letters or digits with an underscore and holds a letter."""
    return "_" in token and bool(_SNAKE_JOINT.search(token)) and any(map(str.isalpha, token))


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
