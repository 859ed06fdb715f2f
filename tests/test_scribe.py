"""Scribe: session ends, checkpoints, and the maintenance run (expire, promote, supersede,
pinned policies, the Squad decision inbox, dry runs, the audit trail and the run report)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tiermem.index.protocol import Scope
from tiermem.memory import Memory
from tiermem.storage import archive
from tiermem.storage import files as tiermem_files
from tiermem.storage import store as files
from tiermem.storage.clock import format_time, parse_time
from tiermem.storage.entries import Entry, TierFile
from tiermem.team import use

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"


def later(days: float, start: str = T0) -> str:
    """An ISO time `days` after `start`."""
    return format_time(parse_time(start) + timedelta(days=days))


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under a folder by relative path (lock files are empty and git-ignored)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".locks" not in p.relative_to(folder).parts
    }


def tier_file(mem: Memory, tier: str, name: str) -> TierFile:
    loaded = files.load(mem.layout, tier, mem.layout.tier_file(tier, name))
    assert loaded is not None, f"no {tier} file for {name}"
    return loaded


def cold(mem: Memory, agent: str) -> list[Entry]:
    path = mem.layout.tier_file("cold", agent)
    loaded = files.load(mem.layout, "cold", path)
    return [] if loaded is None else loaded.entries


def wiki_entries(mem: Memory) -> dict[str, Entry]:
    """Every wiki entry by id."""
    found: dict[str, Entry] = {}
    for path in sorted(mem.layout.tier_dir("wiki").glob("*.md")):
        loaded = files.load(mem.layout, "wiki", path)
        assert loaded is not None
        found.update({e.id: e for e in loaded.entries})
    return found


def archive_records(mem: Memory) -> list[archive.Record]:
    return [archive.parse(p.read_bytes(), p) for p in archive.records(mem.layout)]


def audit_lines(mem: Memory) -> list[dict[str, object]]:
    text = mem.layout.audit.read_text(encoding="utf-8") if mem.layout.audit.exists() else ""
    return [json.loads(line) for line in text.splitlines()]


def day_of(when: str) -> str:
    """The last-use time Scribe folds a use at `when` into: its day."""
    return when[:10] + "T00:00:00Z"


def at(mem: Memory, when: str) -> Memory:
    """The same store with the clock moved."""
    return Memory(mem.root, now=when)


def worked(mem: Memory, days: range) -> None:
    """A team at work on each of these days (cold ages by the days a team works): another
    agent's standing entries made on them, which never expire themselves."""
    path = mem.layout.tier_file("cold", "zed")
    with files.update(mem.layout, "cold", path, lambda: files.blank("cold", "zed")) as tier:
        for day in days:
            made = later(day)
            tier.put(
                Entry(
                    f"i-{day:010x}",
                    "learning",
                    f"Day {day}",
                    "At work.",
                    agent="zed",
                    created=made,
                    used=made,
                    tags=("standing",),
                )
            )


def session(mem: Memory, agent: str, task: str, note: str) -> str:
    """One short session that ends; return the id of its cold entry."""
    mem.hot_set(agent, task)
    mem.hot_add(agent, "note", note)
    [entry_id] = mem.end_session(agent).cold
    return entry_id


@pytest.fixture
def mem(store: Memory) -> Iterator[Memory]:
    """The fresh store with its clock fixed at T0."""
    pinned = at(store, T0)
    yield pinned
    pinned.close()


@pytest.fixture
def busy(mem: Memory) -> Memory:
    """A store where ada worked one session: task, why, action, decision, blocker, note."""
    mem.hot_set("ada", "fix the flaky reader in src/io/reader.ts", why="release 1.4.2 is blocked")
    mem.hot_add("ada", "action", "reproduced the bug with `ReadBuffer.fill`")
    mem.hot_add("ada", "decision", "Keep reader retries off until #233 lands")
    mem.hot_add("ada", "blocker", "waiting for CI credentials from ops")
    mem.hot_add(
        "ada",
        "note",
        "ReadBuffer.fill assumes offset zero and drops the last chunk otherwise; "
        "see #233 and src/io/reader.ts.",
    )
    return mem


# --- end of session -----------------------------------------------------------------------


def test_hot_becomes_one_dated_cold_entry_naming_its_archive_source(busy: Memory) -> None:
    hot_path = busy.layout.tier_file("hot", "ada")
    hot_text = hot_path.read_bytes()
    ending = at(busy, later(0.25))
    report = ending.end_session("ada")

    [entry_id] = report.cold
    [entry] = [e for e in cold(ending, "ada") if e.id == entry_id]
    # The title is the session's subject, clean: its date and kind are the entry's own.
    assert entry.title == "fix the flaky reader in src/io/reader.ts"
    assert dict(entry.extra)["kind"] == "session"
    assert entry.created == later(0.25)
    hot_records = [r for r in archive_records(ending) if r.kind == "hot-session"]
    [record] = hot_records
    assert record.location in entry.sources
    # The raw hot file is in the archive byte for byte.
    assert record.text.encode("utf-8") == hot_text
    raw = archive.path_of(ending.layout, "ada", record.id).read_bytes()
    assert raw.endswith(hot_text)
    # Only one session summary: the other cold entries are structured pieces of the notes.
    summaries = [e for e in cold(ending, "ada") if dict(e.extra).get("kind") == "session"]
    assert [e.id for e in summaries] == [entry_id]


def test_hot_is_reset_and_open_blockers_are_carried(busy: Memory) -> None:
    old_session = tier_file(busy, "hot", "ada").meta["session"]
    ending = at(busy, later(0.25))
    report = ending.end_session("ada")
    hot = tier_file(ending, "hot", "ada")
    assert [e.slot for e in hot.entries] == ["blocker"]
    assert "waiting for CI credentials" in hot.entries[0].title
    assert report.carried == [hot.entries[0].id]
    # Between sessions: the next one starts with the next write (in every clone the same).
    assert "session" not in hot.meta
    ending.hot_add("ada", "note", "back at it")
    assert tier_file(ending, "hot", "ada").meta["session"] not in ("", old_session)
    # The open blocker is also named in the session's cold entry (a short session, whole).
    [entry] = [e for e in cold(ending, "ada") if e.id in report.cold]
    assert "Blocker: waiting for CI credentials from ops" in entry.body


def test_hot_without_blockers_is_emptied_not_removed(mem: Memory) -> None:
    # Kept, so that git never takes it and the record of its text for one renamed file.
    mem.hot_set("bo", "write the changelog")
    at(mem, later(1)).end_session("bo")
    assert mem.layout.tier_file("hot", "bo").exists()
    view = mem.hot_view("bo")
    assert view.entries == ()
    # Ending an empty session again writes nothing.
    text = mem.layout.tier_file("hot", "bo").read_bytes()
    assert mem.end_session("bo").cold == []
    assert mem.layout.tier_file("hot", "bo").read_bytes() == text


def test_session_decisions_go_to_the_team(busy: Memory) -> None:
    report = busy.end_session("ada")
    team = cold(busy, "team")
    [decision] = [e for e in team if e.id in report.decisions]
    assert decision.cls == "decision"
    assert "Keep reader retries off until #233 lands" in decision.text
    assert ("by", "ada") in decision.extra
    # A session decision is not written into Squad's own log.
    assert not (busy.layout.squad / "decisions.md").exists()


def test_decide_writes_the_team_tier_and_squad_log(mem: Memory) -> None:
    text = (
        "### 2026-03-02: Use Vitest for unit tests\n**By:** Bo\n"
        "**What:** All unit tests run on Vitest.\n**Why:** Jest was slow on ESM."
    )
    ids = mem.decide(text, by="bo")
    assert [e.id for e in cold(mem, "team")] == ids
    squad_log = (mem.layout.squad / "decisions.md").read_text(encoding="utf-8")
    assert "### 2026-03-02: Use Vitest for unit tests" in squad_log
    assert "**What:** All unit tests run on Vitest." in squad_log
    # Recording the same decision again changes neither place.
    before = snapshot(mem.layout.squad)
    assert mem.decide(text, by="bo") == ids
    after = snapshot(mem.layout.squad)
    assert {k: v for k, v in after.items() if k != "memory/tiermem-audit.jsonl"} == {
        k: v for k, v in before.items() if k != "memory/tiermem-audit.jsonl"
    }


def test_decide_without_a_heading_keeps_its_title_in_the_squad_log(mem: Memory) -> None:
    mem.decide("Snapshot test runner\n**What:** Snapshot tests run on Vitest.", by="bo")
    [entry] = cold(mem, "team")
    assert entry.title == "Snapshot test runner"
    squad_log = (mem.layout.squad / "decisions.md").read_text(encoding="utf-8")
    assert "### 2026-03-02: Snapshot test runner" in squad_log


def test_a_one_line_hot_decision_is_titled_by_its_text_in_a_spawn(mem: Memory) -> None:
    rule = "Always pin squad-sdk to an exact version in squad-cli"
    mem.hot_set("ada", "pin the sdk")
    mem.hot_add("ada", "decision", rule)
    mem.end_session("ada")
    [entry] = cold(mem, "team")
    assert (entry.cls, entry.title, entry.body) == ("policy", rule, "")
    prompt = at(mem, later(1)).spawn("ada", "pin the squad-sdk version", auto=True).prompt
    assert f"#### {rule} (policy, as of 2026-03-02, {entry.id})" in prompt


def test_ending_twice_adds_nothing(mem: Memory) -> None:
    mem.hot_set("bo", "write the changelog")
    mem.hot_add("bo", "note", "The changelog groups entries by package (see CHANGELOG.md).")
    first = mem.end_session("bo")
    before = snapshot(mem.layout.memory)
    second = mem.end_session("bo")
    assert first.cold and not second.cold
    after = snapshot(mem.layout.memory)
    assert after == before


def test_ending_again_a_session_that_only_holds_carried_blockers_changes_nothing(
    busy: Memory,
) -> None:
    # `end-session --all` re-run after a crash ends the agents it had already ended again.
    first = busy.end_session("ada")
    before = snapshot(busy.layout.memory)
    second = busy.end_session("ada")
    assert first.carried and not second.cold
    assert second.carried == first.carried
    assert snapshot(busy.layout.memory) == before


def test_a_session_with_work_after_the_carried_blockers_ends_as_usual(busy: Memory) -> None:
    busy.end_session("ada")
    later_on = at(busy, later(1))
    later_on.hot_unblock("ada", "CI credentials")
    report = later_on.end_session("ada")
    [summary] = [e for e in cold(later_on, "ada") if e.id in report.cold]
    assert "Unblocked: waiting for CI credentials from ops" in summary.body
    assert not report.carried


def test_a_crash_after_the_archive_write_is_redone_without_duplicates(busy: Memory) -> None:
    """The raw hot text was archived, then the process died: the next run finishes the job."""
    hot_text = busy.layout.tier_file("hot", "ada").read_text(encoding="utf-8")
    record = archive.new_record(
        "ada", busy.context.stamp(), "hot-session", "hot/ada.md", "hot at session end", hot_text
    )
    assert archive.write(busy.layout, record)
    report = at(busy, later(0.1)).end_session("ada")
    assert record.location in report.archived
    assert len([r for r in archive_records(busy) if r.kind == "hot-session"]) == 1
    assert len([e for e in cold(busy, "ada") if dict(e.extra).get("kind") == "session"]) == 1


def test_a_crash_before_the_hot_reset_is_redone_without_duplicates(busy: Memory) -> None:
    """Cold and the team tier were written but hot was not reset: ending again folds."""
    hot_path = busy.layout.tier_file("hot", "ada")
    hot_bytes = hot_path.read_bytes()
    first = at(busy, later(0.1)).end_session("ada")
    cold_ids = sorted(e.id for e in cold(busy, "ada"))
    team_ids = sorted(e.id for e in cold(busy, "team"))
    records = sorted(p.name for p in archive.records(busy.layout))
    hot_path.write_bytes(hot_bytes)  # the reset never happened

    second = at(busy, later(0.2)).end_session("ada")
    assert second.cold == first.cold
    assert second.decisions == first.decisions
    assert sorted(e.id for e in cold(busy, "ada")) == cold_ids
    assert sorted(e.id for e in cold(busy, "team")) == team_ids
    assert sorted(p.name for p in archive.records(busy.layout)) == records
    assert [e.slot for e in tier_file(busy, "hot", "ada").entries] == ["blocker"]


def test_checkpoint_on_overflow(mem: Memory) -> None:
    mem.hot_set("ada", "tune the font atlas packing")
    reports = [
        mem.hot_add(
            "ada",
            "note",
            f"## Atlas pass {i}\nGlyph packing pass {i} moved sprites in src/atlas/pack{i}.ts. "
            + "The shelf packer wastes space on tall glyphs. " * 9,
        )
        for i in range(10)
    ]
    overflowed = [r for r in reports if r.cold]
    assert overflowed, "ten long notes must overflow a 4 KB hot tier"
    budget = mem.context.config.hot.budget_bytes
    assert mem.hot_view("ada").bytes <= budget
    checkpoints = [e for e in cold(mem, "ada") if dict(e.extra).get("kind") == "checkpoint"]
    assert {e.id for e in checkpoints} == {i for r in overflowed for i in r.cold}
    first = overflowed[0]
    [entry] = [e for e in checkpoints if e.id == first.cold[0]]
    [location] = first.archived
    assert location in entry.sources
    raw = mem.read_archive("ada", Path(location).stem).text
    assert "Glyph packing pass 0 moved sprites in src/atlas/pack0.ts." in raw
    # Nothing waits in the queue: the checkpoint ran at once, without queueing.
    assert not mem.layout.tier_file("queue", "ada").exists()
    # The newest note is still in hot.
    assert "Atlas pass 9" in mem.hot_view("ada").markdown


def _large_cold(mem: Memory, agent: str) -> list[Entry]:
    """A cold tier larger than what a write looks at before appending to it."""
    old = [
        Entry(id=f"c-{n:010d}", cls="learning", title=f"old {n}", body="b" * 300, agent=agent)
        for n in range(300)
    ]
    path = mem.layout.tier_file("cold", agent)
    heading, meta = f"{agent}: cold memory", {"tier": "cold", "agent": agent}
    files.save(mem.layout, path, TierFile(heading, meta, "", old))
    assert path.stat().st_size > files.TAIL_BYTES
    return old


def test_a_checkpoint_into_a_large_cold_tier_appends_to_it(mem: Memory) -> None:
    path = mem.layout.tier_file("cold", "ada")
    old = _large_cold(mem, "ada")
    before, inode = path.read_bytes(), path.stat().st_ino
    mem.hot_set("ada", "tune the font atlas packing")
    reports = [
        mem.hot_add("ada", "note", f"Atlas pass {i}: " + "shelf packing. " * 40) for i in range(8)
    ]
    written = [i for r in reports for i in r.cold]
    assert written
    assert path.read_bytes().startswith(before) and path.stat().st_ino == inode
    assert [e.id for e in cold(mem, "ada")] == [e.id for e in old] + written


@pytest.mark.parametrize("large", [False, True])
def test_a_checkpoint_repeated_after_a_crash_writes_no_second_summary(
    mem: Memory, large: bool
) -> None:
    """A crash after the summary reached cold but before hot was saved: hot still holds
    what it summarised, and the next write pushes it out again."""
    from tiermem.scribe import session

    if large:
        _large_cold(mem, "ada")
    mem.hot_set("ada", "tune the font atlas packing")
    leaving = [e for e in tier_file(mem, "hot", "ada").entries]
    _, first, failed = session.checkpoint_leaving(mem.context, "ada", leaving, "s1")
    assert first and failed is None
    cold_before = mem.layout.tier_file("cold", "ada").read_bytes()
    _, again, failed = session.checkpoint_leaving(mem.context, "ada", leaving, "s1")
    assert (again, failed) == (first, None)
    assert mem.layout.tier_file("cold", "ada").read_bytes() == cold_before


# --- expire -------------------------------------------------------------------------------


def test_ttl_counts_from_last_use(mem: Memory) -> None:
    atlas = session(
        mem,
        "ada",
        "tune the font atlas packing",
        "The shelf packer in src/atlas/pack.ts "
        "wastes space on tall glyphs; switched to skyline packing.",
    )
    sockets = session(
        at(mem, later(0.1)),
        "ada",
        "fix the websocket reconnect storm",
        "Clients reconnect in lockstep after a server restart; added jitter in src/net/socket.ts.",
    )
    worked(mem, range(1, 32))
    hits = at(mem, later(20)).search("websocket reconnect jitter")
    assert sockets in [h.id for h in hits]
    assert atlas not in [h.id for h in hits]
    # The search recorded its use in this clone; Scribe folds it into the team's ledger.
    at(mem, later(20)).scribe_run()
    assert use.ledger(mem.layout)[sockets] == later(20)[:10]

    report = at(mem, later(31)).scribe_run()
    assert report.expired == [atlas]
    assert [e.id for e in cold(mem, "ada")] == [sockets]
    # The expired entry left cold for the archive, whole.
    [gone] = [r for r in archive_records(mem) if r.kind == "expire"]
    assert atlas in gone.text
    assert "skyline packing" in gone.text
    assert gone.source == "cold/ada.md"


def test_nothing_expires_before_the_ttl(mem: Memory) -> None:
    entry_id = session(mem, "ada", "tune the font atlas packing", "Skyline packing wins.")
    report = at(mem, later(29)).scribe_run()
    assert report.expired == []
    assert [e.id for e in cold(mem, "ada")] == [entry_id]


def test_a_team_back_from_a_pause_finds_its_last_sessions(mem: Memory) -> None:
    # Four months without a session: the calendar moved, the team's work did not.
    entry_id = session(mem, "ada", "tune the font atlas packing", "Skyline packing wins.")
    report = at(mem, later(120)).scribe_run()
    assert report.expired == []
    worked(mem, range(121, 152))  # a month of work after it: now it is old
    report = at(mem, later(152)).scribe_run()
    assert report.expired == [entry_id]


def put_standing(mem: Memory, agent: str, body: str) -> Entry:
    """An agent's standing entry, as an import writes it, in its cold file."""
    entry = Entry(
        "i-5a1d1e0000",
        "learning",
        "Core Context",
        body,
        agent=agent,
        created=T0,
        used=T0,
        tags=("standing",),
    )
    path = mem.layout.tier_file("cold", agent)
    with files.update(mem.layout, "cold", path, lambda: files.blank("cold", agent)) as tier:
        tier.put(entry)
    return entry


def test_a_standing_entry_never_expires_and_takes_none_of_the_cold_budget(mem: Memory) -> None:
    budget = mem.context.config.cold.budget_bytes
    # Alone it is over the whole budget: counted, it would push every session out.
    core = put_standing(
        mem, "ada", "\n".join(["I own the renderer in `src/render/`."] * (budget // 30))
    )
    sessions = [
        session(at(mem, later(n / 100)), "ada", f"tune pass {n}", f"Pass {n} in src/p{n}.ts.")
        for n in range(3)
    ]
    report = at(mem, later(1)).scribe_run()
    assert (report.expired, report.over_budget) == ([], [])
    assert [e.id for e in cold(mem, "ada")] == [core.id, *sessions]
    worked(mem, range(2, 40))
    for days in (31, 400, 4000):
        report = at(mem, later(days)).scribe_run()
        assert core.id not in report.expired + report.over_budget
        assert [(e.id, e.body) for e in cold(mem, "ada") if e.standing] == [(core.id, core.body)]
    assert [e.id for e in cold(mem, "ada")] == [core.id]  # the sessions expired as usual


# --- promote --------------------------------------------------------------------------------


def test_a_structured_entry_older_than_seven_days_moves_to_the_wiki(mem: Memory) -> None:
    [decision_id] = mem.decide(
        "### 2026-03-02: Storage API contract\n**By:** ada\n"
        "**What:** StorageProvider exposes read(key) and write(key, value).\n"
        "**Why:** adapters need one interface.",
        by="ada",
    )
    [before] = cold(mem, "team")
    assert at(mem, later(6)).scribe_run().promoted == {}
    assert [e.id for e in cold(mem, "team")] == [decision_id]

    report = at(mem, later(8)).scribe_run()
    [(topic, ids)] = report.promoted.items()
    assert ids == [decision_id]
    assert cold(mem, "team") == []
    moved = wiki_entries(mem)[decision_id]
    assert moved.sources == before.sources
    assert moved.title == before.title
    assert moved.body == before.body
    assert topic in moved.tags
    assert f"tiermem id={decision_id}" in mem.wiki_read(topic)


def test_unstructured_entries_are_never_promoted(mem: Memory) -> None:
    session(mem, "ada", "tune the font atlas packing", "Skyline packing wins over shelves.")
    report = at(mem, later(8)).scribe_run()
    assert report.promoted == {}
    assert mem.wiki_pages() == []


# --- supersede ------------------------------------------------------------------------------


def test_a_newer_decision_on_the_same_subject_supersedes_the_older(mem: Memory) -> None:
    [old] = mem.decide(
        "Snapshot test runner\n**What:** Snapshot tests run on Jest with the jsdom environment.",
        by="bo",
    )
    [new] = at(mem, later(2)).decide(
        "Snapshot test runner\n**What:** Snapshot tests run on Vitest with happy-dom.", by="bo"
    )
    report = at(mem, later(2)).scribe_run()
    assert report.superseded == [(old, new)]

    everything = {e.id: e for e in cold(mem, "team")} | wiki_entries(mem)
    assert everything[old].status == "superseded"
    assert everything[old].superseded_by == new
    assert old in everything[new].supersedes
    assert everything[new].active

    mem = at(mem, later(3))
    prompt = mem.spawn("ada", "Which snapshot test runner do we use?", auto=True).prompt
    assert "happy-dom" in prompt
    assert "jsdom" not in prompt
    for flags in ({"include_cold": True}, {"include_wiki": ()}):
        prompt = mem.spawn("ada", "snapshot test runner jsdom", **flags).prompt
        assert "jsdom environment" not in prompt
    hits = mem.context.index.search("snapshot test runner jsdom", Scope(active_only=True))
    assert old not in [h.doc.id for h in hits]
    assert new in [h.doc.id for h in hits]
    # A second run finds nothing more to supersede.
    assert at(mem, later(4)).scribe_run().superseded == []


# --- policies ---------------------------------------------------------------------------------


def test_policies_never_expire(mem: Memory) -> None:
    [team_policy] = mem.decide(
        "### 2026-03-02: User directive\n**By:** user\n"
        "**What:** Always use Zod for validating API input.\n**Why:** one schema library.",
        by="user",
    )
    mem.hot_set("ada", "set up input validation")
    mem.hot_add(
        "ada",
        "note",
        "## Directive: parsing untrusted input\nNever parse request bodies by hand; every "
        "handler in src/api/ goes through the shared zod schemas in src/api/schemas.ts.",
    )
    report = mem.end_session("ada")
    [agent_policy] = [
        e.id for e in cold(mem, "ada") if e.id in report.knowledge and e.cls == "policy"
    ]
    for days in (31, 400, 800):
        at(mem, later(days)).scribe_run()
        reachable = {e.id: e for e in cold(mem, "team") + cold(mem, "ada")}
        reachable |= wiki_entries(mem)
        for policy in (team_policy, agent_policy):
            assert policy in reachable, f"policy {policy} gone after {days} days"
            assert reachable[policy].active
            assert reachable[policy].cls == "policy"
    (mem.layout.squad / "agents" / "bo").mkdir(parents=True)  # on the team, no memory yet
    prompt = at(mem, later(800)).spawn("bo", "write the release notes").prompt
    assert "Zod" not in prompt  # pinned where it bears on the task, not everywhere
    prompt = at(mem, later(800)).spawn("bo", "validate the release API input").prompt
    assert "Always use Zod for validating API input." in prompt


# --- the Squad decision inbox ---------------------------------------------------------------


def write_inbox(root: Path) -> Path:
    inbox = root / ".squad" / "decisions" / "inbox"
    inbox.mkdir(parents=True)
    (root / ".squad" / "decisions.md").write_text(
        "# Decisions\n\n### 2026-03-01: Use Vitest for unit tests\n**By:** Bo\n"
        "**What:** All unit tests run on Vitest.\n**Why:** Jest was slow on ESM.\n",
        encoding="utf-8",
    )
    gate = (
        "### 2026-03-26: Smoke test gates publish\n**By:** Ada\n"
        "**What:** The publish workflow depends on the `smoke-test` job.\n"
        "**Why:** a broken CLI reached npm in v0.9.0.\n"
    )
    (inbox / "ada-smoke-gate.md").write_text(gate, encoding="utf-8")
    # The same decision again, written by a second agent with different spacing.
    (inbox / "bo-smoke-gate.md").write_text(gate.replace("**By:**", "\n**By:**"), "utf-8")
    # A decision already in decisions.md, in the `# Decision:` form.
    (inbox / "bo-runner.md").write_text(
        "# Decision: Use Vitest for unit tests\n\n**By:** Bo\n"
        "**What:** All unit tests run on Vitest.\n**Why:** Jest was slow on ESM.\n",
        encoding="utf-8",
    )
    (inbox / "cy-release-branches.md").write_text(
        "# Decision: Release branch naming\n\n**By:** Cy\n**Date:** 2026-03-27\n\n"
        "Release branches are named `release/vX.Y`; hotfixes `hotfix/vX.Y.Z`.\n",
        encoding="utf-8",
    )
    return inbox


def test_inbox_is_merged_into_decisions_md(tmp_path: Path) -> None:
    inbox = write_inbox(tmp_path)
    mem, _ = Memory.init(tmp_path, now="2026-03-28T10:00:00Z")
    report = mem.scribe_run()
    assert report.inbox_merged == [
        "ada-smoke-gate.md",
        "bo-runner.md",
        "bo-smoke-gate.md",
        "cy-release-branches.md",
    ]
    squad_log = (tmp_path / ".squad" / "decisions.md").read_text(encoding="utf-8")
    assert squad_log.startswith(
        "# Decisions\n\n### 2026-03-01: Use Vitest for unit tests\n**By:** Bo\n"
    )
    assert squad_log.count("### 2026-03-26: Smoke test gates publish\n") == 1
    assert squad_log.count("Use Vitest for unit tests") == 1
    assert "### 2026-03-27: Release branch naming\n" in squad_log
    assert list(inbox.iterdir()) == []
    # The merged decisions reach the team tier, once each.
    titles = sorted(e.title for e in cold(mem, "team"))
    assert titles.count("Smoke test gates publish") == 1
    assert "Release branch naming" in " ".join(titles)
    assert any(line["action"] == "inbox-merge" for line in audit_lines(mem))


def test_inbox_merge_twice_changes_nothing(tmp_path: Path) -> None:
    write_inbox(tmp_path)
    mem, _ = Memory.init(tmp_path, now="2026-03-28T10:00:00Z")
    mem.scribe_run()
    before = snapshot(tmp_path / ".squad")
    report = mem.scribe_run()
    assert report.inbox_merged == []
    assert snapshot(tmp_path / ".squad") == before


def test_inbox_files_stay_until_the_merge_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = write_inbox(tmp_path)
    names = sorted(p.name for p in inbox.iterdir())
    original = (tmp_path / ".squad" / "decisions.md").read_bytes()
    mem, _ = Memory.init(tmp_path, now="2026-03-28T10:00:00Z")
    real_write = tiermem_files.atomic_write

    def failing_write(path: Path, data: str | bytes) -> None:
        if path.name == "decisions.md":
            raise OSError(28, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(tiermem_files, "atomic_write", failing_write)
    with pytest.raises(OSError, match="No space left"):
        mem.scribe_run()
    assert sorted(p.name for p in inbox.iterdir()) == names
    assert (tmp_path / ".squad" / "decisions.md").read_bytes() == original

    monkeypatch.setattr(tiermem_files, "atomic_write", real_write)
    assert len(mem.scribe_run().inbox_merged) == 4
    assert list(inbox.iterdir()) == []


def test_an_inbox_file_with_front_matter_keeps_its_title_and_date(tmp_path: Path) -> None:
    inbox = tmp_path / ".squad" / "decisions" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "cy-lint-warnings.md").write_text(
        "---\ndate: 2026-03-27\nauthor: Cy\n---\n"
        "Lint runs with `--max-warnings 0` in CI so warnings cannot pile up.\n",
        encoding="utf-8",
    )
    mem, _ = Memory.init(tmp_path, now="2026-03-28T10:00:00Z")
    mem.scribe_run()
    squad_log = (tmp_path / ".squad" / "decisions.md").read_text(encoding="utf-8")
    assert "### 2026-03-27: Cy lint warnings\n" in squad_log
    [entry] = cold(mem, "team")
    assert entry.title == "Cy lint warnings"
    assert entry.created.startswith("2026-03-27")


# --- dry run, audit, report -------------------------------------------------------------------


def full_store(root: Path) -> Memory:
    """Something for every maintenance step to do."""
    write_inbox(root)
    mem, _ = Memory.init(root, now=T0)
    session(mem, "ada", "tune the font atlas packing", "Skyline packing wins over zanzibar.")
    mem.decide("Snapshot test runner\n**What:** Jest with jsdom runs zanzibar snapshots.", by="bo")
    at(mem, later(1)).decide(
        "Snapshot test runner\n**What:** Vitest with happy-dom runs zanzibar snapshots.", by="bo"
    )
    mem.hot_set("bo", "zanzibar long notes")
    for i in range(8):
        mem.hot_add("bo", "note", f"Zanzibar note {i}: " + "the zanzibar glyph cache. " * 30)
    worked(mem, range(2, 40))
    return mem


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    mem = full_store(tmp_path)
    before = snapshot(tmp_path)
    report = at(mem, later(40)).scribe_run(dry_run=True)
    assert report.dry_run
    assert report.inbox_merged and report.superseded and report.expired
    assert snapshot(tmp_path) == before
    real = at(mem, later(40)).scribe_run()
    assert real.inbox_merged == report.inbox_merged
    assert real.superseded == report.superseded
    assert snapshot(tmp_path) != before


def test_a_dry_run_predicts_the_real_run(mem: Memory) -> None:
    mem.decide("Snapshot test runner\n**What:** Jest with jsdom runs the snapshots.", by="bo")
    at(mem, later(1)).decide(
        "Snapshot test runner\n**What:** Vitest with happy-dom runs the snapshots.", by="bo"
    )
    dry = at(mem, later(40)).scribe_run(dry_run=True)
    real = at(mem, later(40)).scribe_run()
    assert dry.superseded == real.superseded
    assert set(dry.expired) == set(real.expired)
    assert dry.promoted == real.promoted  # the same entries to the same pages


def test_every_action_is_audited_without_its_content(tmp_path: Path) -> None:
    mem = full_store(tmp_path)
    at(mem, later(40)).scribe_run()
    lines = audit_lines(mem)
    actions = {line["action"] for line in lines}
    for action in ("end-session", "decision", "inbox-merge", "supersede", "promote", "expire"):
        assert action in actions, f"no audit line for {action}"
    for line in lines:
        assert {"time", "action", "ids", "tiers"} <= set(line)
        assert isinstance(line["ids"], list)
        assert isinstance(line["tiers"], list) and line["tiers"]
        parse_time(str(line["time"]))
    # Ids are named, but never the text.
    assert any(line["ids"] for line in lines if line["action"] == "expire")
    text = mem.layout.audit.read_text(encoding="utf-8").lower()
    for word in ("zanzibar", "skyline", "jsdom", "happy-dom", "smoke-test"):
        assert word not in text


def test_run_report_text_and_json(tmp_path: Path, run_cli: RunCli) -> None:
    full_store(tmp_path)
    common = ("--root", str(tmp_path), "--now", later(40))
    code, out, err = run_cli("scribe", "run", "--dry-run", *common)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("inbox: would merge 4 files into .squad/decisions.md (adding ")
    assert lines[0].endswith(
        "lines) and delete them from .squad/decisions/inbox/: ada-smoke-gate.md, bo-runner.md, "
        "bo-smoke-gate.md, cy-release-branches.md"
    )
    assert lines[1] == "checkpoints: would compress 0 queued agents"
    assert "supersede: would mark 1 older entry superseded" in lines

    code, out, err = run_cli("scribe", "run", "--format", "json", *common)
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert set(data) == {
        "dry_run",
        "checkpoints",
        "inbox_merged",
        "inbox_lines",
        "inbox_skipped",
        "followed",
        "follow_written",
        "follow_replaced",
        "superseded",
        "promoted",
        "expired",
        "over_budget",
        "refreshed",
        "notes",
        "skipped",
    }
    assert data["dry_run"] is False
    assert len(data["inbox_merged"]) == 4 and data["inbox_lines"] > 4
    assert len(data["superseded"]) == 1 and len(data["superseded"][0]) == 2
    assert data["expired"]
    assert all(isinstance(ids, list) for ids in data["promoted"].values())

    code, out, _ = run_cli("scribe", "run", *common)
    assert code == 0
    assert "inbox: merge 0 files into .squad/decisions.md" in out.splitlines()
    assert "supersede: mark 0 older entries superseded" in out.splitlines()


def test_end_session_cli(busy: Memory, run_cli: RunCli) -> None:
    code, out, err = run_cli("scribe", "end-session", "ada", "--root", str(busy.root))
    assert (code, err) == (0, "")
    assert out.startswith("ada: session -> cold c-")
    assert "1 blocker(s) carried" in out
    code, out, _ = run_cli(
        "scribe", "end-session", "--all", "--format", "json", "--root", str(busy.root)
    )
    assert code == 0
    reports = {r["agent"]: r for r in json.loads(out)}
    assert {"cold", "knowledge", "decisions", "archived", "carried"} <= set(reports["ada"])
    # Only the carried blocker was left in hot: it is carried again.
    assert len(reports["ada"]["carried"]) == 1


# --- a session's summary keeps what it is about ------------------------------------------

LONG_ACTION = (
    "Reviewed the Hono middleware on every operator-facing route and moved the auth check "
    "after the static handler in src/pipeline/actions.ts"
)


def test_a_session_under_2_kb_goes_to_cold_whole(mem: Memory) -> None:
    mem.hot_set("ada", "review the middleware order")
    mem.hot_add("ada", "action", LONG_ACTION)
    notes = [
        f"Route {n} of the dashboard was walked through with ops and its caller written down."
        for n in range(12)
    ]
    for note in notes:
        mem.hot_add("ada", "note", note)
    mem.hot_add("ada", "note", "The static assets and published images stay public.")
    report = at(mem, later(0.25)).end_session("ada")
    assert 600 < report.raw_bytes <= 2048
    [entry] = [e for e in cold(mem, "ada") if e.id in report.cold]
    for text in (LONG_ACTION, *notes, "The static assets and published images stay public."):
        assert text in entry.body, text


def test_a_longer_sessions_summary_never_cuts_a_line_or_a_path(mem: Memory) -> None:
    mem.hot_set("ada", "review the middleware order")
    mem.hot_add("ada", "action", LONG_ACTION)
    mem.hot_add(
        "ada", "decision", "Operator routes need a session cookie from src/server/session.ts"
    )
    for n in range(40):
        mem.hot_add("ada", "note", f"Route {n} was walked through with ops; its caller is noted.")
    report = at(mem, later(0.25)).end_session("ada")
    assert report.raw_bytes > 2048
    [entry] = [e for e in cold(mem, "ada") if e.id in report.cold]
    assert f"Did: {LONG_ACTION}" in entry.body
    assert "Decided: Operator routes need a session cookie from src/server/session.ts" in entry.body
    assert "…" not in entry.body
