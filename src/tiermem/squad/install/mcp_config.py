"""tiermem's entry in the MCP configurations of a Squad team: `.mcp.json` (Copilot CLI,
Claude Code; Squad's `squad_state` is there too), `.vscode/mcp.json` (VS Code) and
`.copilot/mcp-config.json` (Copilot CLI's own, where the team keeps one).

The file is the user's, and may hold what the user keeps out of git (a token in an `env`), so
it is edited as text, never written back from what it means, and never copied: the install
splices tiermem's entry into the file's text (as the first of its servers, in the file's own
indentation and line ends), and the install record keeps only where the entry sits (the
blanks and comma set around it). Uninstall takes out that span and nothing else, so comments,
order, a name given twice, numbers as spelled (`1e400`) and escapes (`"\\udc80"`) stay byte
for byte, whatever the user changed around the entry since. Each edit is checked before
anything is written: the file must read back as it was, with tiermem's entry added or taken
out and nothing else changed, or the command is refused in one line. A file that is not
JSON(C) at all, or holds no object of servers, is left as it is with a note, and the rest
installs.

An entry named `tiermem` is the install's only when it is one an install writes: one the team
wrote by hand stays, said so, through install and uninstall alike; readers take the last of
two entries of one name, and so does the install.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from typing import Any

from ...errors import UsageError
from . import jsonc
from .install_paths import COPILOT_MCP, MCP_JSON
from .install_record import Placed, Record
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
    if rel == COPILOT_MCP:  # Copilot CLI's form: a local (stdio) server, all its tools
        serve = [*prefix, "serve"]
        return {"type": "local", "command": command, "args": serve, "env": {}, "tools": ["*"]}
    args = [*prefix, "serve", "--root", "${workspaceFolder}"]
    return {"type": "stdio", "command": command, "args": args}


def servers_key(rel: str) -> str:
    """The member of the file that holds its servers."""
    return "mcpServers" if rel in (MCP_JSON, COPILOT_MCP) else "servers"


def install_entry(rel: str) -> dict[str, Any]:
    """tiermem's entry in a config file, on this machine.

    `.mcp.json` names no root: like Squad's own `squad_state` server, tiermem finds the team
    from the folder the client starts it in (the nearest `.squad/` above), so the committed
    file works in every clone and worktree. VS Code expands `${workspaceFolder}` to the
    workspace's root.
    """
    return _entry(rel, *server_command())


def is_install_entry(rel: str, member: jsonc.Member) -> bool:
    """Whether a `tiermem` member is one an install writes (on any machine: the `tiermem`
    on PATH, or a Python running the module), compared strictly, member by member."""
    command = jsonc.members(member.value, "command") if member.value.kind == "object" else []
    if not command or command[-1].value.kind != "string":
        return False
    python = jsonc.value(command[-1].value)
    made = (_entry(rel, SERVER, []), _entry(rel, python, ["-m", "tiermem"]))
    return any(_means(member, entry) for entry in made)


def _means(member: jsonc.Member, entry: dict[str, Any]) -> bool:
    """Whether a member is `entry`, member by member (in any order, any layout)."""
    shape = (member.name, member.value.shape(ordered=False))
    return bool(shape == jsonc.shape_of(SERVER, entry, ordered=False))


def _dump(data: dict[str, Any]) -> str:
    # JSON.stringify(data, null, 2) + "\n", as Squad writes .mcp.json.
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass
class Config:
    """One MCP configuration file as it is: its text, its tree, its servers."""

    rel: str
    raw: bytes | None
    text: str = ""
    root: jsonc.Node | None = None
    problem: str = ""

    @classmethod
    def read(cls, repo: Repo, rel: str) -> Config:
        config = cls(rel, repo.read(rel))
        if config.raw is not None:
            config._parse()
        return config

    @classmethod
    def of_text(cls, rel: str, text: str) -> Config:
        """A file as an edit would leave it."""
        config = cls(rel, _encoded(rel, text))
        config._parse()
        return config

    def _parse(self) -> None:
        assert self.raw is not None
        try:
            self.text = self.raw.decode("utf-8")
            self.root = jsonc.parse(self.text)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self.problem = f"not JSON ({exc})"
            return
        servers = self.servers
        if self.root.kind != "object" or (servers is not None and servers.value.kind != "object"):
            self.problem = f'not a JSON object with a "{servers_key(self.rel)}" object'

    @property
    def servers(self) -> jsonc.Member | None:
        """The member holding the servers (the last of that name: the one readers take)."""
        found = jsonc.members(self.root, servers_key(self.rel)) if self.root else []
        return found[-1] if found else None

    def entries(self) -> list[jsonc.Member]:
        """Every member named `tiermem` among the servers, in order."""
        servers = self.servers
        return jsonc.members(servers.value, SERVER) if servers is not None else []

    def ours(self) -> list[jsonc.Member]:
        """The `tiermem` members an install writes."""
        return [m for m in self.entries() if is_install_entry(self.rel, m)]


def _encoded(rel: str, text: str) -> bytes:
    """A file's new text as UTF-8 (an entry naming a Python whose path is not UTF-8 cannot
    be written as JSON: refused)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refused(rel, "written as UTF-8") from None


def _refused(rel: str, doing: str) -> UsageError:
    return UsageError(
        f"{rel}: tiermem's entry cannot be {doing} without changing the rest of the file; "
        "edit it by hand (docs/mcp.md) (nothing was written)"
    )


def _shape_without(node: jsonc.Node, gone: list[jsonc.Member]) -> Any:
    """A value's strict shape with some of its members (at any depth) left out."""
    if node.kind == "object":
        kept = [m for m in node.members if all(m is not g for g in gone)]
        return ("object", tuple((m.name, _shape_without(m.value, gone)) for m in kept))
    if node.kind == "array":
        return ("array", tuple(_shape_without(item, gone) for item in node.items))
    return node.shape()


# --- install --------------------------------------------------------------------------------


def plan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Register `tiermem serve` beside whatever servers the file already has."""
    config = Config.read(repo, rel)
    if config.problem:
        return Step(rel, WHAT, "skipped", config.raw, config.raw, _left_alone(config))
    entries, entry = config.entries(), install_entry(rel)
    if entries and not is_install_entry(rel, entries[-1]):
        note = "an entry named tiermem that the install did not write: left as it is"
        return Step(rel, WHAT, "edited", config.raw, config.raw, note)
    if entries and _means(entries[-1], entry):
        after = config.text  # as the install writes it, however it is laid out
    elif entries:
        after = _refreshed(config, entries[-1], entry)
    elif config.raw is None:
        after = _dump({servers_key(rel): {SERVER: entry}})
        record.originals[rel] = None  # the install makes the file
        record.placed.pop(rel, None)
    else:
        after = _added(config, entry, record)
    return install_step(rel, WHAT, config.raw, _encoded(rel, after), bool(entries), record)


def _left_alone(config: Config) -> str:
    return f"{config.problem}; left as it is: add the tiermem server by hand (docs/mcp.md)"


def _added(config: Config, entry: dict[str, Any], record: Record) -> str:
    """The file's text with tiermem's entry spliced in, its place kept in the record."""
    assert config.root is not None
    servers, rel, text = config.servers, config.rel, config.text
    if servers is None:  # no servers yet: the member that holds them goes in, with the entry
        made = jsonc.insertion(text, config.root, servers_key(rel), {SERVER: entry})
    else:
        made = jsonc.insertion(text, servers.value, SERVER, entry)
    after = made.applied(text)
    check = Config.of_text(rel, after)
    placed = check.servers if servers is None else next(reversed(check.ours()), None)
    if check.problem or placed is None or jsonc.cut(after, placed, made.lead, made.trail) != text:
        raise _refused(rel, "added")
    record.placed[rel] = Placed(made.lead, made.trail, servers is None)
    record.originals.pop(rel, None)  # the file was there before this entry
    return after


def _refreshed(config: Config, found: jsonc.Member, entry: dict[str, Any]) -> str:
    """The file with an install's older entry brought up to date where it stands."""
    text = config.text
    unit, eol = jsonc.indent_unit(text), jsonc.line_end(text, found.start)
    new = jsonc.render(SERVER, entry, jsonc.line_indent(text, found.start), unit, eol)
    after = text[: found.start] + new + text[found.end :]
    check = Config.of_text(config.rel, after)
    entries = check.entries()
    if check.problem or not entries or not is_install_entry(config.rel, entries[-1]):
        raise _refused(config.rel, "brought up to date")
    return after


# --- uninstall ------------------------------------------------------------------------------


def unplan_mcp(repo: Repo, rel: str, record: Record) -> Step:
    """Take out tiermem's entry, and nothing else: the span the install put in, where it
    still stands as the install left it, else the entry, its line and one comma. A file the
    install made goes when it is still exactly what the install made."""
    config = Config.read(repo, rel)
    raw = config.raw
    if config.problem:
        return Step(rel, WHAT, "kept", raw, raw, f"{config.problem}; left as it is")
    ours = config.ours()
    if not ours:
        if config.entries():
            note = "an entry named tiermem that the install did not write: left as it is"
            return Step(rel, WHAT, "kept", raw, raw, note)
        return Step(rel, WHAT, "absent", raw, raw)
    if rel not in record.installed:
        return Step(rel, WHAT, "kept", raw, raw, NOT_RECORDED)
    if _made_by_install(config, record):
        return Step(rel, WHAT, "removed", raw, None, "the install had made the file")
    after = _without_ours(config, record.placed.get(rel))
    return Step(rel, WHAT, "removed", raw, _encoded(rel, after))


NOT_RECORDED = "no install record of this repository lists it: left as it is"


def _made_by_install(config: Config, record: Record) -> bool:
    """Whether the install made the file and it is still, byte for byte, what it made."""
    if config.rel not in record.originals or record.originals[config.rel] is not None:
        return False
    entries = config.entries()
    if len(entries) != 1:
        return False
    made = {servers_key(config.rel): {SERVER: jsonc.value(entries[0].value)}}
    return config.text == _dump(made)


def _without_ours(config: Config, placed: Placed | None) -> str:
    """The file's text without every entry an install writes, one at a time, each removal
    checked to leave the rest of the file meaning exactly what it meant."""
    while config.ours():
        assert config.root is not None
        text, ours = config.text, config.ours()
        after, gone = None, ours[-1]
        if placed is not None:
            after, gone = _cut_placed(config, ours, placed)
            placed = None  # the install placed one entry
        if after is None:
            servers = config.servers
            assert servers is not None
            gone = ours[-1]
            after = jsonc.without(text, servers.value, gone)
        check = Config.of_text(config.rel, after)
        if check.problem or check.root is None:
            raise _refused(config.rel, "taken out")
        if check.root.shape() != _shape_without(config.root, [gone]):
            raise _refused(config.rel, "taken out")
        config = check
    return config.text


def _cut_placed(
    config: Config, ours: list[jsonc.Member], placed: Placed
) -> tuple[str | None, jsonc.Member]:
    """The text without the span the install placed, where it still stands (None when the
    text around the entry changed), and the member it took out."""
    servers = config.servers
    assert servers is not None
    if placed.servers and all(any(m is o for o in ours) for m in servers.value.members):
        return jsonc.cut(config.text, servers, placed.lead, placed.trail), servers
    for member in reversed(ours):
        after = jsonc.cut(config.text, member, placed.lead, placed.trail)
        if after is not None:
            return after, member
    return None, ours[-1]
