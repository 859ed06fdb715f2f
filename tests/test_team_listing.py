"""`Memory.team()`: every agent once, whether Squad has a folder for it and which tiers hold
its memory; folders with names tiermem does not take, links, and the team's own memory are
never listed as agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiermem import NotFoundError
from tiermem.memory import Memory

T1 = "2026-03-03T10:00:00Z"


def listing(root: Path) -> dict[str, tuple[bool, list[str]]]:
    mem = Memory(root, now=T1)
    try:
        return {a.name: (a.squad, a.memory) for a in mem.team()}
    finally:
        mem.close()


def test_each_agent_says_whether_squad_knows_it_and_where_its_memory_is(
    store_copy: Path,
) -> None:
    assert listing(store_copy) == {
        "eecom": (False, ["archive", "cold", "hot"]),
        "flight": (True, ["archive", "hot", "queue"]),
    }


def test_an_agent_squad_has_a_folder_for_is_listed_before_any_memory(store_copy: Path) -> None:
    folder = store_copy / ".squad" / "agents" / "capcom"
    folder.mkdir()
    (folder / "charter.md").write_text("# Capcom\nTalks to the crew.\n", encoding="utf-8")
    assert listing(store_copy)["capcom"] == (True, [])


def test_the_listing_follows_memory_as_it_is_written_and_archived(store_copy: Path) -> None:
    mem = Memory(store_copy, now=T1)
    try:
        mem.hot_set("guido", "Review the parser")
        assert ("guido", False, ["hot"]) in [(a.name, a.squad, a.memory) for a in mem.team()]
        mem.end_session("guido")
        [guido] = [a for a in mem.team() if a.name == "guido"]
    finally:
        mem.close()
    assert guido.memory == ["archive", "cold", "hot"]


def test_names_tiermem_does_not_take_links_and_the_team_are_never_agents(
    store_copy: Path, tmp_path: Path
) -> None:
    agents = store_copy / ".squad" / "agents"
    for name in ("_alumni", "Not An Agent", ".hidden"):
        (agents / name).mkdir()
        (agents / name / "charter.md").write_text("# x\n", encoding="utf-8")
    outside = tmp_path / "outside-agent"
    outside.mkdir()
    (agents / "linked").symlink_to(outside)
    listed = listing(store_copy)
    assert set(listed) == {"eecom", "flight"}
    assert "team" not in listed  # the team's cold file is the team's, no agent's


def test_a_linked_agent_folder_does_not_make_its_name_a_known_agent(
    store_copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-agent"
    outside.mkdir()
    (store_copy / ".squad" / "agents" / "linked").symlink_to(outside)
    mem = Memory(store_copy, now=T1)
    try:
        with pytest.raises(NotFoundError, match="unknown agent 'linked'"):
            mem.hot_add("linked", "note", "a note", new_agent=False)
        assert "linked" not in mem.agents()
    finally:
        mem.close()
    assert not (store_copy / ".squad" / "memory" / "hot" / "linked.md").exists()


def test_agents_is_the_sorted_names_of_the_team(store_copy: Path) -> None:
    mem = Memory(store_copy, now=T1)
    try:
        names = [a.name for a in mem.team()]
        assert mem.agents() == sorted(names) == names
    finally:
        mem.close()
