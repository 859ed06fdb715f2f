"""Forgetting: an entry leaves every tier and nothing else changes; a purge leaves no copy."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliability import is_index
from tiermem.errors import NotFoundError, UsageError
from tiermem.memory import Memory
from tiermem.storage import archive, audit, entries, store
from tiermem.storage.entries import Entry, TierFile, split_entry

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    made, _ = Memory.init(tmp_path, now=T0)
    yield made
    made.close()


def put(mem: Memory, tier: str, name: str, *items: Entry) -> None:
    path = mem.layout.tier_file(tier, name)
    store.save(mem.layout, path, TierFile(f"{name}: {tier}", {"tier": tier}, entries=[*items]))


def entry(n: int, title: str, body: str, agent: str = "ada", cls: str = "learning") -> Entry:
    return Entry(f"c-{n:010x}", cls, title, body, agent=agent, created=T0, used=T0)


def tier_entries(mem: Memory) -> dict[tuple[str, str], str]:
    """Every entry of every tier file (and Scribe's queue), rendered."""
    found = {}
    for tier in ("hot", "cold", "wiki", "queue"):
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            loaded = store.load(mem.layout, tier, path)
            assert loaded is not None
            for item in loaded.entries:
                found[(mem.layout.relative(path), item.id)] = entries.render_entry(item)
    return found


def files_under(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".locks" not in p.parts and not is_index(p)
    }


# --- forget -----------------------------------------------------------------------------


def test_a_forgotten_entry_leaves_its_tier_and_its_text_stays_in_the_archive(mem: Memory) -> None:
    put(mem, "cold", "ada", entry(1, "Wrong retry count", "Publish retries 9 times."))
    put(mem, "cold", "bo", entry(2, "Parser cache", "Lives in memory.", agent="bo"))
    report = mem.forget("c-0000000001", reason="it retries 3 times")
    assert report.ids == ["c-0000000001"] and report.files == [".squad/memory/cold/ada.md"]
    assert [h.tier for h in mem.search("publish retries")] == ["archive"]
    record = mem.read_archive("ada", report.archived.split("/")[2].removesuffix(".md"))
    assert "Publish retries 9 times." in record.text and record.kind == "forgotten"
    line = audit.read(mem.layout)[-1]
    assert line["action"] == "forget" and line["ids"] == ["c-0000000001"]
    assert line["reason"] == "it retries 3 times" and line["record"] == report.archived


def test_forget_returns_data_and_its_result_says_it(mem: Memory) -> None:
    from tiermem.upkeep.forget import forget

    put(mem, "cold", "ada", entry(1, "Wrong retry count", "Publish retries 9 times."))
    report = forget(mem.context, "c-0000000001", "", purge=False)
    assert report.messages == []  # the step says nothing: its result does
    assert report.lines() == [
        "forgot c-0000000001: c-0000000001 left .squad/memory/cold/ada.md",
        f"its text is kept in {report.archived}",
    ]


def test_an_entry_whose_sources_hold_its_text_is_not_archived_again(mem: Memory) -> None:
    wiki = mem.wiki_write("release", "# Tag from main\nEvery release is tagged on main.")
    before = sorted(p.name for p in archive.records(mem.layout))
    report = mem.forget(wiki.id)
    assert sorted(p.name for p in archive.records(mem.layout)) == before
    assert report.archived.startswith("archive/team/")


def test_the_parts_of_a_long_entry_go_together_from_every_tier(mem: Memory) -> None:
    body = "\n\n".join(f"## Step {n}\n" + f"step {n} " * 150 for n in range(4))
    parts = split_entry(entry(3, "Release runbook", body, cls="contract"))
    assert len(parts) >= 3
    put(mem, "cold", "ada", *parts[:2])
    put(mem, "wiki", "release", *parts[2:])  # a promotion caught halfway
    report = mem.forget(parts[1].id)
    assert report.ids == sorted(p.id for p in parts)
    assert report.files == [".squad/memory/cold/ada.md", ".squad/memory/wiki/release.md"]
    assert tier_entries(mem) == {}


def test_hot_and_queued_entries_can_be_forgotten(mem: Memory) -> None:
    mem.hot_set("ada", "Fix the wombat parser")
    task = mem.hot_view("ada").entries[0].id
    mem.hot_add("ada", "note", "The wombat parser lives in src/wombat.ts")
    note = mem.hot_view("ada").entries[-1].id
    assert mem.forget(task).files == [".squad/memory/hot/ada.md"]
    mem.hot_clear("ada")  # the note waits in Scribe's queue
    assert mem.forget(note).files == [".squad/memory/queue/ada.md"]
    assert tier_entries(mem) == {}


def test_forgetting_twice_or_a_bad_id_is_refused(mem: Memory) -> None:
    put(mem, "cold", "ada", entry(1, "Old fact", "x"))
    mem.forget("c-0000000001")
    with pytest.raises(NotFoundError, match="no entry c-0000000001"):
        mem.forget("c-0000000001")
    for bad in ("", "../x", "c-1", "c-0000000001 c-0000000002"):
        with pytest.raises(UsageError):
            mem.forget(bad)
    record = archive.records(mem.layout)[0].stem
    mem.forget(record)  # archived text is retired from search, its bytes kept
    with pytest.raises(NotFoundError, match="or it was forgotten before"):
        mem.forget(record)


def test_cli_forget(mem: Memory, run_cli: RunCli) -> None:
    put(mem, "cold", "ada", entry(1, "Old fact", "x"), entry(2, "Other fact", "y"))
    root = ("--root", str(mem.root))
    code, out, err = run_cli("forget", "c-0000000001", "--reason", "stale", *root)
    assert (code, err) == (0, "") and out.startswith("forgot c-0000000001")
    code, out, _ = run_cli("forget", "c-0000000002", "--format", "json", *root)
    assert code == 0 and json.loads(out)["ids"] == ["c-0000000002"]
    code, _, err = run_cli("forget", "c-0000000002", *root)
    assert code == 2 and err.count("\n") == 1 and "no entry" in err


# --- purge ------------------------------------------------------------------------------

# A secret the redactor cannot tell from a word: what a purge is for.
CANARY = "quokkalanternwharf"


def grep(root: Path, needle: str) -> list[str]:
    """Every file under .squad whose bytes hold the needle, in any case (the index too)."""
    squad = root / ".squad"
    low = needle.lower().encode()
    return sorted(
        p.relative_to(root).as_posix()
        for p in squad.rglob("*")
        if p.is_file() and low in p.read_bytes().lower()
    )


def test_a_purge_leaves_no_copy_and_an_audited_tombstone(mem: Memory) -> None:
    wiki = mem.wiki_write("security", f"# Deploy key\nThe deploy key is {CANARY} for now.")
    mem.wiki_write("security", "# Rotation\nKeys rotate every 90 days.")
    mem.search("deploy key")  # the index holds it
    assert grep(mem.root, CANARY)
    report = mem.forget(wiki.id, reason="leaked key", purge=True)
    assert grep(mem.root, CANARY) == []
    assert report.purged and not report.archived and report.records
    tombstone = report.tombstone.split("/")
    text = mem.read_archive(tombstone[1], tombstone[2].removesuffix(".md")).text
    assert wiki.id in text and "leaked key" in text
    line = audit.read(mem.layout)[-1]
    assert line["action"] == "purge" and line["ids"] == [wiki.id]
    assert line["records"] == report.records and line["tombstone"] == report.tombstone
    assert [h.title for h in mem.search("rotate")] == ["Rotation"]


def test_a_rewritten_record_keeps_its_name_and_reads_back(mem: Memory) -> None:
    mem.decide(
        f"### 2026-03-02: Token\n**What:** use {CANARY} until Friday\n**Why:** a stopgap\n\n"
        "### 2026-03-02: Rotation\n**What:** rotate keys monthly\n**Why:** policy",
        by="bo",
    )
    (team_entry,) = [h for h in mem.search(CANARY) if h.tier == "cold"]
    (location,) = team_entry.sources
    report = mem.forget(team_entry.id, purge=True)
    assert location in report.records
    record_id = location.split("/")[2].removesuffix(".md")
    record = mem.read_archive("team", record_id)  # its size and hash are checked on read
    assert record.id == record_id and CANARY not in record.text
    assert "[purged: " in record.text and "rotate keys monthly" in record.text
    assert archive.header(archive.path_of(mem.layout, "team", record_id))["purged"]
    # Squad's own decisions.md is named, never edited.
    assert report.elsewhere == [".squad/decisions.md"]


def test_a_purge_names_other_entries_that_still_hold_the_text(mem: Memory) -> None:
    line = f"Rotate the staging credential {CANARY} weekly."
    put(mem, "cold", "ada", entry(1, "Staging", line), entry(2, "Copy of staging", line))
    report = mem.forget("c-0000000001", purge=True)
    assert report.still_in == ["c-0000000002"]
    assert "still holding some of the text: c-0000000002" in report.messages


def test_archived_text_itself_can_be_purged(mem: Memory) -> None:
    mem.hot_set("ada", "Deploy")
    mem.hot_add("ada", "note", f"Used the key {CANARY} to deploy by hand.")
    mem.end_session("ada")
    for hit in mem.search(CANARY):
        if hit.tier != "archive":
            mem.forget(hit.id, purge=True)
    left = [h.id for h in mem.search(CANARY)]
    for record_id in left:
        mem.forget(record_id, purge=True)
    assert grep(mem.root, CANARY) == []


def in_the_tree(root: Path, needle: str) -> list[str]:
    """Every file of the working tree holding the needle in any case (git's own folder aside:
    the tests' repositories commit nothing)."""
    low = needle.lower().encode()
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts and low in p.read_bytes().lower()
    )


def conflicted(mem: Memory, agent: str, n: int, winner: str, loser: str) -> None:
    """A cold file holding two versions of one entry, as a union merge of two clones leaves
    it: the newer use wins, the other is the loser a write archives."""
    old = Entry(f"c-{n:010x}", "learning", "Deploy key", loser, agent=agent, created=T0, used=T0)
    new = replace(old, body=winner, used="2026-03-02T11:00:00Z")
    text = f"# {agent}: cold\n<!-- tiermem-file tier=cold agent={agent} -->\n\n"
    text += entries.render_entry(old) + "\n\n" + entries.render_entry(new) + "\n"
    mem.layout.tier_file("cold", agent).write_text(text, encoding="utf-8")


def test_a_purge_takes_every_version_a_merge_left_and_every_loser_archived(mem: Memory) -> None:
    conflicted(mem, "ada", 1, f"The deploy key is {CANARY}.", f"The old key was {CANARY}, rotate.")
    with store.update(mem.layout, "cold", mem.layout.tier_file("cold", "ada"), TierFile) as f:
        f.put(entry(3, "A later note", "written after the merge"))  # archives the loser
    assert [p for p in in_the_tree(mem.root, CANARY) if "/archive/" in p]
    conflicted(mem, "bo", 4, f"Second key {CANARY} here.", f"Second key was {CANARY} there.")
    mem.search(CANARY)
    for entry_id in ("c-0000000001", "c-0000000004"):
        mem.forget(entry_id, reason="leaked", purge=True)
    assert in_the_tree(mem.root, CANARY) == []
    mem.forget("c-0000000003")  # a later write of the file archives no loser again
    assert in_the_tree(mem.root, CANARY) == []


def test_a_purge_takes_what_doctor_set_aside_and_git_ignores_it(
    mem: Memory, run_cli: RunCli
) -> None:
    mem.hot_set("ada", "Deploy")
    mem.hot_add("ada", "note", f"Used the key {CANARY} to deploy by hand.")
    mem.end_session("ada")
    (cold_hit,) = [h for h in mem.search(CANARY) if h.tier == "cold"]
    for path in archive.records(mem.layout, "ada"):
        with path.open("a", encoding="utf-8") as record:
            record.write(f"a line a merge wrote into it, with {CANARY}\n")
    code, _, _ = run_cli("--root", str(mem.root), "doctor", "--repair")
    aside = [p for p in in_the_tree(mem.root, CANARY) if "/damaged/" in p]
    assert code == 0 and aside
    subprocess.run(["git", "init", "-q", str(mem.root)], check=True)
    ignored = subprocess.run(["git", "-C", str(mem.root), "check-ignore", aside[0]])
    assert ignored.returncode == 0  # never committed by `git add .squad`
    mem.forget(cold_hit.id, purge=True)
    for hit in mem.search(CANARY):
        mem.forget(hit.id, purge=True)
    assert in_the_tree(mem.root, CANARY) == []


def test_a_reason_or_a_task_that_quotes_the_secret_keeps_none_of_it(
    mem: Memory, run_cli: RunCli
) -> None:
    put(mem, "cold", "ada", entry(1, "Deploy key", f"The deploy key is {CANARY} for now."))
    mem.spawn("ada", f"rotate {CANARY} today", include_cold=True)
    root = ("--root", str(mem.root))
    code, _, _ = run_cli("forget", "c-0000000002", "--reason", f"not {CANARY}", "--purge", *root)
    assert code == 2  # an attempt on the wrong id: refused, its reason written nowhere
    for _ in range(2):  # the second run finds nothing, writes nothing
        before = files_under(mem.root)
        code, _, err = run_cli(
            "forget", "c-0000000001", "--reason", f"it leaked {CANARY}!", "--purge", *root
        )
        assert in_the_tree(mem.root, CANARY) == []
    assert code == 2 and "no entry c-0000000001" in err and files_under(mem.root) == before
    purges = [a for a in audit.read(mem.layout) if a["action"] == "purge"]
    assert [a["reason"] for a in purges] == ["it leaked [purged]!"]
    assert mem.search(CANARY) == []


# --- properties ---------------------------------------------------------------------------

WORDS = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N"]) | st.sampled_from(" .,;:-#*`/"),
    min_size=1,
    max_size=60,
)
TITLES = WORDS.map(lambda t: " ".join(t.split()) or "untitled")
BODIES = st.lists(WORDS, max_size=6).map("\n".join)


@st.composite
def stores(draw: st.DrawFn) -> list[tuple[str, str, list[Entry]]]:
    """Tier files (tier, name, entries) with distinct ids; some entries are long, in parts."""
    files: list[tuple[str, str, list[Entry]]] = []
    n = 0
    for tier, name in draw(
        st.lists(
            st.sampled_from([("cold", "ada"), ("cold", "bo"), ("cold", "team"), ("wiki", "ci")]),
            min_size=1,
            max_size=4,
            unique=True,
        )
    ):
        items: list[Entry] = []
        for title, body, long in draw(
            st.lists(st.tuples(TITLES, BODIES, st.booleans()), min_size=1, max_size=4)
        ):
            n += 1
            made = entry(n, title, body + ("\n\n" + "lengthy words " * 120 if long else ""))
            items += split_entry(made)
        files.append((tier, name, items))
    return files


@contextlib.contextmanager
def scratch() -> Iterator[Memory]:
    folder = Path(tempfile.mkdtemp(prefix="tiermem-forget-"))
    made, _ = Memory.init(folder, now=T0)
    try:
        yield made
    finally:
        made.close()
        shutil.rmtree(folder, ignore_errors=True)


@PROPERTY
@given(layout=stores(), pick=st.integers(min_value=0), purge=st.booleans())
def test_forgetting_changes_nothing_else(
    layout: list[tuple[str, str, list[Entry]]], pick: int, purge: bool
) -> None:
    with scratch() as mem:
        for tier, name, items in layout:
            put(mem, tier, name, *items)
        everything = [e for _, _, items in layout for e in items]
        target = everything[pick % len(everything)]
        root = dict(target.extra).get("parent", target.id)
        group = {e.id for e in everything if dict(e.extra).get("parent", e.id) == root}
        before, records = tier_entries(mem), files_under(mem.layout.tier_dir("archive"))
        report = mem.forget(target.id, reason="property", purge=purge)
        after = tier_entries(mem)
        assert set(report.ids) == group
        assert after == {k: v for k, v in before.items() if k[1] not in group}
        for name, data in files_under(mem.layout.tier_dir("archive")).items():
            # Only new records: the forgotten text (or the tombstone); none was there to scrub.
            assert records.get(name, data) == data
        line = audit.read(mem.layout)[-1]
        assert line["action"] == ("purge" if purge else "forget")
        assert line["ids"] == sorted(group) and line["reason"] == "property"


@PROPERTY
@given(
    others=st.lists(st.tuples(TITLES, BODIES), max_size=4),
    before=WORDS,
    after=WORDS,
    way=st.sampled_from(["wiki", "session", "decision", "cleared", "blocker"]),
)
def test_a_purged_canary_is_found_nowhere(
    others: list[tuple[str, str]], before: str, after: str, way: str
) -> None:
    secret_line = f"{before} {CANARY} {after}"
    with scratch() as mem:
        for n, (title, body) in enumerate(others):
            mem.wiki_write("general", f"# {title}\n{body}\n{n}")
        plant(mem, way, secret_line)
        mem.search(CANARY)
        elsewhere: set[str] = set()
        for _ in range(12):
            todo = [h.id for h in mem.search(CANARY, limit=50)]
            if not todo:
                break
            report = mem.forget(todo[0], reason="leak", purge=True)
            elsewhere.update(report.elsewhere)
            for left in report.still_in:
                with contextlib.suppress(NotFoundError):
                    elsewhere.update(mem.forget(left, purge=True).elsewhere)
        assert set(grep(mem.root, CANARY)) == elsewhere
        assert all(not p.startswith(".squad/memory/") for p in elsewhere)
        purges = [a for a in audit.read(mem.layout) if a["action"] == "purge"]
        assert purges and all(CANARY not in json.dumps(a) for a in purges)


def plant(mem: Memory, way: str, line: str) -> None:
    """Put the secret in memory the way it would arrive."""
    if way == "wiki":
        mem.wiki_write("security", f"# Deploy notes\n{line}")
    elif way == "decision":
        mem.decide(f"### 2026-03-02: Deploy\n**What:** {line}\n**Why:** speed", by="bo")
    else:
        mem.hot_set("ada", "Deploy the service")
        slot = "blocker" if way == "blocker" else "note"
        mem.hot_add("ada", slot, f"Deploy notes: {line}")
        if way == "cleared":
            mem.hot_clear("ada")  # the text waits in Scribe's queue, which is not indexed
        else:
            mem.end_session("ada")


# --- archived text, and what a search of a forgotten id says ---------------------------------


def _archived_passage(mem: Memory) -> tuple[str, Path]:
    """A record with two sections (each long enough to be a passage of its own), archived
    as an import would; the first's passage id."""
    filler = "Each step of it is written down here at length. " * 50
    text = (
        f"## Registry mirror\n\nThe npm mirror in .npmrc points at the old proxy. {filler}\n\n"
        f"## Publish retries\n\nThe publish job retries npm publish five times. {filler}\n"
    )
    record = archive.new_record("ada", T0, "import", "history.md", "history.md", text)
    archive.write(mem.layout, record)
    hits = mem.search("old proxy mirror npmrc", tier="archive")
    assert hits and "old proxy" in hits[0].text
    return hits[0].id, archive.path_of(mem.layout, "ada", record.id)


def test_an_archived_passage_is_retired_and_its_text_kept(mem: Memory, run_cli: RunCli) -> None:
    passage, path = _archived_passage(mem)
    text = archive.parse(path.read_bytes(), path).text
    code, out, err = run_cli(
        "--root", str(mem.root), "--now", T0, "forget", passage, "--reason", "the proxy is gone"
    )
    assert (code, err) == (0, "")
    assert out.startswith(f"retired {passage} from search and spawns")
    # Never served again: not by search, not by a spawn; the other section still is.
    assert mem.search("old proxy mirror npmrc", tier="archive") == []
    assert mem.search("publish retries five times", tier="archive")
    mem.hot_set("ada", "fix the npm mirror proxy in .npmrc")
    prompt = mem.spawn("ada", "fix the npm mirror proxy in .npmrc", include_archive=True).prompt
    assert "old proxy" not in prompt
    # Kept byte for byte, and the index rebuilt from the files keeps it retired.
    assert archive.parse(path.read_bytes(), path).text == text
    mem.reindex()
    assert mem.search("old proxy mirror npmrc", tier="archive") == []
    # A search for it says it was forgotten, when and why, in text and (aside) in JSON.
    code, out, _ = run_cli("--root", str(mem.root), "search", passage)
    assert out == (
        f"{passage} was forgotten on 2026-03-02 (the proxy is gone); its text is kept in "
        f"archive/ada/{path.name}\n"
    )
    code, out, err = run_cli("--root", str(mem.root), "search", passage, "--format", "json")
    assert json.loads(out) == [] and "was forgotten on 2026-03-02" in err


def test_a_search_for_a_forgotten_entry_says_so(mem: Memory, run_cli: RunCli) -> None:
    put(mem, "cold", "ada", entry(1, "Old fact", "x"), entry(2, "Other fact", "y"))
    mem.forget("c-0000000001", reason="wrong")
    code, out, _ = run_cli("--root", str(mem.root), "search", "c-0000000001", "c-0000000002")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("c-0000000001 was forgotten on 2026-03-02 (wrong); its text")
    assert "c-0000000002" in out and "Other fact" in out
    code, out, _ = run_cli("--root", str(mem.root), "search", "c-00000000ff")
    assert out == "no matches\n"
