"""Wiki topics named from the team's own words, as a person keeping a table of contents would.

An entry goes on the page its tag names (a skill's folder, an explicit `wiki write`); else
on a page already named by words of its title; else on a page named by the title word that
most of the entries promoted with it share (the team's recurring subjects: "terminal",
"publish", "territory"); else by a word its text shares with them; else by a subject word of
its own. A page name is a domain noun the team uses: never a word that says what kind of
note something is ("decision", "update"), how it went ("merged", "latest"), a word any text
holds ("always", "name", "line"), a number, nor the name of an agent or a person.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ..errors import UsageError
from ..storage import validate
from ..storage.entries import Entry

# Words that name no subject: function words, what kind of note something is, how it went,
# and the adjectives, adverbs, verbs and nouns any text holds.
GENERIC = frozenset(
    """
    a about above across actually add added adding adds after again against ago all allow
    allowed allows almost along already also although always am among an analysis and another
    any anything approach approaches approved are area areas around as ask asked at
    available avoid away back bad base based be because become been before behind being below
    best better between big both bug bugs but by call called calls can cannot case cases cause
    caused change changed changes changing check checked checks clean cleanup clear close
    closed come comment comments common complete completed completion concern concerns confirm
    confirmed consider context continue continued core correct could current currently day
    days decide decided decision decisions default define defined design detail details did
    different direct directive directives discussion do does doing done down draft during each
    early easy edge else end ended ensure entire entry even every everything
    example examples existing expected explicit extra fact fail failed fails failure false few
    final finally find finding findings first fix fixed fixes fixing follow followed following
    followup for form found fresh from full further future general get gets getting given go
    goal goals going good got great group groups had handle handled handles happen has have
    having help here high how however i idea ideas if immediate important improve improved
    improvement improvements in include included includes including info information initial
    instead into is issue issues it item items its itself just keep keeps key kind known large
    last later latest lead learn learned learning learnings least left less let level like
    likely line lines list lists little long look looks lot low made main major make makes
    making many match matches matching may maybe me mean means merged minor misc
    miscellaneous missing more most move moved much must my name named names need needed
    needs never new next no none normal not note noted notes nothing now number numbers of off
    old on once one only open opened option optional options or order original other others
    our out outcome over overall overview own part parts pass passed passes passing past per
    phase phases plan planned plans point points possible post potential prefer previous
    primary prior problem problems process proposal proposals proposed provide put quick
    quickly rather re read ready real really reason reasons recent recently recommend
    recommendation recommendations record recorded reference related remain
    remove removed report reports request requested require required requirement requirements
    requires research resolved rest result results return review reviewed reviews revised
    right rule rules run running runs same say second see seen session sessions set sets
    several shall short should show side simple since single size small so some something
    soon spec specs specific start started status step steps still stop strategy
    such suggest suggested summary support supported sure take taken takes task tasks team
    than that the their them then there these they thing things think third this those though
    three through time times to today together too top total track tracked true try trying two
    type types under unless until up update updated updates upon us use used useful user users
    uses using usual value values various verified verify version very via vs want was way ways
    we week well went were what when where whether which while who why will with within without
    work worked working works would wrong yes yet you your
    action agent agents behavior behaviour code custom dev feature features flow handling
    implement implementation implementations implementing introduce introduces introducing pr
    prs question questions refactor refactoring replace replaces replacing restore summaries
    system systems usage wave waves impact pattern patterns domain decomposition remediation
    standalone older newer earlier policy policies convention conventions guideline guidelines
    contract contracts year years month months hour hours minute minutes second seconds
    today tomorrow yesterday morning evening removal removals addition additions helper
    helpers overlap starting root cause causes
    """.split()
)
_WORD = re.compile(r"[a-z][a-z0-9]*(?:[+#-][a-z0-9]+)*")
# An id, a phase or a version ("p0", "wi-2", "phase-5", "v3") names no subject.
_NUMBERED = re.compile(r"[a-z]{1,2}\d+|.*-\d+|\w*\d{3,}\w*")
# A word shared by more than this share of a large batch says little about any one entry.
COMMON_SHARE = 0.5
LARGE_BATCH = 10
# What a page is called when nothing else names it: what its entries are.
_KINDS = {"policy": "policies", "convention": "conventions", "contract": "contracts"}
_BODY_CHARS = 1500


def generic(word: str) -> bool:
    """Whether a word names no subject (see GENERIC; also adverbs and past participles)."""
    if word in GENERIC or _NUMBERED.fullmatch(word):
        return True
    if "-" in word:
        return any(generic(part) for part in word.split("-"))
    return (len(word) > 4 and word.endswith("ly")) or (
        len(word) > 4 and word.endswith("ed") and not word.endswith("eed")
    )


def words(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """The words of a text that could name a page, in order, each once."""
    found = [w for w in _WORD.findall(text.lower()) if len(w) > 2 or w in ("ci", "ui", "ux")]
    return list(dict.fromkeys(w for w in found if not generic(w) and w not in skip))


class Vocabulary:
    """The page names a batch of entries can take: existing pages and shared words."""

    def __init__(self, entries: Iterable[Entry], pages: Iterable[str], skip: Iterable[str] = ()):
        self.skip = frozenset(skip)
        self.pages = {p for p in pages if _valid(p) and not _names_nothing(p, self.skip)}
        # One vote per entry: the parts of a long one (titled alike) count once.
        batch = list({dict(e.extra).get("parent", e.id): e for e in entries}.values())
        listed = [words(e.title, self.skip) for e in batch]
        self.raw = Counter(w for title_words in listed for w in title_words)
        self.shared = _folded(self.raw)
        self.forms: dict[str, list[str]] = {}
        for word in self.raw:
            self.forms.setdefault(_stem(word), []).append(word)
        self.size = len(listed)
        # How many of the batch's entries use a word anywhere: the team's words.
        self.used = Counter(
            w for e in batch for w in set(_all_words(f"{e.title} {_prose(e.body)}"))
        )

    def topic(self, entry: Entry) -> str:
        """The page an entry belongs on."""
        if tag := _tagged(entry):
            return tag
        return self._as_paged(self._subject(entry))

    def _as_paged(self, word: str) -> str:
        """A subject as the page there is for it (`tests` goes on `test` when that exists)."""
        return next((p for p in sorted(self.pages) if _stem(p) == _stem(word)), word)

    def _subject(self, entry: Entry) -> str:
        """What an entry is about, in one of the team's words."""
        title = [self._form(w) for w in words(entry.title, self.skip) if _valid(w)]
        humps = _humps(entry.title, self.skip)
        text = [self._form(w) for w in _all_words(_prose(entry.body), self.skip)]
        if named := self._page(title + [p for w in title for p in humps.get(w, [])]):
            return named
        shared = [w for w in title if self._names_a_subject(w)]
        if shared:  # plain words before identifiers: `linkedin` over `hasaccesstoken`
            return max(shared, key=lambda w: (w not in humps, self.shared[w]))
        mentions = Counter(title + text)
        if named := self._page(list(mentions), mentions):
            return named
        shared = [w for w in mentions if self._names_a_subject(w)]
        if shared:
            return max(shared, key=lambda w: (self.shared[w], mentions[w]))
        return self._own(title, humps, mentions) or self._largest(entry)

    def _own(self, title: list[str], humps: dict[str, list[str]], mentions: Counter[str]) -> str:
        """A subject of the entry's own: the title word its text says most, the team's words
        first; an identifier of one entry alone (`HasAccessToken`) gives its words."""
        own: list[str] = []
        for word in title:
            parts = humps.get(word, [])
            own += parts if parts and self.used[word] < 2 else [word]
        own = own or list(mentions)
        if not own:
            return ""
        return max(own, key=lambda w: (mentions[w], self.used[w], -own.index(w)))

    def _largest(self, entry: Entry) -> str:
        """For an entry with no word of its own: the batch's largest subject, else a name
        for what it is."""
        subjects = [w for w, _ in self.shared.most_common() if self._names_a_subject(w)]
        return subjects[0] if subjects else _KINDS.get(entry.cls, "decisions")

    def _page(self, found: list[str], mentions: Counter[str] | None = None) -> str:
        """An existing page whose every word the entry's words hold: the most specific one
        (among pages found in its text, the one it mentions most, at least twice)."""
        have = {_stem(w) for w in found}
        fits = [p for p in self.pages if {_stem(w) for w in p.split("-")} <= have]
        if mentions is None:
            return max(fits, key=lambda p: (p.count("-"), p), default="")
        said = {p: min(mentions[w] for w in p.split("-")) for p in fits}
        fits = [p for p in fits if said[p] >= 2]
        return max(fits, key=lambda p: (said[p], p.count("-"), p), default="")

    def _form(self, word: str) -> str:
        """The form of a word the batch's titles use most (`fonts` or `font`, `publishing`
        or `publish`): one subject is one page, whatever form each entry writes it in."""
        forms = self.forms.get(_stem(word))
        if not forms:
            return word
        return min(forms, key=lambda w: (-self.raw[w], len(w), w))

    def _names_a_subject(self, word: str) -> bool:
        count = self.shared[word]
        if self.size < LARGE_BATCH:
            return count > 0  # a few entries at a time: later ones find the page by its name
        # Many at once (an import): a word of one entry alone would scatter the wiki, one in
        # most of them names no subject.
        return 2 <= count <= self.size * COMMON_SHARE


_IDENTIFIER = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b")
_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def _humps(title: str, skip: frozenset[str]) -> dict[str, list[str]]:
    """The CamelCase identifiers of a title (lower-cased), each with its words."""
    found: dict[str, list[str]] = {}
    for match in _IDENTIFIER.finditer(title):
        parts = [p.lower() for p in _HUMP.findall(match.group())]
        if len(parts) > 1:
            found[match.group().lower()] = words(" ".join(parts), skip)
    return found


# Lines that say who and when (`**By:** Dana (via Copilot)`), not what an entry is about.
_LABEL_LINE = re.compile(
    r"^\W*\*\*(?:by|author|authors|date|when|status|owner|decided by|requested by)\b.*$\n?",
    re.IGNORECASE | re.MULTILINE,
)


def _prose(body: str) -> str:
    """The start of a body, without the lines that only say who and when."""
    return _LABEL_LINE.sub("", body[: _BODY_CHARS * 2])[:_BODY_CHARS]


def _all_words(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every word of a text that could name a page, each time it occurs."""
    found = _WORD.findall(text.lower())
    return [w for w in found if len(w) > 2 and not generic(w) and w not in skip and _valid(w)]


# Endings that make another form of one subject's word: a plural, a verb's -ing, a noun's
# -ion (`publishing` is `publish`, `reconnection` is `reconnect`, `tests` is `test`). Not
# -er: a `builder` is no `build`.
_ENDINGS = ("ing", "ion", "s")
_ROOT_CHARS = 4


def _stem(word: str) -> str:
    """The root a word's forms share, for matching page names (`fonts` finds `font`,
    `publishing` finds `publish`)."""
    while True:
        for end in _ENDINGS:
            cut = len(word) - len(end)
            if word.endswith(end) and cut >= _ROOT_CHARS and not word.endswith("ss"):
                word = word[:cut]
                break
        else:
            return word


def _folded(counts: Counter[str]) -> Counter[str]:
    """Counts with the forms of one root (see `_stem`) counted together, under each form."""
    roots: Counter[str] = Counter()
    for word, n in counts.items():
        roots[_stem(word)] += n
    return Counter({word: roots[_stem(word)] for word in counts})


def _most_frequent(found: list[str]) -> list[str]:
    return [w for w, _ in Counter(found).most_common(1)]


def _names_nothing(page: str, skip: frozenset[str]) -> bool:
    """A page name of old that a person would not choose (`general`, `key`, an agent's)."""
    base = re.sub(r"-\d+$", "", page)
    return any(generic(w) or w in skip for w in base.split("-"))


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
