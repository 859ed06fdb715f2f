"""Secrets never reach memory: every canary through every write path, then a byte grep.

Each write path gets every canary line from tests/canaries.py: the CLI verbs, the Python
API, the MCP tools (in process), `import squad` and the summaries an OpenAI-compatible model
writes (a real HTTP server on the loopback interface). The text then travels on through
Scribe (session end, checkpoint, promotion, expiry) and the search index. Afterwards no
secret may appear in any byte of any file under `.squad/memory` (tiers, archive, audit,
index.sqlite and its WAL), and audit.jsonl must hold a `redact` line naming the kinds.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from canaries import CANARIES
from tiermem import wiki
from tiermem.decisions import record_decisions
from tiermem.maintenance import run
from tiermem.mcp_server import build_server
from tiermem.memory import Memory
from tiermem.scribe import end_session

RunCli = Callable[..., tuple[int, str, str]]

T0 = "2026-03-02T10:00:00Z"
T_END = "2026-03-02T11:00:00Z"
T_LATER = "2026-04-10T10:00:00Z"  # past promotion age and the cold TTL: everything moves
KINDS = {kind for kind, _, _ in CANARIES}
ALL_LINES = "\n".join(line for _, _, line in CANARIES)
KEY_ENV = "TIERMEM_CANARY_LLM_KEY"
MODEL = "canary-model"


def leaks(root: Path, extra: tuple[Path, ...] = ()) -> list[tuple[str, str]]:
    """(kind, file) for every canary secret found in the bytes of any memory file."""
    files = [p for p in sorted((root / ".squad" / "memory").rglob("*")) if p.is_file()]
    found = []
    for path in [*files, *extra]:
        data = path.read_bytes()
        for kind, secret, _ in CANARIES:
            if secret.encode("utf-8") in data:
                found.append((kind, path.relative_to(root).as_posix()))
    return found


def audit_lines(root: Path) -> list[dict[str, Any]]:
    path = root / ".squad" / "memory" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def redacted_kinds(lines: list[dict[str, Any]]) -> set[str]:
    return {k for line in lines if line["action"] == "redact" for k in line.get("kinds", [])}


def move_everything(root: Path) -> None:
    """End every session, let Scribe promote and expire, and sync the index."""
    mem = Memory(root, now=T_END)
    for agent in mem.agents():
        if agent != "team":
            end_session(mem, agent)
    mem.close()
    later = Memory(root, now=T_LATER)
    run(later)
    later.search("password token key secret")
    later.close()


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

CLI_PATHS = {
    "hot-set": [["hot", "set", "flight", "--task", "-", "--why", ALL_LINES]],
    "hot-set-talking-to": [["hot", "set", "flight", "--task", "x", "--talking-to", ALL_LINES]],
    "hot-note": [["hot", "note", "flight", "-"]],
    "hot-note-web": [["hot", "note", "flight", "-", "--source", "web"]],
    "hot-decide": [["hot", "decide", "flight", "-"]],
    "hot-block": [["hot", "block", "flight", "-"]],
    "hot-action": [["hot", "action", "flight", "-"]],
    "decision-add": [["decision", "add", "--by", "flight", "-"]],
    "wiki-write": [["wiki", "write", "security", "-", "--by", "flight"]],
}


@pytest.mark.parametrize("path", sorted(CLI_PATHS))
def test_cli_write_paths_redact_every_canary(root: Path, run_cli: RunCli, path: str) -> None:
    for args in CLI_PATHS[path]:
        code, out, err = run_cli(
            "--root", str(root), "--now", T0, *args, stdin=ALL_LINES.encode("utf-8")
        )
        assert code == 0, err
        assert not any(secret in out + err for _, secret, _ in CANARIES)
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
    mem = Memory(root, now=T0)
    report = mem.hot_set("flight", ALL_LINES, why=ALL_LINES, talking_to=ALL_LINES)
    assert set(report.redactions) == KINDS
    for slot in ("action", "decision", "blocker", "note"):
        mem.hot_add("fido", slot, ALL_LINES, source="tool")
    wiki.write(mem, "security", ALL_LINES, by="fido")
    record_decisions(mem, ALL_LINES, by="fido", source="api:fido", squad_log=False)
    mem.close()
    move_everything(root)
    check(root, 0)


# --- the MCP tools --------------------------------------------------------------------


async def _mcp_writes(root: Path) -> list[dict[str, Any]]:
    results = []
    async with Client(build_server(Memory(root, now=T0)), mode="legacy") as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("hot_set", {"agent": "flight", "task": ALL_LINES, "why": ALL_LINES}),
            ("hot_set", {"agent": "fido", "task": "t", "talking_to": ALL_LINES}),
            *[
                ("hot_add", {"agent": "flight", "kind": kind, "text": ALL_LINES})
                for kind in ("action", "decision", "blocker", "note")
            ],
            ("wiki_write", {"topic": "security", "text": ALL_LINES, "by": "flight"}),
            ("end_session", {"agent": "flight"}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result.content)
            assert isinstance(result.structured_content, dict)
            results.append(result.structured_content)
    return results


def test_mcp_tools_redact_every_canary(root: Path) -> None:
    results = anyio.run(_mcp_writes, root)
    answers = json.dumps(results)
    assert not any(secret in answers for _, secret, _ in CANARIES)
    assert set(results[0]["redactions"]) == KINDS
    move_everything(root)
    check(root, 0)


# --- import squad ---------------------------------------------------------------------


def _squad_with_canaries(root: Path) -> None:
    squad = root / ".squad"
    agent = squad / "agents" / "flight"
    agent.mkdir(parents=True)
    history = ["# Flight\n\n## Core Context\n\n" + ALL_LINES + "\n\n## Learnings\n"]
    for n, (_, _, line) in enumerate(CANARIES):
        history.append(f"\n### 2026-02-{n % 27 + 1:02d}: Rotated credential {n}\n\n{line}\n")
    (agent / "history.md").write_text("".join(history), encoding="utf-8")
    decisions = ["# Decisions\n"]
    for n, (_, _, line) in enumerate(CANARIES):
        decisions.append(
            f"\n### 2026-01-{n % 27 + 1:02d}: Keep credential {n} in the vault\n"
            f"**By:** Flight\n**What:** {line}\n**Why:** it leaked once.\n"
        )
    (squad / "decisions.md").write_text("".join(decisions), encoding="utf-8")
    inbox = squad / "decisions" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "flight-vault.md").write_text(
        "### 2026-03-01: Vault for everything\n**By:** Flight\n**What:**\n"
        + ALL_LINES
        + "\n**Why:** leaks.\n",
        encoding="utf-8",
    )
    log = squad / "log"
    log.mkdir()
    (log / "2026-03-01-session.md").write_text("# Session log\n\n" + ALL_LINES + "\n")


def test_import_squad_redacts_every_canary(root: Path, run_cli: RunCli) -> None:
    _squad_with_canaries(root)
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


class CanaryEndpoint(ThreadingHTTPServer):
    """A Chat Completions endpoint whose summaries repeat credentials back."""

    daemon_threads = False

    def __init__(self, replies: Callable[[int], str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = replies
        self.requests = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: CanaryEndpoint

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        asked = re.search(r"Budget: (\d+) bytes", body["messages"][1]["content"])
        budget = int(asked.group(1)) if asked else 200
        self.server.requests += 1
        content = self.server.replies(budget)
        reply = {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        data = json.dumps(reply).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def serve_summaries(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CanaryEndpoint]]:
    for name in ("OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-local-" + "k3y" * 8)
    servers: list[tuple[CanaryEndpoint, threading.Thread]] = []

    def start(replies: Callable[[int], str], root: Path) -> CanaryEndpoint:
        server = CanaryEndpoint(replies)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        servers.append((server, thread))
        config = root / ".squad" / "memory" / "config.toml"
        text = config.read_text(encoding="utf-8")
        config.write_text(_with_openai(text, server.base_url), encoding="utf-8")
        return server

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join()


def _with_openai(config: str, base_url: str) -> str:
    """config.toml with its [summarizer] table replaced by the loopback endpoint's."""
    head, _, rest = config.partition("[summarizer]")
    tail = re.sub(r"^[^\[]*", "", rest, count=1, flags=re.DOTALL)
    table = (
        f'[summarizer]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "{MODEL}"\n'
        f'api_key_env = "{KEY_ENV}"\ntimeout_seconds = 10.0\n\n'
    )
    return head + table + tail


# Identifier-dense session notes under 2 KB: each summary may be about 1.5 KB.
NOTES = " ".join(
    f"Checked module_part_{i} in src/pkg/file_{i}.py for #{100 + i}." for i in range(34)
)


def test_model_summaries_are_redacted(root: Path, serve_summaries: Callable[..., Any]) -> None:
    waiting = [line for _, _, line in CANARIES]

    def replies(budget: int) -> str:
        # Whole canary lines that fit the budget, so the cut never hides one.
        out: list[str] = []
        while waiting and len("\n".join([*out, waiting[0]]).encode("utf-8")) <= budget:
            out.append(waiting.pop(0))
        return "\n".join(out) or "nothing to add"

    server = serve_summaries(replies, root)
    for n in range(len(CANARIES)):
        if not waiting:
            break
        mem = Memory(root, now=T0)
        mem.hot_add("flight", "note", f"{NOTES} round {n}")
        report = end_session(mem, "flight")
        mem.close()
        assert report.summarizer == "openai:" + MODEL
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
        mem = Memory(root, now=T0)
        mem.hot_add("flight", "note", f"{NOTES} round {n}")
        end_session(mem, "flight")
        mem.close()
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
