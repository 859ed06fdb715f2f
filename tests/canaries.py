"""Fake credentials in their real shapes, each inside a line as it would appear in memory.

Every value is assembled at import time from repeated or joined pieces, so that this file
holds no literal that looks like a live credential, while every value still has the exact
shape of the real thing. Each line holds exactly one secret.
"""

from __future__ import annotations

import base64


def _b64(raw: str) -> str:
    """Return the standard base64 text of raw."""
    return base64.b64encode(raw.encode()).decode()


def _b64url(raw: str) -> str:
    """Return unpadded URL-safe base64, as JWTs use."""
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _pem(label: str, line: str, lines: int = 3, newline: str = "\n") -> str:
    """Return a PEM block with a fake base64 body."""
    dashes = "-" * 5
    body = newline.join([line] * lines)
    return f"{dashes}BEGIN {label}{dashes}{newline}{body}{newline}{dashes}END {label}{dashes}"


_HEX32 = "fa4e" * 8
_ADO_PAT = "fake2" * 10 + "k7"  # 52 characters of lower-case base32
_FCM_KEY = "AAAA" + "fAk3_-x" + ":APA91b" + "Fake0-_x" * 17
_GH_LETTERS = "ghp_" + "abcdefghijklmnopqrstuvwxyz" + "0123456789"
_UUID = "fa4e0000-0000-4000-8000-" + "fa4e" * 3
_PRIV = "PRIVATE" + " KEY"

_AWS_ID = "AKIA" + "FAKE" * 4
_AWS_TEMP_ID = "ASIA" + "TEMP" * 4
_AWS_SECRET = "Fake0/+x" * 5
_AWS_SESSION = "FwoGZXIvYXdzE" + "Fake0/+x" * 15
_GCP_KEY = "AIza" + "FAKE" * 8 + "k3y"
_GCP_PEM = _pem(_PRIV, "MIIEv" + "FAKE" * 15, newline="\\n")
_GCP_OAUTH = "GOCSPX-" + "Fake0-" * 4 + "Fake"
_AZ_ACCOUNT_KEY = "FakeKey0" * 10 + "FakeKe=="
_AZ_BUS_KEY = "FakeKey0" * 5 + "Fak="
_AZ_SAS = "FAKEsig0" * 5 + "%2Bx%3D"
_AZ_AAD = "Fak8Q~" + "FaKe.0_-" * 4
_AZ_AI_KEY = "f4ke" * 8
_GH_PAT = "ghp_" + "A1b2" * 9
_GH_OAUTH = "gho_" + "Z9y8" * 9
_GH_USER = "ghu_" + "U2s3" * 9
_GH_APP = "ghs_" + "S4v5" * 9
_GH_REFRESH = "ghr_" + "R6f7" * 9
_GH_FINE = "github_pat_" + "11FAKE0000" + "_" + "Fake1234" * 7 + "abc"
_GL_PAT = "glpat-" + "Fake1234" * 2 + "_x-y"
_GL_DEPLOY = "gldt-" + "FakeDeploy0" * 2
_SLACK_BOT = "xoxb-" + "1234567890-" + "1234567890123-" + "FakeBotToken" * 2
_SLACK_USER = "xoxp-" + "1234567890-" + "1234567890-" + "1234567890123-" + _HEX32
_SLACK_APP = "xapp-1-" + "A0FAKE00000-" + "1234567890123-" + "f4" * 32
_SLACK_HOOK = "https://hooks.slack.com/services/" + "T0FAKE000/B0FAKE000/" + "FaKe" * 6
_DISCORD_HOOK = "https://discord.com/api/webhooks/" + "1" * 18 + "/" + "FaKe_0-" * 9
_JWT = ".".join(
    [_b64url('{"alg":"HS256","typ":"JWT"}'), _b64url('{"sub":"fake-user"}'), "FaKeSiG0" * 5]
)
_RSA = _pem("RSA " + _PRIV, "MIIEpA" + "FAKE" * 14)
_OPENSSH = _pem("OPENSSH " + _PRIV, "b3BlbnNzaC1rZXktdjEA" + "FAKE" * 10)
_EC = _pem("EC " + _PRIV, "MHcCAQEE" + "FAKE" * 12, lines=2)
_PGP = _pem("PGP " + _PRIV + " BLOCK", "lQdGBF" + "FAKE" * 14, lines=4)
_BEARER = "fAk3" * 8
_BASIC = _b64("fakeuser:" + "FakePass" + "123")
_OPENAI_PROJ = "sk-proj-" + "FaKe0_-x" * 8
_OPENAI_OLD = "sk-" + "FaKe0123" * 6
_ANTHROPIC = "sk-ant-api03-" + "FaKe0_-x" * 11 + "AA"
_STRIPE_SECRET = "sk_" + "live_" + "FaKe0123" * 3
_STRIPE_RESTRICTED = "rk_" + "live_" + "FaKe4567" * 3
_TWILIO_KEY = "SK" + _HEX32
_TWILIO_ACCOUNT = "AC" + "0fa4" * 8
_SENDGRID = "SG." + "FaKe0_-x" * 2 + "FaKe0_" + "." + "FaKe0_-x" * 5 + "FaK"
_NPM = "npm_" + "FaKe0123" * 4 + "FaKe"
_NPM_LEGACY = _UUID
_PYPI = "pypi-AgEIcHlwaS5vcmc" + "FaKe0_-x" * 8
_HF = "hf_" + "FaKeToKeN" * 3 + "FaKeTo0"
_DISCORD_BOT = "MTIzNDU2Nzg5MDEyMzQ1Njc4" + ".GFaKe0." + "FaKe0_-x" * 4
_SHOPIFY = "shpat_" + _HEX32
_DIGITALOCEAN = "dop_v1_" + _HEX32 * 2
_MAILGUN = "key-" + "FaKe0123" * 4
_HEROKU_NEW = "HRKU-" + "FaKe0_-x" * 7 + "FaKe"
_DATADOG = "0fa4e" * 6 + "0f"
_VAULT = "hvs." + "FaKe0_-x" * 4
_TELEGRAM = "123456789:AA" + "FaKe0_-x" * 4 + "F"
_AGE = "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "Q" * 26
_GRAFANA = "glsa_" + "FaKe0123" * 4 + "_" + "0fa4e0fa"
_LINEAR = "lin_api_" + "FaKe0123" * 5
_NEWRELIC = "NRAK-" + "FAKE0" * 5 + "FA"
_GOOGLE_OAUTH_TOKEN = "ya29." + "FaKe0_-x" * 5
# Passwords: "Fak3" + a tag + a digit or symbol, so that each canary's value is distinct.
_PW = {
    tag: "Fak3" + tag.capitalize() + mark
    for tag, mark in [
        ("pg", "-0"), ("my", "!1"), ("mongo", "2"), ("redis", "3"), ("amqp", "4"), ("ado", "@5"),
        ("registry", "-6"), ("py", "22"), ("yaml", "#9"), ("json", "!7"), ("escaped", "!8"),
        ("passwd", "5"), ("pwd", "6"), ("cli", "4"), ("glued", "5"), ("xml", "3"), ("env", "2"),
        ("curl", "123"),
    ]
}  # fmt: skip
_DEFAULT_PW = "change" + "me"  # a well-known default, redacted all the same
_SECRET = {
    tag: "F4ke-" + tag + "-" + "s3cr3t" * 2 for tag in ["django", "api", "client", "query", "jwt"]
}
_MAPBOX = "sk." + _b64url('{"u":"fake-user","a":"fake"}') + "." + "FaKe0_-x" * 3
# Shapes an independent attack run once saw pass every write path.
_OKTA = "00" + "FaKe0_-x" * 5
_SQUARE = "EAAA" + "FaKe0_-x" * 7 + "FaKe"
_PUTTY = "\n".join([
    "PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", "Comment: fake-key",
    "Public-Lines: 2", "AAAAC3NzaC1lZDI1NTE5AAAAI" + "FAKE" * 5, "FAKE" * 4,
    "Private-Lines: 1", "AAAAIF" + "FAKE" * 10, "Private-MAC: " + "fa4e" * 16,
])  # fmt: skip
_KUBE_KEY = _b64(_pem("RSA " + _PRIV, "MIIEpA" + "FAKE" * 14))
_DOCKER_AUTH = _b64("fakeuser:" + "FakeDocker" + "9")
_DISCORD_RUN = "MTIzNDU2Nzg5MDEyMzQ1Njc4" + ".GFaKe1." + "FaKe1_-x" * 4
_SSHPASS = "Fak3" + "Sshpass-7"
_SLASHED = "/Fak3" + "&Slash8"
_POSTMAN = "PMAK-" + "0fa4e0fa4e0f" * 2 + "-" + "0fa4e" * 6 + "0fa4"

CANARIES: list[tuple[str, str, str]] = [
    # cloud
    ("aws-access-key", _AWS_ID, f"aws_access_key_id = {_AWS_ID}"),
    ("aws-access-key", _AWS_TEMP_ID, f"export AWS_ACCESS_KEY_ID={_AWS_TEMP_ID}"),
    ("aws-secret-key", _AWS_SECRET, f"aws_secret_access_key = {_AWS_SECRET}"),
    ("aws-secret-key", _AWS_SECRET, f"aws configure set aws_secret_access_key {_AWS_SECRET}"),
    ("aws-secret-key", _AWS_SECRET, f'  secretAccessKey: "{_AWS_SECRET}",'),
    ("aws-session-token", _AWS_SESSION, f"AWS_SESSION_TOKEN={_AWS_SESSION}"),
    ("google-api-key", _GCP_KEY, f'const firebaseConfig = {{ apiKey: "{_GCP_KEY}" }};'),
    ("private-key", _GCP_PEM, f'  "private_key": "{_GCP_PEM}\\n",'),
    ("google-oauth-secret", _GCP_OAUTH, f'"client_secret": "{_GCP_OAUTH}"'),
    ("google-oauth-token", _GOOGLE_OAUTH_TOKEN, f"access token {_GOOGLE_OAUTH_TOKEN} expired"),
    (
        "azure-connection-string",
        _AZ_ACCOUNT_KEY,
        "DefaultEndpointsProtocol=https;AccountName=fakeacct;"
        f"AccountKey={_AZ_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
    ),
    (
        "azure-connection-string",
        _AZ_BUS_KEY,
        "Endpoint=sb://fake.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={_AZ_BUS_KEY}",
    ),
    (
        "azure-sas",
        _AZ_SAS,
        "https://fakeacct.blob.core.windows.net/c/f.txt"
        f"?sv=2022-11-02&ss=b&sp=r&se=2030-01-01T00:00:00Z&sig={_AZ_SAS}",
    ),
    ("azure-key", _AZ_AAD, f"AZURE_CLIENT_SECRET={_AZ_AAD}"),
    ("azure-key", _AZ_AI_KEY, f"AZURE_OPENAI_API_KEY={_AZ_AI_KEY}"),
    # source hosting
    ("github-token", _GH_PAT, f"export GITHUB_TOKEN={_GH_PAT}"),
    ("github-token", _GH_OAUTH, f"oauth token is {_GH_OAUTH} (rotate it)"),
    ("github-token", _GH_USER, f"- user-to-server token `{_GH_USER}`"),
    ("github-token", _GH_APP, f"git clone https://x-access-token:{_GH_APP}@github.com/o/r.git"),
    ("github-token", _GH_REFRESH, f'refresh_token="{_GH_REFRESH}"'),
    ("github-token", _GH_FINE, f"GH_TOKEN: {_GH_FINE}"),
    ("gitlab-token", _GL_PAT, f"curl --header 'PRIVATE-TOKEN: {_GL_PAT}' https://gitlab.com/api"),
    ("gitlab-token", _GL_DEPLOY, f"deploy token {_GL_DEPLOY}"),
    # chat
    ("slack-token", _SLACK_BOT, f"SLACK_BOT_TOKEN={_SLACK_BOT}"),
    ("slack-token", _SLACK_USER, f"Used {_SLACK_USER} to post as the user."),
    ("slack-token", _SLACK_APP, f"app-level token: {_SLACK_APP}"),
    ("slack-webhook", _SLACK_HOOK, f"SLACK_WEBHOOK_URL={_SLACK_HOOK}"),
    ("discord-webhook", _DISCORD_HOOK, f"webhook: {_DISCORD_HOOK}"),
    ("discord-token", _DISCORD_BOT, f"The Discord bot logs in with {_DISCORD_BOT} today."),
    ("telegram-token", _TELEGRAM, f"bot = Bot({_TELEGRAM!r})"),
    # tokens and keys
    ("jwt", _JWT, f"Authorization: Bearer {_JWT}"),
    ("private-key", _RSA, f"key.pem:\n{_RSA}\n(end of file)"),
    ("private-key", _OPENSSH, f"~/.ssh/id_ed25519 holds\n{_OPENSSH}"),
    ("private-key", _EC, f"```\n{_EC}\n```"),
    ("private-key", _PGP, f"Signing key:\n{_PGP}"),
    ("bearer-token", _BEARER, f"Authorization: Bearer {_BEARER}"),
    ("basic-auth", _BASIC, f"Authorization: Basic {_BASIC}"),
    ("openai-key", _OPENAI_PROJ, f"OPENAI_API_KEY={_OPENAI_PROJ}"),
    ("openai-key", _OPENAI_OLD, f"client = OpenAI(api_key='{_OPENAI_OLD}')"),
    ("anthropic-key", _ANTHROPIC, f"ANTHROPIC_API_KEY={_ANTHROPIC}"),
    ("stripe-key", _STRIPE_SECRET, f'stripe.api_key = "{_STRIPE_SECRET}"'),
    ("stripe-key", _STRIPE_RESTRICTED, f"restricted key {_STRIPE_RESTRICTED} for reporting"),
    ("twilio", _TWILIO_KEY, f"TWILIO_API_KEY={_TWILIO_KEY}"),
    ("twilio", _TWILIO_ACCOUNT, f"Twilio account {_TWILIO_ACCOUNT} sends the SMS."),
    ("twilio", _HEX32, f"TWILIO_AUTH_TOKEN={_HEX32}"),
    ("sendgrid-key", _SENDGRID, f"SENDGRID_API_KEY={_SENDGRID}"),
    ("npm-token", _NPM, f"NPM_TOKEN={_NPM}"),
    ("npm-token", _NPM_LEGACY, f"//registry.npmjs.org/:_authToken={_NPM_LEGACY}"),
    ("pypi-token", _PYPI, f"TWINE_PASSWORD={_PYPI}"),
    ("huggingface-token", _HF, f"huggingface-cli login --token {_HF}"),
    ("shopify-token", _SHOPIFY, f"X-Shopify-Access-Token: {_SHOPIFY}"),
    ("digitalocean-token", _DIGITALOCEAN, f"doctl auth init -t {_DIGITALOCEAN}"),
    ("mailgun-key", _MAILGUN, f"auth=('api', '{_MAILGUN}')"),
    ("heroku-api-key", _UUID, f"HEROKU_API_KEY={_UUID}"),
    ("heroku-api-key", _HEROKU_NEW, f"heroku token {_HEROKU_NEW}"),
    ("datadog-key", _DATADOG, f"DD_API_KEY={_DATADOG}"),
    ("vault-token", _VAULT, f"VAULT_TOKEN={_VAULT}"),
    ("age-secret-key", _AGE, f"# age key file\n{_AGE}"),
    ("grafana-token", _GRAFANA, f"grafana service account token {_GRAFANA}"),
    ("mapbox-token", _MAPBOX, f"mapboxgl.accessToken = '{_MAPBOX}';"),
    ("postman-api-key", _POSTMAN, f"postman login --with-api-key {_POSTMAN}"),
    ("linear-api-key", _LINEAR, f"LINEAR_API_KEY={_LINEAR}"),
    ("newrelic-key", _NEWRELIC, f"NEW_RELIC_API_KEY={_NEWRELIC}"),
    # connection strings and URLs
    ("connection-string", _PW["pg"], f"DATABASE_URL=postgres://app:{_PW['pg']}@db.internal/app"),
    ("connection-string", _PW["my"], f"mysql://root:{_PW['my']}@127.0.0.1:3306/shop"),
    (
        "connection-string",
        _PW["mongo"],
        f"MONGO_URI=mongodb+srv://svc:{_PW['mongo']}@cluster0.fake.mongodb.net/db?w=majority",
    ),
    ("connection-string", _PW["redis"], f"REDIS_URL=redis://:{_PW['redis']}@cache:6379/0"),
    ("connection-string", _PW["amqp"], f"amqp://guest:{_PW['amqp']}@rabbit:5672/vhost"),
    (
        "connection-string",
        _PW["ado"],
        "Server=tcp:fake.database.windows.net,1433;Initial Catalog=app;User ID=app;"
        f"Password={_PW['ado']};Encrypt=True;",
    ),
    ("basic-auth-url", _PW["registry"], f"https://deploy:{_PW['registry']}@registry.example/v2/"),
    # assignments
    ("password", _PW["py"], f'password = "{_PW["py"]}"'),
    ("password", _PW["yaml"], f"  PASSWORD: {_PW['yaml']}"),
    ("password", _PW["json"], f'{{"user": "svc", "password": "{_PW["json"]}"}}'),
    (
        "password",
        _PW["escaped"],
        f'{{\\"username\\": \\"svc\\", \\"password\\": \\"{_PW["escaped"]}\\"}}',
    ),
    ("password", _PW["passwd"], f"passwd={_PW['passwd']}"),
    ("password", _PW["pwd"], f"mysqladmin --user=root --pwd={_PW['pwd']} status"),
    ("password", _PW["cli"], f"redis-cli --pass {_PW['cli']} ping"),
    ("password", _PW["glued"], f"mysqldump -u root -p{_PW['glued']} shop > shop.sql"),
    ("password", _PW["xml"], f"<password>{_PW['xml']}</password>"),
    ("password", _PW["env"], f"POSTGRES_PASSWORD={_PW['env']}"),
    ("password", _DEFAULT_PW, f"ADMIN_PASSWORD={_DEFAULT_PW}"),
    ("basic-auth", _PW["curl"], f"curl -u fakeuser:{_PW['curl']} https://api.example.com/v1"),
    ("generic-secret", _SECRET["django"], f"SECRET_KEY={_SECRET['django']}"),
    ("generic-secret", _SECRET["api"], f'api_key = "{_SECRET["api"]}"'),
    ("generic-secret", _SECRET["client"], f"client_secret: {_SECRET['client']}"),
    (
        "generic-secret",
        _SECRET["query"],
        f"curl 'https://api.example.com/items?token={_SECRET['query']}'",
    ),
    ("generic-secret", _SECRET["jwt"], f"JWT_SECRET='{_SECRET['jwt']}'"),
    # shapes once missed
    ("okta-token", _OKTA, f'curl -H "Authorization: SSWS {_OKTA}" https://fake.okta.com/api/v1'),
    ("square-token", _SQUARE, f"square access token {_SQUARE}"),
    ("private-key", _PUTTY, f"fake.ppk:\n{_PUTTY}"),
    ("private-key", _KUBE_KEY, f"    client-key-data: {_KUBE_KEY}"),
    (
        "basic-auth",
        _DOCKER_AUTH,
        f'{{"auths": {{"registry.example": {{"auth": "{_DOCKER_AUTH}"}}}}}}',
    ),
    ("discord-token", _DISCORD_RUN, f'client.run("{_DISCORD_RUN}")'),
    ("password", _SSHPASS, f"sshpass -p '{_SSHPASS}' ssh deploy@10.0.0.12"),
    ("password", _SLASHED, f"password={_SLASHED}"),
    # shapes of issue 29's held-out set that went through
    ("azure-devops-pat", _ADO_PAT, f"AZURE_DEVOPS_EXT_PAT={_ADO_PAT}"),
    ("firebase-key", _FCM_KEY, f"FCM_SERVER_KEY={_FCM_KEY}"),
    ("sentry-dsn", _HEX32, f"SENTRY_DSN=https://{_HEX32}@o4501234.ingest.sentry.io/4505678"),
    ("github-token", _GH_LETTERS, f"export GITHUB_TOKEN={_GH_LETTERS}"),
]
