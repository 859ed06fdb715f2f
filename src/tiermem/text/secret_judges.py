"""The judges of `redact`'s rules: assignments, key blocks, prefixed tokens and secrets
named by a word nearby, each deciding whether a candidate is a secret and of which kind.

Its public names are what `redact`'s rule table names: the judges (`judge_...`, and the
accepting tests such as `bearer` or `strict_password`), the key-block patterns (`PEM`,
`PUTTY`, `WRAPPED_PEM`), the prefixed-token scan (`prefixed_tokens`) and the look for a
secret named nearby (`secret_nearby`). Its private names are its own.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator
from functools import cache

from .secret_shapes import (
    ADO_BEFORE,
    ALNUM_BEFORE,
    CREDENTIAL_KEY_NAME,
    SPACED_SETTINGS,
    SYMBOL,
    UUID,
    WORD,
    WORD_DASH,
    Candidate,
    Lazy,
    Span,
    Text,
    has_digit,
    in_netrc,
    is_generic_secret,
    is_placeholder,
    is_prose_colon,
    is_prose_equals,
    is_stand_in,
    key_name,
    looks_generated,
    looks_random,
    mixed_case,
    named_shapes,
    spaced_value_counts,
    text_before,
    touches,
)

# ---------------------------------------------------------------- judges


def judge_assignment(c: Candidate) -> str | None:
    """Name a `...key`, `...token` or `...secret` assignment by its key name and value."""
    name, value = key_name(c), c.value
    for kind, name_shape, value_shape in named_shapes():
        if name_shape.search(name) and value_shape.fullmatch(value):
            return kind
    if c.gap is not None and not spaced_value_counts(c):
        return None
    return "generic-secret" if is_generic_secret(c, name) else None


_OPENSSL_PASS_BEFORE = Lazy(r"-pass(?:in|out|word)?[ \t]+\Z")


def _is_openssl_pass(c: Candidate) -> bool:
    """Tell whether `pass:x` is OpenSSL's way of giving a password (`-passout pass:x`)."""
    return c.sep == ":" and _OPENSSL_PASS_BEFORE.search(text_before(c)) is not None


def _is_bare_pass(c: Candidate) -> bool:
    """Tell whether a short key (`pass`, `pwd`) is no password key: only `pass=x` on its own is.

    `pass: x` and `bypass=x` are likelier prose or another word than a password setting.
    """
    short = c.match.group("key") in ("pass", "pwd")
    return short and (c.sep != "=" or ALNUM_BEFORE.search(text_before(c)) is not None)


_BASE32_PAT = Lazy(r"[a-z2-7]{52}")


def base32_token(c: Candidate) -> bool:
    """Accept a run of base32 that mixes letters and digits, as a generated token does."""
    return has_digit(c.value) and not c.value.isdigit()


def judge_pat(c: Candidate) -> str | None:
    """Name the value of a personal-access-token key (`AZURE_DEVOPS_EXT_PAT`, `ado_pat`):
    Azure DevOps' shape by itself, any other generated-looking value as a secret."""
    if not _ends_the_key(c) or (c.gap is not None and not spaced_value_counts(c)):
        return None
    if _BASE32_PAT.fullmatch(c.value) and base32_token(c):
        return "azure-devops-pat"
    return "generic-secret" if is_generic_secret(c, "pat") else None


def _ends_the_key(c: Candidate) -> bool:
    """Whether `pat` is a word of the key (`EXT_PAT`, `adoPat`), not the end of one (`compat`)."""
    start = c.match.start("key")
    before = c.text[start - 1] if start else ""
    return not before.isalnum() or (c.text[start].isupper() and before.islower())


def judge_password(c: Candidate) -> str | None:
    """Name a password assignment; inside a `key=value;` string it is a connection string."""
    if c.gap is not None or c.pair is not None or c.said is not None:
        return _judge_loose_password(c)
    openssl, value = _is_openssl_pass(c), c.value
    if not openssl and _is_bare_pass(c):
        return None
    if len(value) < 3 or is_stand_in(value) or (is_prose_colon(c) and not openssl):
        return None
    prose = (c.group == "u" and c.sep == ":") or is_prose_equals(c)
    if prose and not (has_digit(value) or SYMBOL.search(value)):
        return None  # in a sentence, only a value made like a password is one
    return "connection-string" if ADO_BEFORE.search(text_before(c)) else "password"


def _judge_loose_password(c: Candidate) -> str | None:
    """Name a password given without an operator: after a comma, in prose, or a bare space."""
    key = c.match.group("key")
    if c.gap is None:  # `('password', 'x')` or "the password is x": only a password's make-up
        plain = key in ("password", "passwd", "passphrase")
        return "password" if plain and len(c.value) >= 6 and strict_password(c) else None
    return _judge_spaced_password(c)


def _judge_spaced_password(c: Candidate) -> str | None:
    """Name `password x`: a flag, a .netrc line, a setting or a quoted value.

    Bare `pass` is mostly the verb ("callers pass `x`"), so it counts only as a flag or in a
    setting such as `requirepass`.
    """
    key = c.match.group("key")
    if key == "pwd" or not spaced_value_counts(c, quoted=key != "pass"):
        return None
    if c.group != "u" or in_netrc(c):
        return "password" if len(c.value) >= 3 and not is_stand_in(c.value) else None
    return "password" if strict_password(c) else None


def strict_password(c: Candidate) -> bool:
    """Accept a password given without `=`, only when it has a digit or a symbol."""
    value = c.value
    if len(value) < 4 or is_stand_in(value):
        return False
    return has_digit(value) or SYMBOL.search(value) is not None


def judge_auth(c: Candidate) -> str | None:
    """Name an `auth` value: base64 of `user:password` (Docker, npm) or a generated token."""
    value = c.value
    if c.gap is not None and not spaced_value_counts(c):
        return None
    if len(value) < 8 or is_stand_in(value) or is_prose_colon(c):
        return None
    if _is_basic_credentials(value):
        return "basic-auth"
    if c.gap is not None and key_name(c) in SPACED_SETTINGS:
        return "password"  # redis's `masterauth x` is the primary's password
    return "generic-secret" if looks_random(value) else None


def _is_basic_credentials(value: str) -> bool:
    """Tell whether a value is the base64 of `user:password`."""
    try:
        decoded = binascii.a2b_base64(value).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password) and decoded.isprintable()


def judge_credential(c: Candidate) -> str | None:
    """Name a `credentials = ...` value that is generated-looking, not a path or a mode."""
    if c.gap is not None and not spaced_value_counts(c):
        return None
    value = c.value
    if len(value) < 8 or is_stand_in(value) or is_prose_colon(c):
        return None
    return "generic-secret" if looks_random(value) else None


def bearer(c: Candidate) -> bool:
    """Accept a bearer token that is long, generated-looking and not a code reference."""
    value = c.value
    return len(value) >= 16 and looks_random(value) and not is_stand_in(value)


_SCHEME_KINDS = {"basic": "basic-auth", "ssws": "okta-token"}


def judge_authorization(c: Candidate) -> str | None:
    """Name the credential of an `Authorization:` header by its scheme."""
    scheme = c.match.group("scheme")
    if scheme == "basic":
        return None if is_placeholder(c.value) else "basic-auth"
    return _SCHEME_KINDS.get(scheme, "generic-secret") if bearer(c) else None


def not_placeholder(c: Candidate) -> bool:
    """Accept any value that is not a placeholder."""
    return not is_placeholder(c.value)


def judge_sql_password(c: Candidate) -> str | None:
    """Name the password of `IDENTIFIED BY 'x'`."""
    value = c.value
    return "password" if len(value) >= 3 and not is_stand_in(value) else None


# fmt: off
_DB_SCHEMES = frozenset({
    "postgres", "postgresql", "mysql", "mariadb", "mongodb", "redis", "rediss", "amqp", "amqps",
    "mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "couchdb", "neo4j", "bolt",
    "cassandra", "memcached", "db2", "snowflake", "jdbc",
})
# fmt: on
_SCHEME_BEFORE = Lazy(r"([a-z][a-z0-9+.-]{0,30})\Z")


def judge_url(c: Candidate) -> str | None:
    """Name the password in `scheme://user:password@host` by its scheme."""
    found = _SCHEME_BEFORE.search(text_before(c, 32))
    if found is None or is_placeholder(c.value):
        return None
    scheme = found.group(1).partition("+")[0]  # postgresql+psycopg, mongodb+srv
    return "connection-string" if scheme in _DB_SCHEMES else "basic-auth-url"


def judge_webhook(c: Candidate) -> str | None:
    """Name a webhook URL by its host."""
    host = c.value.split("/")[2]
    if "slack" in host:
        return "slack-webhook"
    return "discord-webhook" if "discord" in host else "teams-webhook"


# ---------------------------------------------------------------- key blocks

_PEM_NAME = r"[A-Z0-9 ]{0,40}(?:PRIVATE|SECRET) KEY(?: BLOCK)?"
_NEWLINE = r"(?:\r?\n|\\r?\\n)"
PEM = (
    # PEM has five dashes on each side; SSH2 (RFC 4716) four and a space. The body may not
    # cross another block's dashes, so a BEGIN without an END costs no more than its body.
    rf"----(?:-BEGIN{_PEM_NAME}-----| BEGIN{_PEM_NAME} ----)"
    rf"(?:(?:[A-Za-z0-9+/=\s:,.()\"]|-(?!---)|\\[nr])*?"
    rf"----(?:-END{_PEM_NAME}-----| END{_PEM_NAME} ----)"
    # a key cut off before its END line still loses its header lines and its base64 body
    r"|(?:(?:\s|\\[nr])*[A-Za-z-]+:[ \t]*[^\n\\]+)*(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})+)"
)
# A PuTTY key file: its header line, then every `Name: value` or base64 line up to the MAC.
PUTTY = (
    rf"PuTTY-User-Key-File-[0-9]+:[^\n\\]*(?:{_NEWLINE}[ \t]*(?!Private-MAC:)"
    rf"(?:[A-Za-z0-9-]+:[^\n\\]*|[A-Za-z0-9+/=]+))*(?:{_NEWLINE}[ \t]*Private-MAC:[^\n\\]*)?"
)
# "-----BEGIN" in base64, as kubeconfig and Kubernetes secrets carry keys.
WRAPPED_PEM = r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}"
_WRAPPED_LABEL = Lazy(r"-----BEGIN ([A-Z0-9 ]+)-----")


def judge_wrapped_block(c: Candidate) -> str | None:
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
    client = "client-certificate-data" in text_before(c, 32) and "CERTIFICATE" in label.group(1)
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
    return _Vendor(kind, shape, accept, WORD_DASH if dash else WORD, needs)


PREFIX_ALONE = 4  # a prefix this long, and the vendor's length, make a credential alone
# A shape that is a prefix of literal characters (a class counting as one), then one body
# of a fixed or bounded length: `npm_[A-Za-z0-9]{36}`, `api_org_[A-Za-z0-9]{34,40}`.
_FIXED_SHAPE = Lazy(r"((?:\\.|\[[^\]]+\]|[A-Za-z0-9_-])+?)\[[^\]]+\]\{\d+(?:,\d+)?\}")
_ONE_CHARACTER = Lazy(r"\\.|\[[^\]]+\]|.")


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
       r"(?:\.[A-Za-z0-9_-]+)*", has_digit, dash=True),
    _v("grafana-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}"),
    _v("slack-token", r"x(?:ox[abposre]|app|oxe\.xox[bp])-[A-Za-z0-9-]{10,}", has_digit,
       dash=True),
    _v("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", has_digit, dash=True),
    _v("openrouter-key", r"sk-or-v1-[a-f0-9]{64}", dash=True),
    _v("openai-key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{32,}",
       has_digit, dash=True),
    _v("mapbox-token", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", dash=True),
    _v("stripe-key", r"sk_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _v("stripe-key", r"rk_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    _v("stripe-key", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _v("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", dash=True),
    _v("npm-token", r"npm_[A-Za-z0-9]{36}", has_digit),
    _v("pypi-token", r"pypi-Ag[A-Za-z0-9_-]{50,}", dash=True),
    _v("huggingface-token", r"hf_[A-Za-z0-9]{34,40}", mixed_case),
    _v("huggingface-token", r"api_org_[A-Za-z0-9]{34,40}", mixed_case),
    _v("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _v("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}"),
    _v("mailgun-key", r"key-[0-9a-zA-Z]{32}", has_digit, dash=True),
    _v("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", has_digit, dash=True),
    _v("linear-api-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    _v("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", dash=True),
    _v("newrelic-key", r"NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32}", dash=True),
    _v("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", dash=True),
    _v("heroku-api-key", r"HRKU-[A-Za-z0-9_-]{60}", dash=True),
    _v("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", dash=True),
    _v("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{30,}", has_digit, dash=True),
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
    _v("notion-token", r"ntn_[A-Za-z0-9]{40,50}", has_digit),
    _v("notion-token", r"secret_[A-Za-z0-9]{43}", has_digit),
    _v("netlify-token", r"nfp_[A-Za-z0-9]{36,40}"),
    _v("render-key", r"rnd_[A-Za-z0-9]{32}"),
    _v("figma-token", r"figd_[A-Za-z0-9_-]{40,}", dash=True),
    _v("sourcegraph-token", r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}"),
    _v("prefect-key", r"pnu_[A-Za-z0-9]{36}"),
    _v("buildkite-token", r"bkua_[a-f0-9]{40}"),
    _v("tailscale-key", r"tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{10,}", dash=True),
    _v("hubspot-token", rf"pat-(?:na|eu|ap)[0-9]-{UUID}", dash=True),
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
    _v("octopus-key", r"API-[A-Z0-9]{26,32}", has_digit, dash=True),
    _v("fly-token", r"fm[12][ar]?_[A-Za-z0-9+/=]{64,}|fo1_[A-Za-z0-9_-]{43}", dash=True),
    _v("readme-key", r"rdme_[a-z0-9]{70}"),
    _v("scalingo-token", r"tk-us-[A-Za-z0-9_-]{48}", dash=True),
    _v("plaid-token", rf"access-(?:sandbox|development|production)-{UUID}", dash=True),
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
    _v("square-token", r"EAAA[A-Za-z0-9_-]{22,60}", looks_random, dash=True, needs=("EAAA",)),
    _v("facebook-token", r"EAA[B-Z][A-Za-z0-9]{60,}", has_digit, needs=("EAA",)),
    _v("easypost-key", r"EZ[AT]K[A-Za-z0-9]{54}", needs=("EZAK", "EZTK")),
    _v("databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?", dash=True, needs=("dapi",)),
    _v("alibaba-key", r"LTAI[A-Za-z0-9]{12,20}", has_digit, needs=("LTAI",)),
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
    Lazy(r"_(?=[a-z_+/=-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_+/=-]{12})"),
    Lazy(r"-(?=[a-z_-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_-]{12})"),
    Lazy(r"\.(?=[a-z_-]{0,23}[A-Z0-9]|[a-z]{24})(?=[A-Za-z0-9_-]{12})"),
)
_PREFIX_REACH = 256  # how far back from a delimiter a token's start is looked for
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SEGMENT_START = Lazy(r"(?<![A-Za-z0-9])[A-Za-z0-9]")


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


class PrefixedTokens:
    """The family of vendor tokens, delimited and lettered, behind one `find`."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds

    def find(self, text: Text) -> Iterator[Span]:
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


def _vendor_token_at(raw: str, start: int, tried: set[int]) -> Iterator[Span]:
    """Yield the token that starts at `start`, if a vendor issues one there; once per start."""
    if start in tried:
        return
    tried.add(start)
    found = _vendor_match(raw, start)
    if found is None or found.lastgroup is None:
        return
    vendor, end = _VENDORS[int(found.lastgroup[1:])], found.end()
    accepted = vendor.accept is None or _prefix_alone(vendor.shape) or vendor.accept(raw[start:end])
    if accepted and not touches(raw, start, end, vendor.fence):
        yield start, end, vendor.kind


def prefixed_tokens() -> PrefixedTokens:
    """The vendor-token family; its patterns compile on first use."""
    return PrefixedTokens(tuple(dict.fromkeys(v.kind for v in _VENDORS)))


# ---------------------------------------------------------------- secrets named by a word nearby

NEAR_REACH = 32  # how many characters after a credential word a secret may start
_NEAR_LONGEST = 512  # the window's length beyond that; a longer run is measured in full
# A run of base64 or token characters; `=` only as padding, since `a=b` is an assignment.
_NEAR_RUN = Lazy(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}")
# What says a random run is a digest or an image rather than a secret: a label before it
# (`base64,`, `sha256:`, go.sum's `h1:`) or at its start (`sha512-...` holds its dash).
_DIGEST_LABEL = r"(?:sha\d*|md5|h1|blake\w*|xxh\d*|crc\d*)[:=-]"
_LABEL_BEFORE = Lazy(rf"(?:base64,|{_DIGEST_LABEL})\Z", re.IGNORECASE)
_LABEL_AT_START = Lazy(_DIGEST_LABEL, re.IGNORECASE)
_URL_IN_CHUNK = Lazy(r"://\S*\Z")
_CREDENTIAL_WORDS = Lazy(
    rf"(?:password|passwd|passphrase|pwd|secret|token|credential|creds?|{CREDENTIAL_KEY_NAME})"
    r"s?\Z"
)
_WORD_BEFORE = Lazy(r"([a-z]+)[ \t]+\Z")


def _names_credential(c: Candidate) -> bool:
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


def secret_nearby(c: Candidate, kind: str) -> Span | None:
    """Find a generated-looking run a few words after a credential word, on the same line."""
    if not _names_credential(c):
        return None
    raw, key_end = c.text, c.match.end("key")
    # Runs are looked for in a bounded window, then measured in full where one starts.
    window = key_end + NEAR_REACH + _NEAR_LONGEST
    line_end = raw.find("\n", key_end, window)
    for run in _NEAR_RUN.finditer(raw, key_end, window if line_end < 0 else line_end):
        if run.start() - key_end > NEAR_REACH:
            break
        whole = _NEAR_RUN.match(raw, run.start())
        if whole is not None and looks_generated(whole.group()) and not _disowned(raw, whole):
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
