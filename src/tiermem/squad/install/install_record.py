"""The install record, `.squad/memory/tiermem-install.json`: what an install did that an
uninstall needs (the texts it replaced, the folders it made).

The record is committed with the team's files, so it comes with every clone: anyone can
write one. Nothing in it is trusted to name what tiermem may delete or put back. A record is
read whole and checked before anything is written: every path it names must be one an
install puts something in (`install_paths`), every folder one an install can make, and every text it
keeps one tiermem can vouch for: Squad's own tiered-memory skill (by its digest, or the copy
Squad keeps in `.squad/templates/skills/`), Squad's two spawn lines as tiermem knows them, a
plain JSON object for an MCP configuration. A record that fails any check is refused in one
line, and the command writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import UsageError
from . import install_paths, install_texts, jsonc

if TYPE_CHECKING:
    from .repo_paths import Repo

_KEYS = {"about", "coordinator", "store", "installed", "created_dirs", "originals"}
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


@dataclass
class Record:
    """What an install did that uninstall needs: replaced texts and created folders."""

    coordinator: bool = False
    store: str = ""  # "created" or "found" (a store that existed before the install)
    installed: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    originals: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def load(cls, repo: Repo) -> Record:
        """The repository's record (empty when there is none), refused unless every part of
        it is one an install writes."""
        raw = repo.text(install_paths.MANIFEST)
        if raw is None:
            return cls()
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
            "uses it to put back what Squad wrote. Commit it with the files it describes.",
            "coordinator": self.coordinator,
            "store": self.store,
            "installed": sorted(set(self.installed)),
            "created_dirs": sorted(set(self.created_dirs)),
            "originals": dict(sorted(self.originals.items())),
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def keep_original(self, rel: str, current: bytes | None, ours: bool) -> None:
        """Remember what Squad had at `rel`, unless what is there now is tiermem's own."""
        if rel not in self.originals or not ours:
            self.originals[rel] = None if current is None else current.decode("utf-8")


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
    return Record(coordinator, store, installed, created, dict(originals))


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


_ORIGINALS = (
    install_paths.MCP_JSON,
    install_paths.VSCODE_MCP,
    *install_paths.SKILLS,
    install_paths.SPAWN_TEMPLATE,
)


def _check_original(repo: Repo, rel: object, text: object) -> None:
    """Refuse a kept text that is not one tiermem can vouch for as what was there."""
    if rel not in _ORIGINALS:
        raise refused(f"keeps a text for {repr(rel)[:80]}, a file no install replaces")
    if text is None:
        return
    if not isinstance(text, str):
        raise refused(f"keeps for {rel} something that is not a text")
    if rel in install_paths.SKILLS:
        if not is_squads_skill(repo, text):
            raise refused(f"keeps for {rel} a text that is not Squad's tiered-memory skill")
    elif rel == install_paths.SPAWN_TEMPLATE:
        if not is_squads_spawn_lines(text):
            raise refused(f"keeps for {rel} lines that are not Squad's spawn lines")
    elif not is_plain_json(text):
        raise refused(f"keeps for {rel} a text that is not a plain JSON object")


def is_squads_skill(repo: Repo, text: str) -> bool:
    """Whether a skill's text is Squad's design-only tiered-memory skill: a release's (by
    digest) or the copy Squad keeps in `.squad/templates/skills/`."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest in SQUAD_SKILL_DIGESTS or text == repo.text(install_paths.SQUAD_SKILL_COPY)


def is_squads_spawn_lines(text: str) -> bool:
    """Whether a text is Squad's two full-history spawn lines, indented as one."""
    lines = install_texts.SQUAD_SPAWN_LINES.splitlines(keepends=True)
    indent = re.match(r"[ \t]*", text)
    lead = indent.group(0) if indent else ""
    return text == "".join(lead + line for line in lines)


def is_plain_json(text: str) -> bool:
    """Whether a text is a JSON object (comments and trailing commas allowed, as VS Code
    writes its own) that every reader reads alike: no key twice.

    Uninstall puts such a text back only when it means what the file means without tiermem's
    entry, so that it can bring back nothing the file does not hold already.
    """
    try:
        data = jsonc.loads(text, unique=True)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict)
