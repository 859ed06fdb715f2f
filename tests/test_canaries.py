"""Secrets never reach memory: every canary through every write path, then a byte grep.

Each write path gets every canary line from tests/canaries.py: the CLI verbs, the Python
API, the MCP tools (in process), `import squad` and the summaries an OpenAI-compatible model
writes (a real HTTP server on the loopback interface). The text then travels on through
Scribe (session end, checkpoint, promotion, expiry) and the search index. Afterwards no
secret may appear in any byte of any file under `.squad/memory` (tiers, archive, audit,
index.sqlite and its WAL), and tiermem-audit.jsonl must hold a `redact` line naming the kinds.
The write paths are in tests/canary_paths.py, which tests/stress.py (`canaries`) also runs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from canaries import CANARIES
from canary_paths import (
    CLI_WRITES,
    DECISION_LOG,
    KEY_ENV,
    KINDS,
    MODEL,
    T0,
    CanaryEndpoint,
    audit_lines,
    leaks,
    model_summaries,
    move_everything,
    redacted_kinds,
    squad_with_canaries,
    summarize_until_said,
    summarized_session,
    whole_lines,
    write_by_api,
    write_by_cli,
    write_by_inbox,
    write_by_mcp,
)
from tiermem.memory import Memory

RunCli = Callable[..., tuple[int, str, str]]


def check(root: Path, before: int, extra: tuple[Path, ...] = ()) -> None:
    """No secret anywhere; the writes since audit line `before` redacted every kind."""
    assert leaks(root, extra) == []
    new = audit_lines(root)[before:]
    missing = KINDS - redacted_kinds(new)
    assert not missing, f"no redact audit line names {sorted(missing)}"
    for line in new:
        if line["action"] == "redact":
            assert line["tiers"] and line["reason"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Memory.init(tmp_path)
    return tmp_path


# --- the CLI --------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(CLI_WRITES))
def test_cli_write_paths_redact_every_canary(root: Path, path: str) -> None:
    said = write_by_cli(root, CLI_WRITES[path])
    assert not any(secret in said for _, secret, _ in CANARIES)
    move_everything(root)
    # decision add also appends to Squad's .squad/decisions.md: tiermem wrote it, so it counts.
    check(root, 0, extra=tuple((root / ".squad").glob("decisions.md")))


def test_each_canary_alone_is_redacted_and_audited_with_its_kind(
    root: Path, run_cli: RunCli
) -> None:
    for kind, secret, line in CANARIES:
        before = len(audit_lines(root))
        code, _, err = run_cli("--root", str(root), "--now", T0, "hot", "note", "eecom", line)
        assert code == 0, err
        assert err.startswith("redacted: ") and kind in err, (kind, err)
        new = audit_lines(root)[before:]
        assert kind in redacted_kinds(new), (kind, new)
        assert secret not in json.dumps(new)
    move_everything(root)
    assert leaks(root) == []


# --- the Python API -------------------------------------------------------------------


def test_python_api_write_paths_redact_every_canary(root: Path) -> None:
    assert write_by_api(root) == KINDS
    move_everything(root)
    check(root, 0)


# --- the MCP tools --------------------------------------------------------------------


def test_mcp_tools_redact_every_canary(root: Path) -> None:
    results = write_by_mcp(root)
    answers = json.dumps(results)
    assert not any(secret in answers for _, secret, _ in CANARIES)
    assert set(results[0]["redactions"]) == KINDS
    move_everything(root)
    check(root, 0)


# --- Squad's decision inbox, merged by Scribe ---------------------------------------------


def test_the_inbox_merge_redacts_every_canary_in_decisions_md(root: Path) -> None:
    before = len(audit_lines(root))
    write_by_inbox(root)
    decision_log = root / DECISION_LOG
    assert "Vault for everything" in decision_log.read_text(encoding="utf-8")
    check(root, before, (decision_log,))
    logged = [ln for ln in audit_lines(root) if ln["tiers"] == [str(DECISION_LOG)]]
    assert redacted_kinds(logged) == KINDS


def test_cli_decision_add_redacts_every_canary_in_decisions_md(root: Path) -> None:
    write_by_cli(root, CLI_WRITES["decision add"])
    assert leaks(root, (root / DECISION_LOG,)) == []


# --- import squad ---------------------------------------------------------------------


def test_import_squad_redacts_every_canary(root: Path, run_cli: RunCli) -> None:
    squad_with_canaries(root)
    code, out, err = run_cli(
        "--root", str(root), "--now", T0, "import", "squad", "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["entries_written"] > len(CANARIES)
    move_everything(root)  # the Scribe run also merges the inbox into decisions.md
    check(root, 0)
    new = audit_lines(root)
    per_file = [ln for ln in new if ln["action"] == "redact" and ln["tiers"] == ["archive"]]
    assert len(per_file) >= 4  # one for each Squad file read: history, decisions, inbox, log


# --- summaries written by a model -----------------------------------------------------


@pytest.fixture
def serve_summaries(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CanaryEndpoint]]:
    for name in ("OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-local-" + "k3y" * 8)
    with contextlib.ExitStack() as servers:

        def start(replies: Callable[[int], str], root: Path) -> CanaryEndpoint:
            return servers.enter_context(model_summaries(root, replies))

        yield start


def test_model_summaries_are_redacted(root: Path, serve_summaries: Callable[..., Any]) -> None:
    waiting = [line for _, _, line in CANARIES]
    server = serve_summaries(whole_lines(waiting), root)
    assert set(summarize_until_said(root, waiting)) == {"openai:" + MODEL}
    assert not waiting and server.requests >= 2
    assert not any(ln["action"] == "summarizer-fallback" for ln in audit_lines(root))
    move_everything(root)
    check(root, 0)
    reasons = {ln["reason"] for ln in audit_lines(root) if ln["action"] == "redact"}
    assert any("summary" in r for r in reasons)


def test_a_summary_cut_at_its_budget_keeps_no_part_of_a_secret(
    root: Path, serve_summaries: Callable[..., Any]
) -> None:
    chosen = [c for c in CANARIES if c[0] in ("private-key", "github-token", "aws-secret-key")]
    pending = list(chosen)

    def replies(budget: int) -> str:
        _, secret, line = pending.pop(0)
        # The cut falls in the middle of the secret.
        before = line[: line.index(secret)]
        pad = budget - len(before.encode("utf-8")) - len(secret) // 2
        return "x" * max(0, pad - 1) + " " + line

    serve_summaries(replies, root)
    for n in range(len(chosen)):
        summarized_session(root, n)
    stored = b"".join(
        p.read_bytes() for p in (root / ".squad" / "memory").rglob("*.md") if p.is_file()
    )
    # The second quarter of a secret is pure key material (past any PEM header line).
    kept = [
        kind
        for kind, secret, _ in chosen
        if secret[len(secret) // 4 : len(secret) // 2].encode("utf-8") in stored
    ]
    assert kept == [], f"part of the key material of {kept} was stored"
