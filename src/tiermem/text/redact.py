"""Secret redaction: every write path passes text through `redact` before it reaches disk.

Each credential is replaced by `[REDACTED:kind]`; everything around it stays byte for byte.
Only the secret value goes: for `password = "hunter22"` the key, the spacing and both quotes
stay; for a URL `postgres://app:pw@db` only `pw` goes; a private key goes as one block.

Credentials are recognised by families of shapes, not by a list of known samples:
- prefixed tokens: a vendor prefix and a body of the alphabet and length the vendor issues
  (`ghp_`, `glpat-`, `xoxb-`, `sk-proj-`, `AKIA`, `AIza`, `EAAA`, `shpat_`, `dop_v1_`, ...).
  Most prefixes end in `_`, `-` or `.`, so three scans for such a delimiter followed by a
  random-looking run find where any of them may start, and the table is consulted only
  there; prefixes without a delimiter are scanned by their first letter;
- key blocks: PEM and SSH2 blocks of every private-key type (RSA, EC, DSA, PKCS#8, OpenSSH,
  PGP, encrypted), PuTTY key files, and the same blocks base64-wrapped (`client-key-data`,
  Kubernetes secrets);
- assignments: a key whose name says secret (password, passwd, pwd, passphrase, secret,
  token, api/access/private/client key, auth, credential, ...) in any notation (`KEY=value`,
  `key: value`, JSON, YAML, TOML, INI, XML, `define('KEY', 'x')`, `--password x`, `.netrc`,
  `requirepass x`, SQL `IDENTIFIED BY 'x'`, "the password is x"), `user:password@` in URLs
  and `;Password=...;` strings;
- command lines: the password flags of the clients that take one (`sshpass -p`, `mysql -p`,
  `redis-cli -a`, `docker login -p`, `sqlcmd -P`, `ldapsearch -w`, ...) and `curl -u`;
- HTTP: `Authorization: Basic/Bearer/Token/SSWS` and bearer tokens anywhere;
- context: a long generated-looking string (upper case, lower case and digits, high entropy,
  not an identifier, not a digest or a data URI) a few words after a credential word.
Discord bot tokens, Twilio SIDs and Telegram bot tokens have no prefix of their own: a
Discord token is known by its three parts (the first is a user id in base64), Twilio's and
Telegram's only where the text names the service or has the `:AA` every bot secret starts
with; all three are still caught when assigned to a key such as `BOT_TOKEN`.

Placeholder policy. A value is left alone when it is plainly not a credential:
- template or environment syntax: `${DB_PASSWORD}`, `$PASSWORD`, `%(pw)s`, `<your-password>`,
  `{{ secrets.TOKEN }}`, `#{pw}`, `[...]`, a YAML tag such as `!vault`;
- a code reference: `process.env.TOKEN`, `os.environ[...]`, `getenv(...)`, `db_password`,
  `dbPassword`, `DB_PASSWORD`, a URL, a regular expression (`/ghp_[A-Za-z0-9]{36}/`), or a
  file path (`/run/secrets/db`, `./key.pem`, `C:\\keys`); a value that starts with `/` but
  has no path's make-up (`/Tr0ub4dor&3x`, one segment in mixed case) is a secret;
- a mask or a truncation: `***`, `xxx`, `....`, `sk-...`;
- a stand-in word: the field's own name (`password=password`), a type name
  (`password: string`), `example`, `dummy`, `test`, `your_api_key_here`, `null`, `true`, ...
Well-known defaults such as `changeme`, `admin` or `postgres` ARE redacted: they open real
installations, so keeping them would be a leak while dropping them costs nothing.

Prose is told from settings by shape: an assignment value containing whitespace is not taken
for a secret, and in `key: value` an unquoted value must follow a space and end its line, and
for a password it must hold a digit or a symbol; so "Password: hashed with bcrypt" and
`admin_password: changeme` stay, while `ADMIN_PASSWORD=changeme` goes. A key followed by a
bare space (`password x`) counts only as a flag, a `.netrc` line, a server setting or with
a quoted value.

Speed. `redact` runs on every write, so each family is one scan that starts with a literal
(which the regex engine skips to quickly), and the Python judges run only where it stops;
every search around such a stop has a bounded window, so hostile text costs linear time.
Patterns are compiled on first use, not at import.
"""

from __future__ import annotations

import binascii
import math
import re
import sys
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache

__all__ = ["KINDS", "redact"]


class _Lazy:
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


_MARKER = _Lazy(r"\[REDACTED:[a-z0-9-]+\]")
# Groups that may hold the secret value, in the order they are looked up.
_VALUE_GROUPS = ("v", "dq", "sq", "bq", "u")
_MAX_PASSES = 16
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WORD_DASH = _WORD | {"-"}

_Span = tuple[int, int, str]  # start, end and kind of a secret


# The classes below are plain ones with slots, not dataclasses: making a dataclass runs the
# code it generates, which cost more than the rest of importing this module together.


class _Text:
    """The text being redacted, its lower-cased copy for keys written in any case, and
    whether its families run only where it holds a literal they need (`GATED_CHARS`)."""

    __slots__ = ("folded", "gated", "raw")

    def __init__(self, raw: str, folded: str, gated: bool) -> None:
        self.raw, self.folded, self.gated = raw, folded, gated


# Until a process has redacted this much text, a family runs on a text only when the text
# holds one of the literals its matches need, so the patterns of the families a process never
# comes near are never compiled: a command redacts a few short texts, and compiling every
# family costs more than all of them. Past it (a long-running server, an import), every
# family compiles and runs: its pattern finds its own literal as fast as a look for it would.
GATED_CHARS = 64 * 1024
_redacted = [0]  # characters redacted in this process so far


class _Candidate:
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


Accept = Callable[[_Candidate], bool]
Judge = Callable[[_Candidate], str | None]


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
_PLACEHOLDER_SHAPE = _Lazy(
    r"[$%<{@#\[]"  # template, environment or markup syntax
    r"|![A-Za-z]+\Z"  # a YAML tag: `password: !vault |`
    r"|.*\.\.\."  # a truncated example such as sk-...
    r"|[*xX•._#-]+\Z"  # a mask
    r"|your[\w.-]*\Z"  # your_api_key_here
    r"|.*[_-]here\Z",
    re.IGNORECASE,
)
_CODE_REF = _Lazy(
    # process.env.TOKEN, cfg.get(..), s3.bucket: words, unlike `Summer2024.abc` or base64
    r"(?:[A-Za-z_$]+[0-9]?\.)+[A-Za-z_$]+[0-9]*(?:\(.*)?\Z"
    r"|[A-Za-z_$][\w$.]*[(\[]"  # a call or a subscript
    r"|[a-z]+(?:_[a-z]+)+\Z"  # a snake_case variable
    r"|[a-z]+(?:[A-Z][a-z]+)+\Z"  # a camelCase variable
    r"|[A-Z]+(?:_[A-Z]+)+\Z"  # a CONSTANT_NAME
    r"|[a-z][a-z0-9+.-]*://"  # a URL (credentials inside URLs have their own rule)
)
_RELATIVE_PATH = _Lazy(r"\.{1,2}/|~/|[A-Za-z]:\\")
_ABSOLUTE_PATH = _Lazy(r"/{1,2}[\w.@%+~:-]+(?:/[\w.@%+~:-]*)*")
# A regular expression written as a literal: `/ghp_[A-Za-z0-9]{36}/i`, or its start when a
# comma in its repetition cut the value short.
_REGEX_LITERAL = _Lazy(r"/.*(?:\[[^\]]+\]|\\[sdwbSDWB.]|\(\?)")
_WORD_IN_MARKS = _Lazy(r"\W*(\w+)\W*\Z")
_PATH_WORD = _Lazy(r"[a-z0-9._-]+")
_SYMBOL = _Lazy(r"[!@#$%^&*+=?~/|\\]")
_DIGIT = _Lazy(r"[0-9]")
_LINE_END = _Lazy(r"[ \t]*[.)\]}*]*[ \t]*(?:$|\r|\\n|[,;#|])", re.MULTILINE)
_NAME_BEFORE = _Lazy(r"[a-z0-9_.-]*\Z")
_ALNUM_BEFORE = _Lazy(r"[a-z0-9]\Z")
_ADO_BEFORE = _Lazy(r";[ \t]*\Z")
# Key names ending in `key` that mean a credential; `monkey` or `primary_key` do not.
_CREDENTIAL_KEY_NAME = (
    r"(?:api|access|secret|private|app|client|signing|encryption|master|session|consumer"
    r"|auth|account|service|subscription|webhook|deploy|license)key"
)
_CREDENTIAL_KEY = _Lazy(_CREDENTIAL_KEY_NAME + r"\Z")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Values whose kind shows only in the key name: (kind, name, shape). The name is lower-cased
# without `_`, `-` and `.`, so that `AWS_SECRET_ACCESS_KEY` and `secretAccessKey` agree.
_NAMED_SHAPES = (
    ("aws-secret-key", r"secretaccesskey\Z|awssecret(?:key)?\Z", r"[A-Za-z0-9/+]{40}"),
    ("aws-session-token", r"sessiontoken\Z", r"[A-Za-z0-9/+=]{100,}"),
    ("azure-connection-string", r"\A(?:account|sharedaccess)key\Z", r"[A-Za-z0-9+/]{20,}=*"),
    ("azure-key", r"azure", r"[A-Za-z0-9+/]{32,}=*"),
    ("heroku-api-key", r"heroku", _UUID),
    ("datadog-key", r"\A(?:dd|datadog)(?:api|app|application)key\Z", r"[a-f0-9]{32}|[a-f0-9]{40}"),
    ("twilio", r"twilio", r"[a-f0-9]{32}"),
    ("okta-token", r"okta", r"00[A-Za-z0-9_-]{40}"),
)


@cache
def _named_shapes() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """Compile the key-named shapes on first use."""
    return tuple((k, re.compile(n), re.compile(s)) for k, n, s in _NAMED_SHAPES)


def _is_placeholder(value: str) -> bool:
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


def _is_stand_in(value: str) -> bool:
    """Tell whether a value is a placeholder or a reference to where the secret lives."""
    if _is_placeholder(value) or _CODE_REF.match(value) is not None:
        return True
    # a pattern in a config is short; the test backtracks on long values, so they skip it
    regex = len(value) <= 256 and _REGEX_LITERAL.match(value) is not None
    return regex or _is_path(value)


def _has_digit(value: str) -> bool:
    """Tell whether a value has a digit, as generated keys practically always do."""
    return _DIGIT.search(value) is not None


def _mixed_case(value: str) -> bool:
    """Tell whether a value mixes upper and lower case letters."""
    return value.lower() != value and value.upper() != value


def _looks_random(value: str) -> bool:
    """Tell whether a value has the make-up of a generated key rather than of a word."""
    if _has_digit(value) and any(c.isalpha() for c in value):
        return True
    return len(value) >= 24 and _mixed_case(value)


def _entropy(value: str) -> float:
    """Return the Shannon entropy of the value's characters, in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


# The chunks an identifier is made of: words, acronyms, numbers.
_CHUNK = _Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = _Lazy(r"[aeiouyAEIOUY]")


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


def _looks_generated(value: str) -> bool:
    """Tell whether a run found near a credential word has the make-up of a generated secret.

    Without a key to vouch for it, a run must have all three character classes (hex digests
    and UUIDs have one case only), spread out (high entropy), and not read as words.
    """
    if len(value) < 20 or not (_mixed_case(value) and _has_digit(value)):
        return False
    return _entropy(value) >= 3.5 and not _reads_as_words(value)


def _is_prose_colon(c: _Candidate) -> bool:
    """Tell whether an unquoted `key: value` is no setting: glued on, or going on as a sentence.

    A setting has a space after the colon (as YAML requires) and ends its line; `token:x` is
    more likely a URL's user info or a scheme, and the rest of a sentence means prose.
    """
    if c.group != "u" or c.sep != ":":
        return False
    glued = c.text[c.match.end("sep")] not in " \t*"
    return glued or _LINE_END.match(c.text, c.end) is None


def _is_prose_equals(c: _Candidate) -> bool:
    """Tell whether an unquoted `key = value` reads as a sentence: spaced around the `=` and
    going on after the value ("a 1MB password = bcrypt DoS"), where a setting ends its line."""
    if c.group != "u" or c.sep != "=":
        return False
    start, end = c.match.span("sep")
    spaced = c.text[start - 1 : start] in (" ", "\t") and c.text[end : end + 1] in (" ", "\t")
    return spaced and start > 0 and _LINE_END.match(c.text, c.end) is None


def _before(c: _Candidate, reach: int = 48) -> str:
    """Return the lower-cased text just before the match."""
    start = c.match.start()
    return c.text[max(0, start - reach) : start].lower()


def _key_name(c: _Candidate) -> str:
    """Return the whole key name the match ends, lower-cased and without separators."""
    found = _NAME_BEFORE.search(_before(c))
    name = (found.group() if found else "") + c.match.group("key")
    return name.replace("_", "").replace("-", "").replace(".", "")


def _is_generic_secret(c: _Candidate, name: str) -> bool:
    """Tell whether an api-key, token or secret assignment holds a generated-looking value."""
    value = c.value
    if name.endswith("key") and not _CREDENTIAL_KEY.search(name):
        return False
    if len(value) < 8 or value.isdigit() or _is_stand_in(value) or _is_prose_colon(c):
        return False
    return _looks_random(value)


# ---------------------------------------------------------------- bare-space forms

_FLAG_BEFORE = _Lazy(r"(?:^|[\s\"'])--?(?:[a-z0-9]+[_.-])*\Z")
_NETRC = _Lazy(r"(?:^|\s)(?:machine|default)\s+\S+(?:\s+login\s+\S+)?\s+\Z")
_SPACED_SETTINGS = frozenset({"requirepass", "masterauth", "awssecretaccesskey"})


def _is_flag(c: _Candidate) -> bool:
    """Tell whether the key is a command-line flag such as `--db-password`."""
    return _FLAG_BEFORE.search(_before(c)) is not None


def _in_netrc(c: _Candidate) -> bool:
    """Tell whether `password x` sits in a .netrc entry (`machine h login u password p`)."""
    return _NETRC.search(_before(c, 160)) is not None


def _spaced_value_counts(c: _Candidate, quoted: bool = True) -> bool:
    """Tell whether a value after a bare space belongs to the key: a flag, a setting, quoted."""
    if (quoted and c.group != "u") or _is_flag(c) or _in_netrc(c):
        return True
    return _key_name(c) in _SPACED_SETTINGS


# ---------------------------------------------------------------- judges


def _judge_assignment(c: _Candidate) -> str | None:
    """Name a `...key`, `...token` or `...secret` assignment by its key name and value."""
    name, value = _key_name(c), c.value
    for kind, name_shape, value_shape in _named_shapes():
        if name_shape.search(name) and value_shape.fullmatch(value):
            return kind
    if c.gap is not None and not _spaced_value_counts(c):
        return None
    return "generic-secret" if _is_generic_secret(c, name) else None


_OPENSSL_PASS_BEFORE = _Lazy(r"-pass(?:in|out|word)?[ \t]+\Z")


def _is_openssl_pass(c: _Candidate) -> bool:
    """Tell whether `pass:x` is OpenSSL's way of giving a password (`-passout pass:x`)."""
    return c.sep == ":" and _OPENSSL_PASS_BEFORE.search(_before(c)) is not None


def _is_bare_pass(c: _Candidate) -> bool:
    """Tell whether a short key (`pass`, `pwd`) is no password key: only `pass=x` on its own is.

    `pass: x` and `bypass=x` are likelier prose or another word than a password setting.
    """
    short = c.match.group("key") in ("pass", "pwd")
    return short and (c.sep != "=" or _ALNUM_BEFORE.search(_before(c)) is not None)


_BASE32_PAT = _Lazy(r"[a-z2-7]{52}")


def _base32_token(c: _Candidate) -> bool:
    """Accept a run of base32 that mixes letters and digits, as a generated token does."""
    return _has_digit(c.value) and not c.value.isdigit()


def _judge_pat(c: _Candidate) -> str | None:
    """Name the value of a personal-access-token key (`AZURE_DEVOPS_EXT_PAT`, `ado_pat`):
    Azure DevOps' shape by itself, any other generated-looking value as a secret."""
    if not _ends_the_key(c) or (c.gap is not None and not _spaced_value_counts(c)):
        return None
    if _BASE32_PAT.fullmatch(c.value) and _base32_token(c):
        return "azure-devops-pat"
    return "generic-secret" if _is_generic_secret(c, "pat") else None


def _ends_the_key(c: _Candidate) -> bool:
    """Whether `pat` is a word of the key (`EXT_PAT`, `adoPat`), not the end of one (`compat`)."""
    start = c.match.start("key")
    before = c.text[start - 1] if start else ""
    return not before.isalnum() or (c.text[start].isupper() and before.islower())


def _judge_password(c: _Candidate) -> str | None:
    """Name a password assignment; inside a `key=value;` string it is a connection string."""
    if c.gap is not None or c.pair is not None or c.said is not None:
        return _judge_loose_password(c)
    openssl, value = _is_openssl_pass(c), c.value
    if not openssl and _is_bare_pass(c):
        return None
    if len(value) < 3 or _is_stand_in(value) or (_is_prose_colon(c) and not openssl):
        return None
    prose = (c.group == "u" and c.sep == ":") or _is_prose_equals(c)
    if prose and not (_has_digit(value) or _SYMBOL.search(value)):
        return None  # in a sentence, only a value made like a password is one
    return "connection-string" if _ADO_BEFORE.search(_before(c)) else "password"


def _judge_loose_password(c: _Candidate) -> str | None:
    """Name a password given without an operator: after a comma, in prose, or a bare space."""
    key = c.match.group("key")
    if c.gap is None:  # `('password', 'x')` or "the password is x": only a password's make-up
        plain = key in ("password", "passwd", "passphrase")
        return "password" if plain and len(c.value) >= 6 and _strict_password(c) else None
    return _judge_spaced_password(c)


def _judge_spaced_password(c: _Candidate) -> str | None:
    """Name `password x`: a flag, a .netrc line, a setting or a quoted value.

    Bare `pass` is mostly the verb ("callers pass `x`"), so it counts only as a flag or in a
    setting such as `requirepass`.
    """
    key = c.match.group("key")
    if key == "pwd" or not _spaced_value_counts(c, quoted=key != "pass"):
        return None
    if c.group != "u" or _in_netrc(c):
        return "password" if len(c.value) >= 3 and not _is_stand_in(c.value) else None
    return "password" if _strict_password(c) else None


def _strict_password(c: _Candidate) -> bool:
    """Accept a password given without `=`, only when it has a digit or a symbol."""
    value = c.value
    if len(value) < 4 or _is_stand_in(value):
        return False
    return _has_digit(value) or _SYMBOL.search(value) is not None


def _judge_auth(c: _Candidate) -> str | None:
    """Name an `auth` value: base64 of `user:password` (Docker, npm) or a generated token."""
    value = c.value
    if c.gap is not None and not _spaced_value_counts(c):
        return None
    if len(value) < 8 or _is_stand_in(value) or _is_prose_colon(c):
        return None
    if _is_basic_credentials(value):
        return "basic-auth"
    if c.gap is not None and _key_name(c) in _SPACED_SETTINGS:
        return "password"  # redis's `masterauth x` is the primary's password
    return "generic-secret" if _looks_random(value) else None


def _is_basic_credentials(value: str) -> bool:
    """Tell whether a value is the base64 of `user:password`."""
    try:
        decoded = binascii.a2b_base64(value).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password) and decoded.isprintable()


def _judge_credential(c: _Candidate) -> str | None:
    """Name a `credentials = ...` value that is generated-looking, not a path or a mode."""
    if c.gap is not None and not _spaced_value_counts(c):
        return None
    value = c.value
    if len(value) < 8 or _is_stand_in(value) or _is_prose_colon(c):
        return None
    return "generic-secret" if _looks_random(value) else None


def _bearer(c: _Candidate) -> bool:
    """Accept a bearer token that is long, generated-looking and not a code reference."""
    value = c.value
    return len(value) >= 16 and _looks_random(value) and not _is_stand_in(value)


_SCHEME_KINDS = {"basic": "basic-auth", "ssws": "okta-token"}


def _judge_authorization(c: _Candidate) -> str | None:
    """Name the credential of an `Authorization:` header by its scheme."""
    scheme = c.match.group("scheme")
    if scheme == "basic":
        return None if _is_placeholder(c.value) else "basic-auth"
    return _SCHEME_KINDS.get(scheme, "generic-secret") if _bearer(c) else None


def _not_placeholder(c: _Candidate) -> bool:
    """Accept any value that is not a placeholder."""
    return not _is_placeholder(c.value)


def _judge_sql_password(c: _Candidate) -> str | None:
    """Name the password of `IDENTIFIED BY 'x'`."""
    value = c.value
    return "password" if len(value) >= 3 and not _is_stand_in(value) else None


# fmt: off
_DB_SCHEMES = frozenset({
    "postgres", "postgresql", "mysql", "mariadb", "mongodb", "redis", "rediss", "amqp", "amqps",
    "mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "couchdb", "neo4j", "bolt",
    "cassandra", "memcached", "db2", "snowflake", "jdbc",
})
# fmt: on
_SCHEME_BEFORE = _Lazy(r"([a-z][a-z0-9+.-]{0,30})\Z")


def _judge_url(c: _Candidate) -> str | None:
    """Name the password in `scheme://user:password@host` by its scheme."""
    found = _SCHEME_BEFORE.search(_before(c, 32))
    if found is None or _is_placeholder(c.value):
        return None
    scheme = found.group(1).partition("+")[0]  # postgresql+psycopg, mongodb+srv
    return "connection-string" if scheme in _DB_SCHEMES else "basic-auth-url"


def _judge_webhook(c: _Candidate) -> str | None:
    """Name a webhook URL by its host."""
    host = c.value.split("/")[2]
    if "slack" in host:
        return "slack-webhook"
    return "discord-webhook" if "discord" in host else "teams-webhook"


# ---------------------------------------------------------------- key blocks

_PEM_NAME = r"[A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?"
_NEWLINE = r"(?:\r?\n|\\r?\\n)"
_PEM = (
    # PEM has five dashes on each side; SSH2 (RFC 4716) four and a space. The body may not
    # cross another block's dashes, so a BEGIN without an END costs no more than its body.
    rf"----(?:-BEGIN{_PEM_NAME}-----| BEGIN{_PEM_NAME} ----)"
    rf"(?:(?:[A-Za-z0-9+/=\s:,.()\"]|-(?!---)|\\[nr])*?"
    rf"----(?:-END{_PEM_NAME}-----| END{_PEM_NAME} ----)"
    # a key cut off before its END line still loses its header lines and its base64 body
    r"|(?:(?:\s|\\[nr])*[A-Za-z-]+:[ \t]*[^\n\\]+)*(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})+)"
)
# A PuTTY key file: its header line, then every `Name: value` or base64 line up to the MAC.
_PUTTY = (
    rf"PuTTY-User-Key-File-[0-9]+:[^\n\\]*(?:{_NEWLINE}[ \t]*(?!Private-MAC:)"
    rf"(?:[A-Za-z0-9-]+:[^\n\\]*|[A-Za-z0-9+/=]+))*(?:{_NEWLINE}[ \t]*Private-MAC:[^\n\\]*)?"
)
# "-----BEGIN" in base64, as kubeconfig and Kubernetes secrets carry keys.
_WRAPPED_PEM = r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}"
_WRAPPED_LABEL = _Lazy(r"-----BEGIN ([A-Z0-9 ]+)-----")


def _judge_wrapped_block(c: _Candidate) -> str | None:
    """Name a base64-wrapped PEM block by its label: a private key, or a client certificate."""
    head = c.value[:88]
    try:
        label = _WRAPPED_LABEL.match(binascii.a2b_base64(head[: len(head) // 4 * 4]).decode())
    except (binascii.Error, UnicodeDecodeError):
        return None
    if label is None:
        return None
    if "PRIVATE KEY" in label.group(1):
        return "private-key"
    client = "client-certificate-data" in _before(c, 32) and "CERTIFICATE" in label.group(1)
    return "client-certificate" if client else None


# ---------------------------------------------------------------- prefixed tokens


def _is_discord_bot_token(value: str) -> bool:
    """Tell whether the first part of a three-part token is a Discord user id in base64."""
    part = value.partition(".")[0]
    try:
        decoded = binascii.a2b_base64(part.replace("-", "+").replace("_", "/") + "==")
    except binascii.Error:
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit()


class _Vendor:
    """A vendor's token: prefix and body as one pattern, and what else it must satisfy.

    `accept` is asked only of a token whose prefix is short (under PREFIX_ALONE characters)
    or whose length is open-ended: a long prefix with the length the vendor issues is a
    credential whatever its letters (`ghp_` and 36 of them). `needs` are the literals a
    token without a delimiter holds, so that its scan runs only where one occurs.
    """

    __slots__ = ("accept", "fence", "kind", "needs", "shape")

    def __init__(
        self,
        kind: str,
        shape: str,
        accept: Callable[[str], bool] | None,
        fence: frozenset[str],
        needs: tuple[str, ...],
    ) -> None:
        self.kind, self.shape, self.accept, self.fence, self.needs = (
            kind,
            shape,
            accept,
            fence,
            needs,
        )


def _v(
    kind: str,
    shape: str,
    accept: Callable[[str], bool] | None = None,
    *,
    dash: bool = False,
    needs: tuple[str, ...] = (),
) -> _Vendor:
    """A vendor token; `dash` for bodies that may hold `-`, so that a dash may not touch them."""
    return _Vendor(kind, shape, accept, _WORD_DASH if dash else _WORD, needs)


PREFIX_ALONE = 4  # a prefix this long, and the vendor's length, make a credential alone
# A shape that is a prefix of literal characters (a class counting as one), then one body
# of a fixed or bounded length: `npm_[A-Za-z0-9]{36}`, `api_org_[A-Za-z0-9]{34,40}`.
_FIXED_SHAPE = _Lazy(r"((?:\\.|\[[^\]]+\]|[A-Za-z0-9_-])+?)\[[^\]]+\]\{\d+(?:,\d+)?\}")
_ONE_CHARACTER = _Lazy(r"\\.|\[[^\]]+\]|.")


@cache
def _prefix_alone(shape: str) -> bool:
    """Whether a shape's prefix is long enough to make its token a credential by itself."""
    found = _FIXED_SHAPE.fullmatch(shape)
    return (
        found is not None and len(_ONE_CHARACTER.compiled.findall(found.group(1))) >= PREFIX_ALONE
    )


# Prefixes that end in `_`, `-` or `.`: found by the run after their delimiter.
# fmt: off
_DELIMITED: tuple[_Vendor, ...] = (
    _v("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    _v("github-token", r"github_pat_[A-Za-z0-9_]{50,255}"),
    _v("gitlab-token", r"gl(?:pat|dt|rt|ptt|cbt|ft|imt|soat|oas|agent|ffct|wt)-[A-Za-z0-9_-]{20,}"
       r"(?:\.[A-Za-z0-9_-]+)*", _has_digit, dash=True),
    _v("grafana-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"),
    _v("slack-token", r"x(?:ox[abposre]|app|oxe\.xox[bp])-[A-Za-z0-9-]{10,}", _has_digit,
       dash=True),
    _v("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", _has_digit, dash=True),
    _v("openrouter-key", r"sk-or-v1-[a-f0-9]{64}", dash=True),
    _v("openai-key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{32,}",
       _has_digit, dash=True),
    _v("mapbox-token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", dash=True),
    _v("stripe-key", r"sk_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _v("stripe-key", r"rk_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _v("stripe-key", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _v("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", dash=True),
    _v("npm-token", r"npm_[A-Za-z0-9]{36}", _has_digit),
    _v("pypi-token", r"pypi-Ag[A-Za-z0-9_-]{50,}", dash=True),
    _v("huggingface-token", r"hf_[A-Za-z0-9]{34,40}", _mixed_case),
    _v("huggingface-token", r"api_org_[A-Za-z0-9]{34,40}", _mixed_case),
    _v("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _v("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}"),
    _v("mailgun-key", r"key-[0-9a-zA-Z]{32}", _has_digit, dash=True),
    _v("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", _has_digit, dash=True),
    _v("linear-api-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    _v("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", dash=True),
    _v("newrelic-key", r"NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32}", dash=True),
    _v("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", dash=True),
    _v("heroku-api-key", r"HRKU-[A-Za-z0-9_-]{60}", dash=True),
    _v("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", dash=True),
    _v("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{30,}", _has_digit, dash=True),
    _v("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}", dash=True),
    # the first part is a decimal user id in base64: checked by decoding it
    _v("discord-token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
       _is_discord_bot_token, dash=True),
    _v("square-token", r"sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,43}", dash=True),
    _v("sentry-token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    _v("onepassword-token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    _v("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}", dash=True),
    _v("rubygems-token", r"rubygems_[a-f0-9]{48}"),
    _v("langsmith-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _v("groq-key", r"gsk_[A-Za-z0-9]{48,52}"),
    _v("replicate-token", r"r8_[A-Za-z0-9]{37}"),
    _v("pinecone-key", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}"),
    _v("docker-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", dash=True),
    _v("notion-token", r"ntn_[A-Za-z0-9]{40,50}", _has_digit),
    _v("notion-token", r"secret_[A-Za-z0-9]{43}", _has_digit),
    _v("netlify-token", r"nfp_[A-Za-z0-9]{36,40}"),
    _v("render-key", r"rnd_[A-Za-z0-9]{32}"),
    _v("figma-token", r"figd_[A-Za-z0-9_-]{40,}", dash=True),
    _v("sourcegraph-token", r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}"),
    _v("prefect-key", r"pnu_[A-Za-z0-9]{36}"),
    _v("buildkite-token", r"bkua_[a-f0-9]{40}"),
    _v("tailscale-key", r"tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{10,}", dash=True),
    _v("hubspot-token", rf"pat-(?:na|eu|ap)[0-9]-{_UUID}", dash=True),
    _v("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", dash=True),
    _v("dropbox-token", r"sl\.(?:u\.)?[A-Za-z0-9_=-]{130,}", dash=True),
    _v("pulumi-token", r"pul-[a-f0-9]{40}", dash=True),
    _v("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", dash=True),
    _v("dynatrace-token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", dash=True),
    _v("brevo-key", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}", dash=True),
    _v("contentful-token", r"CFPAT-[A-Za-z0-9_-]{43}", dash=True),
    _v("perplexity-key", r"pplx-[A-Za-z0-9]{48}", dash=True),
    _v("xai-key", r"xai-[A-Za-z0-9]{80}", dash=True),
    _v("nvidia-key", r"nvapi-[A-Za-z0-9_-]{64}", dash=True),
    _v("flutterwave-key", r"FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X", dash=True),
    _v("shippo-token", r"shippo_(?:live|test)_[a-f0-9]{40}"),
    _v("duffel-token", r"duffel_(?:live|test)_[A-Za-z0-9_=-]{43}", dash=True),
    _v("typeform-token", r"tfp_[A-Za-z0-9_.=-]{44,59}", dash=True),
    _v("clojars-token", r"CLOJARS_[a-z0-9]{60}"),
    _v("sonarqube-token", r"sq[pau]_[a-f0-9]{40}"),
    _v("supabase-key", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,}", dash=True),
    _v("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", dash=True),
    _v("cloudflare-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", dash=True),
    _v("octopus-key", r"API-[A-Z0-9]{26,32}", _has_digit, dash=True),
    _v("fly-token", r"fm[12][ar]?_[A-Za-z0-9+/=]{64,}|fo1_[A-Za-z0-9_-]{43}", dash=True),
    _v("readme-key", r"rdme_[a-z0-9]{70}"),
    _v("scalingo-token", r"tk-us-[A-Za-z0-9_-]{48}", dash=True),
    _v("plaid-token", rf"access-(?:sandbox|development|production)-{_UUID}", dash=True),
    _v("harness-token", r"pat\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}", dash=True),
    _v("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}", dash=True),
    _v("circleci-token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
)
# Prefixes with no delimiter: each scanned on its own, only in a text that holds one of the
# literals every token of the vendor holds (`needs`).
_LETTERED: tuple[_Vendor, ...] = (
    _v("aws-access-key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}",
       needs=("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    _v("google-api-key", r"AIza[0-9A-Za-z_-]{35}", dash=True, needs=("AIza",)),
    _v("atlassian-token", r"AT(?:ATT|CTT)3[A-Za-z0-9_=-]{100,}", dash=True,
       needs=("ATATT3", "ATCTT3")),
    _v("bitbucket-token", r"ATBB[A-Za-z0-9]{32}", needs=("ATBB",)),
    _v("jfrog-token", r"AKCp[A-Za-z0-9]{69}", needs=("AKCp",)),
    _v("datastax-token", r"AstraCS:[A-Za-z]{24}:[a-f0-9]{64}", needs=("AstraCS:",)),
    _v("twitter-token", "A" * 22 + r"[A-Za-z0-9%]{60,}", needs=("A" * 22,)),
    # a Firebase Cloud Messaging server key: a key id, then the `APA91b` every one holds
    _v("firebase-key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{120,}", dash=True,
       needs=(":APA91b",)),
    _v("square-token", r"EAAA[A-Za-z0-9_-]{22,60}", _looks_random, dash=True, needs=("EAAA",)),
    _v("facebook-token", r"EAA[B-Z][A-Za-z0-9]{60,}", _has_digit, needs=("EAA",)),
    _v("easypost-key", r"EZ[AT]K[A-Za-z0-9]{54}", needs=("EZAK", "EZTK")),
    _v("databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?", dash=True, needs=("dapi",)),
    _v("alibaba-key", r"LTAI[A-Za-z0-9]{12,20}", _has_digit, needs=("LTAI",)),
    _v("google-oauth-token", r"1//0[0-9A-Za-z_-]{40,}", dash=True, needs=("1//0",)),  # refresh
)
# fmt: on

_VENDORS = _DELIMITED + _LETTERED

# A delimiter followed by twelve token characters and, within 24, a capital or a digit (so
# that snake_case names and dashed words pass by in the regex engine, not in Python), or 24
# lower-case letters in a row, as a body whose letters come first has
# (`ghp_abcdefghijklmnopqrstuvwxyz0123456789`: a long prefix with its vendor's length is a
# token whatever its letters). The run is looked at, not consumed, so that a delimiter
# inside it is reported too.
_DELIMITER_RUNS = (
    _Lazy(r"_(?=[a-z_+/=-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_+/=-]{12})"),
    _Lazy(r"-(?=[a-z_-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_-]{12})"),
    _Lazy(r"\.(?=[a-z_-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_-]{12})"),
)
_PREFIX_REACH = 256  # how far back from a delimiter a token's start is looked for
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SEGMENT_START = _Lazy(r"(?<![A-Za-z0-9])[A-Za-z0-9]")


def _head(shape: str) -> str | None:
    """Return the literal every token of the shape starts with, or None for a class."""
    heads = {alternative[0] for alternative in _alternatives(shape)}
    if len(heads) != 1 or heads & set("(\\"):
        raise ValueError(f"a vendor shape must start with one literal or one class: {shape}")
    head = heads.pop()
    return None if head == "[" else head


def _alternatives(shape: str) -> list[str]:
    """Split a pattern at its top-level `|`."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(shape):
        if i > 0 and shape[i - 1] == "\\":
            continue
        depth += (char in "([") - (char in ")]")
        if char == "|" and depth == 0:
            parts.append(shape[start:i])
            start = i + 1
    return [*parts, shape[start:]]


def _named_alternation(vendors: list[tuple[int, _Vendor]]) -> re.Pattern[str]:
    """One pattern for the vendors, each in a group named by its place in the table.

    Used only with `match` at a known start: named groups stop the regex engine from
    skipping ahead to a shared first character, which only a scan would need.
    """
    return re.compile("|".join(f"(?P<t{n}>{v.shape})" for n, v in vendors))


@cache
def _vendors_by_head() -> dict[str | None, list[tuple[int, _Vendor]]]:
    """Every vendor with its place in the table, by the literal its tokens start with."""
    by_head: dict[str | None, list[tuple[int, _Vendor]]] = {}
    for n, vendor in enumerate(_VENDORS):
        by_head.setdefault(_head(vendor.shape), []).append((n, vendor))
    return by_head


@cache
def _head_pattern(head: str | None) -> re.Pattern[str] | None:
    """Compile the vendors of one first character (None: a class) when first needed.

    Only a few first characters occur at the places a delimiter run points to, so most of
    the table is never compiled in a process.
    """
    vendors = _vendors_by_head().get(head)
    return _named_alternation(vendors) if vendors else None


def _vendor_match(raw: str, start: int) -> re.Match[str] | None:
    """Match whichever vendor's token starts at `start`."""
    for head in (raw[start], None):
        pattern = _head_pattern(head)
        found = pattern.match(raw, start) if pattern is not None else None
        if found is not None:
            return found
    return None


_LETTER_SCANS: dict[str, re.Pattern[str]] = {}  # compiled so far, by first letter


@cache
def _letter_groups() -> dict[str, list[_Vendor]]:
    """The vendors without a delimiter, by the letter their tokens start with."""
    letters: dict[str, list[_Vendor]] = {}
    for vendor in _LETTERED:
        letters.setdefault(vendor.shape[0], []).append(vendor)
    return letters


def _lettered_scans(raw: str, gated: bool) -> Iterator[re.Pattern[str]]:
    """The scans for the vendors without a delimiter, one per first letter; a letter's is
    compiled the first time a text holds a literal one of its vendors needs (any text, once
    the process is past `GATED_CHARS`)."""
    for letter, vendors in _letter_groups().items():
        scan = _LETTER_SCANS.get(letter)
        if scan is None:
            if gated and not any(need in raw for vendor in vendors for need in vendor.needs):
                continue
            scan = _LETTER_SCANS[letter] = _scan_alternation(vendors)
        yield scan


def _scan_alternation(vendors: list[_Vendor]) -> re.Pattern[str]:
    """One pattern for vendors sharing a first letter, unnamed so that scans skip ahead."""
    return re.compile("(?:" + "|".join(v.shape for v in vendors) + ")")


class _PrefixedTokens:
    """The family of vendor tokens, delimited and lettered, behind one `find`."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds

    def find(self, text: _Text) -> Iterator[_Span]:
        """Yield every vendor token in the text."""
        raw, tried = text.raw, set[int]()
        for scan in _lettered_scans(raw, text.gated):
            for hit in scan.finditer(raw):
                yield from _vendor_token_at(raw, hit.start(), tried)
        for run in _DELIMITER_RUNS:
            done = 0  # where the starts before an earlier hit in the same run were all tried
            for hit in run.finditer(raw):
                start = _token_start(raw, hit.start(), done)
                for segment in _SEGMENT_START.finditer(raw, start, hit.start() + 1):
                    yield from _vendor_token_at(raw, segment.start(), tried)
                done = hit.start() + 1


def _token_start(raw: str, hit: int, done: int) -> int:
    """Return how far back from a delimiter the token characters run, up to a limit.

    A prefix is made of letters, digits and delimiters, so a token cannot start before the
    first other character; starts before `done` were tried for an earlier hit.
    """
    start, floor = hit, max(done, hit - _PREFIX_REACH)
    while start > floor and raw[start - 1] in _TOKEN_CHARACTERS:
        start -= 1
    return start


def _vendor_token_at(raw: str, start: int, tried: set[int]) -> Iterator[_Span]:
    """Yield the token that starts at `start`, if a vendor issues one there; once per start."""
    if start in tried:
        return
    tried.add(start)
    found = _vendor_match(raw, start)
    if found is None or found.lastgroup is None:
        return
    vendor, end = _VENDORS[int(found.lastgroup[1:])], found.end()
    accepted = vendor.accept is None or _prefix_alone(vendor.shape) or vendor.accept(raw[start:end])
    if accepted and not _touches(raw, start, end, vendor.fence):
        yield start, end, vendor.kind


def _prefixed_tokens() -> _PrefixedTokens:
    """The vendor-token family; its patterns compile on first use."""
    return _PrefixedTokens(tuple(dict.fromkeys(v.kind for v in _VENDORS)))


# ---------------------------------------------------------------- secrets named by a word nearby

_NEAR_REACH = 32  # how many characters after a credential word a secret may start
_NEAR_LONGEST = 512  # the window's length beyond that; a longer run is measured in full
# A run of base64 or token characters; `=` only as padding, since `a=b` is an assignment.
_NEAR_RUN = _Lazy(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}")
# What says a random run is a digest or an image rather than a secret: a label before it
# (`base64,`, `sha256:`, go.sum's `h1:`) or at its start (`sha512-...` holds its dash).
_DIGEST_LABEL = r"(?:sha\d*|md5|h1|blake\w*|xxh\d*|crc\d*)[:=-]"
_LABEL_BEFORE = _Lazy(rf"(?:base64,|{_DIGEST_LABEL})\Z", re.IGNORECASE)
_LABEL_AT_START = _Lazy(_DIGEST_LABEL, re.IGNORECASE)
_URL_IN_CHUNK = _Lazy(r"://\S*\Z")
_CREDENTIAL_WORDS = _Lazy(
    rf"(?:password|passwd|passphrase|pwd|secret|token|credential|creds?|{_CREDENTIAL_KEY_NAME})"
    r"s?\Z"
)
_WORD_BEFORE = _Lazy(r"([a-z]+)[ \t]+\Z")


def _names_credential(c: _Candidate) -> bool:
    """Tell whether the word holding the key names a credential (`apiToken`, `API key`).

    A key inside a longer word (`bypass`, `tokenizer`, `keyboard`) names nothing; a bare
    `key` needs a word before it that makes it a credential (`API key`, `access key`).
    """
    start, end = c.match.span("key")
    word = _whole_word(c.text, start, end).lower().replace("_", "").replace("-", "")
    if word in ("key", "keys"):
        before = _WORD_BEFORE.search(c.text[max(0, start - 24) : start].lower())
        word = (before.group(1) if before else "") + word
    return _CREDENTIAL_WORDS.search(word) is not None


def _whole_word(text: str, start: int, end: int, reach: int = 64) -> str:
    """Return the word a span lies in, up to `reach` characters on either side."""
    floor, ceiling = max(0, start - reach), min(len(text), end + reach)
    while start > floor and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        start -= 1
    while end < ceiling and (text[end].isalnum() or text[end] in "_-"):
        end += 1
    return text[start:end]


def _secret_nearby(c: _Candidate, kind: str) -> _Span | None:
    """Find a generated-looking run a few words after a credential word, on the same line."""
    if not _names_credential(c):
        return None
    raw, key_end = c.text, c.match.end("key")
    # Runs are looked for in a bounded window, then measured in full where one starts.
    window = key_end + _NEAR_REACH + _NEAR_LONGEST
    line_end = raw.find("\n", key_end, window)
    for run in _NEAR_RUN.finditer(raw, key_end, window if line_end < 0 else line_end):
        if run.start() - key_end > _NEAR_REACH:
            break
        whole = _NEAR_RUN.match(raw, run.start())
        if whole is not None and _looks_generated(whole.group()) and not _disowned(raw, whole):
            return whole.start(), whole.end(), kind
    return None


def _disowned(raw: str, run: re.Match[str]) -> bool:
    """Tell whether a run is labelled a digest or an image, or is part of a URL."""
    if _LABEL_AT_START.match(run.group()):
        return True
    before = raw[max(0, run.start() - 256) : run.start()]
    chunk = before.rsplit(None, 1)[-1] if before.strip() else ""
    labelled = _LABEL_BEFORE.search(before[-16:]) is not None  # no label is longer
    return labelled or _URL_IN_CHUNK.search(chunk) is not None


# ---------------------------------------------------------------- rules built on one regex


class _Rule:
    """One family of credential shapes that share a literal start.

    Patterns start with a literal so that the regex engine skips ahead fast (merging them into
    one alternation would defeat that); word boundaries are checked afterwards (`fence`)
    because a leading look-behind would defeat it too. The judge names the kind of each match,
    or drops it as a look-alike; `nearby` names the kind of a secret found after the key
    when the key has no value of its own. `needs` are lower-case literals of which every
    match holds one: a text holding none is passed over before the pattern is even compiled,
    so a process pays only for the families its texts come near.
    """

    __slots__ = (
        "always_gated",
        "fence",
        "folded",
        "judge",
        "kinds",
        "lead",
        "nearby",
        "needs",
        "pattern",
    )

    def __init__(
        self,
        kinds: tuple[str, ...],
        pattern: _Lazy,
        judge: Judge,
        needs: tuple[str, ...],
        *,
        folded: bool = False,  # match against the lower-cased copy: the key may be in any case
        lead: int = 0,  # characters before the match that belong to the secret
        fence: frozenset[str] = frozenset(),  # characters that may not touch the secret
        nearby: str | None = None,
        always_gated: bool = False,  # a pattern with no literal start: scanning it is slow
    ) -> None:
        self.kinds, self.pattern, self.judge, self.needs = kinds, pattern, judge, needs
        self.folded, self.lead, self.fence, self.nearby = folded, lead, fence, nearby
        self.always_gated = always_gated

    def find(self, text: _Text) -> Iterator[_Span]:
        """Yield the span and kind of every secret this rule finds."""
        gated = self.always_gated or (text.gated and not self.pattern.ready)
        if gated and not any(need in text.folded for need in self.needs):
            return  # not compiled, nor run, for a text that cannot hold a match
        for match in self.pattern.finditer(text.folded if self.folded else text.raw):
            found = self._judged(text.raw, match)
            if found is not None:
                yield found

    def _judged(self, raw: str, match: re.Match[str]) -> _Span | None:
        """Judge one match: its own value first, then a secret a few words after the key."""
        c = _candidate(self, raw, match)
        if c.group and not (self.fence and _touches(raw, c.start, c.end, self.fence)):
            kind = self.judge(c)
            if kind is not None:
                return c.start, c.end, kind
        return _secret_nearby(c, self.nearby) if self.nearby else None


def _candidate(rule: _Rule, text: str, match: re.Match[str]) -> _Candidate:
    """Locate the value of a match in the original text; no group when the key has none."""
    for group in _VALUE_GROUPS:
        if group in match.re.groupindex and match.group(group):
            start, end = match.span(group)
            if group == "u" and _QUERY_KEY.search(text, max(0, match.start() - 48), match.start()):
                end = _query_value_end(text, start, end)
            return _Candidate(text, match, group, start - rule.lead, end)
    return _Candidate(text, match, "", match.end(), match.end())


# A key that is a URL's query parameter (`?user=app&password=`): its value ends at `&`.
_QUERY_KEY = _Lazy(r"[?&][\w.-]*\Z")


def _query_value_end(text: str, start: int, end: int) -> int:
    """Return where a query parameter's value ends: at the next `&` or `#`, if before `end`."""
    stops = [i for i in (text.find("&", start, end), text.find("#", start, end)) if i >= 0]
    return min(stops, default=end)


def _always(kind: str, accept: Accept | None = None) -> Judge:
    """Make a judge that names every accepted match with one kind."""

    def judge(c: _Candidate) -> str | None:
        return kind if accept is None or accept(c) else None

    return judge


def _named(
    kind: str | tuple[str, ...], accept: Accept | None, judge: Judge | None
) -> tuple[tuple[str, ...], Judge]:
    """Return a rule's kinds and judge: one kind with an optional test, or several with a judge."""
    if isinstance(kind, str):
        return (kind,), judge or _always(kind, accept)
    if judge is None:
        raise ValueError(f"a rule naming {kind} needs a judge to choose among them")
    return kind, judge


def _token(
    kind: str | tuple[str, ...],
    pattern: str,
    needs: tuple[str, ...],
    accept: Accept | None = None,
    *,
    judge: Judge | None = None,
    fence: frozenset[str] = _WORD,
    lead: int = 0,
    always_gated: bool = False,
) -> _Rule:
    """A case-sensitive token shape; the whole match is the secret."""
    kinds, judge = _named(kind, accept, judge)
    pattern_ = _Lazy(f"(?P<v>{pattern})")
    return _Rule(kinds, pattern_, judge, needs, lead=lead, fence=fence, always_gated=always_gated)


def _keyed(
    kind: str | tuple[str, ...],
    pattern: str,
    needs: tuple[str, ...],
    accept: Accept | None = None,
    *,
    judge: Judge | None = None,
    nearby: str | None = None,
) -> _Rule:
    """A rule that starts at a key name in any case; written in lower case throughout."""
    kinds, judge = _named(kind, accept, judge)
    return _Rule(kinds, _Lazy(pattern), judge, needs, folded=True, nearby=nearby)


# After a key: a closing quote (maybe JSON-escaped) or markdown bold, then the operator.
# Or, between a quoted key and a quoted value, a comma: `define('DB_PASSWORD', 'x')`.
_SEP = (
    r"(?:(?:\\?[\"'`]\]?|\*\*)?[ \t]*(?P<sep>:=|=>|==?|:)[ \t]*(?:\*\*[ \t]*)?"
    r"|[\"'][ \t]*(?P<pair>,)[ \t]*(?=[\"']))"
)
# An assignment value: quoted (maybe JSON-escaped), or unquoted up to a delimiter; a trailing
# full stop or closing bracket belongs to the sentence, not to the value.
_VALUE = (
    r"(?:\\?\"(?P<dq>[^\"\\\s]+)\\?\""
    r"|'(?P<sq>[^'\s]+)'"
    r"|`(?P<bq>[^`\s]+)`"
    r"|(?P<u>[^\s\"'`,;<>]*[^\s\"'`,;<>.)\]}]))"
)
# `--password x`, `.netrc` and `requirepass x` put a bare space between key and value. Only
# a quoted value or one with a digit or a symbol goes on to Python, so that prose such as
# "token budget" is passed over by the regex engine.
_GAP = r"(?P<gap>[ \t]+)(?=[\"'`]|[^\s\"'`,;<>]*[0-9!@#$%^&*+/=~?])"
# No value after the key, but a long run a few words on: a secret named by a word nearby.
_NEAR = rf"(?=[^\n]{{0,{_NEAR_REACH}}}?(?<![a-z0-9+/=_-])[a-z0-9+/_-]{{20}})"
_ASSIGNED = rf"(?:(?:{_SEP}|{_GAP}){_VALUE}|{_NEAR})"
# "The admin password is x": prose that gives the value, with a password's make-up.
_SAID = r"(?P<said>s?[ \t]+(?:is|was)[ \t]+)(?=[\"'`]|[^\s\"'`,;<>]*[0-9!@#$%^&*+/=~?])"

_ASSIGNED_KINDS = (
    "generic-secret",
    "aws-secret-key",
    "aws-session-token",
    "azure-connection-string",
    "azure-key",
    "heroku-api-key",
    "datadog-key",
    "twilio",
    "okta-token",
)
_PASSWORD_KINDS = ("password", "connection-string")

# The clients that take a password as a short flag, and which letter.
_PASSWORD_CLI = _Lazy(
    r"(?<![^\s;|&(`])(?:sudo[ \t]+)?(?:\S*/)?(?P<cli>sshpass|mysql\w*|mariadb\w*|mongo\w*"
    r"|redis-cli|sqlcmd|bcp|ldap\w+|zip|7za?|unrar"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login)(?=[ \t])"
)
_COMMAND_SEPARATORS = "\n;|&`("
_COMMAND_REACH = 256  # how far back from a flag its command is looked for
_CLI_FLAG_LETTERS = (
    ("sshpass", "p"), ("mysql", "p"), ("mariadb", "p"), ("mongo", "p"), ("redis-cli", "a"),
    ("sqlcmd", "P"), ("bcp", "P"), ("ldap", "w"), ("zip", "P"), ("7z", "p"), ("unrar", "p"),
    ("login", "p"),
)  # fmt: skip
# mysql reads `-p word` as a database name, so a spaced value needs a password's make-up.
_CLI_GLUED_ONLY = ("mysql", "mariadb")


def _judge_cli_password(c: _Candidate) -> str | None:
    """Name the value of a short password flag, when the command is one that takes it."""
    cli = _command_before(c.text, c.match.start())
    if cli is None or not _takes_password_flag(cli, c.match.group("flag")):
        return None
    if c.gap is not None and cli.startswith(_CLI_GLUED_ONLY):
        return "password" if _strict_password(c) else None
    return None if len(c.value) < 3 or _is_stand_in(c.value) else "password"


def _takes_password_flag(cli: str, flag: str) -> bool:
    """Tell whether the client reads its password from this short flag (`mysqldump -p`)."""
    return any(
        letter == flag and (cli.startswith(name) or cli.endswith(name))
        for name, letter in _CLI_FLAG_LETTERS
    )


def _command_before(text: str, flag: int) -> str | None:
    """Return the password-taking client whose command the flag belongs to, if any.

    The command is looked for only since the last separator (`;`, `|`, `&&`, a new line), so
    that a flag is never credited to another command, and never further back than a line's
    worth of text, so that a long text without separators costs no more than a short one.
    """
    floor = max(0, flag - _COMMAND_REACH)
    start = max(floor, *(text.rfind(sep, floor, flag) + 1 for sep in _COMMAND_SEPARATORS))
    found = _PASSWORD_CLI.search(text, start, flag)
    return found.group("cli") if found is not None else None


def _rules() -> tuple[_Rule, ...]:
    """Build the regex-led families, most specific first."""
    return (
        _token("private-key", _PEM, ("----",), fence=frozenset()),
        _token("private-key", _PUTTY, ("putty-user-key-file-",), fence=frozenset()),
        _token(
            ("private-key", "client-certificate"),
            _WRAPPED_PEM,
            ("ls0tls1crudjti",),
            judge=_judge_wrapped_block,
            fence=frozenset("+/=") | _WORD,
        ),
        _token(
            ("slack-webhook", "discord-webhook", "teams-webhook"),
            r"https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{10,}"
            r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}"
            r"|[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{20,})",
            ("https://",),
            judge=_judge_webhook,
            fence=frozenset(),
        ),
        _token(
            "azure-key",
            r"Q~(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}",
            ("q~",),
            lead=4,
            fence=_WORD_DASH | {"~", "."},
        ),
        # Patterns without a literal start scan slowly: they run only where their word is.
        _token("twilio", r"(?:AC|SK)[0-9a-f]{32}", ("twilio",), always_gated=True),
        _token(
            "telegram-token",
            r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
            (":aa",),
            fence=_WORD_DASH,
            always_gated=True,
        ),
        # Azure DevOps issues 52 lower-case base32 characters: alone they are no shape of
        # their own, so only where the text names DevOps (or under a `..._PAT` key, below).
        _token("azure-devops-pat", r"[a-z2-7]{52}", ("devops",), _base32_token, always_gated=True),
        *_http_rules(),
        *_assignment_rules(),
    )


def _http_rules() -> tuple[_Rule, ...]:
    """URLs with credentials, SAS signatures, authorization headers and curl's `-u`."""
    return (
        # A Sentry DSN: the project's key (and, in old ones, its secret) as the URL's user,
        # a host, and the project's number as the last part of the path.
        _keyed(
            "sentry-dsn",
            r"://(?P<v>[0-9a-f]{32}(?::[0-9a-f]{32})?)@[a-z0-9.-]+(?::[0-9]{1,5})?"
            r"/(?:[a-z0-9_.-]+/)*[0-9]+(?![a-z0-9_/.-])",
            ("://",),
        ),
        _keyed(
            ("connection-string", "basic-auth-url"),
            r"://[^\s:/@\"'`<>]{0,128}:(?P<v>[^\s/\"'`<>]{1,256})@(?=[a-z0-9\[._-])",
            ("://",),
            judge=_judge_url,
        ),
        _keyed("azure-sas", r"sig=(?<=[?&]sig=)(?P<v>[a-z0-9%+/]{20,}(?:%3d|=){0,2})", ("sig=",)),
        _keyed(
            ("basic-auth", "okta-token", "generic-secret"),
            r"authorization[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?"
            r"(?P<scheme>basic|token|ssws|apikey|api-key)[ \t]+"
            r"(?P<v>[a-z0-9+/._~-]{8,}={0,2})(?![a-z0-9+/=])",
            ("authorization",),
            judge=_judge_authorization,
        ),
        _keyed(
            "basic-auth",
            r"curl\b[^\n]*?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)",
            ("curl",),
            _strict_password,
        ),
        _keyed(
            "bearer-token",
            r"bearer[ \t]+(?P<v>[a-z0-9_~+/-]+(?:\.[a-z0-9_~+/-]+)*=*)",
            ("bearer",),
            _bearer,
        ),
    )


def _assignment_rules() -> tuple[_Rule, ...]:
    """Keys that name a secret, in any notation, and the short flags of password CLIs."""
    return (*_password_rules(), *_secret_key_rules())


def _password_rules() -> tuple[_Rule, ...]:
    """A password named by its key, a password CLI's short flag, XML or SQL."""
    return (
        _keyed(
            _PASSWORD_KINDS,
            rf"(?P<key>pass(?:word|wd|phrase)?|pwd)(?:(?:{_SEP}|{_GAP}|{_SAID}){_VALUE}|{_NEAR})",
            ("pass", "pwd"),
            judge=_judge_password,
            nearby="password",
        ),
        _Rule(
            ("password",),
            _Lazy(
                r"-(?<=[ \t]-)(?P<flag>[pPaw])(?:(?P<gap>[ \t]+)(?!-))?"
                r"(?:\"(?P<dq>[^\"\s]+)\"|'(?P<sq>[^'\s]+)'|(?P<u>[^\s\"'`;|&<>-][^\s\"'`;|&<>]*))"
            ),
            _judge_cli_password,
            (" -", "\t-"),
        ),
        _keyed("password", r"<pass(?:word|wd)>(?P<v>[^<\s]+)</", ("<pass",), _not_placeholder),
        _keyed(
            "password",
            r"identified[ \t]+by[ \t]+(?:'(?P<sq>[^'\s]+)'|\"(?P<dq>[^\"\s]+)\")",
            ("identified",),
            judge=_judge_sql_password,
        ),
    )


def _secret_key_rules() -> tuple[_Rule, ...]:
    """A token, key, secret, credential or PAT named by its key (npm's `_auth` too)."""
    return (
        _keyed(
            "npm-token",
            r"_auth(?:token)?[ \t]*=[ \t]*(?:\"|')?(?P<v>[^\s\"'`]+)",
            ("_auth",),
            _not_placeholder,
        ),
        *(
            _keyed(
                _ASSIGNED_KINDS,
                rf"(?P<key>{key}){_ASSIGNED}",
                (need,),
                judge=_judge_assignment,
                nearby="generic-secret",
            )
            for key, need in (
                (r"secret(?:[_.-]?access)?(?:[_.-]?key(?:[_.-]?base)?)?", "secret"),
                ("token", "token"),
                ("key", "key"),
            )
        ),
        _keyed(
            ("basic-auth", "generic-secret", "password"),
            rf"(?P<key>auth)(?:{_SEP}|{_GAP}){_VALUE}",
            ("auth",),
            judge=_judge_auth,
        ),
        _keyed(
            "generic-secret",
            rf"(?P<key>cred(?:ential)?s?){_ASSIGNED}",
            ("cred",),
            judge=_judge_credential,
            nearby="generic-secret",
        ),
        _keyed(
            ("azure-devops-pat", "generic-secret"),
            rf"(?P<key>pat)(?:{_SEP}|{_GAP}){_VALUE}",
            ("pat",),
            judge=_judge_pat,
        ),
    )


Finder = _Rule | _PrefixedTokens


@cache
def _finders() -> tuple[Finder, ...]:
    """Every family, most specific first: where two claim a span, the earlier names it."""
    rules = _rules()
    return (*rules[:1], _prefixed_tokens(), *rules[1:])


def _kinds() -> tuple[str, ...]:
    """Every kind a marker may name, in table order."""
    return tuple(dict.fromkeys(kind for finder in _finders() for kind in finder.kinds))


KINDS: tuple[str, ...] = _kinds()


# ---------------------------------------------------------------- replacing


class _Hit:
    """A span of text to replace, ranked by its family's place in the table."""

    __slots__ = ("end", "kind", "rank", "start")

    def __init__(self, start: int, end: int, kind: str, rank: int) -> None:
        self.start, self.end, self.kind, self.rank = start, end, kind, rank


def _fold(text: str) -> str:
    """Lower-case ASCII letters only, so that every index still points at the same character."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _marker_spans(text: str) -> list[tuple[int, int]]:
    """Return the spans of markers already in the text, so that a second pass keeps them."""
    return [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Tell whether a span overlaps any of the sorted, disjoint spans."""
    index = max(bisect_right(spans, (start, end)) - 1, 0)
    return any(s < end and start < e for s, e in spans[index : index + 2])


def _touches(text: str, start: int, end: int, fence: frozenset[str]) -> bool:
    """Tell whether a fence character sits right before or right after the span."""
    before = start > 0 and text[start - 1] in fence
    return before or (end < len(text) and text[end] in fence)


def _hits(text: str) -> list[_Hit]:
    """Find every secret span, skipping markers left by an earlier pass."""
    _redacted[0] += len(text)
    source = _Text(text, _fold(text), _redacted[0] <= GATED_CHARS)
    markers = _marker_spans(text)
    return [
        _Hit(start, end, kind, rank)
        for rank, finder in enumerate(_finders())
        for start, end, kind in finder.find(source)
        if not _overlaps(start, end, markers)
    ]


def _merge(hits: list[_Hit]) -> list[_Hit]:
    """Order hits by position and fold overlapping ones, so that no tail of a secret survives."""
    merged: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, h.rank, -h.end)):
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = _Hit(last.start, max(last.end, hit.end), last.kind, last.rank)
        else:
            merged.append(hit)
    return merged


def _splice(
    text: str, hits: list[_Hit], placed: list[tuple[int, str]]
) -> tuple[str, list[tuple[int, str]]]:
    """Put markers in place of the hits; move earlier markers' positions along with the text."""
    pieces: list[str] = []
    cursor = 0
    moves: list[tuple[int, int]] = []  # (end of a replaced span, change in length there)
    for hit in hits:
        marker = f"[REDACTED:{hit.kind}]"
        pieces += [text[cursor : hit.start], marker]
        moves.append((hit.end, len(marker) - (hit.end - hit.start)))
        cursor = hit.end
    pieces.append(text[cursor:])
    moved = [(pos + sum(d for end, d in moves if end <= pos), kind) for pos, kind in placed]
    shift = 0
    for hit, (_, change) in zip(hits, moves, strict=True):
        moved.append((hit.start + shift, hit.kind))
        shift += change
    return "".join(pieces), moved


def redact(text: str) -> tuple[str, list[str]]:
    """Replace every credential in text by `[REDACTED:kind]`; return the new text and the kinds found, in order of appearance."""  # noqa: E501
    placed: list[tuple[int, str]] = []
    # A secret glued to another one only shows its edges once its neighbour is a marker, so
    # passes repeat until nothing is found; that also makes a second call a no-op.
    for _ in range(_MAX_PASSES):
        hits = _merge(_hits(text))
        if not hits:
            break
        text, placed = _splice(text, hits, placed)
    return text, [kind for _, kind in sorted(placed)]


def located(original: str, redacted: str) -> list[tuple[int, str]]:
    """(line of `original`, 1-based, kind) of each credential `redact` replaced in it.

    The two texts are the same but for the markers, so each secret starts where the text
    before its marker ends in the original, and ends where the text after the marker starts
    again (a key file's secret spans several lines; its marker, one).
    """
    found = []
    at = 0  # where, in the original, the text after the last marker starts
    seen = 0  # the same place in the redacted text
    line = 1
    marks = list(_MARKED.finditer(redacted))
    for n, mark in enumerate(marks):
        start = at + (mark.start() - seen)
        line += original.count("\n", at, start)
        if original.startswith(mark.group(), start):  # a marker the text already held
            at, seen = start + len(mark.group()), mark.end()
            continue
        found.append((line, mark.group(1)))
        following = redacted[mark.end() : marks[n + 1].start() if n + 1 < len(marks) else None]
        end = original.find(following[:64], start) if following else len(original)
        end = len(original) if end < 0 else end
        line += original.count("\n", start, end)
        at, seen = end, mark.end()
    return found


_MARKED = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
