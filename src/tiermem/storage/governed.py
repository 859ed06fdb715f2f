"""Squad's governed memory, read as the team's memory: never written, never moved.

Squad 0.10 (squad-sdk 0.13) keeps governed memories as markdown files with a front matter
block, as its `LocalMemoryStore.renderMemoryFile` writes them::

    ---
    id: 4f1c1d8d-e176-45f2-bddf-2dc11802f779
    class: LOCAL
    loadGuidance: [ON-DEMAND]
    title: "Staging database"
    author: "eecom"
    createdAt: 2026-03-01T09:15:09.795Z
    metadata: {}
    ---

    The staging database listens on port 5433.

`squad memory write` (and the `memory.*` MCP tools) puts a LOCAL memory in
`.squad/memory/local/`, a POLICY in `.squad/memory/policy-inbox/` and a DECISION in the
decision inbox, `.squad/decisions/inbox/` (which Scribe merges into `decisions.md`);
`semantic-inbox/` is made for COPILOT_MEMORY. `squad memory promote` marks the memory it
replaced `status: superseded` (`loadGuidance: [ARCHIVE]`); `squad memory delete` removes the
file and leaves a tombstone in `tombstones/`.

Each file is one entry of the team, its id Squad's: LOCAL and COPILOT_MEMORY a `learning`,
POLICY a `policy`, DECISION a `decision`, dated by `createdAt`, its author said in its text
(so search finds it by author too) and in where it came from, its Squad class and load
guidance as tags. The index reads these folders beside the tier files, as the wiki (the
team's standing knowledge), and keeps in step as Squad writes more; no step of tiermem
writes, moves or deletes them (`forget` names Squad's command instead). A file of the
decision inbox without Squad's front matter is an agent's note for Scribe's merge, not a
governed memory, and is left to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import UsageError
from .clock import format_time, parse_time
from .entries import ID, Entry, content_id
from .layout import TEAM, Layout

# Where Squad keeps governed memory files, from `.squad/`: (folder, what it holds).
FOLDERS = (
    ("memory/local", "LOCAL"),
    ("memory/policy-inbox", "POLICY"),
    ("memory/semantic-inbox", "COPILOT_MEMORY"),
    ("decisions/inbox", "DECISION"),
)
# Squad's classes as tiermem's; TRANSIENT and FORBIDDEN are never stored by Squad.
CLASSES = {"LOCAL": "learning", "POLICY": "policy", "DECISION": "decision"}
CLASSES["COPILOT_MEMORY"] = "learning"
TAG = "squad-memory"  # every governed entry carries it: how the rest of tiermem tells them
ALWAYS = "always"  # the tag of a memory whose load guidance is ALWAYS
_RETIRED_GUIDANCE = ("ARCHIVE", "NEVER")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(?P<body>(?:.*\r?\n){1,60}?)---[ \t]*(?:\r?\n|\Z)")


def folders(layout: Layout) -> list[Path]:
    """The folders Squad keeps governed memory in (whether there or not)."""
    return [layout.squad / name for name, _ in FOLDERS]


def is_governed(layout: Layout, path: Path) -> bool:
    """Whether a path lies in one of Squad's governed memory folders."""
    return path.parent in folders(layout)


def fields(text: str) -> tuple[dict[str, str], str]:
    """The front matter's `key: value` pairs (keys as written, quotes dropped) and the text
    after it; ({}, text) without one."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    found: dict[str, str] = {}
    for line in match.group("body").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line[:1].isspace():
            found.setdefault(key.strip(), _unquoted(value.strip()))
    return found, text[match.end() :]


def _unquoted(value: str) -> str:
    """A YAML scalar as Squad writes it: JSON-quoted, or bare."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        import json

        try:
            loaded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return loaded if isinstance(loaded, str) else value[1:-1]
    return value


def entry(text: str, rel: str) -> Entry | None:
    """The entry of one governed memory file (None: no governed front matter, or a class
    Squad never keeps)."""
    found, body = fields(text)
    squad_class = found.get("class", "").upper()
    if squad_class not in CLASSES or not found.get("title", "").strip():
        return None
    title = " ".join(found["title"].split())[:200]
    author = " ".join(found.get("author", "").split())[:64] or "unknown"
    guidance = found.get("loadGuidance", "").strip("[] ").upper()
    retired = found.get("status", "").lower() == "superseded" or guidance in _RETIRED_GUIDANCE
    said = f"Written by {author} in Squad's governed memory ({squad_class})."
    tags = [TAG, f"squad-{squad_class.lower()}"]
    if guidance == "ALWAYS":
        tags.append(ALWAYS)
    return Entry(
        _id(found.get("id", ""), rel),
        CLASSES[squad_class],
        title,
        f"{said}\n\n{body.strip()}".rstrip(),
        agent=TEAM,
        created=_time(found.get("createdAt", "")),
        status="superseded" if retired else "",
        tags=tuple(tags),
        sources=(rel,),
    )


def holding(layout: Layout, entry_id: str) -> str:
    """The file (from the root) of the governed memory with this id ('' when none)."""
    from ..errors import TiermemError
    from . import files

    for folder in folders(layout):
        try:
            found_files = files.memory_files(folder) if files.is_folder(folder) else []
        except TiermemError:
            continue
        for path in found_files:
            rel = layout.relative(path)
            try:
                found = entry(files.read_text(layout, path) or "", rel)
            except TiermemError:
                continue
            if found is not None and found.id == entry_id:
                return rel
    return ""


def author(text: str) -> str:
    """Who wrote a governed memory, as its front matter says ('' when it does not)."""
    return fields(text)[0].get("author", "")


def _id(squads: str, rel: str) -> str:
    """Squad's id where tiermem can show it as one, else one made from the file's path."""
    return squads if ID.fullmatch(squads) else content_id("g", rel)


def _time(value: str) -> str:
    """Squad's `createdAt` as every entry's time ('' when it is none)."""
    try:
        return format_time(parse_time(value)) if value else ""
    except (UsageError, ValueError, OverflowError):
        return ""
