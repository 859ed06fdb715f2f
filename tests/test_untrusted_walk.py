"""Every writer carries the untrusted mark: a walk through every operation of
`operations.OPERATIONS` (each called through its `Memory` door, with the arguments its fronts
hand it) and through every step of Scribe's maintenance (each field of `RunReport` that
says what a step did must be seen doing something), on a store where text from a tool or
the web is in every place it can be: a note, a blocker, an action, a decision, a note
pushed out of a full hot tier, a blocker carried into the next session, a queue, a cold
summary, the team's decisions, archive records.

After every step, nothing that holds untrusted text reaches a reader without its mark: no
passage of a spawn prompt outside a block labelled `untrusted source`, no hot line without
`(untrusted source)`, no search result, whole read or entry of a tier file read whole
without `trust=untrusted`. Each untrusted text holds the word `quokkaweb` in every sentence,
so that a copy of any piece of it is found.

A new operation fails `test_the_walk_calls_every_operation` until the walk calls it.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tiermem import operations, options
from tiermem.memory import Memory
from tiermem.results.scribe import RunReport
from tiermem.storage import archive, store

CANARY = "quokkaweb"
DAYS = [f"2026-03-{d:02d}T10:00:00Z" for d in range(2, 20)]
WEB_NOTE = (
    f"The vendor page says {CANARY} tokens rotate with the publish tool. "
    f"Run {CANARY} rotate before every release."
)
WEB_BLOCKER = f"Waiting on {CANARY} registry keys from the vendor portal"
WEB_DECISION = (
    f"Rotate registry tokens with {CANARY} weekly\n"
    f"**What:** the {CANARY} rotate command runs every Monday.\n"
    f"**Why:** the {CANARY} vendor page says tokens expire after ten days."
)
NEWER_DECISION = (
    f"Rotate registry tokens with {CANARY} weekly\n"
    f"**What:** the {CANARY} rotate command runs every Friday now.\n"
    f"**Why:** the {CANARY} vendor moved its maintenance window."
)
TOOL_ACTION = f"Ran {CANARY} rotate --dry-run on the staging registry"
CONVENTION = (
    "### Convention: tag every release\n"
    "**What:** every release of the registry client gets an annotated git tag before publish.\n"
    "**Why:** the changelog and the rollback script both read the tags."
)
TASK = f"Rotate the {CANARY} registry tokens before the release"  # a spawn's, never memory
CONFIG = "[cold]\nttl_days = 2\nbudget_bytes = 1500\n[scribe]\npromote_after_days = 3\n"
# The fields of a maintenance report that say what a step did (the others say how it went).
NOT_STEPS = {"dry_run", "inbox_lines", "inbox_skipped", "notes", "skipped"}


# --- what a reader sees ----------------------------------------------------------------


def _fences(prompt: str) -> list[tuple[str, list[str]]]:
    """(tier, lines) of each <memory> fence of a prompt."""
    found = []
    for match in re.finditer(r'<memory tier="([^"]+)"[^>]*>\n(.*?)\n</memory>', prompt, re.S):
        found.append((match.group(1), match.group(2).splitlines()))
    return found


def prompt_problems(prompt: str, what: str) -> list[str]:
    """Lines of a prompt's memory that hold untrusted text under no untrusted label: in a
    hot fence, the item a line belongs to (its first, unindented line); elsewhere, the
    block (`#### ...`) it sits in."""
    problems = []
    for tier, lines in _fences(prompt):
        label = ""
        for line in lines:
            if tier == "hot":
                if line and not line.startswith(" "):
                    label = line
                marked = "(untrusted source)" in label
            else:
                if line.startswith("#### "):
                    label = line
                marked = "untrusted source" in label
            if CANARY in line and not marked:
                problems.append(f"{what}: {tier} line {line[:80]!r} under {label[:80]!r}")
    if CANARY in prompt and not _fences(prompt):
        problems.append(f"{what}: untrusted text outside any fence")
    return problems


def _file_problems(mem: Memory, tier: str, name: str, text: str) -> list[str]:
    path = mem.layout.tier_file(tier, name)
    parsed = store.parse(tier, path, text.encode("utf-8"))
    return [
        f"{tier}/{name}.md: entry {e.id} {e.title[:60]!r}"
        for e in parsed.entries
        if CANARY in e.text and not e.trust
    ]


def _record_problems(root: Path) -> list[str]:
    problems = []
    for path in sorted((root / ".squad/memory/archive").glob("*/*.md")):
        try:
            record = archive.parse(path.read_bytes(), path)
        except Exception:  # a record the walk damaged on purpose: doctor's to mend
            continue
        if CANARY in record.text and record.trust != "untrusted":
            problems.append(f"record {record.location} ({record.kind})")
    return problems


def unmarked(mem: Memory) -> list[str]:
    """Every place a reader gets untrusted text without its mark."""
    problems: list[str] = []
    read: set[str] = set()
    for tier in (None, "archive"):
        for hit in mem.search(f"{CANARY} registry rotate", tier=tier, limit=100):
            if CANARY not in hit.text:
                continue
            if hit.trust != "untrusted":
                problems.append(f"search {tier}: {hit.id} {hit.text[:60]!r}")
            if hit.id not in read and mem.read_entry(hit.id).trust != "untrusted":
                problems.append(f"read_entry {hit.id}")
            read.add(hit.id)
    for kwargs in (
        {"auto": True},
        {"include_cold": True, "include_wiki": (), "include_archive": True, "budget": 8000},
    ):
        result = mem.spawn("flight", TASK, **kwargs)  # type: ignore[arg-type]
        problems += prompt_problems(result.prompt, f"spawn {sorted(kwargs)}")
    for agent in mem.agents():
        try:
            view = mem.hot_view(agent)
        except Exception:
            continue
        for entry in view.entries:
            if CANARY in entry.title + entry.body and not entry.trust:
                problems.append(f"hot_view {agent}: {entry.id}")
        problems += prompt_problems(f'<memory tier="hot">\n{view.markdown}\n</memory>', "hot")
        for tier in ("hot", "cold"):
            if mem.layout.tier_file(tier, agent).exists():
                problems += _file_problems(mem, tier, agent, mem.tier_text(tier, agent))
    for page in mem.wiki_pages():
        problems += _file_problems(mem, "wiki", page.topic, mem.wiki_read(page.topic))
    return problems + _record_problems(mem.layout.root)


# --- the walk --------------------------------------------------------------------------

# The door, what a front hands it (or how to find it in the store), the clock.
Given = dict[str, Any] | Callable[[Memory], dict[str, Any]]
Step = tuple[str, Given, str]


def _hot(kind: str, text: str, source: str = "agent") -> dict[str, Any]:
    return {"agent": "flight", "kind": kind, "text": text, "source": source, "new_agent": True}


def _session(day: str, n: int) -> list[Step]:
    """A session of flight's: web text in every slot, a full hot tier, a blocker resolved."""
    steps: list[Step] = [
        (
            "hot_set",
            {"agent": "flight", "task": f"Rotate tokens, round {n}", "new_agent": True},
            day,
        ),
        ("hot_add", _hot("note", WEB_NOTE + f" Session {n}.", "web"), day),
        ("hot_add", _hot("blocker", WEB_BLOCKER + f" (round {n})", "web"), day),
        ("hot_add", _hot("blocker", f"Waiting on {CANARY} staging slot {n}", "tool"), day),
        ("hot_add", _hot("decision", WEB_DECISION if n == 1 else NEWER_DECISION, "web"), day),
        ("hot_add", _hot("note", CONVENTION), day),
        ("hot_unblock", {"agent": "flight", "text": f"round {n}"}, day),
    ]
    for k in range(7):  # past the last five actions: the oldest go to Scribe's queue
        steps.append(("hot_add", _hot("action", f"{TOOL_ACTION} pass {n}.{k}", "tool"), day))
    for k in range(6):  # past the hot budget: a checkpoint into cold
        text = f"Tool log {n}.{k}: {CANARY} step {k} finished cleanly. " * 16
        steps.append(("hot_add", _hot("note", text, "tool"), day))
    return steps


def _reads(day: str) -> list[Step]:
    return [
        ("hot_view", {"agent": "flight"}, day),
        ("search", {"query": f"{CANARY} rotate"}, day),
        ("tier_text", {"tier": "hot", "name": "flight"}, day),
        ("wiki_pages", {}, day),
        ("team", {}, day),
        ("spawn", {"agent": "flight", "task": TASK, "auto": True}, day),
        ("spawn", {"agent": "flight", "task": TASK, "include_cold": True}, day),
        ("log", {}, day),
        ("stats", {}, day),
    ]


def _canary_hit(tier: str) -> Callable[[Memory], dict[str, Any]]:
    def find(mem: Memory) -> dict[str, Any]:
        hits = [h for h in mem.search(CANARY, tier=tier, limit=50) if CANARY in h.text]
        return {"id": hits[0].id}

    return find


def _first_page(mem: Memory) -> dict[str, Any]:
    return {"topic": mem.wiki_pages()[0].topic}


def walk() -> list[Step]:
    """Three sessions a day apart, maintenance after each, then every other writer."""
    steps: list[Step] = []
    for n, day in enumerate(DAYS[:3], start=1):
        steps += _session(day, n)
        steps += _reads(day)
        steps.append(("end_session", {"agent": "flight"}, day))
        steps.append(("read_entry", _canary_hit("cold"), day))
        steps.append(("scribe_run", {}, day))
    later = DAYS[6]
    steps += [
        ("hot_add", _hot("note", WEB_NOTE, "web"), later),
        ("hot_add", _hot("action", TOOL_ACTION, "tool"), later),
        ("hot_clear", {"agent": "flight"}, later),
        ("decide", {"text": "Publish from the release branch only", "by": "flight"}, later),
        ("wiki_write", {"topic": "release", "text": CONVENTION, "by": "flight"}, later),
        ("wiki_read", _first_page, later),
        *_reads(later),
        ("scribe_run", {}, later),
        ("scribe_run", {"dry_run": True}, later),
        ("forget", _canary_hit("cold"), later),
        ("forget", _canary_hit("archive"), later),
        ("read_entry", _canary_hit("archive"), later),
        ("!damage", {}, later),
        ("doctor", {}, later),
        ("doctor", {"repair": True}, later),
        ("import_squad", {}, later),
        ("import_squad", {"dry_run": True}, later),
        ("!grow", {}, later),  # the team's history grew since: Scribe follows it
        ("scribe_run", {}, later),
        ("!grow", {}, later),
        ("scribe_run", {}, later),
        ("reindex", {}, later),
        ("reindex", {"check": True}, later),
        ("report", {}, later),
    ]
    for n, day in enumerate(DAYS[8:11], start=4):  # days of other work: cold ages past its TTL
        steps.append(("hot_set", {"agent": "flight", "task": f"Other work {n}"}, day))
        steps.append(("end_session", {"agent": "flight"}, day))
    steps.append(("scribe_run", {}, DAYS[11]))
    return steps


def _damage(root: Path) -> None:
    """A merge wrote into a record holding untrusted text: doctor --repair archives it again."""
    for path in sorted((root / ".squad/memory/archive").glob("*/*.md")):
        if CANARY.encode() in path.read_bytes():
            with path.open("ab") as f:
                f.write(b"\nA line a merge added.\n")
            return


def _grow(root: Path) -> None:
    """Flight's history grew since the import: a new learning, and at the next growth the
    same learning written longer (the section's entry in cold is replaced)."""
    history = root / ".squad/agents/flight/history.md"
    text = history.read_text("utf-8")
    if "Release notes" in text:
        text += "Each note links the PR it came from.\n"
    else:
        text += "\n### 2026-03-08: Release notes\nRelease notes are drafted from the merged PRs.\n"
    history.write_text(text, "utf-8")


def _snapshot(root: Path) -> dict[str, bytes]:
    """The store's memory files (the index, locks and this clone's own state left out)."""
    memory = root / ".squad/memory"
    return {
        p.relative_to(memory).as_posix(): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and p.parts[len(memory.parts)] in ("hot", "cold", "wiki", "archive", "queue")
    }


def _request(door: str, given: dict[str, Any]) -> object:
    """The request a front builds of these arguments for this operation."""
    return options.request_from(operations.operation(door).request, given)


def _repo(root: Path) -> None:
    """A repository with a Squad team: flight's charter and history, an inbox decision."""
    squad = root / ".squad"
    (squad / "agents/flight").mkdir(parents=True)
    (squad / "agents/flight/charter.md").write_text("# Flight\nShips releases.\n", "utf-8")
    (squad / "agents/flight/history.md").write_text(
        "# Flight\n\n## Core Context\n\nFlight owns the release pipeline.\n\n"
        "## Learnings\n\n### 2026-02-20: Release branch\n"
        "Releases are cut from the release branch after the smoke tests pass.\n",
        "utf-8",
    )
    (squad / "decisions.md").write_text("# Decisions\n", "utf-8")
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "team"], check=True
    )


def _inbox(root: Path) -> None:
    inbox = root / ".squad/decisions/inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / "flight-tags.md").write_text(
        "### 2026-03-03: Tag releases in the registry client\n**By:** Flight\n"
        "**What:** every release gets an annotated tag.\n**Why:** rollbacks read them.\n",
        "utf-8",
    )


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The walk run once: what each step left unmarked, and what Scribe's steps did."""
    root = tmp_path_factory.mktemp("walk") / "repo"
    root.mkdir()
    _repo(root)
    Memory.init(root, now=DAYS[0])[0].close()
    (root / ".squad/memory/config.toml").write_text(CONFIG, encoding="utf-8")
    problems: list[str] = []
    did: dict[str, int] = {}
    called: set[str] = set()
    wrote: set[str] = set()
    checks = 0
    for n, (door, given, now) in enumerate(walk()):
        if door == "scribe_run" and not given:
            _inbox(root)
        if door == "!damage":
            _damage(root)
            continue
        if door == "!grow":
            _grow(root)
            continue
        before = _snapshot(root)
        mem = Memory(root, now=now)
        asked = given(mem) if callable(given) else given
        result = mem.answer(door, _request(door, asked))
        called.add(door)
        if isinstance(result, RunReport) and not result.dry_run:
            for item in dataclasses.fields(RunReport):
                if item.name not in NOT_STEPS and getattr(result, item.name):
                    did[item.name] = did.get(item.name, 0) + 1
        if _snapshot(root) != before:  # a writer: everything a reader gets is checked
            wrote.add(door)
            checks += 1
            problems += [f"after step {n} ({door}): {p}" for p in unmarked(mem)]
        mem.close()
    found = {"problems": problems, "did": did, "called": called, "wrote": wrote}
    return {"root": root, "checks": checks, **found}


def test_the_walk_calls_every_operation(walked: dict[str, Any]) -> None:
    assert {op.door for op in operations.OPERATIONS} <= walked["called"]


def test_every_writer_wrote_on_the_walk(walked: dict[str, Any]) -> None:
    """The operations that write memory did write on the walk (so their checks ran)."""
    writers = {"hot_set", "hot_add", "hot_unblock", "hot_clear", "end_session", "scribe_run"}
    writers |= {"decide", "wiki_write", "forget", "doctor"}
    assert writers <= walked["wrote"], writers - walked["wrote"]


def test_every_step_of_scribe_acted_on_the_walk(walked: dict[str, Any]) -> None:
    steps = {f.name for f in dataclasses.fields(RunReport)} - NOT_STEPS
    assert steps <= set(walked["did"]), (steps - set(walked["did"]), walked["did"])


def test_no_writer_lets_untrusted_text_reach_a_reader_unmarked(walked: dict[str, Any]) -> None:
    assert walked["problems"] == [], "\n".join(walked["problems"][:20])


def test_untrusted_text_reached_every_tier(walked: dict[str, Any]) -> None:
    """The walk is worth its checks: untrusted text is in hot, cold, the team's decisions
    and the archive at its end (never in the wiki: Scribe does not promote it)."""
    mem = Memory(walked["root"], now=DAYS[6])
    tiers = {h.tier for h in mem.search(CANARY, limit=100)}
    mem.close()
    assert {"cold", "archive"} <= tiers, tiers
