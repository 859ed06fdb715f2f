"""Every write path a canary can take into memory, and where a leak would show.

tests/test_canaries.py sends every canary of tests/canaries.py down each path and checks
it; tests/stress.py (`canaries`) runs every path on a fresh store and counts the leaks.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from canaries import CANARIES
from loopback import chat_completion, send, serving
from reliability import cli
from tiermem.memory import Memory
from tiermem.results.scribe import SessionReport
from tiermem.team import decisions, wiki

T0 = "2026-03-02T10:00:00Z"
T_END = "2026-03-02T11:00:00Z"
T_LATER = "2026-04-10T10:00:00Z"  # past promotion age and the cold TTL: everything moves
KINDS = {kind for kind, _, _ in CANARIES}
ALL_LINES = "\n".join(line for _, _, line in CANARIES)
KEY_ENV = "TIERMEM_CANARY_LLM_KEY"
MODEL = "canary-model"


# --- where a leak would show ----------------------------------------------------------


def leaks(root: Path, extra: tuple[Path, ...] = ()) -> list[tuple[str, str]]:
    """(kind, file) for every canary secret found in the bytes of any memory file (and of
    the `extra` files)."""
    files = [p for p in sorted((root / ".squad" / "memory").rglob("*")) if p.is_file()]
    found = []
    for path in [*files, *extra]:
        data = path.read_bytes()
        for kind, secret, _ in CANARIES:
            if secret.encode("utf-8") in data:
                found.append((kind, path.relative_to(root).as_posix()))
    return found


def audit_lines(root: Path) -> list[dict[str, Any]]:
    path = root / ".squad" / "memory" / "tiermem-audit.jsonl"
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
            mem.end_session(agent)
    mem.close()
    later = Memory(root, now=T_LATER)
    later.scribe_run()
    later.search("password token key secret")
    later.close()


# --- the CLI --------------------------------------------------------------------------

# Each command gets every canary line, on stdin ('-') or as an argument.
CLI_WRITES = {
    "hot set": ["hot", "set", "flight", "--task", "-", "--why", ALL_LINES],
    "hot set --talking-to": ["hot", "set", "flight", "--task", "x", "--talking-to", ALL_LINES],
    "hot note": ["hot", "note", "flight", "-"],
    "hot note --source web": ["hot", "note", "flight", "-", "--source", "web"],
    "hot decide": ["hot", "decide", "flight", "-"],
    "hot block": ["hot", "block", "flight", "-"],
    "hot action": ["hot", "action", "flight", "-"],
    "decision add": ["decision", "add", "--by", "flight", "-"],
    "wiki write": ["wiki", "write", "security", "-", "--by", "flight"],
}


DECISION_LOG = Path(".squad", "decisions.md")
# The write paths that write into Squad's decision log too: it is searched as well.
WRITE_THE_LOG = ("cli decision add", "inbox merge")


def write_by_inbox(root: Path) -> None:
    """A decision dropped in Squad's inbox with every canary, merged by Scribe into
    decisions.md and the team's tier."""
    inbox = root / ".squad" / "decisions" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / "flight-vault.md").write_text(
        "### 2026-03-01: Vault for everything\n**By:** Flight\n**What:**\n"
        + ALL_LINES
        + "\n**Why:** leaks.\n",
        encoding="utf-8",
    )
    mem = Memory(root, now=T0)
    try:
        if mem.scribe_run().inbox_merged != ["flight-vault.md"]:
            raise RuntimeError("the inbox was not merged")
    finally:
        mem.close()


def write_by_cli(root: Path, argv: list[str]) -> str:
    """One CLI write with every canary line on stdin; what it printed (stdout, stderr)."""
    code, out, err = cli(["--root", str(root), "--now", T0, *argv], ALL_LINES.encode("utf-8"))
    if code != 0:
        raise RuntimeError(f"tiermem {argv[0]} exit {code}: {err}")
    return out + err


# --- the Python API and the MCP tools -------------------------------------------------


def write_by_api(root: Path) -> set[str]:
    """Every write of the Python API; the kinds the first one (the hot task) redacted."""
    mem = Memory(root, now=T0)
    report = mem.hot_set("flight", ALL_LINES, why=ALL_LINES, talking_to=ALL_LINES)
    for slot in ("action", "decision", "blocker", "note"):
        mem.hot_add("fido", slot, ALL_LINES, source="tool")
    wiki.write(mem.context, "security", ALL_LINES, by="fido")
    decisions.record(mem.context, ALL_LINES, by="fido", source="api:fido")
    mem.close()
    return set(report.redactions)


def write_by_mcp(root: Path) -> list[dict[str, Any]]:
    """Every write of the MCP tools, in process; what each tool answered."""
    # Imported here: the MCP stack takes a second to load, and only this path needs it.
    import anyio

    return anyio.run(_mcp_writes, root)


async def _mcp_writes(root: Path) -> list[dict[str, Any]]:
    from mcp import Client

    from tiermem.server.mcp_server import build_server

    results = []
    async with Client(build_server(Memory(root, now=T0)), mode="legacy") as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("hot_set", {"agent": "flight", "task": ALL_LINES, "why": ALL_LINES}),
            ("hot_set", {"agent": "fido", "task": "t", "talking_to": ALL_LINES, "new_agent": True}),
            *[
                ("hot_add", {"agent": "flight", "kind": kind, "text": ALL_LINES})
                for kind in ("action", "decision", "blocker", "note")
            ],
            ("wiki_write", {"topic": "security", "text": ALL_LINES, "by": "flight"}),
            ("end_session", {"agent": "flight"}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            if result.is_error or not isinstance(result.structured_content, dict):
                raise RuntimeError(f"{tool}: {result.content}")
            results.append(result.structured_content)
    return results


# --- import squad ---------------------------------------------------------------------


def squad_with_canaries(root: Path) -> None:
    """A Squad team whose history, decisions, inbox and log all hold every canary."""
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
        send(self, 200, json.dumps(chat_completion(content, MODEL)).encode("utf-8"))

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def with_openai(config: str, base_url: str) -> str:
    """config.toml with its [summarizer] table replaced by the loopback endpoint's."""
    head, _, rest = config.partition("[summarizer]")
    tail = re.sub(r"^[^\[]*", "", rest, count=1, flags=re.DOTALL)
    table = (
        f'[summarizer]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "{MODEL}"\n'
        f'api_key_env = "{KEY_ENV}"\ntimeout_seconds = 10.0\n\n'
    )
    return head + table + tail


@contextlib.contextmanager
def model_summaries(root: Path, replies: Callable[[int], str]) -> Iterator[CanaryEndpoint]:
    """For the block, the store's summarizer is a loopback model answering replies(budget).

    The model's key is read from KEY_ENV: the caller sets it.
    """
    config = root / ".squad" / "memory" / "config.toml"
    original = config.read_text(encoding="utf-8")
    with serving(CanaryEndpoint(replies)) as server:
        config.write_text(with_openai(original, server.base_url), encoding="utf-8")
        try:
            yield server
        finally:
            config.write_text(original, encoding="utf-8")


def whole_lines(waiting: list[str]) -> Callable[[int], str]:
    """Replies of the waiting lines in turn, as many whole ones as fit (no cut hides one)."""

    def replies(budget: int) -> str:
        out: list[str] = []
        while waiting and len("\n".join([*out, waiting[0]]).encode("utf-8")) <= budget:
            out.append(waiting.pop(0))
        return "\n".join(out) or "nothing to add"

    return replies


# Identifier-dense session notes under 2 KB: each summary may be about 1.5 KB.
NOTES = " ".join(  # over 2 KB: a shorter session goes to cold whole, unsummarised
    f"Checked module_part_{i} in src/pkg/file_{i}.py for #{100 + i}." for i in range(44)
)


def summarized_session(root: Path, n: int) -> SessionReport:
    """Session n of notes, ended: the summarizer writes its summary."""
    mem = Memory(root, now=T0)
    mem.hot_add("flight", "note", f"{NOTES} round {n}")
    report = mem.end_session("flight")
    mem.close()
    return report


def summarize_until_said(root: Path, waiting: list[str]) -> list[str]:
    """End sessions until the model has said every waiting line; the summarizer of each."""
    used = []
    for n in range(len(CANARIES)):
        if not waiting:
            break
        used.append(summarized_session(root, n).summarizer)
    return used
