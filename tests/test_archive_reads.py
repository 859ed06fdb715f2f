"""Reading the archive by id: a record reads back byte for byte, a name that would lead
elsewhere is refused before any read, and a record a merge or an editor damaged is named as
damaged (with the repair that mends it), never returned as if it were sound."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from tiermem import NotFoundError, ParseError, UsageError
from tiermem.memory import Memory

T0 = "2026-03-02T10:00:00Z"
NOTE = "ReadBuffer.fill dropped the last chunk of every file over 4 KB."


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    made.hot_set("ada", "Fix the flaky reader")
    made.hot_add("ada", "note", NOTE)
    made.end_session("ada")
    yield made
    made.close()


def the_record(mem: Memory) -> Path:
    [path] = [
        p
        for p in (mem.layout.tier_dir("archive") / "ada").glob("*.md")
        if b"kind=hot-session" in p.read_bytes()[:400]
    ]
    return path


def test_a_record_reads_back_with_its_header_fields(mem: Memory) -> None:
    path = the_record(mem)
    record = mem.read_archive("ada", path.stem)
    assert record.id == path.stem and record.agent == "ada"
    assert record.kind == "hot-session" and record.created == T0
    assert NOTE in record.text
    assert path.read_bytes().split(b"\n", 1)[1] == record.text.encode("utf-8")


def test_a_section_id_reads_its_whole_record(mem: Memory) -> None:
    path = the_record(mem)
    assert mem.read_archive("ada", f"{path.stem}#3").text == mem.read_archive("ada", path.stem).text


def test_read_entry_gives_the_record_byte_for_byte(mem: Memory) -> None:
    path = the_record(mem)
    entry = mem.read_entry(path.stem)
    assert entry.tier == "archive" and entry.agent == "ada"
    assert entry.text.encode("utf-8") == path.read_bytes().split(b"\n", 1)[1]


@pytest.mark.parametrize(
    ("agent", "record_id", "error", "said"),
    [
        ("ada", "a-00000000zz", UsageError, "is not an archive record id"),
        ("ada", "../../hot/ada", UsageError, "is not an archive record id"),
        ("ada", "a-0123456789-0123456789x", UsageError, "is not an archive record id"),
        ("../ada", "a-0123456789", UsageError, "agent name"),
        ("ada", "a-0123456789", NotFoundError, "no archive record a-0123456789 for ada"),
        ("bo", "a-0123456789", NotFoundError, "no archive record a-0123456789 for bo"),
    ],
)
def test_a_bad_or_missing_record_is_refused_in_words(
    mem: Memory, agent: str, record_id: str, error: type[Exception], said: str
) -> None:
    with pytest.raises(error, match=said):
        mem.read_archive(agent, record_id)


def test_a_record_found_under_the_wrong_agent_is_not_found(mem: Memory) -> None:
    path = the_record(mem)
    with pytest.raises(NotFoundError, match=f"no archive record {path.stem} for team"):
        mem.read_archive("team", path.stem)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda data: data + b"a line a merge wrote in\n", "does not match its recorded size"),
        (lambda data: data.replace(b"ReadBuffer", b"WriteBuffr"), "recorded size and hash"),
        (lambda data: data.split(b"\n", 1)[1], "no tiermem-archive header"),
        (lambda data: b"", "no tiermem-archive header"),
    ],
    ids=["appended", "edited", "header gone", "emptied"],
)
def test_a_damaged_record_is_named_with_its_repair_never_returned(
    mem: Memory, damage: object, said: str
) -> None:
    path = the_record(mem)
    assert callable(damage)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ParseError, match=said) as caught:
        mem.read_archive("ada", path.stem)
    if "hash" in said:
        assert "tiermem doctor --repair" in caught.value.reason


def test_read_entry_of_a_damaged_record_names_the_repair(mem: Memory) -> None:
    path = the_record(mem)
    path.write_bytes(path.read_bytes() + b"merged in\n")
    with pytest.raises(ParseError, match="tiermem doctor --repair"):
        mem.read_entry(path.stem)


def test_a_record_id_on_the_command_line_prints_the_record(mem: Memory, run_cli: RunCli) -> None:
    path = the_record(mem)
    code, out, err = run_cli("search", path.stem, "--root", str(mem.root))
    assert (code, err) == (0, "")
    assert NOTE in out and path.stem in out


def test_a_heading_alone_joins_the_archived_chunk_after_it() -> None:
    from tiermem.storage import archive as archived

    text = "## Note: Lint cleanup\n### Lint cleanup\n- Fixed 56 ESLint errors in 8 files.\n"
    [chunk] = archived.chunks(text)
    assert chunk.title == "Note: Lint cleanup"
    assert "Fixed 56 ESLint errors" in chunk.text
