"""Credential shapes and ordinary texts for the redaction tests, generated, never stored.

`credential_samples()` gives lines as they reach memory (shell, .env, YAML, JSON, TOML,
code, prose, logs, URLs, HTTP headers, key files), each holding one fake credential in the
exact shape its issuer uses. `ordinary_texts()` gives engineering text that shares words or
shapes with credentials and must come through untouched. Both are built from templates and
a seeded generator, so a run is repeatable and a failure names the same text every time;
`scripts/` and stress runs can ask for other seeds.

No literal in this file has the shape of a live credential: every value is drawn at random
from the alphabet and length its issuer uses.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

SEED = 20260301

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = DIGITS + "abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Sample:
    """One credential in its context: where it comes from, its kind, its value and its line."""

    family: str  # the issuer, file format or notation the shape belongs to
    shape: str  # the variant of that family's format, and the context it sits in
    kind: str  # the kind its marker names
    secret: str  # the value that must not survive in any form
    line: str  # the text as written to memory


class Material:
    """Random material in the alphabets credentials are made of, from one seeded generator."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        """Return n characters drawn from the alphabet."""
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int, musts: tuple[str, ...] = (UPPER, LOWER, DIGITS)) -> str:
        """Return n characters of the alphabet holding at least one of each of `musts`."""
        picks = [self.rng.choice(must) for must in musts]
        rest = [self.rng.choice(alphabet) for _ in range(n - len(picks))]
        places = self.rng.sample(range(n), len(picks))
        for place, pick in zip(sorted(places), picks, strict=True):
            rest.insert(place, pick)
        return "".join(rest)

    def alnum(self, n: int) -> str:
        """Return a random alphanumeric body with upper case, lower case and a digit."""
        return self.mixed(ALNUM, n)

    def hex(self, n: int) -> str:
        """Return lower-case hex with a digit and a letter."""
        return self.mixed(HEX, n, (DIGITS, "abcdef"))

    def upper(self, n: int) -> str:
        """Return upper-case letters and digits, with both."""
        return self.mixed(UPPER + DIGITS, n, (UPPER, DIGITS))

    def urlsafe(self, n: int) -> str:
        """Return URL-safe base64 text with upper case, lower case and a digit."""
        return self.mixed(URLSAFE, n)

    def b64(self, n: int) -> str:
        """Return standard base64 text (no padding) with upper case, lower case and a digit."""
        return self.mixed(B64, n)

    def uuid(self) -> str:
        """Return a random version-4 UUID."""
        h = self.chars(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def word(self) -> str:
        """Return a pronounceable lower-case word."""
        syllables = ["ka", "ro", "mi", "ten", "dor", "lu", "vex", "sa", "qui", "bra", "zo", "nel"]
        return "".join(self.rng.choice(syllables) for _ in range(self.rng.randint(2, 3)))

    def password(self, symbols: str = "!#%&*+-.?@^_~") -> str:
        """Return a human-chosen password: a capitalised word, digits and a symbol."""
        word = self.word().capitalize()
        return word + str(self.rng.randint(10, 9999)) + self.rng.choice(symbols) + self.word()[:3]

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        """Return one of the options."""
        return self.rng.choice(options)


def _b64_of(raw: bytes) -> str:
    """Return the standard base64 text of raw bytes."""
    return base64.b64encode(raw).decode()


def _b64url_of(raw: str) -> str:
    """Return unpadded URL-safe base64, as JWTs and Discord use."""
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


# ---------------------------------------------------------------- prefixed vendor tokens

Maker = Callable[[Material], str]

# (family, kind, variable name, how its value is made). One line per issued format.
# fmt: off
VENDOR_TOKENS: list[tuple[str, str, str, Maker]] = [
    ("github", "github-token", "GITHUB_TOKEN", lambda m: "ghp_" + m.alnum(36)),
    ("github", "github-token", "GH_OAUTH_TOKEN", lambda m: "gho_" + m.alnum(36)),
    ("github", "github-token", "GH_APP_TOKEN", lambda m: "ghs_" + m.alnum(36)),
    ("github", "github-token", "GH_USER_TOKEN", lambda m: "ghu_" + m.alnum(36)),
    ("github", "github-token", "GH_REFRESH", lambda m: "ghr_" + m.alnum(36)),
    ("github", "github-token", "GH_TOKEN", lambda m: f"github_pat_{m.alnum(22)}_{m.alnum(59)}"),
    ("gitlab", "gitlab-token", "GITLAB_TOKEN", lambda m: "glpat-" + m.urlsafe(20)),
    ("gitlab", "gitlab-token", "CI_DEPLOY_TOKEN", lambda m: "gldt-" + m.urlsafe(20)),
    ("gitlab", "gitlab-token", "RUNNER_TOKEN", lambda m: "glrt-" + m.urlsafe(20)),
    ("gitlab", "gitlab-token", "TRIGGER_TOKEN", lambda m: "glptt-" + m.hex(40)),
    ("grafana", "grafana-token", "GRAFANA_TOKEN", lambda m: f"glsa_{m.alnum(32)}_{m.hex(8)}"),
    ("grafana", "grafana-token", "GRAFANA_CLOUD_KEY", lambda m: "glc_" + m.b64(60) + "=="),
    ("slack", "slack-token", "SLACK_BOT_TOKEN",
     lambda m: f"xoxb-{m.chars(DIGITS, 11)}-{m.chars(DIGITS, 13)}-{m.alnum(24)}"),
    ("slack", "slack-token", "SLACK_USER_TOKEN",
     lambda m: f"xoxp-{m.chars(DIGITS, 11)}-{m.chars(DIGITS, 12)}-{m.chars(DIGITS, 13)}-"
     + m.hex(32)),
    ("slack", "slack-token", "SLACK_APP_TOKEN",
     lambda m: f"xapp-1-A{m.upper(10)}-{m.chars(DIGITS, 13)}-{m.hex(64)}"),
    ("openai", "openai-key", "OPENAI_API_KEY", lambda m: "sk-proj-" + m.urlsafe(156)),
    ("openai", "openai-key", "OPENAI_KEY", lambda m: "sk-" + m.alnum(48)),
    ("openai", "openai-key", "OPENAI_ADMIN_KEY", lambda m: "sk-svcacct-" + m.urlsafe(74)),
    ("anthropic", "anthropic-key", "ANTHROPIC_API_KEY",
     lambda m: "sk-ant-api03-" + m.urlsafe(93) + "AA"),
    ("openrouter", "openrouter-key", "OPENROUTER_API_KEY", lambda m: "sk-or-v1-" + m.hex(64)),
    ("mapbox", "mapbox-token", "MAPBOX_SECRET",
     lambda m: "sk." + _b64url_of('{"u":"' + m.word() + '","a":"' + m.alnum(8) + '"}') + "."
     + m.urlsafe(22)),
    ("stripe", "stripe-key", "STRIPE_SECRET_KEY", lambda m: "sk_live_" + m.alnum(99)),
    ("stripe", "stripe-key", "STRIPE_RESTRICTED", lambda m: "rk_live_" + m.alnum(24)),
    ("stripe", "stripe-key", "STRIPE_WEBHOOK_SECRET", lambda m: "whsec_" + m.alnum(32)),
    ("sendgrid", "sendgrid-key", "SENDGRID_API_KEY",
     lambda m: f"SG.{m.urlsafe(22)}.{m.urlsafe(43)}"),
    ("npm", "npm-token", "NPM_TOKEN", lambda m: "npm_" + m.alnum(36)),
    ("pypi", "pypi-token", "PYPI_TOKEN", lambda m: "pypi-AgEIcHlwaS5vcmc" + m.urlsafe(70)),
    ("huggingface", "huggingface-token", "HF_TOKEN", lambda m: "hf_" + m.alnum(34)),
    ("shopify", "shopify-token", "SHOPIFY_ACCESS_TOKEN", lambda m: "shpat_" + m.hex(32)),
    ("shopify", "shopify-token", "SHOPIFY_SHARED_SECRET", lambda m: "shpss_" + m.hex(32)),
    ("digitalocean", "digitalocean-token", "DIGITALOCEAN_TOKEN", lambda m: "dop_v1_" + m.hex(64)),
    ("mailgun", "mailgun-key", "MAILGUN_KEY", lambda m: "key-" + m.alnum(32)),
    ("vault", "vault-token", "VAULT_TOKEN", lambda m: "hvs." + m.urlsafe(90)),
    ("linear", "linear-api-key", "LINEAR_API_KEY", lambda m: "lin_api_" + m.alnum(40)),
    ("postman", "postman-api-key", "POSTMAN_API_KEY",
     lambda m: f"PMAK-{m.hex(24)}-{m.hex(34)}"),
    ("newrelic", "newrelic-key", "NEW_RELIC_API_KEY", lambda m: "NRAK-" + m.upper(27)),
    ("age", "age-secret-key", "AGE_KEY",
     lambda m: "AGE-SECRET-KEY-1" + m.mixed("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, ("Q", "9"))),
    ("heroku", "heroku-api-key", "HEROKU_TOKEN", lambda m: "HRKU-AA" + m.urlsafe(58)),
    ("google", "google-api-key", "GOOGLE_API_KEY", lambda m: "AIza" + m.urlsafe(35)),
    ("google", "google-oauth-secret", "GOOGLE_CLIENT_SECRET", lambda m: "GOCSPX-" + m.urlsafe(28)),
    ("google", "google-oauth-token", "GOOGLE_ACCESS_TOKEN", lambda m: "ya29." + m.urlsafe(120)),
    ("google", "google-oauth-token", "GOOGLE_REFRESH_TOKEN", lambda m: "1//0" + m.urlsafe(100)),
    ("aws", "aws-access-key", "AWS_ACCESS_KEY_ID", lambda m: "AKIA" + m.upper(16)),
    ("aws", "aws-access-key", "AWS_TEMP_ACCESS_KEY_ID", lambda m: "ASIA" + m.upper(16)),
    ("square", "square-token", "SQUARE_ACCESS_TOKEN", lambda m: "EAAA" + m.urlsafe(60)),
    ("square", "square-token", "SQUARE_OAUTH_TOKEN", lambda m: "sq0atp-" + m.urlsafe(22)),
    ("square", "square-token", "SQUARE_APP_SECRET", lambda m: "sq0csp-" + m.urlsafe(43)),
    ("databricks", "databricks-token", "DATABRICKS_TOKEN", lambda m: "dapi" + m.hex(32)),
    ("atlassian", "atlassian-token", "JIRA_API_TOKEN",
     lambda m: "ATATT3" + m.urlsafe(182) + "=" + m.hex(8).upper()),
    ("bitbucket", "bitbucket-token", "BITBUCKET_APP_PASSWORD", lambda m: "ATBB" + m.alnum(32)),
    ("jfrog", "jfrog-token", "ARTIFACTORY_API_KEY", lambda m: "AKCp" + m.alnum(69)),
    ("alibaba", "alibaba-key", "ALIBABA_ACCESS_KEY_ID", lambda m: "LTAI" + m.alnum(20)),
    ("easypost", "easypost-key", "EASYPOST_API_KEY", lambda m: "EZAK" + m.alnum(54)),
    ("facebook", "facebook-token", "FB_PAGE_TOKEN", lambda m: "EAAG" + m.alnum(180)),
    ("sentry", "sentry-token", "SENTRY_AUTH_TOKEN", lambda m: "sntryu_" + m.hex(64)),
    ("sentry", "sentry-token", "SENTRY_ORG_TOKEN",
     lambda m: "sntrys_eyJpYXQiOjE3M" + m.b64(120) + "_" + m.urlsafe(43)),
    ("1password", "onepassword-token", "OP_SERVICE_ACCOUNT_TOKEN",
     lambda m: "ops_eyJzaWduSW5BZGRyZXNzIjoi" + m.b64(300)),
    ("planetscale", "planetscale-token", "PLANETSCALE_TOKEN",
     lambda m: "pscale_tkn_" + m.urlsafe(43)),
    ("planetscale", "planetscale-token", "PLANETSCALE_PASSWORD",
     lambda m: "pscale_pw_" + m.urlsafe(43)),
    ("rubygems", "rubygems-token", "GEM_HOST_API_KEY", lambda m: "rubygems_" + m.hex(48)),
    ("langsmith", "langsmith-key", "LANGSMITH_API_KEY",
     lambda m: f"lsv2_pt_{m.hex(32)}_{m.hex(10)}"),
    ("groq", "groq-key", "GROQ_API_KEY", lambda m: "gsk_" + m.alnum(52)),
    ("replicate", "replicate-token", "REPLICATE_API_TOKEN", lambda m: "r8_" + m.alnum(37)),
    ("pinecone", "pinecone-key", "PINECONE_API_KEY",
     lambda m: f"pcsk_{m.alnum(5)}_{m.alnum(63)}"),
    ("docker", "docker-token", "DOCKERHUB_TOKEN", lambda m: "dckr_pat_" + m.urlsafe(27)),
    ("notion", "notion-token", "NOTION_TOKEN",
     lambda m: "ntn_" + m.chars(DIGITS, 11) + m.alnum(35)),
    ("notion", "notion-token", "NOTION_SECRET", lambda m: "secret_" + m.alnum(43)),
    ("netlify", "netlify-token", "NETLIFY_AUTH_TOKEN", lambda m: "nfp_" + m.alnum(36)),
    ("render", "render-key", "RENDER_API_KEY", lambda m: "rnd_" + m.alnum(32)),
    ("figma", "figma-token", "FIGMA_TOKEN", lambda m: "figd_" + m.urlsafe(40)),
    ("sourcegraph", "sourcegraph-token", "SRC_ACCESS_TOKEN", lambda m: "sgp_" + m.hex(40)),
    ("prefect", "prefect-key", "PREFECT_API_KEY", lambda m: "pnu_" + m.alnum(36)),
    ("buildkite", "buildkite-token", "BUILDKITE_API_TOKEN", lambda m: "bkua_" + m.hex(40)),
    ("tailscale", "tailscale-key", "TS_AUTHKEY",
     lambda m: f"tskey-auth-k{m.alnum(10)}CNTRL-{m.alnum(32)}"),
    ("hubspot", "hubspot-token", "HUBSPOT_ACCESS_TOKEN", lambda m: "pat-na1-" + m.uuid()),
    ("doppler", "doppler-token", "DOPPLER_TOKEN", lambda m: "dp.pt." + m.alnum(43)),
    ("dropbox", "dropbox-token", "DROPBOX_ACCESS_TOKEN", lambda m: "sl." + m.urlsafe(138)),
    ("pulumi", "pulumi-token", "PULUMI_ACCESS_TOKEN", lambda m: "pul-" + m.hex(40)),
    ("terraform", "terraform-token", "TF_TOKEN_app_terraform_io",
     lambda m: f"{m.alnum(14)}.atlasv1.{m.urlsafe(67)}"),
    ("dynatrace", "dynatrace-token", "DT_API_TOKEN",
     lambda m: f"dt0c01.{m.upper(24)}.{m.upper(64)}"),
    ("brevo", "brevo-key", "BREVO_API_KEY", lambda m: f"xkeysib-{m.hex(64)}-{m.alnum(16)}"),
    ("contentful", "contentful-token", "CONTENTFUL_MANAGEMENT_TOKEN",
     lambda m: "CFPAT-" + m.urlsafe(43)),
    ("perplexity", "perplexity-key", "PPLX_API_KEY", lambda m: "pplx-" + m.alnum(48)),
    ("xai", "xai-key", "XAI_API_KEY", lambda m: "xai-" + m.alnum(80)),
    ("nvidia", "nvidia-key", "NVIDIA_API_KEY", lambda m: "nvapi-" + m.urlsafe(64)),
    ("flutterwave", "flutterwave-key", "FLW_SECRET_KEY",
     lambda m: f"FLWSECK_TEST-{m.hex(32)}-X"),
    ("shippo", "shippo-token", "SHIPPO_API_KEY", lambda m: "shippo_live_" + m.hex(40)),
    ("duffel", "duffel-token", "DUFFEL_ACCESS_TOKEN", lambda m: "duffel_test_" + m.urlsafe(43)),
    ("typeform", "typeform-token", "TYPEFORM_TOKEN", lambda m: "tfp_" + m.urlsafe(44)),
    ("clojars", "clojars-token", "CLOJARS_DEPLOY_TOKEN",
     lambda m: "CLOJARS_" + m.mixed(LOWER + DIGITS, 60, (LOWER, DIGITS))),
    ("sonarqube", "sonarqube-token", "SONAR_TOKEN", lambda m: "squ_" + m.hex(40)),
    ("supabase", "supabase-key", "SUPABASE_ACCESS_TOKEN", lambda m: "sbp_" + m.hex(40)),
    ("airtable", "airtable-token", "AIRTABLE_TOKEN", lambda m: f"pat{m.alnum(14)}.{m.hex(64)}"),
    ("cloudflare", "cloudflare-key", "CF_ORIGIN_CA_KEY",
     lambda m: f"v1.0-{m.hex(24)}-{m.hex(146)}"),
    ("octopus", "octopus-key", "OCTOPUS_API_KEY", lambda m: "API-" + m.upper(26)),
    ("fly", "fly-token", "FLY_API_TOKEN", lambda m: "fo1_" + m.urlsafe(43)),
    ("readme", "readme-key", "README_API_KEY",
     lambda m: "rdme_" + m.mixed(LOWER + DIGITS, 70, (LOWER, DIGITS))),
    ("plaid", "plaid-token", "PLAID_ACCESS_TOKEN", lambda m: "access-production-" + m.uuid()),
    ("harness", "harness-token", "HARNESS_API_KEY",
     lambda m: f"pat.{m.urlsafe(22)}.{m.hex(24)}.{m.alnum(20)}"),
    ("circleci", "circleci-token", "CIRCLECI_TOKEN", lambda m: f"CCIPAT_{m.alnum(22)}_{m.hex(40)}"),
    ("scalingo", "scalingo-token", "SCALINGO_API_TOKEN", lambda m: "tk-us-" + m.urlsafe(48)),
    ("frameio", "frameio-token", "FRAMEIO_TOKEN", lambda m: "fio-u-" + m.urlsafe(64)),
    ("twitter", "twitter-token", "TWITTER_BEARER_TOKEN", lambda m: "A" * 22 + m.alnum(90)),
    ("datastax", "datastax-token", "ASTRA_DB_TOKEN",
     lambda m: f"AstraCS:{m.mixed(UPPER + LOWER, 24, (UPPER, LOWER))}:{m.hex(64)}"),
    ("firebase", "firebase-key", "FCM_SERVER_KEY",
     lambda m: "AAAA" + m.urlsafe(7) + ":APA91b" + m.urlsafe(134)),
]
# A long vendor prefix and the vendor's length are a credential whatever the body's letters:
# bodies of lower case alone, or letters first and digits after.
LETTERS_ONLY: list[tuple[str, str, str, Maker]] = [
    ("github", "github-token", "GITHUB_TOKEN",
     lambda m: "ghp_" + m.chars(LOWER, 26) + m.chars(DIGITS, 10)),
    ("github", "github-token", "GH_OAUTH_TOKEN", lambda m: "gho_" + m.chars(LOWER, 36)),
    ("npm", "npm-token", "NPM_TOKEN", lambda m: "npm_" + m.chars(LOWER, 36)),
    ("notion", "notion-token", "NOTION_SECRET", lambda m: "secret_" + m.chars(LOWER + UPPER, 43)),
    ("notion", "notion-token", "NOTION_TOKEN", lambda m: "ntn_" + m.chars(LOWER, 46)),
    ("mailgun", "mailgun-key", "MAILGUN_KEY", lambda m: "key-" + m.chars(LOWER, 32)),
    ("huggingface", "huggingface-token", "HF_ORG_TOKEN",
     lambda m: "api_org_" + m.chars(LOWER, 37)),
    ("octopus", "octopus-key", "OCTOPUS_API_KEY", lambda m: "API-" + m.chars(UPPER, 28)),
    ("alibaba", "alibaba-key", "ALIBABA_ACCESS_KEY_ID",
     lambda m: "LTAI" + m.chars(LOWER + UPPER, 16)),
]
# fmt: on

# Where a token is written; {env} is the variable's name, {key} the same in lower case.
TOKEN_CONTEXTS: list[tuple[str, str]] = [
    ("env", "{env}={secret}"),
    ("export", 'export {env}="{secret}"'),
    ("yaml", "  {key}: {secret}"),
    ("json", '{{"{key}": "{secret}", "region": "eu-west-1"}}'),
    ("python", 'client = Client(credential="{secret}", timeout=30)'),
    ("js", "const client = new Client({{ auth: '{secret}' }});"),
    ("prose", "Rotated {secret} after the incident; the old one is revoked."),
    ("log", "2026-03-14T10:22:01Z INFO deploy finished with {secret} in 3.2s"),
    ("markdown", "- `{secret}` (expires 2026-06-01)"),
    ("toml", '{key} = "{secret}"'),
    ("header", "curl -H 'X-Api-Key: {secret}' https://api.example.com/v1/items"),
    ("compose", "      - {env}={secret}"),
    ("actions", "          {env}: {secret}  # TODO move to secrets"),
]


def _vendor_samples(m: Material) -> Iterator[Sample]:
    """Every vendor format, each in two contexts drawn at random."""
    for family, kind, env, make in VENDOR_TOKENS:
        for context, template in m.rng.sample(TOKEN_CONTEXTS, 2):
            secret = make(m)
            line = template.format(env=env, key=env.lower(), secret=secret)
            yield Sample(family, f"{env}/{context}", kind, secret, line)
    for family, kind, env, make in LETTERS_ONLY:
        for context, template in m.rng.sample(TOKEN_CONTEXTS, 2):
            secret = make(m)
            line = template.format(env=env, key=env.lower(), secret=secret)
            yield Sample(f"{family}-letters", f"{env}/{context}", kind, secret, line)


# Azure DevOps personal access tokens: 52 lower-case base32 characters, named by the CLI's
# variable or by the service.
DEVOPS_CONTEXTS: list[tuple[str, str]] = [
    ("env", "AZURE_DEVOPS_EXT_PAT={pat}"),
    ("export", 'export AZURE_DEVOPS_EXT_PAT="{pat}"'),
    ("cmd", "set AZURE_DEVOPS_EXT_PAT={pat}"),
    ("powershell", '$env:AZURE_DEVOPS_EXT_PAT = "{pat}"'),
    ("yaml", "  AZURE_DEVOPS_EXT_PAT: {pat}"),
    ("json", '{{"AZURE_DEVOPS_EXT_PAT": "{pat}"}}'),
    ("actions", "        AZURE_DEVOPS_EXT_PAT: {pat}  # TODO move to secrets"),
    ("login", "echo {pat} | az devops login --organization https://dev.azure.com/acme"),
    ("prose", "The Azure DevOps PAT for the build agent is {pat} (expires in May)."),
]


def _devops_samples(m: Material) -> Iterator[Sample]:
    """Azure DevOps tokens, under the CLI's variable or where the text names the service."""
    for shape, template in DEVOPS_CONTEXTS:
        pat = m.mixed(LOWER + "234567", 52, (LOWER, "234567"))
        yield Sample("azure-devops", shape, "azure-devops-pat", pat, template.format(pat=pat))


# Sentry DSNs: the project's key (and, in old ones, a secret) as a URL's user.
SENTRY_CONTEXTS: list[tuple[str, str]] = [
    ("env", "SENTRY_DSN={dsn}"),
    ("js", 'Sentry.init({{ dsn: "{dsn}", tracesSampleRate: 0.2 }});'),
    ("python", 'sentry_sdk.init(dsn="{dsn}", environment="prod")'),
    ("yaml", "  dsn: {dsn}"),
    ("prose", "Errors go to {dsn} since the move."),
]


def _sentry_samples(m: Material) -> Iterator[Sample]:
    """Sentry DSNs of sentry.io's regions, and an old self-hosted one with its secret."""
    for shape, template in SENTRY_CONTEXTS:
        key, org, project = m.hex(32), m.rng.randint(10**5, 10**7), m.rng.randint(10**3, 10**16)
        region = m.pick(["", "us.", "de."])
        dsn = f"https://{key}@o{org}.ingest.{region}sentry.io/{project}"
        yield Sample("sentry", shape, "sentry-dsn", key, template.format(dsn=dsn))
    key, secret = m.hex(32), m.hex(32)
    dsn = f"https://{key}:{secret}@sentry.example.com/{m.rng.randint(1, 99)}"
    yield Sample("sentry", "self-hosted", "sentry-dsn", f"{key}:{secret}", f"SENTRY_DSN={dsn}")


# ---------------------------------------------------------------- tokens named by their service


def _service_named_samples(m: Material) -> Iterator[Sample]:
    """Shapes with no prefix of their own: found by the service or key that names them."""
    user_id = _b64url_of(str(m.rng.randint(10**17, 10**19 - 1)))
    discord = f"{user_id}.{m.urlsafe(6)}.{m.urlsafe(38)}"
    yield Sample("discord", "bot/python", "discord-token", discord, f'client.run("{discord}")')
    discord = f"{_b64url_of(str(m.rng.randint(10**17, 10**18)))}.{m.urlsafe(6)}.{m.urlsafe(27)}"
    yield Sample("discord", "bot/env", "discord-token", discord, f"DISCORD_TOKEN={discord}")
    telegram = f"{m.rng.randint(10**8, 10**9)}:AA{m.urlsafe(33)}"
    yield Sample(
        "telegram", "bot/env", "telegram-token", telegram, f"TELEGRAM_BOT_TOKEN={telegram}"
    )
    twilio = m.hex(32)
    yield Sample("twilio", "auth/env", "twilio", twilio, f"TWILIO_AUTH_TOKEN={twilio}")
    sid = "SK" + m.hex(32)
    yield Sample("twilio", "api-key/prose", "twilio", sid, f"Twilio API key {sid} sends the SMS.")
    okta = "00" + m.urlsafe(40)
    yield Sample(
        "okta",
        "ssws/curl",
        "okta-token",
        okta,
        f'curl -H "Authorization: SSWS {okta}" https://acme.okta.com/api/v1/users',
    )
    okta = "00" + m.urlsafe(40)
    yield Sample("okta", "ssws/header", "okta-token", okta, f"Authorization: SSWS {okta}")
    okta = "00" + m.urlsafe(40)
    yield Sample("okta", "env", "okta-token", okta, f"OKTA_API_TOKEN={okta}")
    datadog = m.hex(32)
    yield Sample("datadog", "env", "datadog-key", datadog, f"DD_API_KEY={datadog}")
    heroku = m.uuid()
    yield Sample("heroku", "uuid/env", "heroku-api-key", heroku, f"HEROKU_API_KEY={heroku}")
    azure = m.b64(86) + "=="
    yield Sample(
        "azure",
        "storage/connection-string",
        "azure-connection-string",
        azure,
        f"DefaultEndpointsProtocol=https;AccountName=acme{m.word()};AccountKey={azure};"
        "EndpointSuffix=core.windows.net",
    )
    aad = f"{m.alnum(3)}{m.rng.randint(0, 9)}Q~{m.urlsafe(34)}"
    yield Sample("azure", "client-secret/env", "azure-key", aad, f"AZURE_CLIENT_SECRET={aad}")
    sas = m.b64(43) + "%3D"
    yield Sample(
        "azure",
        "sas/url",
        "azure-sas",
        sas,
        f"https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&sr=b&sp=r"
        f"&se=2030-01-01T00:00:00Z&sig={sas}",
    )
    aws = m.b64(40)
    yield Sample("aws", "secret/ini", "aws-secret-key", aws, f"aws_secret_access_key = {aws}")
    aws = m.b64(40)
    yield Sample(
        "aws", "secret/cli", "aws-secret-key", aws, f"aws configure set aws_secret_access_key {aws}"
    )
    session = "FwoGZXIvYXdzE" + m.b64(300)
    yield Sample("aws", "session/env", "aws-session-token", session, f"AWS_SESSION_TOKEN={session}")


# ---------------------------------------------------------------- key blocks


def _pem(label: str, body: str, newline: str = "\n") -> str:
    """Return a PEM block of the label around a base64 body cut in 64-character lines."""
    dashes = "-" * 5
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    inner = newline.join(lines)
    return f"{dashes}BEGIN {label}{dashes}{newline}{inner}{newline}{dashes}END {label}{dashes}"


def _putty(m: Material, version: int, encrypted: bool) -> str:
    """Return a PuTTY key file: header, public lines, private lines and MAC."""
    private = [m.b64(64) for _ in range(3)] + [m.b64(20) + "=="]
    header = [
        f"PuTTY-User-Key-File-{version}: ssh-rsa",
        f"Encryption: {'aes256-cbc' if encrypted else 'none'}",
        f"Comment: rsa-key-2026031{version}",
    ]
    if version == 3 and encrypted:
        header += [
            "Key-Derivation: Argon2id",
            "Argon2-Memory: 8192",
            "Argon2-Passes: 21",
            "Argon2-Parallelism: 1",
            f"Argon2-Salt: {m.hex(32)}",
        ]
    public = ["Public-Lines: 2", "AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + m.b64(34), m.b64(40)]
    return "\n".join(
        [
            *header,
            *public,
            f"Private-Lines: {len(private)}",
            *private,
            f"Private-MAC: {m.hex(64 if version == 3 else 40)}",
        ]
    )


def _key_block_samples(m: Material) -> Iterator[Sample]:
    """Private keys in every container: PEM of each type, OpenSSH, PGP, SSH2, PuTTY, base64."""
    priv = "PRIVATE" + " KEY"
    for family, label, size in [
        ("pem-rsa", "RSA " + priv, 1600),
        ("pem-pkcs8", priv, 1200),
        ("pem-ec", "EC " + priv, 160),
        ("pem-dsa", "DSA " + priv, 880),
        ("pem-encrypted", "ENCRYPTED " + priv, 1300),
        ("openssh", "OPENSSH " + priv, 400),
    ]:
        block = _pem(label, m.b64(size))
        yield Sample(family, "file", "private-key", block, f"key.pem:\n{block}\n(end of file)")
        block = _pem(label, m.b64(size), newline="\\n")
        yield Sample(
            family, "json-escaped", "private-key", block, f'  "private_key": "{block}\\n",'
        )
    pgp = _pem(
        "PGP " + priv + " BLOCK",
        f"Version: GnuPG v2\n\nlQdGBF{m.b64(600)}\n={m.b64(4)}".replace("\n", "\x00"),
    )
    pgp = pgp.replace("\x00", "\n")
    yield Sample("pgp", "armored", "private-key", pgp, f"Signing key for releases:\n{pgp}")
    ssh2_body = "\n".join(m.b64(70) for _ in range(6))
    ssh2 = (
        f'---- BEGIN SSH2 ENCRYPTED {priv} ----\nComment: "rsa-key-20260314"\n'
        f"{ssh2_body}\n---- END SSH2 ENCRYPTED {priv} ----"
    )
    yield Sample("ssh2", "file", "private-key", ssh2, f"Old key from the vendor:\n{ssh2}")
    for version, encrypted in [(2, False), (3, False), (3, True)]:
        key = _putty(m, version, encrypted)
        yield Sample(
            "putty",
            f"v{version}{'-encrypted' if encrypted else ''}",
            "private-key",
            key,
            f"deploy.ppk:\n{key}\n",
        )
    wrapped = _b64_of(_pem("RSA " + priv, m.b64(1200)).encode())
    yield Sample(
        "kubeconfig", "client-key-data", "private-key", wrapped, f"    client-key-data: {wrapped}"
    )
    cert = _b64_of(_pem("CERTIFICATE", m.b64(900)).encode())
    yield Sample(
        "kubeconfig",
        "client-certificate-data",
        "client-certificate",
        cert,
        f"    client-certificate-data: {cert}",
    )
    wrapped = _b64_of(_pem(priv, m.b64(1200)).encode())
    yield Sample("kubernetes", "tls-secret", "private-key", wrapped, f"  tls.key: {wrapped}")
    wrapped = _b64_of(_pem("OPENSSH " + priv, m.b64(400)).encode())
    yield Sample(
        "kubernetes", "ssh-secret", "private-key", wrapped, f'  "ssh-privatekey": "{wrapped}"'
    )


# ---------------------------------------------------------------- assignments


def _password_samples(m: Material) -> Iterator[Sample]:
    """Passwords assigned in every notation, including values that start with a slash."""
    notations = [
        ("env", "DB_PASSWORD={pw}"),
        ("export", "export PGPASSWORD='{pw}'"),
        ("yaml", "  password: {pw}"),
        ("yaml-quoted", '  password: "{pw}"'),
        ("json", '{{"username": "svc", "password": "{pw}"}}'),
        ("json-escaped", '{{\\"user\\": \\"svc\\", \\"passwd\\": \\"{pw}\\"}}'),
        ("toml", 'password = "{pw}"'),
        ("ini", "[database]\npassword={pw}"),
        ("properties", "spring.datasource.password={pw}"),
        ("xml", "<password>{pw}</password>"),
        ("php", "define('DB_PASSWORD', '{pw}');"),
        ("python-kwarg", 'psycopg.connect(host="db", user="app", password="{pw}")'),
        ("compose", "      - POSTGRES_PASSWORD={pw}"),
        ("k8s-literal", "kubectl create secret generic db --from-literal=password={pw}"),
        ("markdown-bold", "**Password:** `{pw}`"),
        ("go", 'Password: "{pw}",'),
        ("ruby", "  password: '{pw}',"),
        ("ado", "Server=db;Database=app;User Id=sa;Password={pw};"),
        ("odbc", "Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={pw};"),
        ("jdbc", "jdbc:mysql://db:3306/app?user=app&password={pw}&useSSL=true"),
        ("passphrase", "ssh_key_passphrase: {pw}"),
        ("netrc", "machine api.example.com login deploy password {pw}"),
        ("netrc-lines", "machine git.example.com\n  login deploy\n  password {pw}"),
        ("redis-conf", "requirepass {pw}"),
        ("redis-replica", "masterauth {pw}"),
        ("sql", "CREATE USER app IDENTIFIED BY '{pw}';"),
        ("postgres-sql", "ALTER ROLE app WITH LOGIN PASSWORD '{pw}';"),
        ("prose", "The admin password is {pw} until Friday."),
        ("flag", "vault login -method=userpass username=ops --password {pw}"),
        ("flag-long", "./deploy --db-password {pw} --region eu-west-1"),
    ]
    for shape, template in notations:
        pw = m.password("!*+-.?@^_~" if shape == "jdbc" else "!#%&*+-.?@^_~")  # a URL escapes & #
        yield Sample("password", shape, _password_kind(shape), pw, template.format(pw=pw))
    for shape, template in [
        ("env", "password=/{pw}"),
        ("yaml", "  admin_password: '/{pw}'"),
        ("json", '{{"password": "/{pw}"}}'),
    ]:
        pw = "/" + m.password()
        yield Sample("password-slash", shape, "password", pw, template.format(pw=pw[1:]))


def _password_kind(shape: str) -> str:
    """Name a password sample's kind: inside a `key=value;` string, a connection string."""
    return "connection-string" if shape in ("ado", "odbc") else "password"


def _cli_samples(m: Material) -> Iterator[Sample]:
    """Passwords given on command lines, glued to a flag or after it."""
    commands = [
        ("sshpass", "sshpass -p '{pw}' ssh deploy@10.0.0.12"),
        ("sshpass", "sshpass -p {pw} scp backup.tar.gz ops@backup:/srv"),
        ("mysql", "mysql -u root -p{pw} -h db shop < dump.sql"),
        ("mysqldump", "mysqldump -uroot -p{pw} --all-databases > all.sql"),
        ("mongo", "mongosh --host db -u admin -p {pw} --authenticationDatabase admin"),
        ("redis-cli", "redis-cli -h cache -a {pw} ping"),
        ("docker-login", "docker login -u ci -p {pw} registry.example.com"),
        ("sqlcmd", "sqlcmd -S db -U sa -P {pw} -Q 'SELECT 1'"),
        ("ldapsearch", 'ldapsearch -x -D "cn=admin,dc=example,dc=org" -w {pw} -b dc=example'),
        ("zip", "zip -P {pw} -r secrets.zip secrets/"),
        ("7z", "7z a -p{pw} backup.7z data/"),
        ("openssl", "openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:{pw}"),
        ("curl", "curl -u deploy:{pw} https://ci.example.com/job/build"),
        ("wget", "wget --user=deploy --password={pw} https://files.example.com/a.tgz"),
        ("redis-cli-flag", "redis-cli --pass {pw} ping"),
    ]
    for family, template in commands:
        pw = m.password(symbols="!#%*+-.?@^_~")
        kind = "basic-auth" if family == "curl" else "password"
        yield Sample(family, "cli", kind, pw, template.format(pw=pw))


def _url_samples(m: Material) -> Iterator[Sample]:
    """User and password inside URLs and connection strings."""
    urls = [
        ("postgres", "connection-string", "DATABASE_URL=postgres://app:{pw}@db.internal:5432/app"),
        (
            "postgres",
            "connection-string",
            'engine = create_engine("postgresql+psycopg://app:{pw}@db/app")',
        ),
        ("mysql", "connection-string", "mysql://root:{pw}@127.0.0.1:3306/shop"),
        (
            "mongodb",
            "connection-string",
            "MONGO_URI=mongodb+srv://svc:{pw}@cluster0.abcde.mongodb.net/db",
        ),
        ("redis", "connection-string", "REDIS_URL=rediss://default:{pw}@cache.example.com:6380/0"),
        ("amqp", "connection-string", "amqp://guest:{pw}@rabbit:5672/vhost"),
        (
            "https",
            "basic-auth-url",
            "pip install --index-url https://deploy:{pw}@pypi.example.com/simple pkg",
        ),
        ("git", "basic-auth-url", "git clone https://oauth2:{pw}@gitlab.example.com/team/app.git"),
        ("ftp", "basic-auth-url", "lftp ftp://backup:{pw}@ftp.example.com/"),
    ]
    for family, kind, template in urls:
        pw = m.password(symbols="!*+-._~")
        yield Sample(f"url-{family}", "userinfo", kind, pw, template.format(pw=pw))


def _header_samples(m: Material) -> Iterator[Sample]:
    """HTTP authorization headers and their cousins in code and config."""
    basic = _b64_of(f"deploy:{m.password()}".encode())
    yield Sample("http-basic", "header", "basic-auth", basic, f"Authorization: Basic {basic}")
    basic = _b64_of(f"ci:{m.password()}".encode())
    yield Sample(
        "http-basic",
        "nginx",
        "basic-auth",
        basic,
        f'proxy_set_header Authorization "Basic {basic}";',
    )
    bearer = m.urlsafe(40)
    yield Sample(
        "http-bearer",
        "curl",
        "bearer-token",
        bearer,
        f'curl -H "Authorization: Bearer {bearer}" https://api.example.com/me',
    )
    bearer = m.alnum(32)
    yield Sample(
        "http-bearer",
        "python",
        "bearer-token",
        bearer,
        f'headers = {{"Authorization": "Bearer {bearer}"}}',
    )
    token = m.hex(40)
    yield Sample("http-token", "header", "generic-secret", token, f"Authorization: Token {token}")
    token = m.alnum(32)
    yield Sample(
        "http-token",
        "django",
        "generic-secret",
        token,
        f"requests.get(url, headers={{'Authorization': 'Token {token}'}})",
    )
    jwt = ".".join(
        [
            _b64url_of('{"alg":"RS256","kid":"' + m.hex(8) + '"}'),
            _b64url_of('{"sub":"' + m.uuid() + '","exp":1893456000}'),
            m.urlsafe(86),
        ]
    )
    yield Sample("jwt", "header", "jwt", jwt, f"Authorization: Bearer {jwt}")
    yield Sample("jwt", "kubeconfig", "jwt", jwt, f"    token: {jwt}")


def _keyed_samples(m: Material) -> Iterator[Sample]:
    """Generated secrets assigned to keys whose names say so, in many notations."""
    keyed = [
        ("django", "SECRET_KEY = '{s}'"),
        ("rails", "secret_key_base: {s}"),
        ("oauth", '"client_secret": "{s}"'),
        ("api-key", 'api_key = "{s}"'),
        ("api-key-js", "const apiKey = '{s}';"),
        ("access-token", "ACCESS_TOKEN={s}"),
        ("query", "curl 'https://api.example.com/items?access_token={s}&page=2'"),
        ("webhook", "WEBHOOK_SECRET={s}"),
        ("signing", "signing_key: {s}"),
        ("encryption", "ENCRYPTION_KEY={s}"),
        ("wireguard", "PrivateKey = {s}"),
        ("master", "master_key: {s}"),
        ("jwt-secret", "JWT_SECRET='{s}'"),
        ("session", "SESSION_SECRET={s}"),
        ("consumer", "consumer_secret = {s}"),
        ("x-api-key", "X-API-Key: {s}"),
        ("private-token", "PRIVATE-TOKEN: {s}"),
        ("auth-token", 'auth_token: "{s}"'),
        ("credentials", "CREDENTIALS={s}"),
        ("auth", "auth = {s}"),
        ("flag-token", "./bin/sync --api-token {s} --dry-run"),
        ("flag-secret", "deploy --client-secret {s}"),
        ("csharp", 'options.ClientSecret = "{s}";'),
        ("terraform", 'api_key = "{s}"  # TODO: move to tfvars'),
        ("helm", "helm install app ./chart --set auth.apiKey={s}"),
    ]
    for shape, template in keyed:
        s = m.alnum(m.rng.randint(24, 48)) + ("=" if shape == "wireguard" else "")
        yield Sample("assigned-secret", shape, "generic-secret", s, template.format(s=s))
    auth = _b64_of(f"ci-bot:{m.password()}".encode())
    yield Sample(
        "docker-config",
        "auth",
        "basic-auth",
        auth,
        f'{{"auths": {{"registry.example.com": {{"auth": "{auth}"}}}}}}',
    )
    auth = _b64_of(f"deploy:{m.password()}".encode())
    yield Sample("docker-config", "auth-pretty", "basic-auth", auth, f'      "auth": "{auth}"')
    token = m.urlsafe(120)
    yield Sample(
        "docker-config",
        "identitytoken",
        "generic-secret",
        token,
        f'      "identitytoken": "{token}"',
    )
    npm_auth = _b64_of(f"ci:{m.password()}".encode())
    yield Sample("npmrc", "_auth", "npm-token", npm_auth, f"_auth={npm_auth}")
    npm_uuid = m.uuid()
    yield Sample(
        "npmrc", "_authToken", "npm-token", npm_uuid, f"//registry.npmjs.org/:_authToken={npm_uuid}"
    )
    lower_digits = (LOWER, DIGITS)
    bootstrap = (
        f"{m.mixed(LOWER + DIGITS, 6, lower_digits)}.{m.mixed(LOWER + DIGITS, 16, lower_digits)}"
    )
    yield Sample(
        "kubeadm",
        "bootstrap-token",
        "generic-secret",
        bootstrap,
        f"kubeadm join 10.0.0.1:6443 --token {bootstrap} --discovery-token-ca-cert-hash sha256:"
        + m.hex(64),
    )


def _context_samples(m: Material) -> Iterator[Sample]:
    """Generated secrets named only by a credential word nearby, in prose and logs."""
    sentences = [
        ("prose-token", "The deploy token is {s}, valid for 30 days."),
        ("prose-api-key", "New API key for staging: {s}"),
        ("prose-secret", "Shared the webhook secret {s} with the vendor over the phone."),
        ("log-token", "2026-03-14 10:22:01 DEBUG using token {s} for upload"),
        ("chat", "> here's the access key {s} — don't paste it anywhere"),
        ("prose-passphrase", "Vault unseal passphrase: see 1Password, was {s} before rotation"),
        ("credential", "Credential for the build bot is {s} (rotate quarterly)"),
    ]
    for shape, template in sentences:
        s = m.alnum(m.rng.randint(24, 40))
        yield Sample("context", shape, _context_kind(shape), s, template.format(s=s))


def _context_kind(shape: str) -> str:
    """Name the kind a context sample is redacted as."""
    return "password" if "passphrase" in shape else "generic-secret"


def _webhook_samples(m: Material) -> Iterator[Sample]:
    """Webhook URLs, whose path is the secret."""
    slack = f"https://hooks.slack.com/services/T{m.upper(8)}/B{m.upper(10)}/{m.alnum(24)}"
    yield Sample("slack-webhook", "env", "slack-webhook", slack, f"SLACK_WEBHOOK_URL={slack}")
    discord = f"https://discord.com/api/webhooks/{m.chars(DIGITS, 18)}/{m.urlsafe(68)}"
    yield Sample("discord-webhook", "yaml", "discord-webhook", discord, f"  webhook: {discord}")
    teams = (
        f"https://acme.webhook.office.com/webhookb2/{m.uuid()}@{m.uuid()}/IncomingWebhook/"
        f"{m.hex(32)}/{m.uuid()}"
    )
    yield Sample("teams-webhook", "json", "teams-webhook", teams, f'{{"url": "{teams}"}}')


SAMPLE_SOURCES: tuple[Callable[[Material], Iterator[Sample]], ...] = (
    _vendor_samples,
    _devops_samples,
    _sentry_samples,
    _service_named_samples,
    _key_block_samples,
    _password_samples,
    _cli_samples,
    _url_samples,
    _header_samples,
    _keyed_samples,
    _context_samples,
    _webhook_samples,
)


def credential_samples(seed: int = SEED) -> list[Sample]:
    """Return every credential sample, drawn with the seed."""
    m = Material(seed)
    return [sample for source in SAMPLE_SOURCES for sample in source(m)]


# ---------------------------------------------------------------- ordinary texts


def _sha(m: Material) -> str:
    return m.chars(HEX, 40)


# Each template is filled with fresh random material per use; {x} fields name the filler.
# fmt: off
ORDINARY_TEMPLATES: list[str] = [
    # git
    "Merged in {sha} after review.", "fixed in {sha7} (see #{n})", "`git revert {sha12}`",
    "commit {sha}\nAuthor: Dana Reyes <dana@example.com>\nDate:   Tue Mar 14 10:00:00 2026",
    "Cherry-picked {sha7}..{sha7b} onto release/{ver}.",
    "HEAD is now at {sha7} Bump {pkg} to {ver}",
    "Reviewed-on: https://github.com/{org}/{repo}/commit/{sha}",
    # ids
    "entry id {uuid} was folded twice", "request_id={uuid} status=200 duration_ms={n}",
    '"id": "{uuid}", "createdAt": "2026-03-14T10:00:00Z"', "idempotency_key: {uuid}",
    "trace {hex32} span {hex16}", "Sentry issue {hex8} regressed in {ver}",
    "https://sentry.io/organizations/{org}/issues/{n}/?project={n2}",
    "https://{org}.sentry.io/settings/projects/{repo}/keys/",
    "https://{hex32}.example.com/{n} is the preview host",
    "pod {word}-{hex10}-{lower5} restarted 3 times", "container id {hex64}",
    # paths
    "see src/{word}/{word2}.py and /usr/local/lib/python3.11/site-packages/{word}/__init__.py",
    "C:\\Users\\{Word}\\AppData\\Local\\{Word2}\\logs\\{word}.log", "~/.config/{word}/config.toml",
    "key_path: ./certs/{word}.pem", "ssh -i ~/.ssh/id_ed25519 deploy@{word}.example.com",
    "private_key_path = '/etc/ssl/private/{word}.key'", "password_file: /run/secrets/db_password",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/{word}.json",
    "token_path: ../{word}/token.json",
    "Edited `{word}/{Word2}Controller.cs` and `{word}/{word2}.test.ts`.",
    "/subscriptions/{uuid}/resourceGroups/rg-{word}/providers/Microsoft.KeyVault/vaults/kv-{word}",
    # versions
    "bumped {pkg} from {ver} to {ver2}", "Requires python>={ver}, <4", '"version": "{ver}"',
    "Release v{ver}-beta.{n} is out; v{ver2} next week.", "node {ver}, npm {ver2}",
    # base64 that is not a secret
    "![logo](data:image/png;base64,{b64long})",
    "background: url(data:image/svg+xml;base64,{b64long});",
    "```python\nFIXTURE = base64.b64decode(\"{b64long}\")\n```",
    "const keyIcon = 'data:image/png;base64,{b64long}';",
    "```json\n{{\"thumbnail\": \"{b64long}\"}}\n```",
    "certificate-authority-data: {cacert}",
    "-----BEGIN CERTIFICATE-----\n{b64line}\n{b64line2}\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\n{b64line}\n-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64_43} {word}@{word2}",
    "Add your public key: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{b64long} you@laptop",
    # lock files and digests
    "integrity sha512-{b64_86}==", '"integrity": "sha512-{b64_86}=="',
    'resolved "https://registry.yarnpkg.com/{pkg}/-/{pkg}-{ver}.tgz#{sha}"',
    "{pkg}=={ver} --hash=sha256:{hex64}", 'checksum = "{hex64}"',
    "github.com/{org}/token-{word} v{ver} h1:{b64_43}=", "digest sha256:{hex64}",
    "ghcr.io/{org}/{repo}@sha256:{hex64}", "md5sum: {hex32}  {word}.tar.gz",
    "SSH key fingerprint SHA256:{b64_43}", "Key fingerprint = {hexgroups}",
    # URLs without credentials
    "https://github.com/{org}/{repo}/pull/{n}", "https://example.com/search?q={word}&page={n}",
    "http://localhost:{port}/api/v1/{word}", "git@github.com:{org}/{repo}.git",
    "ssh://git@{word}.example.com:22/{repo}.git", "https://{word}@bitbucket.org/{org}/{repo}.git",
    "mongodb://localhost:27017/{word} and postgres://localhost/{word2}",
    "token endpoint: https://auth.example.com/oauth2/v1/token",
    "Design doc for the token service: https://docs.google.com/document/d/{urlsafe44}/edit",
    "The secret rotation runbook: https://wiki.example.com/{Word}/{urlsafe32}",
    "redis://cache:6379/0 is the default", "postgres://app:${{PGPASSWORD}}@localhost:5432/app",
    # styles and packages
    "color: #{hex6}; background: #{HEX6};",
    "--primary: #{hex3}; border: 1px solid rgba(0,0,0,.{n})",
    "npm install @{org}/{word}-{word2} eslint-plugin-{word} @types/node",
    "npm install jsonwebtoken passport-jwt keytar dotenv secret-handshake",
    "pip install hf_transfer pypi-simple python-dotenv keyring",
    # services named, no credential
    "Azure DevOps pipeline {word} ran build {n} on the hosted agent",
    "az devops configure --defaults organization=https://dev.azure.com/{org} project={Word}",
    "AZURE_DEVOPS_EXT_PAT=${{{{ secrets.ADO_PAT }}}}",
    "AZURE_DEVOPS_EXT_PAT: $(System.AccessToken)",
    "The Azure DevOps PAT expires every {n2} days; request one in the portal.",
    "compat: {word}; spat out {n} errors", "patch_level: {n}",
    "AAAA record for {word}.example.com points at 2001:db8::{n2}",
    "FCM registration tokens start with a device id, then :APA91b and the rest.",
    "npm_config_registry=https://registry.npmjs.org/ and npm_config_cache=~/.npm",
    "key-value store; secret_key_base rotates; api_org_settings is a table",
    # prose about credentials
    "Rotate the password monthly.", "The password must be at least {n} characters.",
    "Passwords are hashed with bcrypt (cost {n2}).", "Never commit secrets; use the vault.",
    "The token expires after {n} seconds.", "We store the API key in Key Vault, not in the repo.",
    "The secret manager rotates keys every {n} days.", "password123 is on every breached list.",
    "Keep the token budget under {n} per spawn.",
    "Token counts are approximate for non-English text.",
    "The {Word} service signs its tokens with RS256; keys rotate weekly.",
    "If the password is wrong three times the account locks for {n} minutes.",
    # `key = word` in a sentence that goes on: an equation of prose, not a setting
    "Cap request bodies: a {n}MB password = bcrypt DoS, so reject it before hashing.",
    "One {n}KB password = {n2} s of bcrypt on the login box.",
    "A leaked token = a rotated token, always, the same day.",
    "Password: hashed with bcrypt (cost {n2})", "**Token:** stored in Key Vault, never in the repo",
    "The Authorization header carries a Bearer token.",
    "AKIA is the prefix of long-term AWS access key ids.",
    "ghp_ tokens are classic personal access tokens; sk- keys belong to OpenAI.",
    "`-----BEGIN RSA PRIVATE KEY-----` marks the start of a key file.",
    "eyJhbGciOiJIUzI1NiJ9 is the JWT header for HS256.",
    "All tests pass: {n}/{n} ({n2}s runtime)", "bypass the cache with `--no-cache`",
    "Use a passphrase for the SSH key; the agent remembers it.",
    "Credentials come from the instance profile, so nothing is stored on disk.",
    # placeholders
    "API_KEY=${{API_KEY}}", "token: <your-token>", 'password: "{{{{ vault_db_password }}}}"',
    "const key = process.env.STRIPE_KEY;", "GITHUB_TOKEN: ${{{{ secrets.GITHUB_TOKEN }}}}",
    'password = os.environ["DB_PASSWORD"]', "apiKey: 'YOUR_API_KEY'", "token=xxxxxxxxxxxx",
    "password: '********'", "AWS_SECRET_ACCESS_KEY=<redacted>", "client_secret: \"\"",
    "password: null", "secret: true", "token: {n}", "api_key: Optional[str] = None",
    "export OPENAI_API_KEY=sk-...", "password=<your-password>", "DB_PASSWORD=${{DB_PASSWORD}}",
    "password: $PASSWORD", "SECRET_KEY must be set in production.",
    "token = request.headers.get('Authorization')", "Authorization: Bearer YOUR_TOKEN_HERE",
    "Authorization: Bearer ${{TOKEN}}", 'auth: "${{REGISTRY_AUTH}}"', "credentials: include",
    "password: !vault |", "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
    # markdown tables
    "| Key | Value |\n|---|---|\n| token_budget | {n} |\n| max_tokens | {n2} |",
    "| Secret | Where it lives |\n|---|---|\n| DB password | Key Vault `kv-{word}` |\n"
    "| API key | 1Password |",
    "| Tier | Tokens |\n|------|-------:|\n| hot | {n} |\n| cold | {n2} |",
    # stack traces
    'Traceback (most recent call last):\n  File "/app/{word}/auth.py", line {n}, in get_token\n'
    "    token = cache[key]\nKeyError: 'token'",
    "    at com.example.auth.TokenService.refresh(TokenService.java:{n})",
    "    at Object.<anonymous> (/home/ci/app/node_modules/jsonwebtoken/verify.js:{n}:{n2})",
    "   at {Word}.Auth.PasswordHasher.Verify(String password)"
    " in C:\\src\\Auth\\PasswordHasher.cs:line {n}",
    "jwt.exceptions.InvalidSignatureError: Signature verification failed (key id {hex8})",
    # command lines
    "ssh -p 2222 deploy@{word}.example.com", "mkdir -p /var/lib/{word}/data",
    "docker run -p 8080:80 -e TOKEN=$TOKEN nginx", "git add -p && git commit -a",
    "mysql -u root -p -h db", "mysql -u root -p {word}", "ls -a ~/.ssh",
    "gpg --recv-keys {HEX16}", "aws s3 cp s3://{word}-backups/{word2}.tar.gz .",
    "kubectl get secret {word}-tls -o yaml", "openssl rand -hex 32 > .secret-length-only",
    # code
    "primary_key: id; sort_key = lambda x: x[1]; hotkey: Ctrl+Shift+P",
    "CancellationToken cancellationToken = default", "const password: string = props.password;",
    '"password": "string"', "passwordHash: bcrypt; password_reset_token_ttl = {n}",
    "tokenizer: cl100k_base", "max_tokens={n2}",
    "def verify_token(token: str, key: bytes) -> bool:",
    "if (!apiKey) throw new Error('missing API key');", "const {{ accessToken }} = await login();",
    "accessToken = await getAccessTokenFromCache(user2Id)",
    "permissions:\n  id-token: write\n  contents: read",
    "cache key: ${{{{ runner.os }}}}-node-${{{{ hashFiles('**/package-lock.json') }}}}",
    "Server=(localdb)\\mssqllocaldb;Database=app;Trusted_Connection=True;",
    # forms the assignment families read, holding no secret
    'fields = ("username", "password", "email")', "required: [password, password_confirmation]",
    "The password is stored hashed; the token is opaque.", "The password was rotated on {ver}.",
    "Tests pass `{Word}Options` to the constructor.", "callers pass `null` tokens",
    "Issues identified by {Word} in review.", "password: ${{{{ secrets.DB_PASSWORD }}}}",
    "auth: true", "auth: {{ type: 'oauth2' }}", "author: {Word} {Word2}",
    "authority: login.example.com",
    "  valueFrom:\n    secretKeyRef:\n      name: db-secret\n      key: password",
    "apiKey: string;", "password?: string", "token: Optional[str] = None", "secret: SecretStr",
    "awsSecretKey: /[A-Za-z0-9/+=]{{40}}/,", "githubToken: /ghp_[A-Za-z0-9_]{{36,}}/,",
    "password=/run/secrets/db_password", "password_file=/etc/{word}/password",
    "--password-file /run/secrets/{word}", "--token-file ~/.config/{word}/token",
    "use `--password-stdin` with docker login", "redis-cli -h cache ping",
    "sshpass -f ~/.pw ssh host",
    "mongosh --host db -u admin -p --authenticationDatabase admin", "zip -r {word}.zip {word2}/",
    "curl -u {word} https://api.example.com/", "ldapsearch -x -b dc=example,dc=org",
    "The `-p` flag of mysql prompts for the password.", "git log -p -- src/{word}.py",
    "machine api.example.com login {word}", "requirepass is unset in dev.",
    "token budget of {n} shared by {n2} agents; tokenizer {word}-{n2}k",
    "The key {Word}{Word2}Service maps to {word}_{word2}_handler.",
    "The token service at https://auth.example.com/{urlsafe32}/token rotates hourly.",
    "access key id: see the {Word} runbook", "secret rotation is tracked in PROJ-{n}",
    "SESSION_COOKIE_SECURE=True; CSRF_COOKIE_NAME=csrftoken",
    "kubectl create secret generic {word} --from-file=./{word2}.json",
    "-----BEGIN CERTIFICATE REQUEST-----\n{b64line}\n-----END CERTIFICATE REQUEST-----",
    "the signing key id is {hex16}; the JWKS lives at /.well-known/jwks.json",
    "hash: {hex64}", "etag: W/\"{hex32}\"", "nonce-{b64_43}", "x-request-id: {uuid}",
    # timestamps and numbers
    "2026-03-14T10:00:00Z INFO started in {n}ms", "listening on 10.0.{n}.{n2}:{port}",
    "MAC 3c:22:fb:{hex2}:{hex2b}:1a", "Jira PROJ-{n}, ticket #{n2}",
]
# fmt: on


def _fillers(m: Material) -> dict[str, str]:
    """Return fresh random material for every field a template may name."""
    n, n2 = m.rng.randint(2, 9999), m.rng.randint(2, 99)
    ver = f"{m.rng.randint(0, 9)}.{m.rng.randint(0, 30)}.{m.rng.randint(0, 99)}"
    ver2 = f"{m.rng.randint(0, 9)}.{m.rng.randint(0, 30)}.{m.rng.randint(0, 99)}"
    word, word2 = m.word(), m.word()
    return {
        "sha": _sha(m),
        "sha7": m.chars(HEX, 7),
        "sha7b": m.chars(HEX, 7),
        "sha12": m.chars(HEX, 12),
        "uuid": m.uuid(),
        "hex2": m.chars(HEX, 2),
        "hex2b": m.chars(HEX, 2),
        "hex3": m.chars(HEX, 3),
        "hex6": m.chars(HEX, 6),
        "HEX6": m.chars(HEX, 6).upper(),
        "hex8": m.chars(HEX, 8),
        "hex10": m.chars(HEX, 10),
        "hex16": m.chars(HEX, 16),
        "HEX16": m.chars(HEX, 16).upper(),
        "hex32": m.chars(HEX, 32),
        "hex64": m.chars(HEX, 64),
        "lower5": m.chars(LOWER + DIGITS, 5),
        "hexgroups": " ".join(m.chars(HEX, 4).upper() for _ in range(10)),
        "b64line": m.b64(64),
        "b64line2": m.b64(64),
        "b64long": m.b64(m.rng.randint(80, 400)),
        "b64_43": m.b64(43),
        "b64_86": m.b64(86),
        "urlsafe44": m.urlsafe(44),
        "urlsafe32": m.urlsafe(32),
        "cacert": _b64_of(_pem("CERTIFICATE", m.b64(600)).encode()),
        "n": str(n),
        "n2": str(n2),
        "port": str(m.rng.randint(1024, 65535)),
        "ver": ver,
        "ver2": ver2,
        "word": word,
        "word2": word2,
        "Word": word.capitalize(),
        "Word2": word2.capitalize(),
        "org": m.word(),
        "repo": m.word() + "-" + m.word(),
        "pkg": m.pick(_PACKAGES),
    }


_PACKAGES = (
    "left-pad",
    "react-dom",
    "@babel/core",
    "typescript",
    "lodash.merge",
    "zod",
    "jsonwebtoken",
    "passport-local",
    "token-types",
    "keytar",
    "secret-handshake",
)


# Where a text sits in a note: as it is, in a list, a quote, a comment, a code span.
WRAPPERS = ("{}", "- {}", "> {}", "# {}", "1. {}", "Note: {}", "  {}", "* {}")


def ordinary_texts(seed: int = SEED, per_template: int = 6) -> list[str]:
    """Return ordinary engineering texts: each template filled and wrapped per_template times,
    then markdown notes that mix them."""
    m = Material(seed)
    texts = [
        m.pick(WRAPPERS).format(t.format(**_fillers(m)))
        for t in ORDINARY_TEMPLATES
        for _ in range(per_template)
    ]
    texts = list(dict.fromkeys(texts))
    return texts + _notes(m, texts)


def _notes(m: Material, texts: list[str], count: int = 120) -> list[str]:
    """Return markdown notes that join several ordinary texts, as a history entry would."""
    notes = []
    for n in range(count):
        parts = m.rng.sample(texts, m.rng.randint(3, 8))
        notes.append(f"## Session {n}\n\n" + "\n\n".join(f"- {p}" for p in parts))
    return notes
