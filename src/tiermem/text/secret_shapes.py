"""What secrets look like, for `redact`: the text and the candidate spans its rules judge,
patterns compiled on first use, and how a secret is told from prose, a placeholder or
an identifier.

Its public names are what `secret_judges` and `redact` build on: the `Text` a rule scans,
the `Candidate` it judges and the `Span` it returns, `Lazy` patterns, the character sets a
match is fenced by (`WORD`, `WORD_DASH`) and the tests of a value's shape (`is_placeholder`,
`looks_random`, `text_before`, ...). Its private names are its own.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache


class Lazy:
    """A regular expression compiled on first use, so that importing this module stays cheap.

    Most judges never run on ordinary text, so most of these are never compiled at all.
    """

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def ready(self) -> bool:
        """Whether the pattern is compiled already (then scanning costs no more than
        looking for the literals it needs)."""
        return self._compiled is not None

    @property
    def compiled(self) -> re.Pattern[str]:
        """Return the compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """Match at `pos`, like `re.Pattern.match`."""
        return self.compiled.match(text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """Match the whole text, like `re.Pattern.fullmatch`."""
        return self.compiled.fullmatch(text)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """Search between `pos` and `endpos`, like `re.Pattern.search`."""
        return self.compiled.search(text, pos, endpos)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        """Iterate over matches between `pos` and `endpos`, like `re.Pattern.finditer`."""
        return self.compiled.finditer(text, pos, endpos)


MARKER = Lazy(r"\[REDACTED:[a-z0-9-]+\]")
# Groups that may hold the secret value, in the order they are looked up.
VALUE_GROUPS = ("v", "dq", "sq", "bq", "u")
MAX_PASSES = 16
WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
WORD_DASH = WORD | {"-"}

Span = tuple[int, int, str]  # start, end and kind of a secret


# The classes below are plain ones with slots, not dataclasses: making a dataclass runs the
# code it generates, which cost more than the rest of importing this module together.


class Text:
    """The text being redacted, its lower-cased copy for keys written in any case, and
    whether its families run only where it holds a literal they need (`GATED_CHARS`)."""

    __slots__ = ("folded", "gated", "raw")

    def __init__(self, raw: str, folded: str, gated: bool) -> None:
        self.raw, self.folded, self.gated = raw, folded, gated


class Candidate:
    """A match of a rule, with the span of its value in the original text."""

    __slots__ = ("end", "group", "match", "start", "text")

    def __init__(self, text: str, match: re.Match[str], group: str, start: int, end: int) -> None:
        self.text, self.match, self.group, self.start, self.end = text, match, group, start, end

    @property
    def value(self) -> str:
        """Return the value as written, whatever case the rule matched in."""
        return self.text[self.start : self.end]

    @property
    def sep(self) -> str | None:
        """Return the assignment operator, for rules that have one."""
        return self._group("sep")

    @property
    def pair(self) -> str | None:
        """Return the comma between a quoted key and its quoted value."""
        return self._group("pair")

    @property
    def said(self) -> str | None:
        """Return the words that give a password in prose: "password is"."""
        return self._group("said")

    @property
    def gap(self) -> str | None:
        """Return the bare space between key and value, for `password x` forms."""
        return self._group("gap")

    def _group(self, name: str) -> str | None:
        return self.match.group(name) if name in self.match.re.groupindex else None


Accept = Callable[[Candidate], bool]
Judge = Callable[[Candidate], str | None]


# ---------------------------------------------------------------- telling secrets from prose


# fmt: off
_PLACEHOLDER_WORDS = frozenset({
    "password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "apikey", "api_key",
    "api-key", "key", "credential", "redacted", "removed", "hidden", "masked", "omitted",
    "sensitive", "example", "placeholder", "dummy", "sample", "fake", "test", "testing", "foo",
    "bar", "foobar", "baz", "value", "default", "empty", "none", "null", "nil", "undefined",
    "true", "false", "string", "str", "int", "number", "bool", "boolean", "object", "any",
    "bytes", "optional", "required", "secretstr",
})
# fmt: on
_PLACEHOLDER_SHAPE = Lazy(
    r"[$%<{@#\[]"  # template, environment or markup syntax
    r"|![A-Za-z]+\Z"  # a YAML tag: `password: !vault |`
    r"|.*\.\.\."  # a truncated example such as sk-...
    r"|[*xX•._#-]+\Z"  # a mask
    r"|your[\w.-]*\Z"  # your_api_key_here
    r"|.*[_-]here\Z",
    re.IGNORECASE,
)
_CODE_REF = Lazy(
    # process.env.TOKEN, cfg.get(..), s3.bucket: words, unlike `Summer2024.abc` or base64
    r"(?:[A-Za-z_$]+[0-9]?\.)+[A-Za-z_$]+[0-9]*(?:\(.*)?\Z"
    r"|[A-Za-z_$][\w$.]*[(\[]"  # a call or a subscript
    r"|[a-z]+(?:_[a-z]+)+\Z"  # a snake_case variable
    r"|[a-z]+(?:[A-Z][a-z]+)+\Z"  # a camelCase variable
    r"|[A-Z]+(?:_[A-Z]+)+\Z"  # a CONSTANT_NAME
    r"|[a-z][a-z0-9+.-]*://"  # a URL (credentials inside URLs have their own rule)
)
_RELATIVE_PATH = Lazy(r"\.{1,2}/|~/|[A-Za-z]:\\")
_ABSOLUTE_PATH = Lazy(r"/{1,2}[\w.@%+~:-]+(?:/[\w.@%+~:-]*)*")
# A regular expression written as a literal: `/ghp_[A-Za-z0-9]{36}/i`, or its start when a
# comma in its repetition cut the value short.
_REGEX_LITERAL = Lazy(r"/.*(?:\[[^\]]+\]|\\[sdwbSDWB.]|\(\?)")
_WORD_IN_MARKS = Lazy(r"\W*(\w+)\W*\Z")
_PATH_WORD = Lazy(r"[a-z0-9._-]+")
SYMBOL = Lazy(r"[!@#$%^&*+=?~/|\\]")
_DIGIT = Lazy(r"[0-9]")
_LINE_END = Lazy(r"[ \t]*[.)\]}*]*[ \t]*(?:$|\r|\\n|[,;#|])", re.MULTILINE)
_NAME_BEFORE = Lazy(r"[a-z0-9_.-]*\Z")
ALNUM_BEFORE = Lazy(r"[a-z0-9]\Z")
ADO_BEFORE = Lazy(r";[ \t]*\Z")
# Key names ending in `key` that mean a credential; `monkey` or `primary_key` do not.
CREDENTIAL_KEY_NAME = (
    r"(?:api|access|secret|private|app|client|signing|encryption|master|session|consumer"
    r"|auth|account|service|subscription|webhook|deploy|license)key"
)
_CREDENTIAL_KEY = Lazy(CREDENTIAL_KEY_NAME + r"\Z")
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Values whose kind shows only in the key name: (kind, name, shape). The name is lower-cased
# without `_`, `-` and `.`, so that `AWS_SECRET_ACCESS_KEY` and `secretAccessKey` agree.
_NAMED_SHAPES = (
    ("aws-secret-key", r"secretaccesskey\Z|awssecret(?:key)?\Z", r"[A-Za-z0-9/+]{40}"),
    ("aws-session-token", r"sessiontoken\Z", r"[A-Za-z0-9/+=]{100,}"),
    ("azure-connection-string", r"\A(?:account|sharedaccess)key\Z", r"[A-Za-z0-9+/]{20,}=*"),
    ("azure-key", r"azure", r"[A-Za-z0-9+/]{32,}=*"),
    ("heroku-api-key", r"heroku", UUID),
    ("datadog-key", r"\A(?:dd|datadog)(?:api|app|application)key\Z", r"[a-f0-9]{32}|[a-f0-9]{40}"),
    ("twilio", r"twilio", r"[a-f0-9]{32}"),
    ("okta-token", r"okta", r"00[A-Za-z0-9_-]{40}"),
)


@cache
def named_shapes() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """Compile the key-named shapes on first use."""
    return tuple((k, re.compile(n), re.compile(s)) for k, n, s in _NAMED_SHAPES)


def is_placeholder(value: str) -> bool:
    """Tell whether a value is a stand-in rather than a credential (`/secret=` included)."""
    if _PLACEHOLDER_SHAPE.match(value) is not None:
        return True
    word = _WORD_IN_MARKS.match(value)
    return word is not None and word.group(1).lower() in _PLACEHOLDER_WORDS


def _is_path(value: str) -> bool:
    """Tell a file path from a secret that happens to start with a slash.

    A path is made of segments of word characters; a single segment counts only in lower
    case (`/tmp`, `/data`), since `/Tr0ub4dor3x` is far likelier a password than a folder.
    """
    if _RELATIVE_PATH.match(value):
        return True
    if not value.startswith("/") or _ABSOLUTE_PATH.fullmatch(value) is None:
        return False
    segments = value.strip("/").split("/")
    return len(segments) > 1 or _PATH_WORD.fullmatch(segments[0]) is not None


def is_stand_in(value: str) -> bool:
    """Tell whether a value is a placeholder or a reference to where the secret lives."""
    if is_placeholder(value) or _CODE_REF.match(value) is not None:
        return True
    # a pattern in a config is short; the test backtracks on long values, so they skip it
    regex = len(value) <= 256 and _REGEX_LITERAL.match(value) is not None
    return regex or _is_path(value)


def has_digit(value: str) -> bool:
    """Tell whether a value has a digit, as generated keys practically always do."""
    return _DIGIT.search(value) is not None


def mixed_case(value: str) -> bool:
    """Tell whether a value mixes upper and lower case letters."""
    return value.lower() != value and value.upper() != value


def looks_random(value: str) -> bool:
    """Tell whether a value has the make-up of a generated key rather than of a word."""
    if has_digit(value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 24 and mixed_case(value)


def _entropy(value: str) -> float:
    """Return the Shannon entropy of the value's characters, in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


# The chunks an identifier is made of: words, acronyms, numbers.
_CHUNK = Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = Lazy(r"[aeiouyAEIOUY]")


def _reads_as_words(value: str) -> bool:
    """Tell whether a value is words run together (`getAccessToken2FromCache`, `HTTPServer`).

    Every letter chunk of an identifier is a word (it has a vowel) or an acronym, and numbers
    are few; a generated string has lone letters, consonant clusters and many numbers.
    """
    chunks = [m.group() for m in _CHUNK.finditer(value)]
    if sum(chunk.isdigit() for chunk in chunks) > 2:
        return False
    words = [chunk for chunk in chunks if chunk.isalpha()]
    return all(len(w) >= 2 and (w.isupper() or _VOWEL.search(w) is not None) for w in words)


def looks_generated(value: str) -> bool:
    """Tell whether a run found near a credential word has the make-up of a generated secret.

    Without a key to vouch for it, a run must have all three character classes (hex digests
    and UUIDs have one case only), spread out (high entropy), and not read as words.
    """
    if len(value) < 20 or not (mixed_case(value) and has_digit(value)):
        return False
    return _entropy(value) >= 3.5 and not _reads_as_words(value)


def is_prose_colon(c: Candidate) -> bool:
    """Tell whether an unquoted `key: value` is no setting: glued on, or going on as a sentence.

    A setting has a space after the colon (as YAML requires) and ends its line; `token:x` is
    more likely a URL's user info or a scheme, and the rest of a sentence means prose.
    """
    if c.group != "u" or c.sep != ":":
        return False
    glued = c.text[c.match.end("sep")] not in " \t*"
    return glued or _LINE_END.match(c.text, c.end) is None


def is_prose_equals(c: Candidate) -> bool:
    """Tell whether an unquoted `key = value` reads as a sentence: spaced around the `=` and
    going on after the value ("a 1MB password = bcrypt DoS"), where a setting ends its line."""
    if c.group != "u" or c.sep != "=":
        return False
    start, end = c.match.span("sep")
    spaced = c.text[start - 1 : start] in (" ", "\t") and c.text[end : end + 1] in (" ", "\t")
    return spaced and start > 0 and _LINE_END.match(c.text, c.end) is None


def text_before(c: Candidate, reach: int = 48) -> str:
    """Return the lower-cased text just before the match."""
    start = c.match.start()
    return c.text[max(0, start - reach) : start].lower()


def key_name(c: Candidate) -> str:
    """Return the whole key name the match ends, lower-cased and without separators."""
    found = _NAME_BEFORE.search(text_before(c))
    name = (found.group() if found else "") + c.match.group("key")
    return name.replace("_", "").replace("-", "").replace(".", "")


def is_generic_secret(c: Candidate, name: str) -> bool:
    """Tell whether an api-key, token or secret assignment holds a generated-looking value."""
    value = c.value
    if name.endswith("key") and not _CREDENTIAL_KEY.search(name):
        return False
    if len(value) < 8 or value.isdigit() or is_stand_in(value) or is_prose_colon(c):
        return False
    return looks_random(value)


# ---------------------------------------------------------------- bare-space forms

_FLAG_BEFORE = Lazy(r"(?:^|[\s\"'])--?(?:[a-z0-9]+[_.-])*\Z")
_NETRC = Lazy(r"(?:^|\s)(?:machine|default)\s+\S+(?:\s+login\s+\S+)?\s+\Z")
SPACED_SETTINGS = frozenset({"requirepass", "masterauth", "awssecretaccesskey"})


def _is_flag(c: Candidate) -> bool:
    """Tell whether the key is a command-line flag such as `--db-password`."""
    return _FLAG_BEFORE.search(text_before(c)) is not None


def in_netrc(c: Candidate) -> bool:
    """Tell whether `password x` sits in a .netrc entry (`machine h login u password p`)."""
    return _NETRC.search(text_before(c, 160)) is not None


def spaced_value_counts(c: Candidate, quoted: bool = True) -> bool:
    """Tell whether a value after a bare space belongs to the key: a flag, a setting, quoted."""
    if (quoted and c.group != "u") or _is_flag(c) or in_netrc(c):
        return True
    return key_name(c) in SPACED_SETTINGS


def touches(text: str, start: int, end: int, fence: frozenset[str]) -> bool:
    """Tell whether a fence character sits right before or right after the span."""
    before = start > 0 and text[start - 1] in fence
    return before or (end < len(text) and text[end] in fence)
