"""Secret redaction: every write path passes text through `redact` before it reaches disk.

Each credential is replaced by `[REDACTED:kind]`; everything around it stays byte for byte.
Only the secret value goes: for `password = "hunter22"` the key, the spacing and both quotes
stay; for a URL `postgres://app:pw@db` only `pw` goes; a PEM private key goes as one block.

Placeholder policy. A value is left alone when it is plainly not a credential:
- template or environment syntax: `${DB_PASSWORD}`, `$PASSWORD`, `%(pw)s`, `<your-password>`,
  `{{ secrets.TOKEN }}`, `#{pw}`, `[...]`;
- a code reference: `process.env.TOKEN`, `os.environ[...]`, `getenv(...)`, `db_password`,
  `dbPassword`, `DB_PASSWORD`, a file path, a URL;
- a mask or a truncation: `***`, `xxx`, `....`, `sk-...`;
- a stand-in word: the field's own name (`password=password`), a type name
  (`password: string`), `example`, `dummy`, `test`, `your_api_key_here`, `null`, `true`, ...
Well-known defaults such as `changeme`, `admin` or `postgres` ARE redacted: they open real
installations, so keeping them would be a leak while dropping them costs nothing.

Prose is told from settings by shape: an assignment value containing whitespace is not taken
for a secret, and in `key: value` an unquoted value must follow a space and end its line, and
for a password it must hold a digit or a symbol; so "Password: hashed with bcrypt" and
`admin_password: changeme` stay, while `ADMIN_PASSWORD=changeme` goes. Discord bot tokens,
Twilio SIDs and Telegram bot tokens have no distinctive prefix, so they are only looked for
when the text names the service (for Telegram, when it has the `:AA` every bot secret starts
with); elsewhere they are still caught when assigned to a key such as `BOT_TOKEN`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["KINDS", "redact"]

_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
# Groups that may hold the secret value, in the order they are looked up.
_VALUE_GROUPS = ("v", "dq", "sq", "bq", "u")
_MAX_PASSES = 16
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WORD_DASH = _WORD | {"-"}


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A match of a rule, with the span of its value in the original text."""

    text: str
    match: re.Match[str]
    group: str
    start: int
    end: int

    @property
    def value(self) -> str:
        """Return the value as written, whatever case the rule matched in."""
        return self.text[self.start : self.end]

    @property
    def sep(self) -> str | None:
        """Return the assignment operator, for rules that have one."""
        return self.match.group("sep") if "sep" in self.match.re.groupindex else None


Accept = Callable[[_Candidate], bool]
Judge = Callable[[_Candidate], str | None]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One family of credential shapes that share a literal start.

    Patterns start with a literal so that the regex engine skips ahead fast (merging them into
    one alternation would defeat that); word boundaries are checked afterwards (`fence`)
    because a leading look-behind would defeat it too. The judge names the kind of each match,
    or drops it as a look-alike.
    """

    kinds: tuple[str, ...]
    pattern: re.Pattern[str]
    judge: Judge
    folded: bool = False  # match against the lower-cased copy: the key may be in any case
    lead: int = 0  # characters before the match that belong to the secret
    fence: frozenset[str] = frozenset()  # characters that may not touch the secret
    trigger: str | None = None  # only run when this lower-case word occurs in the text


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
_PLACEHOLDER_SHAPE = re.compile(
    r"[$%<{@#\[]"  # template, environment or markup syntax
    r"|.*\.\.\."  # a truncated example such as sk-...
    r"|[*xX•._#-]+\Z"  # a mask
    r"|your[\w.-]*\Z"  # your_api_key_here
    r"|.*[_-]here\Z",
    re.IGNORECASE,
)
_CODE_REF = re.compile(
    # process.env.TOKEN, cfg.get(..): words, perhaps numbered, unlike the base64 of a token
    r"(?:[A-Za-z_$]+[0-9]*\.)+[A-Za-z_$]+[0-9]*(?:\(.*)?\Z"
    r"|[A-Za-z_$][\w$.]*[(\[]"  # a call or a subscript
    r"|[a-z]+(?:_[a-z]+)+\Z"  # a snake_case variable
    r"|[a-z]+(?:[A-Z][a-z]+)+\Z"  # a camelCase variable
    r"|[A-Z]+(?:_[A-Z]+)+\Z"  # a CONSTANT_NAME
    r"|\.{0,2}/|~/|[A-Za-z]:\\"  # a file path
    r"|[a-z][a-z0-9+.-]*://"  # a URL (credentials inside URLs have their own rule)
)
_SYMBOL = re.compile(r"[!@#$%^&*+=?~/|\\]")
_DIGIT = re.compile(r"[0-9]")
_LINE_END = re.compile(r"[ \t]*[.)\]}*]*[ \t]*(?:$|\r|\\n|[,;#|])", re.MULTILINE)
_NAME_BEFORE = re.compile(r"[a-z0-9_.-]*\Z")
_ALNUM_BEFORE = re.compile(r"[a-z0-9]\Z")
_ADO_BEFORE = re.compile(r";[ \t]*\Z")
# Key names ending in `key` that mean a credential; `monkey` or `primary_key` do not.
_CREDENTIAL_KEY = re.compile(
    r"(?:api|access|secret|private|app|client|signing|encryption|master|session|consumer"
    r"|auth|account|service|subscription|webhook)key\Z"
)
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Values whose kind shows only in the key name: (kind, name, shape). The name is lower-cased
# without `_`, `-` and `.`, so that `AWS_SECRET_ACCESS_KEY` and `secretAccessKey` agree.
_NAMED_SHAPES: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (kind, re.compile(name), re.compile(shape))
    for kind, name, shape in (
        ("aws-secret-key", r"secretaccesskey\Z|awssecret(?:key)?\Z", r"[A-Za-z0-9/+]{40}"),
        ("aws-session-token", r"sessiontoken\Z", r"[A-Za-z0-9/+=]{100,}"),
        ("azure-connection-string", r"\A(?:account|sharedaccess)key\Z", r"[A-Za-z0-9+/]{20,}=*"),
        ("azure-key", r"azure", r"[A-Za-z0-9+/]{32,}=*"),
        ("heroku-api-key", r"heroku", _UUID),
        (
            "datadog-key",
            r"\A(?:dd|datadog)(?:api|app|application)key\Z",
            r"[a-f0-9]{32}|[a-f0-9]{40}",
        ),
        ("twilio", r"twilio", r"[a-f0-9]{32}"),
    )
)


def _is_placeholder(value: str) -> bool:
    """Tell whether a value is a stand-in rather than a credential."""
    return value.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_SHAPE.match(value) is not None


def _is_stand_in(value: str) -> bool:
    """Tell whether a value is a placeholder or a reference to where the secret lives."""
    return _is_placeholder(value) or _CODE_REF.match(value) is not None


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


def _is_prose_colon(c: _Candidate) -> bool:
    """Tell whether an unquoted `key: value` is no setting: glued on, or going on as a sentence.

    A setting has a space after the colon (as YAML requires) and ends its line; `token:x` is
    more likely a URL's user info or a scheme, and the rest of a sentence means prose.
    """
    if c.group != "u" or c.sep != ":":
        return False
    glued = c.text[c.match.end("sep")] not in " \t*"
    return glued or _LINE_END.match(c.text, c.end) is None


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


# ---------------------------------------------------------------- judges


def _judge_assignment(c: _Candidate) -> str | None:
    """Name a `...key`, `...token` or `...secret` assignment by its key name and value."""
    name, value = _key_name(c), c.value
    for kind, name_shape, value_shape in _NAMED_SHAPES:
        if name_shape.search(name) and value_shape.fullmatch(value):
            return kind
    if "gap" in c.match.re.groupindex and c.match.group("gap") is not None:
        return None  # only an AWS secret may follow its key after a bare space
    return "generic-secret" if _is_generic_secret(c, name) else None


def _judge_password(c: _Candidate) -> str | None:
    """Name a password assignment; inside a `key=value;` string it is a connection string."""
    key, value = c.match.group("key"), c.value
    if key in ("pass", "pwd") and (c.sep != "=" or _ALNUM_BEFORE.search(_before(c))):
        return None
    if len(value) < 3 or _is_stand_in(value) or _is_prose_colon(c):
        return None
    if c.group == "u" and c.sep == ":" and not (_has_digit(value) or _SYMBOL.search(value)):
        return None
    return "connection-string" if _ADO_BEFORE.search(_before(c)) else "password"


def _strict_password(c: _Candidate) -> bool:
    """Accept a password given without `=`, only when it has a digit or a symbol."""
    value = c.value
    if len(value) < 4 or _is_stand_in(value):
        return False
    return _has_digit(value) or _SYMBOL.search(value) is not None


def _bearer(c: _Candidate) -> bool:
    """Accept a bearer token that is long, generated-looking and not a code reference."""
    value = c.value
    return len(value) >= 16 and _looks_random(value) and not _is_stand_in(value)


def _not_placeholder(c: _Candidate) -> bool:
    """Accept any value that is not a placeholder."""
    return not _is_placeholder(c.value)


def _digit(c: _Candidate) -> bool:
    """Accept a prefixed token only when it has a digit."""
    return _has_digit(c.value)


def _judge_sk(c: _Candidate) -> str | None:
    """Name an `sk-` / `sk.` key by its prefix."""
    value = c.value
    if value.startswith("sk."):
        return "mapbox-token"
    if not _has_digit(value):
        return None
    return "anthropic-key" if value.startswith("sk-ant-") else "openai-key"


def _judge_gl(c: _Candidate) -> str | None:
    """Name a `gl...` token: Grafana's start `glsa_` or `glc_`, GitLab's end in a dash."""
    if not _has_digit(c.value):
        return None
    return "grafana-token" if c.value.startswith(("glsa_", "glc_")) else "gitlab-token"


# fmt: off
_DB_SCHEMES = frozenset({
    "postgres", "postgresql", "mysql", "mariadb", "mongodb", "redis", "rediss", "amqp", "amqps",
    "mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "couchdb", "neo4j", "bolt",
    "cassandra", "memcached", "db2", "snowflake", "jdbc",
})
# fmt: on
_SCHEME_BEFORE = re.compile(r"([a-z][a-z0-9+.-]{0,30})\Z")


def _judge_url(c: _Candidate) -> str | None:
    """Name the password in `scheme://user:password@host` by its scheme."""
    found = _SCHEME_BEFORE.search(_before(c, 32))
    if found is None or _is_placeholder(c.value):
        return None
    scheme = found.group(1).partition("+")[0]  # postgresql+psycopg, mongodb+srv
    return "connection-string" if scheme in _DB_SCHEMES else "basic-auth-url"


# ---------------------------------------------------------------- the rules


# After a key: a closing quote (maybe JSON-escaped) or markdown bold, then the operator.
_SEP = r"(?:\\?[\"'`]\]?|\*\*)?[ \t]*(?P<sep>:=|=>|==?|:)[ \t]*(?:\*\*[ \t]*)?"
# An assignment value: quoted (maybe JSON-escaped), or unquoted up to a delimiter; a trailing
# full stop or closing bracket belongs to the sentence, not to the value.
_VALUE = (
    r"(?:\\?\"(?P<dq>[^\"\\\s]+)\\?\""
    r"|'(?P<sq>[^'\s]+)'"
    r"|`(?P<bq>[^`\s]+)`"
    r"|(?P<u>[^\s\"'`,;<>]*[^\s\"'`,;<>.)\]}]))"
)
# `aws configure set aws_secret_access_key X` separates key and value by a bare space.
_GAP = r"(?P<gap>[ \t]+)(?=[a-z0-9/+]{40}(?![a-z0-9/+=]))"
_PEM_NAME = r"[A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?"
_PEM = (
    rf"-----BEGIN{_PEM_NAME}-----"
    rf"(?:(?:[A-Za-z0-9+/=\s:,.()-]|\\[nr])*?-----END{_PEM_NAME}-----"
    # a key cut off before its END line still loses its header lines and its base64 body
    r"|(?:(?:\s|\\[nr])*[A-Za-z-]+:[ \t]*[^\n\\]+)*(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})+)"
)


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
    accept: Accept | None = None,
    *,
    judge: Judge | None = None,
    fence: frozenset[str] = _WORD,
    lead: int = 0,
    trigger: str | None = None,
) -> _Rule:
    """A case-sensitive token shape; the whole match is the secret."""
    kinds, judge = _named(kind, accept, judge)
    return _Rule(kinds, re.compile(f"(?P<v>{pattern})"), judge, False, lead, fence, trigger)


def _keyed(
    kind: str | tuple[str, ...],
    pattern: str,
    accept: Accept | None = None,
    *,
    judge: Judge | None = None,
) -> _Rule:
    """A rule that starts at a key name in any case; written in lower case throughout."""
    kinds, judge = _named(kind, accept, judge)
    return _Rule(kinds, re.compile(pattern), judge, True)


_ASSIGNED_KINDS = (
    "generic-secret",
    "aws-secret-key",
    "aws-session-token",
    "azure-connection-string",
    "azure-key",
    "heroku-api-key",
    "datadog-key",
    "twilio",
)

# Order matters: where two rules claim the same span, the earlier (more specific) one names it.
_RULES: tuple[_Rule, ...] = (
    _token("private-key", _PEM, fence=frozenset()),
    # --- prefixed tokens
    _token("github-token", r"g(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{50,255})"),
    _token(
        ("gitlab-token", "grafana-token"),
        r"gl(?:(?:pat|dt|rt|ptt|cbt|ft|imt|soat|oas|agent)-[A-Za-z0-9_-]{20,}"
        r"(?:\.[A-Za-z0-9_-]+)*|sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/]{32,}={0,2})",
        judge=_judge_gl,
        fence=_WORD_DASH,
    ),
    _token(
        "slack-token",
        r"x(?:ox[abposre]|app|oxe\.xox[bp])-[A-Za-z0-9-]{10,}",
        _digit,
        fence=_WORD_DASH,
    ),
    _token(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{10,}",
        fence=frozenset(),
    ),
    _token(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
        fence=frozenset(),
    ),
    _token(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}",
        fence=_WORD_DASH,
    ),
    _token(
        ("openai-key", "anthropic-key", "mapbox-token"),
        r"sk(?:-ant-[A-Za-z0-9_-]{20,}|-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
        r"|-[A-Za-z0-9]{32,}|\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})",
        judge=_judge_sk,
        fence=_WORD_DASH,
    ),
    _token("aws-access-key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}"),
    _token("google-api-key", r"AIza[0-9A-Za-z_-]{35}", fence=_WORD_DASH),
    _token("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", fence=_WORD_DASH),
    _token("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{30,}", _digit, fence=_WORD_DASH),
    _token(
        "azure-key",
        r"Q~(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}",
        lead=4,
        fence=_WORD_DASH | {"~", "."},
    ),
    _token("stripe-key", r"k_(?<=[sr]k_)(?:live|test)_[A-Za-z0-9]{16,}", lead=1),
    _token("stripe-key", r"whsec_[A-Za-z0-9]{24,}"),
    _token("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", fence=_WORD_DASH),
    _token("npm-token", r"npm_[A-Za-z0-9]{36}", _digit),
    _token("pypi-token", r"pypi-Ag[A-Za-z0-9_-]{50,}", fence=_WORD_DASH),
    _token("huggingface-token", r"hf_[A-Za-z0-9]{34,40}", lambda c: _mixed_case(c.value)),
    _token("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _token("digitalocean-token", r"_v1_(?<=do[por]_v1_)[a-f0-9]{64}", lead=3),
    _token("mailgun-key", r"key-[0-9a-zA-Z]{32}", _digit, fence=_WORD_DASH),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", _digit, fence=_WORD_DASH),
    _token("linear-api-key", r"lin_api_[A-Za-z0-9]{40}"),
    _token("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _token("newrelic-key", r"NRAK-[A-Z0-9]{27}"),
    _token("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _token("heroku-api-key", r"HRKU-[A-Za-z0-9_-]{60}", fence=_WORD_DASH),
    # --- shapes without a distinctive prefix, looked for only where the service is named
    _token(
        "discord-token",
        # the first part is a decimal user id in base64, which fixes its first four characters
        r"[MNO][DTjz][AEIMQUYcgk][w-z0-5][A-Za-z0-9_-]{19,21}\.[A-Za-z0-9_-]{6}"
        r"\.[A-Za-z0-9_-]{27,38}",
        fence=_WORD_DASH,
        trigger="discord",
    ),
    _token("twilio", r"(?:AC|SK)[0-9a-f]{32}", trigger="twilio"),
    _token("telegram-token", r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}", fence=_WORD_DASH, trigger=":aa"),
    # --- in URLs, query strings and HTTP headers
    _keyed(
        ("connection-string", "basic-auth-url"),
        r"://[^\s:/@\"'`<>]{0,128}:(?P<v>[^\s/\"'`<>]{1,256})@(?=[a-z0-9\[._-])",
        judge=_judge_url,
    ),
    _keyed("azure-sas", r"sig=(?<=[?&]sig=)(?P<v>[a-z0-9%+/]{20,}(?:%3d|=){0,2})"),
    _keyed(
        "basic-auth",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+"
        r"(?P<v>[a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])",
    ),
    _keyed(
        "basic-auth",
        r"curl\b[^\n]*?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)",
        _strict_password,
    ),
    _keyed("bearer-token", r"bearer[ \t]+(?P<v>[a-z0-9_~+/-]+(?:\.[a-z0-9_~+/-]+)*=*)", _bearer),
    # --- assignments
    _keyed(
        ("password", "connection-string"),
        rf"(?P<key>pass(?:word|wd|phrase)?|pwd){_SEP}{_VALUE}",
        judge=_judge_password,
    ),
    _keyed("password", rf"--pass(?:word)?[ \t]+{_VALUE}", _strict_password),
    # the MySQL clients take the password glued to `-p`
    _keyed("password", r"mysql\w*\b[^\n]*?[ \t]-p(?P<v>[^\s\"'`]+)", _strict_password),
    _keyed("password", r"<pass(?:word|wd)>(?P<v>[^<\s]+)</", _not_placeholder),
    _keyed(
        "npm-token", r"_auth(?:token)?[ \t]*=[ \t]*(?:\"|')?(?P<v>[^\s\"'`]+)", _not_placeholder
    ),
    _keyed(
        _ASSIGNED_KINDS,
        rf"(?P<key>secret(?:[_.-]?access)?(?:[_.-]?key(?:[_.-]?base)?)?)(?:{_SEP}|{_GAP}){_VALUE}",
        judge=_judge_assignment,
    ),
    _keyed(_ASSIGNED_KINDS, rf"(?P<key>token){_SEP}{_VALUE}", judge=_judge_assignment),
    _keyed(_ASSIGNED_KINDS, rf"(?P<key>key)(?:{_SEP}|{_GAP}){_VALUE}", judge=_judge_assignment),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for rule in _RULES for kind in rule.kinds))


@dataclass(frozen=True, slots=True)
class _Hit:
    """A span of text to replace, ranked by its rule's place in the table."""

    start: int
    end: int
    kind: str
    rank: int


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


def _candidate(rule: _Rule, text: str, match: re.Match[str]) -> _Candidate | None:
    """Locate the value of a match in the original text."""
    for group in _VALUE_GROUPS:
        if group in match.re.groupindex and match.group(group):
            start, end = match.span(group)
            return _Candidate(text, match, group, start - rule.lead, end)
    return None


def _scan(rule: _Rule, text: str, folded: str) -> list[tuple[_Candidate, str]]:
    """Run one rule over the text; return each candidate it keeps, with its kind."""
    if rule.trigger is not None and rule.trigger not in folded:
        return []
    found = []
    for match in rule.pattern.finditer(folded if rule.folded else text):
        c = _candidate(rule, text, match)
        if c is None or (rule.fence and _touches(text, c.start, c.end, rule.fence)):
            continue
        kind = rule.judge(c)
        if kind is not None:
            found.append((c, kind))
    return found


def _hits(text: str) -> list[_Hit]:
    """Find every secret span, skipping markers left by an earlier pass."""
    folded = _fold(text)
    markers = _marker_spans(text)
    return [
        _Hit(c.start, c.end, kind, rank)
        for rank, rule in enumerate(_RULES)
        for c, kind in _scan(rule, text, folded)
        if not _overlaps(c.start, c.end, markers)
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
