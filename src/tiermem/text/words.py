"""What a word is, once for every ranking rule: the index's queries, passages and situations.

A word is a lower-cased run of letters and digits. Names are split where the team's writing
joins words: at `.`, `/`, `_`, `-` (every non-alphanumeric character) and at CamelCase joints
(`StorageProvider` gives `storage` and `provider`, besides `storageprovider` as written), so a
task that says "storage provider" finds the line that says `StorageProvider`. A name joined
by `_`, `.`, `/` or `-` is a word whole too (`stage_2`, `nap.ts`): it says exactly what the
parts only suggest.
"""

from __future__ import annotations

import functools
import re

_RUN = re.compile(r"[^\W_]+")
_NAME = re.compile(r"[^\W_]+(?:[_./-]+[^\W_]+)+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_JOINT = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")

# Words too common to rank by: they only favour long, chatty text.
STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if "
    "in into is it its it's me my no not of on or our so than that the their them then there "
    "these they this those to up us was we were what when where which while who why will "
    "with would you your".split()
)
# Words a coordinator puts in nearly every task: they say that there is work, not what it is.
TASK_FILLER = frozenset(
    "add added adding fix fixed fixes fixing make made update updated updates use used using "
    "new via get set need needs should must also just now all any some more".split()
)
# Asked as a question ("what did we decide about retries?"), these only favour chatty text.
QUESTION = frozenset(
    "about been being can could did do does doing had how might should what when where "
    "which who whom whose why would".split()
)


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, in order; a CamelCase name adds its parts after it,
    and a joined name (`stage_2`) comes whole before its parts."""
    found: list[str] = []
    for name in _NAME.finditer(text):
        found.append(name.group().lower())
    for run in _RUN.findall(text):
        found.append(run.lower())
        if _JOINT.search(run):
            found.extend(part.lower() for part in _CAMEL_PART.findall(run))
    return found


def is_name(word: str) -> bool:
    """Whether a word is a joined name (`stage_2`, `nap.ts`): more telling than a plain word."""
    return not word.isalpha()


def terms(text: str, question: bool | None = None) -> list[str]:
    """The distinct words of a query that say what it is about, in order.

    Stop words and task filler are dropped (all of them, when nothing else is left, since a
    query of common words still means something); question words too when the text asks a
    question (ends with '?', unless `question` says otherwise).
    """
    asked = text.rstrip().endswith("?") if question is None else question
    drop = STOP | TASK_FILLER | QUESTION if asked else STOP | TASK_FILLER
    found = list(dict.fromkeys(w for w in words(text) if len(w) > 1))
    kept = [w for w in found if w not in drop]
    return kept or found


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A word without its common English endings, to match `rendering` with `renders`."""
    for ending in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


_MARKS = str.maketrans("", "", "#>*-")


def gist(text: str) -> str:
    """A text without markdown marks and spacing, to recognise repeats (a summary's line in
    the archived note it came from, a decision in its raw text)."""
    return " ".join(text.translate(_MARKS).split()).lower()
