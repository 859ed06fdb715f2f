"""The hot tier: every verb through the API and the CLI, the action window, the byte budget,
stdin, and bad input that must leave the store untouched."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiermem.errors import NotFoundError, UsageError
from tiermem.hot import tier as hot_tier
from tiermem.hot.tier import slot_text
from tiermem.memory import Memory
from tiermem.storage.entries import Entry, TierFile

RunCli = Callable[..., tuple[int, str, str]]
NOW = "2026-03-02T10:00:00Z"
BUDGET = 4096


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under a folder, by relative path, with its bytes.

    Lock files are left out: they are empty, git-ignored and exist only to be locked.
    """
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".locks" not in p.relative_to(folder).parts
    }


def slots(mem: Memory, agent: str) -> list[tuple[str, str]]:
    """(slot, text) of the agent's hot entries, in file order."""
    return [(e.slot, slot_text(e)) for e in mem.hot_view(agent).entries]


def memory_text(mem: Memory) -> str:
    """Everything that hot, the Scribe queue, cold and the archive hold, as one string."""
    parts = []
    for tier in ("hot", "queue", "cold", "archive"):
        for path in sorted(mem.layout.tier_dir(tier).rglob("*.md")):
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def record_id(location: str) -> str:
    """The record id in an archive location such as archive/ada/a-0123456789.md."""
    return Path(location).stem


# --- the verbs through the API ------------------------------------------------------------


def test_set_replaces_the_task_and_archives_the_old_one(store: Memory) -> None:
    store.hot_set("ada", "fix the flaky reader", why="release is blocked", talking_to="bo")
    assert slots(store, "ada") == [
        ("task", "fix the flaky reader"),
        ("why", "release is blocked"),
        ("talking-to", "bo"),
    ]
    report = store.hot_set("Ada", "write the regression test")
    assert slots(store, "ada")[0] == ("task", "write the regression test")
    assert [s for s, _ in slots(store, "ada")].count("task") == 1
    [location] = report.archived
    assert "fix the flaky reader" in store.read_archive("ada", record_id(location)).text


def test_add_each_slot_and_show(store: Memory) -> None:
    store.hot_set("ada", "ship 1.4.2")
    store.hot_add("ada", "action", "reproduced the bug")
    store.hot_add("ada", "decision", "keep retries off")
    store.hot_add("ada", "blocker", "waiting for CI credentials")
    store.hot_add("ada", "note", "ReadBuffer.fill drops the last chunk\nsecond line of the note")
    assert slots(store, "ada") == [
        ("task", "ship 1.4.2"),
        ("action", "reproduced the bug"),
        ("decision", "keep retries off"),
        ("blocker", "waiting for CI credentials"),
        ("note", "ReadBuffer.fill drops the last chunk\nsecond line of the note"),
    ]
    shown = store.hot_view("ada").markdown
    assert "**Task:** ship 1.4.2" in shown
    assert "- keep retries off" in shown
    assert "**Blockers:**" in shown


def test_unblock_turns_the_blocker_into_an_action(store: Memory) -> None:
    store.hot_add("ada", "blocker", "waiting for CI credentials")
    store.hot_add("ada", "blocker", "review from bo")
    store.hot_unblock("ada", "CI CREDENTIALS")
    assert slots(store, "ada") == [
        ("blocker", "review from bo"),
        ("action", "Unblocked: waiting for CI credentials"),
    ]
    with pytest.raises(NotFoundError):
        store.hot_unblock("ada", "nothing like this")
    store.hot_add("ada", "blocker", "review from cy")
    with pytest.raises(NotFoundError, match="2 blockers"):
        store.hot_unblock("ada", "review")


def test_unblock_by_id(store: Memory) -> None:
    [blocker_id] = store.hot_add("ada", "blocker", "waiting for a reply").ids
    store.hot_unblock("ada", blocker_id)
    assert slots(store, "ada") == [("action", "Unblocked: waiting for a reply")]


def test_clear_archives_everything_and_empties_hot(store: Memory) -> None:
    store.hot_set("ada", "a task")
    store.hot_add("ada", "note", "a note worth keeping")
    report = store.hot_clear("ada")
    # Emptied, not removed: git never takes it and the record of its text for a rename.
    hot_file = store.layout.tier_file("hot", "ada")
    assert hot_file.exists()
    assert store.hot_view("ada").entries == ()
    [location] = report.archived
    text = store.read_archive("ada", record_id(location)).text
    assert "a task" in text
    assert "a note worth keeping" in text
    emptied = hot_file.read_bytes()
    assert store.hot_clear("ada").archived == []  # nothing left to clear: nothing written
    assert hot_file.read_bytes() == emptied
    with pytest.raises(NotFoundError):
        store.hot_clear("nobody")


def test_only_the_last_five_actions_stay(store: Memory) -> None:
    archived: list[str] = []
    for n in range(1, 9):
        archived += store.hot_add("ada", "action", f"action number {n}").archived
    assert slots(store, "ada") == [("action", f"action number {n}") for n in range(4, 9)]
    assert len(archived) == 3
    texts = [store.read_archive("ada", record_id(loc)).text for loc in archived]
    for n, text in zip((1, 2, 3), texts, strict=True):
        assert f"action number {n}" in text
    queued = store.layout.tier_file("queue", "ada").read_text(encoding="utf-8")
    assert all(f"action number {n}" in queued for n in (1, 2, 3))


def test_the_action_window_follows_the_config(store: Memory) -> None:
    store.layout.config.write_text("[hot]\nmax_actions = 2\n", encoding="utf-8")
    mem = Memory(store.root)
    for n in range(1, 5):
        mem.hot_add("ada", "action", f"step {n}")
    assert slots(mem, "ada") == [("action", "step 3"), ("action", "step 4")]
    mem.close()


# --- the verbs through the CLI ------------------------------------------------------------


def test_every_verb_through_the_cli(store: Memory, run_cli: RunCli) -> None:
    root = ("--root", str(store.root))
    steps = [
        ("hot", "set", "ada", "--task", "ship 1.4.2", "--why", "users wait", "--talking-to", "bo"),
        ("hot", "action", "ada", "bisected the regression"),
        ("hot", "decide", "ada", "pin the parser version"),
        ("hot", "block", "ada", "waiting for review"),
        ("hot", "note", "ada", "the parser changed in 2.0"),
        ("hot", "unblock", "ada", "review"),
    ]
    for step in steps:
        code, out, err = run_cli(*step, *root)
        assert (code, err) == (0, "")
        assert out.startswith("hot: ada ")
    code, out, _ = run_cli("hot", "show", "ada", "--format", "json", *root)
    assert code == 0
    shown = json.loads(out)
    assert shown["agent"] == "ada"
    # The budget counts the text a spawn loads, each write once (not the file's metadata).
    assert shown["bytes"] == len((shown["markdown"] + "\n").encode("utf-8"))
    assert shown["bytes"] < store.layout.tier_file("hot", "ada").stat().st_size
    assert [(e["slot"], e["title"]) for e in shown["entries"]] == [
        ("task", "Task: ship 1.4.2"),
        ("why", "Why: users wait"),
        ("talking-to", "Talking to: bo"),
        ("action", "Action: bisected the regression"),
        ("decision", "Decision: pin the parser version"),
        ("note", "Note: the parser changed in 2.0"),
        ("action", "Action: Unblocked: waiting for review"),
    ]
    code, out, _ = run_cli("hot", "show", "ada", *root)
    assert code == 0
    assert "**Task:** ship 1.4.2" in out
    code, out, _ = run_cli("hot", "clear", "ada", *root)
    assert code == 0
    assert "7 item(s) archived" in out
    code, out, _ = run_cli("hot", "show", "ada", *root)
    assert (code, out) == (0, "(no hot memory for ada)\n")


def test_dash_reads_stdin(store: Memory, run_cli: RunCli) -> None:
    text = "a note from a pipe\nwith a second line ünïcödé\n"
    code, _, err = run_cli(
        "hot", "note", "ada", "-", "--root", str(store.root), stdin=text.encode("utf-8")
    )
    assert (code, err) == (0, "")
    code, _, err = run_cli(
        "hot", "set", "ada", "--task", "-", "--root", str(store.root), stdin=b"task from stdin"
    )
    assert (code, err) == (0, "")
    assert slots(store, "ada") == [
        ("task", "task from stdin"),
        ("note", "a note from a pipe\nwith a second line ünïcödé"),
    ]


def test_dash_reads_stdin_of_a_real_process(store: Memory) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tiermem", "hot", "note", "ada", "-", "--root", str(store.root)],
        input=b"piped through a real process\n",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert slots(store, "ada") == [("note", "piped through a real process")]


# --- the budget -------------------------------------------------------------------------


def test_a_note_over_the_budget_is_archived_and_checkpointed(
    store: Memory, run_cli: RunCli
) -> None:
    store.hot_set("ada", "keep the task in hot")
    big = "oversized note " + " ".join(f"word{n}" for n in range(900))
    assert len(big.encode()) > BUDGET
    code, out, err = run_cli(
        "hot", "note", "ada", "-", "--root", str(store.root), stdin=big.encode()
    )
    assert (code, err) == (0, "")
    assert f"hot budget {BUDGET} bytes" in out
    assert "raw text archived in archive/ada/a-" in out
    assert "Scribe checkpointed it to cold (c-" in out
    hot_path = store.layout.tier_file("hot", "ada")
    assert store.hot_view("ada").bytes <= BUDGET
    hot_text = hot_path.read_text(encoding="utf-8")
    assert "keep the task in hot" in hot_text
    assert "word899" not in hot_text
    location = out.split("raw text archived in ")[1].split(";")[0]
    assert big in store.read_archive("ada", record_id(location)).text
    cold = store.layout.tier_file("cold", "ada").read_text(encoding="utf-8")
    cold_id = out.split("checkpointed it to cold (")[1].split(")")[0].split(",")[0]
    assert f"id={cold_id} " in cold
    assert f"sources={location}" in cold or f",{location}" in cold
    queue = store.layout.tier_file("queue", "ada")  # summarised at once: never queued
    assert not queue.exists() or "<!-- tiermem id=" not in queue.read_text(encoding="utf-8")


_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
_VERBS = ["action", "decision", "blocker", "note", "task", "why"]


def _text(marker: str, size: int, newline_every: int) -> str:
    words = [marker]
    total = len(marker)
    n = 0
    while total < size:
        word = _WORDS[n % len(_WORDS)]
        sep = "\n" if newline_every and n % newline_every == newline_every - 1 else " "
        words.append(sep + word)
        total += len(word) + 1
        n += 1
    return "".join(words)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_VERBS),
            st.integers(min_value=1, max_value=6 * 1024),
            st.sampled_from([0, 0, 7, 40]),
        ),
        min_size=1,
        max_size=14,
    )
)
def test_hot_stays_within_budget_and_loses_nothing(writes: list[tuple[str, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        mem, _ = Memory.init(folder, now=NOW)
        written = []
        for n, (verb, size, newline_every) in enumerate(writes):
            text = _text(f"marker{n:03d}", size, newline_every)
            if verb == "task":
                mem.hot_set("ada", text)
            elif verb == "why":
                mem.hot_set("ada", "the task", why=text)
            else:
                mem.hot_add("ada", verb, text)
            written.append(text)
            assert mem.hot_view("ada").bytes <= BUDGET
        everything = memory_text(mem)
        missing = [t[:12] for t in written if t not in everything]
        assert missing == []
        mem.close()


# --- bad input ----------------------------------------------------------------------------


BAD_NAMES = ["..", "a/b", "/etc", "x\x00y", "\x1b[31m", "", " ", "a\\b", "~root", "x" * 65, "é"]


@pytest.fixture
def used_store(store: Memory) -> Memory:
    """A store with some memory in it, so that 'unchanged' means something."""
    store.hot_set("ada", "a task")
    for n in range(7):
        store.hot_add("ada", "action", f"action {n}")
    store.sync()
    return store


def _assert_rejected(mem: Memory, result: tuple[int, str, str], before: dict[str, bytes]) -> None:
    code, out, err = result
    assert code == 2
    assert out == ""
    assert err.startswith("tiermem: error: ")
    assert err.endswith("\n")
    assert err.count("\n") == 1
    assert snapshot(mem.layout.squad) == before


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize(
    "verb",
    [
        ("note", "{name}", "text"),
        ("set", "{name}", "--task", "text"),
        ("show", "{name}"),
        ("clear", "{name}"),
        ("unblock", "{name}", "x"),
    ],
    ids=["note", "set", "show", "clear", "unblock"],
)
def test_bad_agent_names_are_rejected(
    used_store: Memory, run_cli: RunCli, name: str, verb: tuple[str, ...]
) -> None:
    before = snapshot(used_store.layout.squad)
    args = [part.replace("{name}", name) for part in verb]
    result = run_cli("hot", *args, "--root", str(used_store.root))
    _assert_rejected(used_store, result, before)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_agent_names_are_rejected_by_the_api(used_store: Memory, name: str) -> None:
    before = snapshot(used_store.layout.squad)
    with pytest.raises(UsageError):
        used_store.hot_add(name, "note", "text")
    with pytest.raises(UsageError):
        used_store.hot_set(name, "text")
    with pytest.raises(UsageError):
        used_store.hot_view(name)
    assert snapshot(used_store.layout.squad) == before


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("note", "ada", ""), None),
        (("note", "ada", "   \n\t "), None),
        (("action", "ada", "-"), b""),
        (("decide", "ada", "-"), b"  \n  \n"),
        (("note", "ada", "-"), b"caf\xe9 is not UTF-8"),
        (("note", "ada", "-"), b"\xff\xfe\x00"),
        (("block", "ada", "-"), b"x" * (1024 * 1024 + 1)),
        (("note", "ada", "y" * (1024 * 1024 + 1)), None),
        (("note", "ada", "nul\x00inside"), None),
        (("set", "ada", "--task", ""), None),
        (("set", "ada", "--task", "-"), b"\xc3\x28"),
        (("set", "ada", "--task", "ok", "--why", "-"), b"\x80"),
        (("unblock", "ada", "no such blocker"), None),
        (("show", "ghost"), None),
        (("clear", "ghost"), None),
    ],
    ids=[
        "empty",
        "whitespace",
        "empty-stdin",
        "blank-stdin",
        "latin1-stdin",
        "garbage-stdin",
        "stdin-over-1MB",
        "argv-over-1MB",
        "nul",
        "empty-task",
        "bad-task-stdin",
        "bad-why-stdin",
        "unknown-blocker",
        "show-unknown-agent",
        "clear-unknown-agent",
    ],
)
def test_bad_input_writes_nothing(
    used_store: Memory, run_cli: RunCli, args: tuple[str, ...], stdin: bytes | None
) -> None:
    before = snapshot(used_store.layout.squad)
    result = run_cli("hot", *args, "--root", str(used_store.root), stdin=stdin)
    _assert_rejected(used_store, result, before)


def test_show_unknown_agent_says_so(store: Memory, run_cli: RunCli) -> None:
    code, _, err = run_cli("hot", "show", "ghost", "--root", str(store.root))
    assert code == 2
    assert "unknown agent 'ghost'" in err


def test_empty_why_is_rejected(used_store: Memory, run_cli: RunCli) -> None:
    before = snapshot(used_store.layout.squad)
    result = run_cli(
        "hot", "set", "ada", "--task", "new task", "--why", "", "--root", str(used_store.root)
    )
    _assert_rejected(used_store, result, before)


# --- data, then words ---------------------------------------------------------------------


def test_a_hot_write_returns_data_and_its_result_says_it(store: Memory) -> None:
    from tiermem.hot import writes

    for n in range(12):  # past the action window: older actions leave hot
        step = writes.add(store.context, "ada", "action", f"ran migration step {n}")
    assert step.messages == []  # the step says nothing: its result does
    assert (step.change, step.left, step.overflow) == ("action", 1, 0)
    assert step.bytes == store.hot_view("ada").bytes
    assert step.lines() == [
        f"hot: ada action saved ({step.bytes} bytes)",
        f"1 older item(s) left hot; archived in {step.archived[-1]} and queued for the "
        "session summary",
    ]
    report = store.hot_add("ada", "note", "x " * 3000)
    assert report.overflow > 0 and report.budget == BUDGET
    assert report.messages == report.lines() and report.messages[1].startswith(
        f"hot budget {BUDGET} bytes: {report.overflow} bytes moved out; raw text archived in "
    )
    cleared = store.hot_clear("ada")
    queued = f"{cleared.left} item(s) archived and queued for Scribe"
    assert cleared.messages == [f"hot: ada cleared; {queued}"]
    assert cleared.to_json()["messages"] == cleared.messages


def _fit_by_rendering(hot: TierFile, budget: int, protect: set[str]) -> list[Entry]:
    """`fit` as it was written first: the whole file rendered again before each eviction."""
    evicted: list[Entry] = []
    down_to = int(budget * hot_tier.CHECKPOINT_DOWN_TO)
    if hot_tier.size(hot) > budget:
        for slots, floor in ((("note", "action"), down_to), (hot_tier._EVICTION_ORDER, budget)):
            for slot in slots:
                ordered = sorted(
                    hot_tier.of_slot(hot, slot), key=lambda e: (e.id in protect, e.created)
                )
                for entry in ordered:
                    now = hot_tier.size(hot)
                    if now <= floor or (entry.id in protect and now <= budget):
                        break
                    hot.remove({entry.id})
                    evicted.append(entry)
                else:
                    continue
                break
    return evicted


_SLOTS = st.sampled_from(tuple(hot_tier.LABELS))
_TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    notes=st.lists(st.tuples(_SLOTS, _TEXTS, st.integers(0, 9)), max_size=25),
    budget=st.integers(200, 6000),
    protect_first=st.booleans(),
)
def test_a_full_tier_gives_up_what_rendering_it_again_each_time_would(
    notes: list[tuple[str, str, int]], budget: int, protect_first: bool
) -> None:
    # `fit` counts each leaving entry's bytes instead of rendering the file again: the same
    # entries leave, in the same order, and the file ends at the size it says.
    hot = hot_tier.new_file("ada", "s1", "2026-03-01T09:00:00Z")
    for n, (slot, text, day) in enumerate(notes):
        stamp = f"2026-03-{1 + day:02d}T09:00:00Z"
        hot.entries.append(hot_tier.make_entry("ada", slot, text, stamp, "s1", n))
    protect = {hot.entries[0].id} if protect_first and hot.entries else set()
    again = TierFile(heading=hot.heading, meta=dict(hot.meta), entries=list(hot.entries))
    assert [e.id for e in hot_tier.fit(hot, budget, protect)] == [
        e.id for e in _fit_by_rendering(again, budget, protect)
    ]
    assert hot.entries == again.entries


# --- what the budget counts --------------------------------------------------------------

SIX = [
    ("task", "Fix the tweet publishing pipeline that returns 500 on every scheduled post"),
    (
        "action",
        "Traced the 500 to startServer(): the publish service was never wired into the Hono "
        "app, so every operator-facing route in src/pipeline/actions.ts failed",
    ),
    (
        "decision",
        "Static assets and published images stay public; only operator routes go behind the "
        "auth middleware in src/server/auth.ts",
    ),
    ("action", "Added a regression test in tests/publish.test.ts for the full middleware stack"),
    ("blocker", "Waiting on the staging deploy key rotation before the fix can be verified"),
    (
        "note",
        "The pipeline reads its schedule from src/pipeline/actions.ts; a cron change there "
        "needs a redeploy, not a config reload",
    ),
]


def test_six_one_line_writes_count_once_against_the_budget(store: Memory) -> None:
    for slot, text in SIX:
        if slot == "task":
            store.hot_set("ada", text)
        else:
            store.hot_add("ada", slot, text)
    written = sum(len(text.encode("utf-8")) for _, text in SIX)
    view = store.hot_view("ada")
    assert view.bytes <= 1.2 * written, (view.bytes, written)
    assert len((view.markdown + "\n").encode("utf-8")) == view.bytes
    # A long line is one heading, whole: never a heading cut short and the line again.
    hot_text = store.layout.tier_file("hot", "ada").read_text(encoding="utf-8")
    for _, text in SIX:
        assert hot_text.count(text) == 1, text
    assert "…" not in hot_text
