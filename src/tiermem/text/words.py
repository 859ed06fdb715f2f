"""What a word is, once for everything that ranks: the index's queries, the relevance engine's
passages and situations, search's places.

A word is a lower-cased run of letters and digits. Names are split where the team's writing
joins words: at `.`, `/`, `_`, `-` (every non-alphanumeric character) and at CamelCase joints
(`StorageProvider` gives `storage` and `provider`, besides `storageprovider` as written), so a
task that says "storage provider" finds the line that says `StorageProvider`, and one that
says "pdf viewer" finds `PdfViewer`. A name joined by `_`, `.`, `/` or `-` is a word whole too
(`stage_2`, `nap.ts`): it says exactly what the parts only suggest.

One stop list serves every ranking (`STOP`); the plain words of METRICS.md's readability
measure have their own list, as that definition spells it (`text.prose.STOP_WORDS`).
"""

from __future__ import annotations

import functools
import re

_RUN = re.compile(r"[^\W_]+")
_NAME = re.compile(r"[^\W_]+(?:[_./-]+[^\W_]+)+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_JOINT = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")
# An acronym's plural (`DTOs`, `PRs`, `URLs`) is one word, not the joint of `DT` and `Os`.
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")


def _word(run: str) -> str:
    """A run as a word: lower-cased, an acronym's plural as the acronym (`PRs` is about PRs,
    as `PR` is)."""
    return run[:-1].lower() if _PLURAL_ACRONYM.fullmatch(run) else run.lower()


def _camel(run: str) -> bool:
    """Whether a run of letters and digits is a CamelCase name, made of parts."""
    return bool(_JOINT.search(run)) and not _PLURAL_ACRONYM.fullmatch(run)


# Words too common to rank by: they only favour long, chatty text (and make the index's
# queries slower, since BM25 reads the whole row list of every term asked).
STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have i if in "
    "into is it its it's me my no not of on or our so than that the their them then there "
    "these they this those to up us was we were while will with would you your".split()
)
# Words a coordinator puts in nearly every task: they say that there is work, not what it is.
TASK_FILLER = frozenset(
    "add added adding fix fixed fixes fixing make made update updated updates use used using "
    "new via get set need needs should must also just now all any some more".split()
)
# Asked as a question ("what did we decide about retries?"), these only favour chatty text.
# Not so in a text without a question mark: "What was done" is a heading teams write, so
# the question words are not stop words.
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
        found.append(_word(run))
        if _camel(run):
            found.extend(part.lower() for part in _CAMEL_PART.findall(run))
    return found


def name_parts(text: str) -> list[str]:
    """The parts of the CamelCase names of a text (`PdfViewer` gives `pdf`, `viewer`), which
    the index keeps beside the words as written so that either finds the name."""
    found: list[str] = []
    for run in _RUN.findall(text):
        if _camel(run):
            found.extend(part.lower() for part in _CAMEL_PART.findall(run))
    return found


def plain_words(text: str) -> list[str]:
    """The runs of letters and digits of a text as written, lower-cased (a CamelCase name is
    one run; its parts are not among them)."""
    return [_word(run) for run in _RUN.findall(text)]


# A part of a CamelCase name counts this much of a word as written: `LayeredScreenSurface`
# is about a surface more than about layers.
PART_WEIGHT = 0.5


@functools.lru_cache(maxsize=32768)
def stem_counts(text: str) -> dict[str, float]:
    """How often each stem occurs in a text: each word once, a joined name (`nap.ts`) whole
    besides its words, each part of a CamelCase name PART_WEIGHT (cached: the same passages
    are counted spawn after spawn; never changed by a caller)."""
    counts: dict[str, float] = {}
    for name in _NAME.finditer(text):
        key = stem(name.group().lower())
        counts[key] = counts.get(key, 0.0) + 1.0
    for run in _RUN.findall(text):
        key = stem(_word(run))
        counts[key] = counts.get(key, 0.0) + 1.0
        if _camel(run):
            for part in _CAMEL_PART.findall(run):
                key = stem(part.lower())
                counts[key] = counts.get(key, 0.0) + PART_WEIGHT
    return counts


def is_name(word: str) -> bool:
    """Whether a word is a joined name (`stage_2`, `nap.ts`): more telling than a plain word."""
    return not word.isalpha()


def asks(text: str) -> bool:
    """Whether a text is asked as a question (its question words then say nothing)."""
    return text.rstrip().endswith("?")


def dropped(text: str, question: bool | None = None) -> frozenset[str]:
    """The words a query of this text leaves out: stop words, and question words when it is
    asked as a question (`question` overrides the question mark)."""
    asked = asks(text) if question is None else question
    return STOP | QUESTION if asked else STOP


def terms(text: str, question: bool | None = None) -> list[str]:
    """The distinct words of a query that say what it is about, in order.

    Stop words and task filler are dropped (all of them, when nothing else is left, since a
    query of common words still means something); question words too when the text asks a
    question (ends with '?', unless `question` says otherwise).
    """
    drop = dropped(text, question) | TASK_FILLER
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
    """A text without markdown marks and spacing, lower-cased, to recognise repeats (a
    summary's line in the archived note it came from, a decision in its raw text)."""
    return " ".join(text.translate(_MARKS).split()).lower()
