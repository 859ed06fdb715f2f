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

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache

from .secret_judges import (
    NEAR_REACH,
    PEM,
    PUTTY,
    WRAPPED_PEM,
    PrefixedTokens,
    base32_token,
    bearer,
    judge_assignment,
    judge_auth,
    judge_authorization,
    judge_credential,
    judge_password,
    judge_pat,
    judge_sql_password,
    judge_url,
    judge_webhook,
    judge_wrapped_block,
    not_placeholder,
    prefixed_tokens,
    secret_nearby,
    strict_password,
)
from .secret_shapes import (
    MARKER,
    MAX_PASSES,
    VALUE_GROUPS,
    WORD,
    WORD_DASH,
    Accept,
    Candidate,
    Judge,
    Lazy,
    Span,
    Text,
    is_stand_in,
    touches,
)

__all__ = ["KINDS", "located", "redact"]

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
        pattern: Lazy,
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

    def find(self, text: Text) -> Iterator[Span]:
        """Yield the span and kind of every secret this rule finds."""
        gated = self.always_gated or (text.gated and not self.pattern.ready)
        if gated and not any(need in text.folded for need in self.needs):
            return  # not compiled, nor run, for a text that cannot hold a match
        for match in self.pattern.finditer(text.folded if self.folded else text.raw):
            found = self._judged(text.raw, match)
            if found is not None:
                yield found

    def _judged(self, raw: str, match: re.Match[str]) -> Span | None:
        """Judge one match: its own value first, then a secret a few words after the key."""
        c = _candidate(self, raw, match)
        if c.group and not (self.fence and touches(raw, c.start, c.end, self.fence)):
            kind = self.judge(c)
            if kind is not None:
                return c.start, c.end, kind
        return secret_nearby(c, self.nearby) if self.nearby else None


def _candidate(rule: _Rule, text: str, match: re.Match[str]) -> Candidate:
    """Locate the value of a match in the original text; no group when the key has none."""
    for group in VALUE_GROUPS:
        if group in match.re.groupindex and match.group(group):
            start, end = match.span(group)
            if group == "u" and _QUERY_KEY.search(text, max(0, match.start() - 48), match.start()):
                end = _query_value_end(text, start, end)
            return Candidate(text, match, group, start - rule.lead, end)
    return Candidate(text, match, "", match.end(), match.end())


# A key that is a URL's query parameter (`?user=app&password=`): its value ends at `&`.
_QUERY_KEY = Lazy(r"[?&][\w.-]*\Z")


def _query_value_end(text: str, start: int, end: int) -> int:
    """Return where a query parameter's value ends: at the next `&` or `#`, if before `end`."""
    stops = [i for i in (text.find("&", start, end), text.find("#", start, end)) if i >= 0]
    return min(stops, default=end)


def _always(kind: str, accept: Accept | None = None) -> Judge:
    """Make a judge that names every accepted match with one kind."""

    def judge(c: Candidate) -> str | None:
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
    fence: frozenset[str] = WORD,
    lead: int = 0,
    always_gated: bool = False,
) -> _Rule:
    """A case-sensitive token shape; the whole match is the secret."""
    kinds, judge = _named(kind, accept, judge)
    pattern_ = Lazy(f"(?P<v>{pattern})")
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
    return _Rule(kinds, Lazy(pattern), judge, needs, folded=True, nearby=nearby)


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
_NEAR = rf"(?=[^\n]{{0,{NEAR_REACH}}}?(?<![a-z0-9+/=_-])[a-z0-9+/_-]{{20}})"
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
_PASSWORD_CLI = Lazy(
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


def _judge_cli_password(c: Candidate) -> str | None:
    """Name the value of a short password flag, when the command is one that takes it."""
    cli = _command_before(c.text, c.match.start())
    if cli is None or not _takes_password_flag(cli, c.match.group("flag")):
        return None
    if c.gap is not None and cli.startswith(_CLI_GLUED_ONLY):
        return "password" if strict_password(c) else None
    return None if len(c.value) < 3 or is_stand_in(c.value) else "password"


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
        _token("private-key", PEM, ("----",), fence=frozenset()),
        _token("private-key", PUTTY, ("putty-user-key-file-",), fence=frozenset()),
        _token(
            ("private-key", "client-certificate"),
            WRAPPED_PEM,
            ("ls0tls1crudjti",),
            judge=judge_wrapped_block,
            fence=frozenset("+/=") | WORD,
        ),
        _token(
            ("slack-webhook", "discord-webhook", "teams-webhook"),
            r"https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{10,}"
            r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}"
            r"|[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{20,})",
            ("https://",),
            judge=judge_webhook,
            fence=frozenset(),
        ),
        _token(
            "azure-key",
            r"Q~(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}",
            ("q~",),
            lead=4,
            fence=WORD_DASH | {"~", "."},
        ),
        # Patterns without a literal start scan slowly: they run only where their word is.
        _token("twilio", r"(?:AC|SK)[0-9a-f]{32}", ("twilio",), always_gated=True),
        _token(
            "telegram-token",
            r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
            (":aa",),
            fence=WORD_DASH,
            always_gated=True,
        ),
        # Azure DevOps issues 52 lower-case base32 characters: alone they are no shape of
        # their own, so only where the text names DevOps (or under a `..._PAT` key, below).
        _token("azure-devops-pat", r"[a-z2-7]{52}", ("devops",), base32_token, always_gated=True),
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
            judge=judge_url,
        ),
        _keyed("azure-sas", r"sig=(?<=[?&]sig=)(?P<v>[a-z0-9%+/]{20,}(?:%3d|=){0,2})", ("sig=",)),
        _keyed(
            ("basic-auth", "okta-token", "generic-secret"),
            r"authorization[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?"
            r"(?P<scheme>basic|token|ssws|apikey|api-key)[ \t]+"
            r"(?P<v>[a-z0-9+/._~-]{8,}={0,2})(?![a-z0-9+/=])",
            ("authorization",),
            judge=judge_authorization,
        ),
        _keyed(
            "basic-auth",
            r"curl\b[^\n]*?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)",
            ("curl",),
            strict_password,
        ),
        _keyed(
            "bearer-token",
            r"bearer[ \t]+(?P<v>[a-z0-9_~+/-]+(?:\.[a-z0-9_~+/-]+)*=*)",
            ("bearer",),
            bearer,
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
            judge=judge_password,
            nearby="password",
        ),
        _Rule(
            ("password",),
            Lazy(
                r"-(?<=[ \t]-)(?P<flag>[pPaw])(?:(?P<gap>[ \t]+)(?!-))?"
                r"(?:\"(?P<dq>[^\"\s]+)\"|'(?P<sq>[^'\s]+)'|(?P<u>[^\s\"'`;|&<>-][^\s\"'`;|&<>]*))"
            ),
            _judge_cli_password,
            (" -", "\t-"),
        ),
        _keyed("password", r"<pass(?:word|wd)>(?P<v>[^<\s]+)</", ("<pass",), not_placeholder),
        _keyed(
            "password",
            r"identified[ \t]+by[ \t]+(?:'(?P<sq>[^'\s]+)'|\"(?P<dq>[^\"\s]+)\")",
            ("identified",),
            judge=judge_sql_password,
        ),
    )


def _secret_key_rules() -> tuple[_Rule, ...]:
    """A token, key, secret, credential or PAT named by its key (npm's `_auth` too)."""
    return (
        _keyed(
            "npm-token",
            r"_auth(?:token)?[ \t]*=[ \t]*(?:\"|')?(?P<v>[^\s\"'`]+)",
            ("_auth",),
            not_placeholder,
        ),
        *(
            _keyed(
                _ASSIGNED_KINDS,
                rf"(?P<key>{key}){_ASSIGNED}",
                (need,),
                judge=judge_assignment,
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
            judge=judge_auth,
        ),
        _keyed(
            "generic-secret",
            rf"(?P<key>cred(?:ential)?s?){_ASSIGNED}",
            ("cred",),
            judge=judge_credential,
            nearby="generic-secret",
        ),
        _keyed(
            ("azure-devops-pat", "generic-secret"),
            rf"(?P<key>pat)(?:{_SEP}|{_GAP}){_VALUE}",
            ("pat",),
            judge=judge_pat,
        ),
    )


Finder = _Rule | PrefixedTokens


@cache
def _finders() -> tuple[Finder, ...]:
    """Every family, most specific first: where two claim a span, the earlier names it."""
    rules = _rules()
    return (*rules[:1], prefixed_tokens(), *rules[1:])


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
    return [m.span() for m in MARKER.finditer(text)] if "[REDACTED:" in text else []


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Tell whether a span overlaps any of the sorted, disjoint spans."""
    index = max(bisect_right(spans, (start, end)) - 1, 0)
    return any(s < end and start < e for s, e in spans[index : index + 2])


# Until a process has redacted this much text, a family runs on a text only when the text
# holds one of the literals its matches need, so the patterns of the families a process never
# comes near are never compiled: a command redacts a few short texts, and compiling every
# family costs more than all of them. Past it (a long-running server, an import), every
# family compiles and runs: its pattern finds its own literal as fast as a look for it would.
GATED_CHARS = 64 * 1024
_redacted = [0]  # characters redacted in this process so far


def _hits(text: str) -> list[_Hit]:
    """Find every secret span, skipping markers left by an earlier pass."""
    _redacted[0] += len(text)
    source = Text(text, _fold(text), _redacted[0] <= GATED_CHARS)
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
    for _ in range(MAX_PASSES):
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
