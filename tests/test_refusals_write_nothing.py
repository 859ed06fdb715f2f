"""A refused command writes nothing, on a fresh clone too: not the clone's key, not the index,
not a folder for its output. Each of these refused after bringing the index up to date (on
a clone that had none: `tiermem-local/clone-key`, `tiermem-local/.gitignore` and
`index.sqlite` written), or after making the report's folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tiermem.memory import Memory

NOW = "2026-03-02T10:00:00Z"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as a fresh clone finds it: memory committed, no index, no local state."""
    root = tmp_path_factory.mktemp("fresh") / "repo"
    root.mkdir()
    mem, _ = Memory.init(root, now=NOW)
    mem.hot_set("flight", "Fix the build", why="CI is red")
    mem.hot_add("flight", "note", "The cache key misses the lock file")
    mem.end_session("flight")
    mem.wiki_write("release", "# Tag releases\nEvery release gets a tag.", by="flight")
    mem.close()
    for local in ("local", "tiermem-local"):  # this clone's own state, where it is kept
        shutil.rmtree(root / ".squad/memory" / local, ignore_errors=True)
    for path in (root / ".squad/memory").glob("index.sqlite*"):
        path.unlink()
    return root


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    """A copy of the fresh clone for one test."""
    copy = tmp_path / "repo"
    shutil.copytree(template, copy)
    return copy


def _files(root: Path) -> dict[str, bytes]:
    """Every file and folder under .squad but the lock folder, the index and the key too."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else b"<folder>"
        for p in sorted((root / ".squad").rglob("*"))
        if ".locks" not in p.parts
    }


REFUSED = [
    (("spawn", "flight", "--task", "Fix it", "--charter"), "no readable charter"),
    (("spawn", "flight", "--task", "Fix it", "--include-wiki", "../x"), "topic name"),
    (("forget", "c-0000000000"), "no entry c-0000000000"),
    (("forget", "c-0000000000", "--purge"), "no entry c-0000000000"),
    (("forget", "a-0000000000-0000000000", "--purge"), "no archived text"),
    (("forget", "a-0000000000"), "no archived text"),
]


@pytest.mark.parametrize(("args", "said"), REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_a_refused_command_on_a_fresh_clone_writes_nothing(
    root: Path, run_cli: Any, args: tuple[str, ...], said: str
) -> None:
    before = _files(root)
    code, out, err = run_cli("--root", str(root), "--now", NOW, *args)
    assert code == 2 and said in err and err.count("\n") == 1, (out, err)
    assert _files(root) == before


def test_a_section_that_is_not_in_its_record_is_refused_before_anything_is_written(
    root: Path, run_cli: Any
) -> None:
    record = next((root / ".squad/memory/archive/flight").glob("*.md")).stem
    before = _files(root)
    code, _, err = run_cli("--root", str(root), "forget", f"{record}#99", "--purge")
    assert code == 2 and "no archived text" in err
    assert _files(root) == before


def test_a_report_refused_for_a_damaged_config_writes_no_folder(root: Path, run_cli: Any) -> None:
    (root / ".squad/memory/config.toml").write_text("[cold\nttl_days = ?\n", encoding="utf-8")
    before = _files(root)
    code, _, err = run_cli("--root", str(root), "report")
    assert code == 2 and "config.toml:1" in err
    assert _files(root) == before


def test_what_a_refusal_would_have_found_is_found_when_it_is_there(
    root: Path, run_cli: Any
) -> None:
    record = next((root / ".squad/memory/archive/flight").glob("*.md")).stem
    code, out, err = run_cli("--root", str(root), "--now", NOW, "forget", record, "--purge")
    assert code == 0, err
    hits = Memory(root).search("cache key lock file", tier="cold")
    code, out, err = run_cli("--root", str(root), "--now", NOW, "forget", hits[0].id)
    assert code == 0 and "forgot" in out, err


def _tree(root: Path) -> dict[str, bytes]:
    """Every file and folder under .squad, the lock folder included."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else b"<folder>"
        for p in sorted((root / ".squad").rglob("*"))
    }


UNBLOCKS = [
    (("hot", "unblock", "flight", "nothing like it"), "no blocker of flight matches"),
    (("hot", "unblock", "flight", "h-0000000000"), "no blocker of flight matches"),
    (("hot", "unblock", "flight", "keys"), "2 blockers of flight match"),
    (("hot", "unblock", "nobody", "keys"), "unknown agent"),
]


@pytest.mark.parametrize(("args", "said"), UNBLOCKS, ids=[" ".join(a) for a, _ in UNBLOCKS])
def test_a_refused_unblock_on_a_fresh_clone_makes_not_even_the_lock_folder(
    template: Path, tmp_path: Path, run_cli: Any, args: tuple[str, ...], said: str
) -> None:
    root = tmp_path / "blocked"
    shutil.copytree(template, root)
    mem = Memory(root, now=NOW)
    mem.hot_add("flight", "blocker", "Waiting on the staging keys")
    mem.hot_add("flight", "blocker", "Waiting on the release keys", source="web")
    mem.close()
    shutil.rmtree(root / ".squad/memory/.locks")
    for local in ("local", "tiermem-local"):
        shutil.rmtree(root / ".squad/memory" / local, ignore_errors=True)
    for path in (root / ".squad/memory").glob("index.sqlite*"):
        path.unlink()
    before = _tree(root)
    code, out, err = run_cli("--root", str(root), "--now", NOW, *args)
    assert code == 2 and said in err and err.count("\n") == 1, (out, err)
    assert _tree(root) == before


def test_a_retirement_refused_on_a_fresh_clone_writes_nothing(tmp_path: Path, run_cli: Any) -> None:
    """`#0` is no id search gives (the first section's is the record's own), and a passage
    retired already is not retired again: both refused before the index is built."""
    import retirements

    root = tmp_path / "repo"
    record = retirements.record_store(root)
    code, _, err = run_cli("--root", str(root), "--now", NOW, "forget", f"{record}#2")
    assert code == 0, err
    for local in ("local", "tiermem-local"):
        shutil.rmtree(root / ".squad/memory" / local, ignore_errors=True)
    shutil.rmtree(root / ".squad/memory/.locks")
    for path in (root / ".squad/memory").glob("index.sqlite*"):
        path.unlink()
    before = _tree(root)
    for target in (f"{record}#0", f"{record}#2", f"{record}#99"):
        code, out, err = run_cli("--root", str(root), "--now", NOW, "forget", target)
        assert code == 2 and "no archived text" in err and err.count("\n") == 1, (out, err)
        assert _tree(root) == before, target
