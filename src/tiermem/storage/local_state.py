"""This clone's own state, kept where Squad never writes: `.squad/memory/tiermem-local/`.

The state is the record of when entries were last used (`used`), the key that seals the
index this clone builds (`clone-key`) and the report page (`report/`); the folder ignores
itself in git. A store made by an earlier tiermem kept them in `.squad/memory/local/`, and
its `.gitignore` ignored that folder whole. Squad 0.10 keeps its governed memory in the same
`local/` (`squad memory write --class LOCAL`, the `memory.*` tools), committed so that every
teammate has it: ignored, a memory Squad wrote there never reached anyone. So a store made
before is moved on its next write, or by `tiermem doctor --repair` (`move`): the use record
joins the one in `tiermem-local/`, the report moves, the key goes (the next read makes one
and builds the index again: the index is a cache), the ignore file tiermem put in `local/`
and the store's `local/` rule go. Only files tiermem wrote, by name (and, for the ignore
file, by content), are touched; everything of Squad's in `local/` stays byte for byte, and
so does the folder while it holds anything or Squad keeps governed memory beside it. Until
the move, reads still count the uses recorded in `local/used` (`legacy_used`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from . import clone, files
from .layout import LEGACY_LOCAL_FOLDER, LOCAL_FOLDER, Layout

# What an earlier tiermem wrote in `local/`, by name.
_USED = "used"
_REPORT = "report"
_REPORT_FILES = ("report.html", ".gitignore")
# The lines an earlier `tiermem init` wrote in the store's .gitignore for that folder.
LEGACY_RULE = f"{LEGACY_LOCAL_FOLDER}/"
_LEGACY_COMMENT = (
    "# This clone's own state (when entries were last used, the key that seals its index)."
)
_COMMENT = "# This clone's own state: its record of use, its index's key, its report.\n"
# Squad's own files beside `local/`: while one is there, `local/` is Squad's folder too.
_SQUAD_MARKS = ("index.json", "config.json", "audit.jsonl")


def legacy_used(layout: Layout) -> Path:
    """Where an earlier tiermem recorded this clone's use of entries."""
    return layout.legacy_local / _USED


def left_behind(layout: Layout) -> list[str]:
    """What of the earlier layout is still there, as paths from the root ([] when none):
    tiermem's files in `local/`, and the store's rule that ignores `local/`."""
    found = [layout.relative(p) for p in _legacy_files(layout)]
    if _ignores_legacy(layout):
        found.append(f"{layout.relative(layout.memory / '.gitignore')}: {LEGACY_RULE}")
    return found


def hides_squad(layout: Layout) -> bool:
    """Whether something tiermem wrote makes git ignore Squad's `local/`: the store's rule,
    or the ignore-everything file an earlier tiermem put in the folder."""
    return _ignores_legacy(layout) or _our_ignore_file(layout) is not None


def move(layout: Layout) -> list[str]:
    """Move this clone's state out of `local/`; return what was moved or removed (paths from
    the root), [] when there was nothing to move. Never follows a link."""
    done: list[str] = []
    if _folder(layout.legacy_local):
        done += _move_used(layout)
        done += _drop_key(layout)
        done += _move_report(layout)
        ignore = _our_ignore_file(layout)
        if ignore is not None:
            files.unlink(ignore)
            done.append(layout.relative(ignore))
        _drop_empty_folder(layout)
    if _drop_rule(layout):
        done.append(f"{layout.relative(layout.memory / '.gitignore')}: {LEGACY_RULE}")
    return done


_folder = files.is_folder  # a link is neither: it is never followed, nor removed
_file = files.is_file


def _legacy_files(layout: Layout) -> list[Path]:
    if not _folder(layout.legacy_local):
        return []
    names = (_USED, clone.KEY_NAME)
    found = [layout.legacy_local / n for n in names if _file(layout.legacy_local / n)]
    report = layout.legacy_local / _REPORT
    if _folder(report):
        found += [report / n for n in _REPORT_FILES if _file(report / n)]
    ignore = _our_ignore_file(layout)
    return found + ([ignore] if ignore is not None else [])


def _our_ignore_file(layout: Layout) -> Path | None:
    """The ignore-everything file an earlier tiermem wrote in `local/` (by its content)."""
    path = layout.legacy_local / ".gitignore"
    if not _folder(layout.legacy_local) or not _file(path):
        return None
    return path if files.read_bytes(path) == clone.IGNORE_ALL.encode() else None


def _move_used(layout: Layout) -> list[str]:
    """The earlier record of use joins this clone's record (lines appended, whole)."""
    old = legacy_used(layout)
    if not _file(old):
        return []
    with files.locked(layout, layout.used), files.locked(layout, old):
        data = files.read_bytes(old) or b""
        if data.strip():
            clone.ready(layout)
            files.append(layout.used, data if data.endswith(b"\n") else data + b"\n")
        files.unlink(old)
    return [layout.relative(old)]


def _drop_key(layout: Layout) -> list[str]:
    """The earlier key goes: the next read makes one in `tiermem-local/` (and builds the
    index again, which the new key seals)."""
    old = layout.legacy_local / clone.KEY_NAME
    if not _file(old):
        return []
    files.unlink(old)
    return [layout.relative(old)]


def _move_report(layout: Layout) -> list[str]:
    """The report page and its ignore file move to `tiermem-local/report/` (an older page
    where a newer one is already there is removed)."""
    old = layout.legacy_local / _REPORT
    if not _folder(old):
        return []
    done = []
    target = layout.local / _REPORT
    for name in _REPORT_FILES:
        path = old / name
        if not _file(path):
            continue
        if files.exists(target / name):
            files.unlink(path)
        else:
            clone.ready(layout)
            files.ensure_folder(target)
            files.move(path, target / name)
        done.append(layout.relative(path))
    _remove_if_empty(old)
    return done


def _drop_empty_folder(layout: Layout) -> None:
    """`local/` goes when tiermem emptied it and Squad keeps no governed memory here; else
    it is Squad's, and stays."""
    if any(files.exists(layout.memory / name) for name in _SQUAD_MARKS):
        return
    _remove_if_empty(layout.legacy_local)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (someone's files), or gone: left be
        folder.rmdir()


def _ignores_legacy(layout: Layout) -> bool:
    text = _store_ignore(layout)
    return text is not None and LEGACY_RULE in (line.strip() for line in text.splitlines())


def _store_ignore(layout: Layout) -> str | None:
    path = layout.memory / ".gitignore"
    return files.read_text(layout, path) if _file(path) else None


def _drop_rule(layout: Layout) -> bool:
    """The store's `local/` rule out of its .gitignore (with the comment tiermem wrote above
    it), this layout's in its place; every other line stays as it is."""
    text = _store_ignore(layout)
    if text is None or not _ignores_legacy(layout):
        return False
    lines = text.splitlines(keepends=True)
    have = {line.strip() for line in lines}
    new = [] if f"{LOCAL_FOLDER}/" in have else [_COMMENT, f"{LOCAL_FOLDER}/\n"]
    kept: list[str] = []
    for line in lines:
        if line.strip() == LEGACY_RULE:
            if kept and kept[-1].strip() == _LEGACY_COMMENT:
                kept.pop()
            kept += new  # the rule of this layout in its place
            new = []
            continue
        kept.append(line)
    files.atomic_write(layout.memory / ".gitignore", "".join(kept))
    return True
