"""The install record, `.squad/memory/tiermem-install.json`: what an install did that an
uninstall needs (what it put in, where its MCP entries sit, the folders it made, the skill
texts it replaced).

The record is committed with the team's files, so it never holds a user's text: a file the
team keeps out of git (an `.mcp.json` whose `env` holds a token) must not reach git through
it. Of an MCP file it keeps where tiermem's entry sits (the blanks and comma around it,
`placed`), never the file; of a skill it replaced, only Squad's own released text (known by
its digest), and nothing at all when it was the copy Squad keeps in `.squad/templates/skills/`
(uninstall takes it from there again). Every text it keeps is passed through the redaction
rules as it is written, and one they would change is left out.

The record also comes with every clone, so anyone can write one. Nothing in it is trusted to
name what tiermem may delete or put back. A record is read whole and checked before anything
is written: every path it names must be one an install puts something in (`install_paths`),
every folder one an install can make, every place only blanks and commas, and every text it
keeps one tiermem can vouch for (Squad's own tiered-memory skill, by its digest or the copy
Squad keeps). A record that fails any check is refused in one line, and the command writes
nothing. Texts an earlier tiermem kept (MCP files, Squad's spawn lines) are read, never used,
and left out of the record the next install writes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import UsageError
from ...text.redact import redact
from . import install_paths, install_texts

if TYPE_CHECKING:
    from .repo_paths import Repo

_KEYS = {"about", "coordinator", "store", "installed", "created_dirs", "originals", "placed"}
_STORE_STATES = ("", "created", "found")
_MAX_ITEMS = 10_000
# The design-only tiered-memory skill as Squad ships it: squad-sdk 0.13.1's (which `squad
# init` writes) and squad-cli 0.10.0's.
SQUAD_SKILL_DIGESTS = frozenset(
    {
        "f9aa7ffa3685a3aff3bce044b52b13c96ec04db6082fd5b3a9b8a6d8fc769a60",
        "9ee36cd7dac5439cc2dbd872dc3bd7a2afedfd6cf02fc2a96e49f0b8624bdbde",
    }
)


# What an insertion sets around an MCP entry: blanks, line ends and one comma.
_PLACE = re.compile(r"[ \t\r\n,]{0,400}")


@dataclass(frozen=True)
class Placed:
    """Where an install put tiermem's entry in an MCP file: the text set before and after
    it, and whether the member holding the servers came with it (the file had none)."""

    lead: str
    trail: str
    servers: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"lead": self.lead, "trail": self.trail, "servers": self.servers}


@dataclass
class Record:
    """What an install did that uninstall needs: what it put in where, and what it made."""

    coordinator: bool = False
    store: str = ""  # "created" or "found" (a store that existed before the install)
    installed: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    # A skill's text before the install (Squad's released one), or None: there was no file.
    # An MCP file the install made is kept as None too.
    originals: dict[str, str | None] = field(default_factory=dict)
    placed: dict[str, Placed] = field(default_factory=dict)

    @classmethod
    def load(cls, repo: Repo) -> Record:
        """The repository's record (empty when there is none), refused unless every part of
        it is one an install writes."""
        raw = repo.text(install_paths.MANIFEST)
        return cls() if raw is None else cls.parse(raw, repo)

    @classmethod
    def parse(cls, raw: str, repo: Repo) -> Record:
        """A record's text, refused unless every part of it is one an install writes."""
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise refused(f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise refused("is not a JSON object")
        return _checked(data, repo)

    def render(self) -> bytes:
        data: dict[str, Any] = {
            "about": "Written by `tiermem squad install`; `tiermem squad install --uninstall` "
            "uses it to take out what the install put in. Commit it with the files it "
            "describes.",
            "coordinator": self.coordinator,
            "store": self.store,
            "installed": sorted({rel for rel in self.installed if _clean(rel)}),
            "created_dirs": sorted({rel for rel in self.created_dirs if _clean(rel)}),
            "originals": {
                rel: text
                for rel, text in sorted(self.originals.items())
                if _clean(rel) and (text is None or _clean(text))
            },
            "placed": {rel: p.as_json() for rel, p in sorted(self.placed.items()) if _clean(rel)},
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _clean(text: str) -> bool:
    """Whether the redaction rules leave a text as it is (one they would change is not
    recorded: the record is committed)."""
    return redact(text)[0] == text


def refused(why: str) -> UsageError:
    """One line: the record is refused, why, and that nothing was written."""
    return UsageError(
        f"{install_paths.MANIFEST} {why}; tiermem acts on no install record but one it wrote as it "
        "writes them (nothing was written)"
    )


def _checked(data: dict[str, Any], repo: Repo) -> Record:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise refused(f"has a field tiermem does not write: {unknown[0]!r}")
    coordinator = data.get("coordinator", False)
    if not isinstance(coordinator, bool):
        raise refused("has a coordinator that is not true or false")
    store = data.get("store", "")
    if store not in _STORE_STATES:
        raise refused(f"has a store state {str(store)[:40]!r} tiermem does not write")
    installed = _paths(data, "installed", _installable)
    created = _paths(data, "created_dirs", lambda rel: rel in install_paths.CREATED_DIRS)
    originals = data.get("originals", {})
    if not isinstance(originals, dict) or len(originals) > len(_ORIGINALS):
        raise refused("has originals that are not those of the files an install replaces")
    for rel, text in originals.items():
        _check_original(repo, rel, text)
    kept = {
        rel: text
        for rel, text in originals.items()
        if rel in install_paths.SKILLS or (rel in _MCP and text is None)
    }
    return Record(coordinator, store, installed, created, kept, _placed(data))


def _placed(data: dict[str, Any]) -> dict[str, Placed]:
    """Where the record says the install put each MCP entry."""
    found = data.get("placed", {})
    if not isinstance(found, dict):
        raise refused("has placed that is not an object of MCP files")
    placed = {}
    for rel, place in found.items():
        if rel not in _MCP:
            raise refused(f"places an entry in {repr(rel)[:80]}, which is no MCP file")
        if not isinstance(place, dict) or set(place) != {"lead", "trail", "servers"}:
            raise refused(f"places the entry of {rel} in a way tiermem does not write")
        lead, trail, servers = place["lead"], place["trail"], place["servers"]
        if not all(isinstance(t, str) and _PLACE.fullmatch(t) for t in (lead, trail)):
            raise refused(f"places the entry of {rel} among more than blanks and a comma")
        if not isinstance(servers, bool):
            raise refused(f"places the entry of {rel} in a way tiermem does not write")
        placed[rel] = Placed(lead, trail, servers)
    return placed


def _paths(data: dict[str, Any], key: str, allowed: Any) -> list[str]:
    """A list of paths of the record, each one an install can have put there."""
    value = data.get(key, [])
    if not isinstance(value, list) or len(value) > _MAX_ITEMS:
        raise refused(f"has {key} that is not a list of paths")
    for rel in value:
        if not isinstance(rel, str) or not allowed(rel):
            shown = repr(rel)[:80]
            raise refused(f"names {shown} in {key}, which is no path an install makes")
    return list(value)


def _installable(rel: str) -> bool:
    if "#" in rel:
        key = rel.split("#", 1)[1]
        return key in install_texts.LINE_KEYS and install_paths.installable(rel)
    return install_paths.installable(rel)


_MCP = (install_paths.MCP_JSON, install_paths.VSCODE_MCP, install_paths.COPILOT_MCP)
_ORIGINALS = (*_MCP, *install_paths.SKILLS, install_paths.SPAWN_TEMPLATE)


def _check_original(repo: Repo, rel: object, text: object) -> None:
    """Refuse a kept text that is not one tiermem can vouch for as what was there. An MCP
    file's text, which an earlier tiermem kept, is never used: only its kind is checked."""
    if rel not in _ORIGINALS:
        raise refused(f"keeps a text for {repr(rel)[:80]}, a file no install replaces")
    if text is None:
        return
    if not isinstance(text, str):
        raise refused(f"keeps for {rel} something that is not a text")
    if rel in install_paths.SKILLS:
        if not is_squads_skill(repo, text):
            raise refused(f"keeps for {rel} a text that is not Squad's tiered-memory skill")
    elif rel == install_paths.SPAWN_TEMPLATE and not is_squads_spawn_lines(text):
        raise refused(f"keeps for {rel} lines that are not Squad's spawn lines")


def is_squads_skill(repo: Repo, text: str) -> bool:
    """Whether a skill's text is Squad's design-only tiered-memory skill: a release's (by
    digest) or the copy Squad keeps in `.squad/templates/skills/`."""
    return is_released_skill(text) or text == repo.text(install_paths.SQUAD_SKILL_COPY)


def is_released_skill(text: str) -> bool:
    """Whether a skill's text is the one a Squad release ships (by its digest)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest() in SQUAD_SKILL_DIGESTS


def is_squads_spawn_lines(text: str) -> bool:
    """Whether a text is Squad's two full-history spawn lines, indented as one."""
    lines = install_texts.SQUAD_SPAWN_LINES.splitlines(keepends=True)
    indent = re.match(r"[ \t]*", text)
    lead = indent.group(0) if indent else ""
    return text == "".join(lead + line for line in lines)
