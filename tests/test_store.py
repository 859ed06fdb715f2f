"""The store on disk: atomic writes, create-only records, refused links and bytes, init."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.errors import ParseError, StoreError, UsageError
from tiermem.memory import Memory
from tiermem.storage import config
from tiermem.storage.entries import Entry, TierFile, render
from tiermem.storage.files import (
    TEMP_PREFIX,
    append_synced,
    atomic_write,
    create_exclusive,
    read_text,
)
from tiermem.storage.layout import Layout
from tiermem.storage.store import TAIL_BYTES, append, load, recent, save

RunCli = Callable[..., tuple[int, str, str]]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under a folder, by relative path, with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# --- atomic writes ----------------------------------------------------------------------


def test_atomic_write_replaces_content_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.md"
    atomic_write(target, "first version\n")
    assert target.read_text(encoding="utf-8") == "first version\n"
    atomic_write(target, "second ünïcödé\n".encode())
    assert target.read_bytes() == "second ünïcödé\n".encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.md"]


def test_atomic_write_that_fails_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.md"
    target.write_bytes(b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(StoreError, match="disk full"):
        atomic_write(target, "new")
    assert target.read_bytes() == b"old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "archive" / "a-0123456789.md"
    assert create_exclusive(target, b"original") is True
    assert create_exclusive(target, b"impostor") is False
    assert target.read_bytes() == b"original"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a-0123456789.md"]


# --- appends ---------------------------------------------------------------------------------


def _cold_file(agent: str, count: int, body: str = "x" * 400) -> TierFile:
    made = [
        Entry(id=f"c-{n:010d}", cls="learning", title=f"session {n}", body=body, agent=agent)
        for n in range(count)
    ]
    return TierFile(f"{agent}: cold memory", {"tier": "cold", "agent": agent}, "", made)


def test_entries_are_appended_without_rewriting_the_file(store: Memory) -> None:
    path = store.layout.tier_file("cold", "ada")
    big = _cold_file("ada", 200)  # larger than the stretch at its end that is looked at
    save(store.layout, path, big)
    before, inode = path.read_bytes(), path.stat().st_ino
    assert len(before) > TAIL_BYTES
    new = Entry(id="c-new0000000", cls="learning", title="later", body="y", agent="ada")
    assert recent(store.layout, "cold", path, [new.id]) is None  # nothing to look at
    append(store.layout, path, [new], lambda: _cold_file("ada", 0))
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode
    assert load(store.layout, "cold", path) == TierFile(
        big.heading, big.meta, "", [*big.entries, new]
    )
    # An id written near the end makes it read whole: a step repeated after a crash.
    loaded = recent(store.layout, "cold", path, [new.id])
    assert loaded is not None and loaded.get(new.id) == new


def test_a_hand_edited_file_without_a_last_line_end_takes_appended_entries(
    store: Memory,
) -> None:
    path = store.layout.tier_file("cold", "ada")
    path.write_text(render(_cold_file("ada", 2)).rstrip("\n"), encoding="utf-8")
    new = Entry(id="c-new0000000", cls="learning", title="later", body="y", agent="ada")
    append(store.layout, path, [new], lambda: _cold_file("ada", 0))
    loaded = load(store.layout, "cold", path)
    assert loaded is not None and [e.id for e in loaded.entries][-1] == new.id
    assert loaded.entries[:2] == _cold_file("ada", 2).entries


def test_a_missing_or_empty_file_is_made_whole(store: Memory) -> None:
    path = store.layout.tier_file("cold", "ada")
    new = Entry(id="c-new0000000", cls="learning", title="later", body="y", agent="ada")
    for _ in range(2):
        append(store.layout, path, [new], lambda: _cold_file("ada", 0))
        assert path.read_text(encoding="utf-8") == render(
            TierFile("ada: cold memory", {"tier": "cold", "agent": "ada"}, "", [new])
        )
        path.write_bytes(b"")


def test_an_append_that_fails_leaves_the_file_as_it_was(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.layout.tier_file("cold", "ada")
    save(store.layout, path, _cold_file("ada", 3))
    before = path.read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)  # the bytes were written, then not kept
    with pytest.raises(StoreError, match="No space left"):
        append_synced(path, b"\n## more\n")
    assert path.read_bytes() == before


# --- links out of the store ---------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere" / "secret.md"
    target.parent.mkdir()
    target.write_bytes(b"# not memory\nprivate text\n")
    return target


@pytest.fixture
def linked_hot(store: Memory, outside: Path) -> Path:
    link = store.layout.tier_file("hot", "ada")
    link.symlink_to(outside)
    return link


def test_symlink_out_of_the_store_is_refused_on_read(
    store: Memory, linked_hot: Path, outside: Path
) -> None:
    with pytest.raises(ParseError, match="symbolic link") as caught:
        read_text(store.layout, linked_hot)
    assert caught.value.path == linked_hot
    with pytest.raises(ParseError):
        store.hot_view("ada")
    assert outside.read_bytes() == b"# not memory\nprivate text\n"


def test_symlink_is_refused_on_save(store: Memory, linked_hot: Path, outside: Path) -> None:
    tier_file = TierFile(heading="ada: hot memory", meta={"tier": "hot"})
    with pytest.raises(ParseError, match="symbolic link"):
        save(store.layout, linked_hot, tier_file)
    assert outside.read_bytes() == b"# not memory\nprivate text\n"
    assert linked_hot.is_symlink()


def test_symlink_out_of_the_store_is_refused_on_hot_write(
    store: Memory, linked_hot: Path, outside: Path
) -> None:
    before = snapshot(store.layout.squad)
    try:
        with pytest.raises(ParseError, match="symbolic link"):
            store.hot_add("ada", "note", "this must not leave the store")
    finally:
        assert outside.read_bytes() == b"# not memory\nprivate text\n"
    after = snapshot(store.layout.squad)
    assert {k: v for k, v in after.items() if ".locks" not in k} == {
        k: v for k, v in before.items() if ".locks" not in k
    }


def test_symlink_hot_write_through_the_cli_exits_2(
    store: Memory, linked_hot: Path, outside: Path, run_cli: RunCli
) -> None:
    try:
        code, _, err = run_cli("hot", "note", "ada", "escape", "--root", str(store.root))
        assert code == 2
        assert err.count("\n") == 1
        assert "symbolic link" in err
    finally:
        assert outside.read_bytes() == b"# not memory\nprivate text\n"


# --- undecodable files ------------------------------------------------------------------


BROKEN = (
    b"# ada: hot memory\n"
    b"<!-- tiermem-file tier=hot agent=ada session=s1 started=2026-03-02T10:00:00Z -->\n"
    b"\n"
    b"## Note: caf\xe9 without UTF-8\n"
    b"<!-- tiermem id=h-0000000001 class=learning slot=note -->\n"
)


@pytest.fixture
def broken_hot(store: Memory) -> Path:
    path = store.layout.tier_file("hot", "ada")
    path.write_bytes(BROKEN)
    return path


def test_invalid_utf8_names_its_line(store: Memory, broken_hot: Path) -> None:
    with pytest.raises(ParseError, match="UTF-8") as caught:
        read_text(store.layout, broken_hot)
    assert caught.value.line == 4
    assert str(caught.value).startswith(f"{broken_hot}:4: ")


@pytest.mark.parametrize(
    "write",
    [
        lambda mem: mem.hot_add("ada", "note", "more"),
        lambda mem: mem.hot_add("ada", "action", "did a thing"),
        lambda mem: mem.hot_set("ada", "new task"),
        lambda mem: mem.hot_clear("ada"),
    ],
    ids=["note", "action", "set", "clear"],
)
def test_invalid_utf8_file_is_never_overwritten_by_the_api(
    store: Memory, broken_hot: Path, write: object
) -> None:
    before = snapshot(store.layout.squad)
    with pytest.raises(ParseError, match=":4: is not valid UTF-8"):
        write(store)  # type: ignore[operator]
    assert broken_hot.read_bytes() == BROKEN
    after = snapshot(store.layout.squad)
    assert {k: v for k, v in after.items() if not k.startswith("memory/.locks/")} == {
        k: v for k, v in before.items() if not k.startswith("memory/.locks/")
    }


@pytest.mark.parametrize(
    "args",
    [
        ("hot", "note", "ada", "more"),
        ("hot", "set", "ada", "--task", "new task"),
        ("hot", "block", "ada", "waiting"),
        ("hot", "show", "ada"),
    ],
)
def test_invalid_utf8_file_makes_the_cli_exit_2(
    store: Memory, broken_hot: Path, run_cli: RunCli, args: tuple[str, ...]
) -> None:
    code, out, err = run_cli(*args, "--root", str(store.root))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "hot/ada.md:4: is not valid UTF-8" in err
    assert broken_hot.read_bytes() == BROKEN


# --- init -------------------------------------------------------------------------------


def test_init_creates_the_layout(tmp_path: Path, run_cli: RunCli) -> None:
    code, out, err = run_cli("init", "--root", str(tmp_path))
    assert (code, err) == (0, "")
    memory = tmp_path / ".squad" / "memory"
    for tier in ("hot", "cold", "wiki", "archive"):
        assert (memory / tier).is_dir()
        assert f"created .squad/memory/{tier}/" in out
    assert (memory / "config.toml").is_file()
    assert (memory / ".gitignore").is_file()
    assert (memory / ".gitattributes").is_file()


def test_init_config_parses_back_to_the_defaults(store: Memory) -> None:
    path = store.layout.config
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(raw) == {"hot", "cold", "scribe", "spawn", "summarizer"}
    assert raw["hot"] == {"budget_bytes": 4096, "max_actions": 5}
    assert config.load(path) == config.Config()


def test_init_git_settings(store: Memory) -> None:
    ignored = (store.layout.memory / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "index.sqlite" in ignored
    attributes = (store.layout.memory / ".gitattributes").read_text(encoding="utf-8").splitlines()
    for tier in ("hot", "cold", "wiki"):
        assert f"{tier}/*.md merge=union" in attributes
    assert not any(line.startswith("archive") and "union" in line for line in attributes)


def test_init_twice_changes_nothing(tmp_path: Path, run_cli: RunCli) -> None:
    assert run_cli("init", "--root", str(tmp_path))[0] == 0
    mem = Memory(tmp_path)
    mem.hot_add("ada", "note", "written between the two inits")
    mem.close()
    # A hand edit of the config must survive a second init.
    config_path = tmp_path / ".squad" / "memory" / "config.toml"
    config_path.write_text("[hot]\nbudget_bytes = 8192\n", encoding="utf-8")
    before = snapshot(tmp_path)
    code, out, err = run_cli("init", "--root", str(tmp_path))
    assert (code, err) == (0, "")
    assert "already set up" in out
    assert snapshot(tmp_path) == before


def test_init_refuses_a_missing_folder(tmp_path: Path, run_cli: RunCli) -> None:
    code, _, err = run_cli("init", "--root", str(tmp_path / "nope"))
    assert code == 2
    assert err.count("\n") == 1
    assert not (tmp_path / "nope").exists()


def test_layout_paths_validate_names(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert layout.tier_file("hot", "Ada") == tmp_path / ".squad" / "memory" / "hot" / "ada.md"
    assert layout.tier_file("cold", "team") == tmp_path / ".squad" / "memory" / "cold" / "team.md"
    for bad in ("../x", "con", "team/..", "x" * 65):
        with pytest.raises(UsageError):
            layout.tier_file("hot", bad)


def test_a_file_with_broken_metadata_is_never_overwritten(store: Memory, run_cli: RunCli) -> None:
    path = store.layout.tier_file("hot", "ada")
    broken = (
        b"# ada: hot memory\n"
        b"<!-- tiermem-file tier=hot agent=ada session=s1 -->\n"
        b"\n"
        b"## Note: hand edited\n"
        b"<!-- tiermem id=h-1 class=learning slot=note\n"
    )
    path.write_bytes(broken)
    code, out, err = run_cli("hot", "note", "ada", "more", "--root", str(store.root))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "hot/ada.md:5: metadata comment is not closed" in err
    assert path.read_bytes() == broken


def test_init_ignores_the_local_files_and_teaches_an_older_store_to(store: Memory) -> None:
    path = store.layout.memory / ".gitignore"
    ignored = path.read_text(encoding="utf-8").splitlines()
    assert {"spawns.jsonl", "citations.cache"} <= set(ignored)
    path.write_text("# older\nindex.sqlite\n.locks/", encoding="utf-8")
    Memory.init(store.root)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["# older", "index.sqlite", ".locks/"]
    assert {"spawns.jsonl", "citations.cache", ".tmp-*"} <= set(lines)
    before = path.read_bytes()
    Memory.init(store.root)
    assert path.read_bytes() == before


def test_an_older_store_learns_to_merge_its_own_audit_file(store: Memory) -> None:
    path = store.layout.memory / ".gitattributes"
    path.write_text("hot/*.md merge=union\naudit.jsonl merge=union\n", encoding="utf-8")
    Memory.init(store.root)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["hot/*.md merge=union", "audit.jsonl merge=union"]
    assert "tiermem-audit.jsonl merge=union" in lines


def test_squads_audit_log_is_never_written_and_earlier_lines_are_still_read(
    store: Memory,
) -> None:
    from tiermem.storage import audit

    squads = store.layout.memory / "audit.jsonl"
    squad_line = '{"timestamp":"2026-11-02T10:00:00Z","action":"write","class":"DECISION"}\n'
    earlier = '{"action":"promote","ids":["c-1"],"tiers":["cold","wiki"],"time":"2026-11-01"}\n'
    squads.write_text(squad_line + earlier, encoding="utf-8")
    store.hot_add("ada", "note", "A note")
    store.end_session("ada")
    assert squads.read_text(encoding="utf-8") == squad_line + earlier
    actions = [line["action"] for line in audit.read(store.layout)]
    assert actions[0] == "promote"
    assert "end-session" in actions
    assert all("timestamp" not in line for line in audit.read(store.layout))
