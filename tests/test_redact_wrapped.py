"""Redaction of credentials wrapped in another encoding or grammar: a kubeconfig's base64 PEM
blocks (a private key or a client certificate go; a CA certificate and other base64 stay) and
ADO.NET connection strings (the password goes, the rest of the string stays)."""

from __future__ import annotations

import base64

import pytest

from tiermem.text.redact import redact

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
    "-----END RSA PRIVATE KEY-----\n"
)
CERTIFICATE = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBszCCAVmgAwIBAgIUQ0b8cZl6x0mZ0lNMr2Q8mN3rO1cwCgYIKoZIzj0EAwIw\n"
    "-----END CERTIFICATE-----\n"
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("field", "block", "kind"),
    [
        ("client-key-data", PRIVATE_KEY, "private-key"),
        ("client-certificate-data", CERTIFICATE, "client-certificate"),
        ("some-other-data", PRIVATE_KEY, "private-key"),  # a private key goes under any name
    ],
)
def test_a_wrapped_pem_block_that_grants_access_goes_whole(
    field: str, block: str, kind: str
) -> None:
    line = f"    {field}: {b64(block)}"
    redacted, kinds = redact(line)
    assert (redacted, kinds) == (f"    {field}: [REDACTED:{kind}]", [kind])


@pytest.mark.parametrize(
    "line",
    [
        f"    certificate-authority-data: {b64(CERTIFICATE)}",  # public: who to trust
        f"    some-cert-data: {b64(CERTIFICATE)}",  # a certificate not named as a client's
        "    blob-data: " + b64("plain words that are not a PEM block at all, repeated. " * 3),
    ],
    ids=["ca certificate", "other certificate", "plain base64"],
)
def test_base64_that_grants_nothing_stays(line: str) -> None:
    assert redact(line) == (line, [])


@pytest.mark.parametrize(
    ("line", "password"),
    [
        (
            "Server=tcp:db.example.net,1433;Database=app;User ID=app;Password=Xk9#qLm2!vRt;"
            "Encrypt=True;",
            "Xk9#qLm2!vRt",
        ),
        (
            'ConnectionString="Data Source=db;Initial Catalog=app;User Id=sa;Password=Zq8$wE3rT!y"',
            "Zq8$wE3rT!y",
        ),
    ],
    ids=["server", "data source"],
)
def test_an_ado_connection_string_loses_its_password_only(line: str, password: str) -> None:
    redacted, kinds = redact(line)
    assert kinds == ["connection-string"]
    assert redacted == line.replace(password, "[REDACTED:connection-string]")
    assert redact(redacted) == (redacted, [])  # a second pass finds nothing more


def test_a_trusted_connection_without_a_password_stays() -> None:
    line = "Server=(localdb)\\mssqllocaldb;Database=app;Trusted_Connection=True;"
    assert redact(line) == (line, [])
