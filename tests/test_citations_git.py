"""Where stale citations are judged from: git's own answer, the cache of it, and the odd
repositories a store sits in. Whatever git or the cache says wrongly, the answer is a
judgement of nothing or the truth, never a stale mark on a file that is there."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tiermem.index.protocol import Doc
from tiermem.memory import Memory
from tiermem.storage.layout import Layout
from tiermem.team import citations
from tiermem.team.citations import stale_paths, tracked

CITING = "Moved the parser from src/app.py to src/gone.py; see docs/guide.md:3."


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, text=True
    )
    return done.stdout


def tracked_repo(root: Path, store_under: str = "") -> Memory:
    """A repository tracking src/ and docs/guide.md, its store at `store_under`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for rel in ("src/app.py", "src/util.py", "docs/guide.md", f"{store_under}lib/util.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "files")
    citations._SEEN.clear()
    made, _ = Memory.init(root / store_under if store_under else root)
    return made


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Memory]:
    made = tracked_repo(tmp_path / "repo")
    yield made
    made.close()


def doc(text: str) -> Doc:
    return Doc("c-0000000001", "cold", "ada", ".squad/memory/cold/ada.md", "Title", text)


def test_only_the_file_git_does_not_track_is_stale(repo: Memory) -> None:
    assert stale_paths(repo.context, doc(CITING)) == ["src/gone.py"]


@pytest.mark.parametrize(
    "cache",
    [
        b"",
        b"not the cache at all",
        b"\xff\xfe\x00\x00",
        b"tiermem-tracked 1\0stamp\0\0src\0src/gone.py",
        b"tiermem-tracked 2\0an older stamp\0\0src\0src/gone.py",
    ],
    ids=["empty", "text", "not utf-8", "another version", "another stamp"],
)
def test_a_cache_that_does_not_fit_is_asked_of_git_again(repo: Memory, cache: bytes) -> None:
    tracked(repo.layout)
    path = repo.layout.memory / citations.CACHE_NAME
    path.write_bytes(cache)
    citations._SEEN.clear()  # as a new process finds it
    known = tracked(repo.layout)
    assert known is not None and "src/app.py" in known.files and "src/gone.py" not in known.files
    assert stale_paths(repo.context, doc(CITING)) == ["src/gone.py"]
    assert path.read_bytes() != cache  # written again from git's answer


def test_a_store_below_the_top_judges_its_own_paths_and_the_repositorys(tmp_path: Path) -> None:
    mem = tracked_repo(tmp_path / "mono", store_under="services/api/")
    try:
        text = "lib/util.py and lib/missing.py; src/app.py and src/nope.py"
        assert stale_paths(mem.context, doc(text)) == ["lib/missing.py", "src/nope.py"]
        known = tracked(mem.layout)
        assert known is not None and known.prefix == "services/api/"
    finally:
        mem.close()


@pytest.mark.parametrize(
    "dot_git",
    [b"not a gitdir line\n", b"gitdir: /nowhere/at/all\n", b"\xff\xfe"],
    ids=["no gitdir", "gitdir missing", "not utf-8"],
)
def test_a_git_file_that_leads_nowhere_judges_nothing(tmp_path: Path, dot_git: bytes) -> None:
    (tmp_path / ".git").write_bytes(dot_git)
    mem, _ = Memory.init(tmp_path)
    try:
        citations._SEEN.clear()
        assert tracked(mem.layout) is None
        assert stale_paths(mem.context, doc(CITING)) == []
    finally:
        mem.close()


def test_a_git_that_fails_judges_nothing_and_caches_nothing(
    repo: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo.layout.memory / citations.CACHE_NAME).unlink(missing_ok=True)
    citations._SEEN.clear()
    monkeypatch.setenv("PATH", "/nonexistent")  # no git to ask
    assert tracked(Layout(repo.root)) is None
    assert stale_paths(repo.context, doc(CITING)) == []
    assert not (repo.layout.memory / citations.CACHE_NAME).exists()


def test_a_file_removed_from_git_becomes_stale_at_once(repo: Memory) -> None:
    assert stale_paths(repo.context, doc(CITING)) == ["src/gone.py"]
    git(repo.root, "rm", "-q", "src/app.py")
    assert stale_paths(repo.context, doc(CITING)) == ["src/app.py", "src/gone.py"]


def test_a_folder_git_no_longer_tracks_is_judged_no_more(repo: Memory) -> None:
    """A citation is judged only under a first folder git tracks: with docs/ gone, a cited
    docs/ path may be a file of another repository, so it is not marked."""
    git(repo.root, "rm", "-q", "docs/guide.md")
    assert stale_paths(repo.context, doc(CITING)) == ["src/gone.py"]


def test_the_spawn_of_an_agent_marks_a_stale_entry_with_what_is_gone(repo: Memory) -> None:
    repo.hot_set("ada", "Refactor the parser")
    repo.hot_add("ada", "note", "The parser moved from src/app.py to src/gone.py last week.")
    repo.end_session("ada")
    result = repo.spawn("ada", "refactor the parser in src", include_cold=True)
    stale = {entry: paths for entry, paths in result.stale.items() if paths}
    assert list(stale.values()) == [["src/gone.py"]]
