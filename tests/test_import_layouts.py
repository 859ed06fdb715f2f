"""`tiermem import squad` on the odd layouts real teams have: a byte order mark, Windows line
ends, folders named as no agent is, links, empty or missing files. Each imports what it can,
names what it skips in one line, and reads nothing through a link."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from reliability import cli
from tiermem.memory import Memory

NOW = "2026-04-15T00:00:00Z"
HISTORY = (
    "# Ada\n\n## Learnings\n\n"
    "### 2026-04-01: Pin the SDK\nPinned it to 4.2 after the flaky build.\n\n"
    "### 2026-04-03: Cache the fixtures\nThe fixture cache lives in tests/.cache now.\n"
)
DECISIONS = (
    "# Decisions\n\n### 2026-04-01: Cache the registry\n**By:** Ada\n"
    "**What:** cache the registry for an hour\n**Why:** the CI was rate limited\n"
)


def squad(root: Path) -> Path:
    folder = root / ".squad"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def history(root: Path, agent: str, data: bytes | str = HISTORY) -> Path:
    path = squad(root) / "agents" / agent / "history.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def run_import(root: Path) -> tuple[int, dict[str, object], str]:
    code, out, err = cli(["--root", str(root), "--now", NOW, "import", "squad", "--format", "json"])
    assert code in (0, 1), err
    report: dict[str, object] = json.loads(out)
    return code, report, err


def tier_entries(root: Path, tier: str) -> list[tuple[str, str, str]]:
    """(file, title, body) of every entry of a tier, in file order."""
    mem = Memory(root, now=NOW)
    try:
        found = []
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            text = mem.tier_text(tier, path.stem)
            for block in text.split("\n## ")[1:]:
                title, _, rest = block.partition("\n")
                body = rest.split("-->\n", 1)[-1].strip()
                found.append((path.stem, title, body))
        return found
    finally:
        mem.close()


# --- a byte order mark and Windows line ends read as the plain file does -------------------


@pytest.mark.parametrize(
    "variant",
    [
        lambda text: b"\xef\xbb\xbf" + text.encode(),
        lambda text: text.replace("\n", "\r\n").encode(),
        lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),
    ],
    ids=["bom", "crlf", "bom+crlf"],
)
def test_a_history_saved_by_another_editor_gives_the_same_entries(
    tmp_path: Path, variant: Callable[[str], bytes]
) -> None:
    plain, odd = tmp_path / "plain", tmp_path / "odd"
    history(plain, "ada")
    history(odd, "ada", variant(HISTORY))
    assert run_import(plain)[0] == 0 and run_import(odd)[0] == 0
    expected = tier_entries(plain, "cold")
    assert [title for _, title, _ in expected] == ["Pin the SDK", "Cache the fixtures"]
    assert tier_entries(odd, "cold") == expected


def test_a_history_with_a_byte_order_mark_is_archived_byte_for_byte(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf" + HISTORY.encode()
    history(tmp_path, "ada", raw)
    run_import(tmp_path)
    archived = [
        p.read_bytes()
        for p in (tmp_path / ".squad" / "memory" / "archive" / "ada").glob("*.md")
        if b"kind=import" in p.read_bytes()[:400]
    ]
    assert [a.split(b"\n", 1)[1] for a in archived] == [raw]


def test_decisions_with_a_byte_order_mark_reach_the_wiki_as_without(tmp_path: Path) -> None:
    for name, prefix in (("plain", b""), ("odd", b"\xef\xbb\xbf")):
        (squad(tmp_path / name) / "decisions.md").write_bytes(prefix + DECISIONS.encode())
        assert run_import(tmp_path / name)[0] == 0
    expected = tier_entries(tmp_path / "plain", "wiki")
    assert any(title == "Cache the registry" for _, title, _ in expected)
    assert tier_entries(tmp_path / "odd", "wiki") == expected


# --- folders and files tiermem does not take -------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "said"),
    [
        ("Not An Agent", "did you mean 'not-an-agent'?"),
        ("_alumni", "agent name '_alumni' must be 1-64 letters"),
    ],
)
def test_an_agent_folder_named_as_no_agent_is_skipped_and_the_rest_imported(
    tmp_path: Path, folder: str, said: str
) -> None:
    history(tmp_path, "ada")
    history(tmp_path, folder, HISTORY.replace("Pin the SDK", "Something of theirs"))
    code, report, err = run_import(tmp_path)
    assert code == 1
    skipped_files = report["skipped"]
    assert isinstance(skipped_files, list) and len(skipped_files) == 1
    skipped = str(skipped_files[0])
    assert skipped.startswith(f".squad/agents/{folder}/history.md:1: the agent folder {folder!r}")
    assert said in skipped
    assert err == f"tiermem: skipped {skipped}\n"
    assert report["files"] == 2
    assert {stem for stem, _, _ in tier_entries(tmp_path, "cold")} == {"ada"}
    assert not any("Something of theirs" in t for _, t, _ in tier_entries(tmp_path, "cold"))


def test_an_agent_folder_in_capitals_is_imported_under_its_lower_case_name(tmp_path: Path) -> None:
    history(tmp_path, "Ada")
    code, _, err = run_import(tmp_path)
    assert (code, err) == (0, "")
    mem = Memory(tmp_path, now=NOW)
    try:
        assert mem.agents() == ["ada"]
    finally:
        mem.close()


def test_a_history_that_is_a_link_is_skipped_and_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(HISTORY.replace("Pin the SDK", "Private outside text"), "utf-8")
    repo = tmp_path / "repo"
    history(repo, "ada")
    (squad(repo) / "agents" / "bo").mkdir()
    (squad(repo) / "agents" / "bo" / "history.md").symlink_to(outside)
    code, report, _ = run_import(repo)
    assert code == 1
    assert report["skipped"] == [".squad/agents/bo/history.md:1: symbolic link in .squad/"]
    stored = b"".join(p.read_bytes() for p in (repo / ".squad" / "memory").rglob("*.md"))
    assert b"Private outside text" not in stored


def test_a_history_that_is_a_folder_is_passed_over(tmp_path: Path) -> None:
    history(tmp_path, "ada")
    (squad(tmp_path) / "agents" / "bo" / "history.md").mkdir(parents=True)
    code, report, err = run_import(tmp_path)
    assert (code, err) == (0, "")
    assert report["files"] == 1
    assert {stem for stem, _, _ in tier_entries(tmp_path, "cold")} == {"ada"}


def test_a_nul_byte_late_in_a_history_is_text_and_an_early_one_binary(tmp_path: Path) -> None:
    late, early = tmp_path / "late", tmp_path / "early"
    history(late, "ada", HISTORY.encode() + b"x" * 9000 + b"\x00 tail\n")
    history(early, "ada", b"# Ada\n\x00\n" + HISTORY.encode())
    code, report, _ = run_import(late)
    assert code == 0 and report["skipped"] == []
    assert "Pin the SDK" in [t for _, t, _ in tier_entries(late, "cold")]
    code, report, _ = run_import(early)
    assert code == 1
    assert report["skipped"] == [".squad/agents/ada/history.md:2: binary data"]


# --- nothing to import ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda root: squad(root),
        lambda root: (squad(root) / "agents").write_text("not a folder", encoding="utf-8"),
        lambda root: history(root, "ada", b""),
        lambda root: (squad(root) / "skills").write_text("not a folder", encoding="utf-8"),
    ],
    ids=["empty .squad", "agents is a file", "empty history", "skills is a file"],
)
def test_a_team_with_nothing_to_import_writes_no_entry(
    tmp_path: Path, build: Callable[[Path], object]
) -> None:
    build(tmp_path)
    code, report, err = run_import(tmp_path)
    assert (code, err) == (0, "")
    assert report["entries_written"] == 0 and report["skipped"] == []
    assert tier_entries(tmp_path, "cold") == [] and tier_entries(tmp_path, "wiki") == []


def test_decisions_alone_import_with_no_agents_folder(tmp_path: Path) -> None:
    (squad(tmp_path) / "decisions.md").write_text(DECISIONS, encoding="utf-8")
    code, report, _ = run_import(tmp_path)
    assert code == 0 and report["files"] == 1
    assert tier_entries(tmp_path, "cold") == []
    wiki = tier_entries(tmp_path, "wiki")
    [(_, _, body)] = [w for w in wiki if w[1] == "Cache the registry"]
    assert "cache the registry for an hour" in body
