"""Stale citations: the paths an entry cites, checked against what git tracks, cached."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tiermem.index.protocol import Doc, Hit
from tiermem.memory import Memory
from tiermem.storage.layout import Layout
from tiermem.team import citations
from tiermem.team.citations import Tracked, cited_paths, fresh_first, stale_paths, tracked


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Fixed `src/cli/index.ts` and docs/format.md:12.", ["src/cli/index.ts", "docs/format.md"]),
        ("see ./scripts/publish.mjs#L12-L20", ["scripts/publish.mjs"]),
        (
            ".github/workflows/ci.yml:3:7; .squad/decisions.md",
            [".github/workflows/ci.yml", ".squad/decisions.md"],
        ),
        (
            "packages/squad-cli/package.json (twice: packages/squad-cli/package.json)",
            ["packages/squad-cli/package.json"],
        ),
        ("https://github.com/a/b/blob/main/src/a.ts and file://x/y.md", []),
        ("/usr/lib/x.so ~/.copilot/mcp-config.json ../etc/passwd.txt", []),
        ("nap.ts README.md v0.9.1 1/2.5 and/or src/**/*.ts", []),
        ("a/b.tar.gz, src/x.py.", ["a/b.tar.gz", "src/x.py"]),
        # A path the text says is not there is no citation it relies on.
        ("The file src/pipeline/old.ts was not present in the checkout.", []),
        ("`docs/setup.md` does not exist yet; wrote the steps in README.md.", []),
        (
            "Deleted `src/old/feed.ts` and moved its code to src/feed/index.ts.",
            ["src/feed/index.ts"],
        ),
        ("Removed the dead branch in src/cli/main.ts.", ["src/cli/main.ts"]),
    ],
)
def test_cited_paths(text: str, paths: list[str]) -> None:
    assert cited_paths(text) == paths


def test_only_paths_under_a_tracked_first_folder_are_judged() -> None:
    known = Tracked.of(["src/a.py", "docs/format.md", "README.md"], "")
    cited = ["src/a.py", "src/gone.py", "docs/old.md", "node_modules/x/index.js", "lib/a.rb"]
    assert known.missing(cited) == ["src/gone.py", "docs/old.md"]


def test_a_store_below_the_repository_top_judges_paths_from_both() -> None:
    known = Tracked.of(["app/src/a.py", "tools/run.sh"], "app/")
    assert known.missing(
        ["src/a.py", "src/b.py", "app/src/a.py", "tools/run.sh", "tools/x.sh"]
    ) == [
        "src/b.py",
        "tools/x.sh",
    ]


def git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Memory]:
    git(tmp_path, "init", "-q")
    for rel in ("src/app.py", "src/util.py", "docs/guide.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    git(tmp_path, "add", "src", "docs")
    git(tmp_path, "commit", "-q", "-m", "files")
    citations._SEEN.clear()
    mem, _ = Memory.init(tmp_path)
    yield mem
    mem.close()


def doc(text: str) -> Doc:
    return Doc("c-0000000001", "cold", "ada", ".squad/memory/cold/ada.md", "Title", text)


def test_an_entry_citing_a_removed_file_is_stale_with_what_is_missing(repo: Memory) -> None:
    entry = doc("Moved the parser from src/app.py to src/util.py; see docs/guide.md:3.")
    assert stale_paths(repo.context, entry) == []
    git(repo.root, "rm", "-q", "src/app.py")
    assert stale_paths(repo.context, entry) == ["src/app.py"]


def test_the_tracked_set_is_cached_across_processes_until_the_git_index_changes(
    repo: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tracked(repo.layout)
    assert first is not None and "src/app.py" in first.files
    assert (repo.layout.memory / citations.CACHE_NAME).is_file()
    citations._SEEN.clear()  # as a new process finds it

    def no_git(*_: object, **__: object) -> None:
        raise AssertionError("git was asked again although its index did not change")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert tracked(repo.layout) == first
    monkeypatch.undo()
    (repo.root / "src" / "new.py").write_text("y\n")
    git(repo.root, "add", "src/new.py")
    again = tracked(repo.layout)
    assert again is not None and "src/new.py" in again.files


def test_outside_a_git_repository_nothing_is_stale(tmp_path: Path) -> None:
    mem, _ = Memory.init(tmp_path)
    try:
        assert tracked(mem.layout) is None
        assert stale_paths(mem.context, doc("src/app.py is gone")) == []
    finally:
        mem.close()


def test_a_repository_without_an_index_judges_nothing(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert tracked(Layout(tmp_path)) is None


def test_a_worktree_finds_its_index_through_its_git_file(repo: Memory, tmp_path: Path) -> None:
    other = tmp_path.parent / f"{tmp_path.name}-worktree"
    git(repo.root, "worktree", "add", "-q", str(other))
    found = tracked(Layout(other))
    assert found is not None and "docs/guide.md" in found.files


def test_stale_hits_go_after_fresh_hits_of_equal_score_only(repo: Memory) -> None:
    git(repo.root, "rm", "-q", "src/app.py")
    stale, fresh = doc("Lives in src/app.py."), doc("Lives in src/util.py.")
    stale_best = Hit(replace(stale, id="c-000000000a"), 9.0)
    tied = [
        Hit(replace(stale, id="c-000000000b"), 5.0),
        Hit(replace(fresh, id="c-000000000c"), 5.0),
    ]
    weaker = Hit(replace(fresh, id="c-000000000d"), 1.0)
    ordered, marks = fresh_first(repo.context, [stale_best, *tied, weaker])
    assert [h.doc.id for h in ordered] == [
        "c-000000000a",
        "c-000000000c",
        "c-000000000b",
        "c-000000000d",
    ]
    assert marks == {"c-000000000a": ["src/app.py"], "c-000000000b": ["src/app.py"]}


def test_text_saying_a_file_is_not_there_is_not_stale_when_git_agrees(repo: Memory) -> None:
    said = doc("Looked for src/legacy.py: the file src/legacy.py was not present, so src/app.py")
    assert stale_paths(repo.context, said) == []
    relied = doc("The reader lives in src/legacy.py and is called from src/app.py.")
    assert stale_paths(repo.context, relied) == ["src/legacy.py"]
