"""Stale citations: memory that cites repository paths which no longer exist.

An entry that names `src/cli/index.ts` or `docs/format.md:12` describes the code as it was
when the entry was written. Once git no longer tracks that file, the entry may mislead: it
is stale, and says which of its paths are gone.

The check compares the paths an entry cites with the files git tracks (`git ls-files`). The
list is read again only when git's index file changes (its size or mtime), and kept in
`.squad/memory/citations.cache` (git-ignored) between processes, so checking the entries of
a spawn costs a few stat calls and set lookups.

Only a citation the text relies on counts: a path the text itself says is gone ("`a/b.ts`
was not present", "deleted `a/b.ts`") does not make it stale when git agrees. Only a path
with a folder and a file extension is judged (`src/x.py`, not `x.py`: a bare
name may live in any folder), and only when its first folder is one the repository tracks
(`node_modules/x/index.js` or another project's `lib/a.rb` says nothing about this one).
Outside a git repository nothing is stale.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..context import Context
from ..errors import TiermemError
from ..index.protocol import Doc, Hit
from ..storage import files
from ..storage.layout import Layout

CACHE_NAME = "citations.cache"
_CACHE_HEAD = "tiermem-tracked 2"
GIT_TIMEOUT_SECONDS = 20
# A path: segments of word characters, dots and dashes joined by '/', the last with an
# extension that starts with a letter; then an optional line reference (`:12`, `:12:5`,
# `#L12`, `#L12-L20`). Not preceded by a character that would make it part of a URL, an
# absolute path or a longer word.
_PATH = re.compile(
    r"(?<![\w/.~:@%$-])"
    r"((?:\./)?\.?[\w@+-][\w.@+-]*(?:/[\w.@+-]+)*/[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7})"
    r"(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)?"
    r"(?![\w/@+-]|\.[A-Za-z0-9])"
)


# What a text says of a path it does not rely on: that the file is not there, or went.
_GONE_AFTER = re.compile(
    r"^[`'\")\]]*\s*(?:\w+\s+){0,3}?"
    r"(?:(?:was|is|were|are|has been|had been)\s+(?:not\s+(?:present|there|found|tracked|"
    r"in the repo\w*)|missing|absent|gone|deleted|removed)"
    r"|(?:does|did|do)\s*(?:n't|not)\s+exist|no longer exists?|never existed)\b",
    re.IGNORECASE,
)
_GONE_BEFORE = re.compile(
    r"\b(?:deleted|removed|missing|without|no such file|absent)\s+(?:the\s+)?(?:file\s+)?"
    r"[`'\"(\[]*$",
    re.IGNORECASE,
)
_GONE_REACH = 60


def cited_paths(text: str) -> list[str]:
    """The repository paths a text cites and relies on, each once, in order (line
    references dropped; a path the text says is not there, or was deleted, left out)."""
    if "/" not in text:
        return []  # most entries cite nothing: no need to scan them
    found: dict[str, None] = {}
    gone: set[str] = set()  # a path the text says anywhere is not there, it does not rely on
    for match in _PATH.finditer(text):
        path = match.group(1).removeprefix("./")
        if ".." in path.split("/"):
            continue
        found.setdefault(path, None)
        if _said_gone(text, match.start(), match.end()):
            gone.add(path)
    return [p for p in found if p not in gone]


def _said_gone(text: str, start: int, end: int) -> bool:
    """Whether the words around a cited path say the file is not there (the text then
    does not rely on it)."""
    after = text[end : end + _GONE_REACH]
    before = text[max(0, start - _GONE_REACH) : start]
    return bool(_GONE_AFTER.match(after) or _GONE_BEFORE.search(before))


@dataclass(frozen=True, slots=True)
class Tracked:
    """The files git tracks, relative to the repository's top, and where the store sits."""

    files: frozenset[str]
    # First folders of tracked files, seen from the repository's top and from the store's
    # root: a citation is judged when it starts in one of them.
    tops: frozenset[str]
    prefix: str  # the store's root relative to the repository's top ("" or "sub/dir/")

    @classmethod
    def of(cls, paths: list[str], prefix: str) -> Tracked:
        """The tracked set of a list of paths."""
        tops = {p.split("/", 1)[0] for p in paths if "/" in p}
        if prefix:
            inner = [p[len(prefix) :] for p in paths if p.startswith(prefix)]
            tops |= {p.split("/", 1)[0] for p in inner if "/" in p}
        return cls(frozenset(paths), frozenset(tops), prefix)

    def missing(self, paths: list[str]) -> list[str]:
        """The cited paths that the repository's tracked files do not hold."""
        return [p for p in paths if self._judged(p) and not self._present(p)]

    def _judged(self, path: str) -> bool:
        return path.split("/", 1)[0] in self.tops

    def _present(self, path: str) -> bool:
        return path in self.files or self.prefix + path in self.files


# Tracked sets already read by this process, by git index file: (its stamp, the set).
_SEEN: dict[str, tuple[str, Tracked]] = {}


def tracked(layout: Layout) -> Tracked | None:
    """What git tracks in the repository holding the store; None outside git."""
    found = _git_index(layout.root)
    if found is None:
        return None
    top, index = found
    try:
        st = index.stat()
    except OSError:
        return None  # a repository with nothing added yet: nothing to judge by
    stamp = f"{index}:{st.st_size}:{st.st_mtime_ns}"
    seen = _SEEN.get(str(index))
    if seen is not None and seen[0] == stamp:
        return seen[1]
    result = _read_cache(layout, stamp) or _list(layout, top, stamp)
    if result is not None:
        _SEEN[str(index)] = (stamp, result)
    return result


def stale_paths(ctx: Context, doc: Doc) -> list[str]:
    """The repository paths an entry cites that git no longer tracks (empty: not stale)."""
    known = tracked(ctx.layout)
    if known is None:
        return []
    return known.missing(cited_paths(f"{doc.title}\n{doc.text}"))


def fresh_first(ctx: Context, hits: Sequence[Hit]) -> tuple[list[Hit], dict[str, list[str]]]:
    """Ranked hits with each stale one moved after the fresh ones of equal score (the order
    is otherwise kept), and the stale ones' missing paths by id."""
    known = tracked(ctx.layout)
    if known is None:
        return list(hits), {}
    marks = {
        h.doc.id: gone
        for h in hits
        if (gone := known.missing(cited_paths(f"{h.doc.title}\n{h.doc.text}")))
    }
    if not marks:
        return list(hits), marks
    return sorted(hits, key=lambda h: (-h.score, h.doc.id in marks)), marks


def _git_index(root: Path) -> tuple[Path, Path] | None:
    """(repository top, its index file) of the repository holding a folder."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git / "index"
        if dot_git.is_file():  # a worktree or submodule: `gitdir: <path>`
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = Path(line.removeprefix("gitdir:").strip())
            return folder, (folder / git_dir if not git_dir.is_absolute() else git_dir) / "index"
    return None


def _prefix(layout: Layout, top: Path) -> str:
    try:
        rel = layout.root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def git_output(top: Path, *args: str, timeout: float = GIT_TIMEOUT_SECONDS) -> bytes | None:
    """What a git command prints in the repository at `top`; None without git or a
    repository, when it fails, or after `timeout` seconds. The caller's own GIT_* settings are
    not passed on: the answer is about `top`, whatever repository the command runs in."""
    import subprocess  # only a stale cache or an import asks git: most commands never start it

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(
            ["git", "-C", str(top), *args],
            capture_output=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _list(layout: Layout, top: Path, stamp: str) -> Tracked | None:
    """Ask git for the tracked files, and keep the answer for the next process."""
    listed = git_output(top, "ls-files", "-z")
    if listed is None:
        return None
    paths = [p for p in listed.decode("utf-8", "replace").split("\0") if p]
    result = Tracked.of(paths, _prefix(layout, top))
    _write_cache(layout, stamp, result, paths)
    return result


def _cache_path(layout: Layout) -> Path:
    return layout.memory / CACHE_NAME


def _write_cache(layout: Layout, stamp: str, known: Tracked, paths: list[str]) -> None:
    """NUL-separated: a version, the git index stamp, the prefix, the first folders joined
    by '/' (kept, not recomputed: that is most of the cost of reading the list), the paths."""
    if not layout.memory.is_dir():
        return
    head = [_CACHE_HEAD, stamp, known.prefix, "/".join(sorted(known.tops))]
    with contextlib.suppress(OSError, TiermemError):  # a cache: the next spawn asks git again
        files.atomic_write(_cache_path(layout), "\0".join(head + paths))


def _read_cache(layout: Layout, stamp: str) -> Tracked | None:
    try:
        data = files.read_bytes(_cache_path(layout))
        text = data.decode("utf-8") if data is not None else ""
    except (OSError, UnicodeDecodeError, TiermemError):
        return None
    parts = text.split("\0")
    if len(parts) < 4 or parts[0] != _CACHE_HEAD or parts[1] != stamp:
        return None
    tops = frozenset(t for t in parts[3].split("/") if t)
    return Tracked(frozenset(p for p in parts[4:] if p), tops, parts[2])
