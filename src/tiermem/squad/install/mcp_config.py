"""tiermem's entry in the MCP configurations of a Squad team: `.mcp.json` (Copilot CLI,
Claude Code; Squad's `squad_state` is there too) and `.vscode/mcp.json` (VS Code).

A file of plain JSON is written back the way Squad writes `.mcp.json` (two-space JSON, other
entries in their order), so Squad's own rewrites leave tiermem's entry alone. A file with
comments or trailing commas (JSONC, as VS Code writes its own) is changed in place: the entry
goes in, or out, and every other byte stays, comments included. A file that is neither, or
that holds no object of servers, is left as it is with a note, and the rest installs.

An entry named `tiermem` is the install's only when it is one an install writes: one the team
wrote by hand stays, said so, through install and uninstall alike.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from typing import Any

from . import jsonc
from .install_paths import MCP_JSON, VSCODE_MCP
from .install_record import Record
from .install_steps import Step, install_step
from .repo_paths import Repo

SERVER = "tiermem"
WHAT = "tiermem MCP server"


def server_command() -> tuple[str, list[str]]:
    """How an MCP client starts tiermem: the `tiermem` on PATH, else this Python's module."""
    if shutil.which(SERVER):
        return SERVER, []
    return sys.executable, ["-m", "tiermem"]


def _entry(rel: str, command: str, prefix: list[str]) -> dict[str, Any]:
    if rel == MCP_JSON:
        return {"command": command, "args": [*prefix, "serve"], "env": {}, "tools": ["*"]}
    args = [*prefix, "serve", "--root", "${workspaceFolder}"]
    return {"type": "stdio", "command": command, "args": args}


def mcp_entries() -> dict[str, tuple[str, dict[str, Any]]]:
    """Per config file: the key holding its servers, and tiermem's entry.

    `.mcp.json` names no root: like Squad's own `squad_state` server, tiermem finds the team
    from the folder the client starts it in (the nearest `.squad/` above), so the committed
    file works in every clone and worktree. VS Code expands `${workspaceFolder}` to the
    workspace's root.
    """
    command, prefix = server_command()
    return {
        MCP_JSON: ("mcpServers", _entry(MCP_JSON, command, prefix)),
        VSCODE_MCP: ("servers", _entry(VSCODE_MCP, command, prefix)),
    }


def is_install_entry(rel: str, value: object) -> bool:
    """Whether a `tiermem` entry is one an install writes (on any machine: the `tiermem`
    on PATH, or a Python running the module)."""
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    return value in (_entry(rel, SERVER, []), _entry(rel, value["command"], ["-m", "tiermem"]))


class Config:
    """One MCP configuration file as it is: its text, its meaning, how it is written."""

    def __init__(self, repo: Repo, rel: str) -> None:
        self.rel = rel
        self.key = mcp_entries()[rel][0]
        self.raw = repo.read(rel)
        self.problem = ""
        self.data: dict[str, Any] | None = None
        self.plain = True
        if self.raw is not None:
            self._read(self.raw)

    def _read(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8")
            self.plain = _is_plain(text)
            data = json.loads(text) if self.plain else jsonc.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self.problem = f"not JSON ({exc})"
            return
        if not isinstance(data, dict) or not isinstance(data.get(self.key, {}), dict):
            self.problem = f'not a JSON object with a "{self.key}" object'
            return
        self.data = data

    @property
    def entry(self) -> object:
        """tiermem's entry as the file has it (None: no such entry)."""
        return (self.data or {}).get(self.key, {}).get(SERVER)

    def with_entry(self, entry: dict[str, Any]) -> bytes:
        """The file with tiermem's entry (in place of any the file had)."""
        if self.raw is None or self.plain:
            data = dict(self.data or {})
            data[self.key] = {**data.get(self.key, {}), SERVER: entry}
            return _dump(data, _indent(self.raw))
        text = self.without_entry().decode("utf-8")
        root = jsonc.parse(text)
        servers = jsonc.member(root, self.key)
        if servers is None:
            return jsonc.with_member(text, root, self.key, {SERVER: entry}).encode("utf-8")
        return jsonc.with_member(text, servers.value, SERVER, entry).encode("utf-8")

    def without_entry(self) -> bytes:
        """The file without tiermem's entry."""
        assert self.raw is not None
        if self.plain:
            return _dump(_without_server(self.data or {}, self.key), _indent(self.raw))
        text = self.raw.decode("utf-8")
        servers = jsonc.member(jsonc.parse(text), self.key)
        if servers is None:
            return self.raw
        return jsonc.without_member(text, servers.value, SERVER).encode("utf-8")


def _is_plain(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _indent(raw: bytes | None) -> str | int:
    """The indentation unit of a JSON file (2 spaces, as Squad writes, when unknown)."""
    hit = re.search(rb'\n([ \t]+)"', raw or b"")
    if hit is None:
        return 2
    unit = hit.group(1).decode()
    return unit if "\t" in unit else len(unit)


def _dump(data: dict[str, Any], indent: str | int) -> bytes:
    # JSON.stringify(data, null, 2) + "\n", as Squad writes .mcp.json: a rewrite by Squad
    # then changes only what it means to change.
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def _without_server(data: dict[str, Any], key: str) -> dict[str, Any]:
    data = dict(data)
    data[key] = {k: v for k, v in data.get(key, {}).items() if k != SERVER}
    return data


def _left_alone(config: Config) -> str:
    return f"{config.problem}; left as it is: add the tiermem server by hand (docs/mcp.md)"


def plan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Register `tiermem serve` beside whatever servers the file already has."""
    config = Config(repo, rel)
    if config.problem:
        return Step(rel, WHAT, "skipped", config.raw, config.raw, _left_alone(config))
    present = config.entry is not None
    if present and not is_install_entry(rel, config.entry):
        note = "an entry named tiermem that the install did not write: left as it is"
        return Step(rel, WHAT, "edited", config.raw, config.raw, note)
    after = config.with_entry(mcp_entries()[rel][1])
    if after != config.raw:
        record.keep_original(rel, config.raw, ours=present)
    return install_step(rel, WHAT, config.raw, after, present, record)


def unplan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Take tiermem's entry out; the bytes kept from before come back when nothing else
    changed."""
    config = Config(repo, rel)
    raw = config.raw
    if config.problem:
        return Step(rel, WHAT, "kept", raw, raw, f"{config.problem}; left as it is")
    if config.entry is None:
        return Step(rel, WHAT, "absent", raw, raw)
    if not is_install_entry(rel, config.entry):
        note = "an entry named tiermem that the install did not write: left as it is"
        return Step(rel, WHAT, "kept", raw, raw, note)
    stripped = _without_server(config.data or {}, config.key)
    original = record.originals.get(rel, "")
    if rel in record.originals and original is None and stripped == {config.key: {}}:
        return Step(rel, WHAT, "removed", raw, None, "the install had made the file")
    if original and _meaning(original, config.key) == stripped:
        return Step(rel, WHAT, "restored", raw, original.encode("utf-8"))
    return Step(rel, WHAT, "removed", raw, config.without_entry())


def _meaning(text: str, key: str) -> dict[str, Any] | None:
    """What a kept text means without tiermem's entry (None: it is no such object)."""
    try:
        data = jsonc.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
        return None
    return _without_server(data, key)
