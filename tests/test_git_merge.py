"""Two clones of one repository work on memory, then merge with git.

`tiermem init` writes `.squad/memory/.gitattributes` with merge=union for the tier files; the
repository also carries Squad's own root `.gitattributes` (union for `.squad/decisions.md`).
Both clones run sessions for the same and for different agents, record decisions, ask for
wiki entries, search (which records last use in the clone's untracked state) and run Scribe
(which folds that use into the tier files), and commit. Merging
one into the other, in either direction, must succeed without conflict markers, leave a
store that loads, show no entry id twice, lose nothing, and pick the same version of an
entry both clones changed. The git helpers are in tests/merges.py, which tests/stress.py
(`merge`) also uses.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from merges import conflict_markers, entries_by_file, git, merge_both_ways, new_repository
from reliability import files_text
from tiermem.memory import Memory
from tiermem.storage import entries, store
from tiermem.storage.layout import Layout
from tiermem.team import use

RunCli = Callable[..., tuple[int, str, str]]

_MARK = re.compile(r"mark-[a-z0-9-]+")
NOW_AFTER = "2026-04-01T10:00:00Z"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


class Clone:
    """One working copy, driven through the CLI in process."""

    def __init__(self, root: Path, run_cli: RunCli) -> None:
        self.root = root
        self.run_cli = run_cli
        self.marks: set[str] = set()

    def ok(self, now: str, *args: str) -> str:
        code, out, err = self.run_cli("--root", str(self.root), "--now", now, *args)
        assert code == 0, f"tiermem {' '.join(args)} -> {code}: {out}{err}"
        self.marks.update(_MARK.findall(" ".join(args)))
        return out

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)
        return git(self.root, "rev-parse", "HEAD").stdout.strip()

    def memory_text(self) -> str:
        return files_text(self.root)

    def entries(self) -> dict[str, list[str]]:
        return entries_by_file(self.root)


def make_origin(base: Path, run_cli: RunCli, squad_attributes: bool = True) -> Path:
    origin = new_repository(base / "origin", squad_attributes)
    first = Clone(origin, run_cli)
    first.ok("2026-03-01T09:00:00Z", "init")
    first.ok(
        "2026-03-01T09:00:00Z", "hot", "set", "flight", "--task", "Base login work mark-base-1"
    )
    first.ok(
        "2026-03-01T09:00:00Z",
        "hot",
        "note",
        "flight",
        "### Convention: run the linter before every commit\n"
        "**What:** ruff and mypy run before every commit, in every package mark-base-2\n"
        "**Why:** CI finds it later, and that costs a whole pipeline run",
    )
    first.ok("2026-03-01T10:00:00Z", "scribe", "end-session", "flight")
    first.ok(
        "2026-03-01T10:00:00Z",
        "hot",
        "note",
        "eecom",
        "--new-agent",
        "Reader rewrite started mark-base-3",
    )
    first.ok("2026-03-01T10:00:00Z", "scribe", "end-session", "eecom")
    first.ok("2026-03-01T10:00:00Z", "decision", "add", "--by", "flight", "Use pnpm mark-base-4")
    first.commit("base")
    return origin


def work(clone: Clone, side: str, day: int, open_agent: str = "") -> None:
    """A day of sessions in one clone: a shared agent, its own agent, decisions, Scribe."""
    now = f"2026-03-{day:02d}T10:00:00Z"
    later = f"2026-03-{day:02d}T11:00:00Z"
    clone.ok(now, "hot", "set", "flight", "--task", f"Login fix in {side} mark-{side}-task")
    clone.ok(now, "hot", "note", "flight", f"Cookie is not renewed ({side}) mark-{side}-note")
    clone.ok(now, "hot", "decide", "flight", f"Refresh tokens in {side} mark-{side}-decide")
    for n in range(7):
        clone.ok(now, "hot", "action", "flight", f"{side} step {n} mark-{side}-action-{n}")
    clone.ok(later, "scribe", "end-session", "flight")
    own = f"agent-{side}"
    clone.ok(now, "hot", "set", own, "--new-agent", "--task", f"Own work of {side} mark-{side}-own")
    clone.ok(later, "scribe", "end-session", own)
    clone.ok(now, "decision", "add", "--by", own, f"Adopt tool-{side} mark-{side}-decision")
    clone.ok(now, "wiki", "write", "release", f"Release rule {side}\nTag it mark-{side}-wiki")
    clone.ok(later, "search", "reader rewrite")  # records the last use of a base entry
    clone.ok(f"2026-03-{day + 9:02d}T10:00:00Z", "scribe", "run")
    # A session still open at commit time.
    agent = open_agent or own
    clone.ok(
        later,
        "hot",
        "set",
        agent,
        "--new-agent",
        "--task",
        f"Still on it in {side} mark-{side}-open",
    )
    clone.ok(later, "hot", "note", agent, f"Open note {side} mark-{side}-open-note")


def two_clones(
    tmp_path: Path,
    run_cli: RunCli,
    squad_attributes: bool = True,
    prepare: Callable[[Clone], None] | None = None,
    driver: bool = False,
) -> list[Clone]:
    """Two clones of a fresh origin; with `driver`, both merge tier files entry by entry."""
    origin = make_origin(tmp_path, run_cli, squad_attributes)
    if prepare is not None:
        prepare(Clone(origin, run_cli))
    clones = []
    for side in ("a", "b"):
        git(tmp_path, "clone", "-q", str(origin), side)
        clone = Clone(tmp_path / side, run_cli)
        if driver:
            clone.ok("2026-03-01T09:00:00Z", "init", "--merge-driver")
        clones.append(clone)
    return clones


def union_falls_short(reason: str) -> Any:
    """The two merges a test runs under: git's union merge (which falls short there, as
    `reason` says) and tiermem's per-entry merge driver (which must not)."""
    return pytest.mark.parametrize(
        "driver",
        [
            pytest.param(False, id="union", marks=pytest.mark.xfail(strict=True, reason=reason)),
            pytest.param(True, id="entry-merge"),
        ],
    )


BOTH_MERGES = pytest.mark.parametrize(
    "driver", [pytest.param(False, id="union"), pytest.param(True, id="entry-merge")]
)


def assert_merged_store_is_sound(clone: Clone, marks: set[str]) -> None:
    status = git(clone.root, "status", "--porcelain").stdout
    assert status == "", f"unmerged or dirty after the merge:\n{status}"
    assert conflict_markers(clone.root) == []
    now = "2026-03-30T10:00:00Z"
    clone.ok(now, "hot", "show", "flight")
    clone.ok(now, "stats")
    clone.ok(now, "reindex")
    # Two versions of one entry's metadata (both clones used it) are reported as merge
    # conflicts until the file is written again; nothing else may differ from the files.
    code, out, err = clone.run_cli("--root", str(clone.root), "reindex", "--check")
    lines = out.splitlines()
    assert lines == ["index matches the files"] or all(
        line.startswith("merge conflict: ") for line in lines
    ), out + err
    assert code == (0 if lines == ["index matches the files"] else 1)
    for query in ("login linter reader release tool", *sorted(marks)[:8]):
        hits = json.loads(clone.ok(now, "search", query, "--format", "json", "--limit", "200"))
        ids = [h["id"] for h in hits]
        assert len(ids) == len(set(ids)), f"an id appears twice for {query!r}: {ids}"
    spawn = json.loads(
        clone.ok(
            now,
            "spawn",
            "flight",
            "--task",
            "finish the login fix and run the linter",
            "--include-cold",
            "--include-wiki",
            "--budget",
            "20000",
            "--format",
            "json",
        )
    )
    ids = [s["id"] for s in spawn["sources"]]
    assert ids and len(ids) == len(set(ids)), ids
    for entry_id in ids:
        assert spawn["prompt"].count(entry_id) == 1, f"{entry_id} rendered twice"
    text = clone.memory_text()
    assert sorted(m for m in marks if m not in text) == []


@BOTH_MERGES
def test_two_clones_merge_cleanly_and_the_same_way_in_both_directions(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    a, b = two_clones(tmp_path, run_cli, driver=driver)
    work(a, "a", 2)
    work(b, "b", 3)
    a.commit("work in a")
    b.commit("work in b")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == 0, into_a.stdout + into_a.stderr
    assert into_b.returncode == 0, into_b.stdout + into_b.stderr
    marks = a.marks | b.marks
    assert len(marks) >= 30
    # The same entries, whichever clone merged which: union merges differ only in order.
    # Both clones used the same base entry on different days: that use went to the team's
    # use ledger, not to the entry, so the tier file holds one version of it either way, and
    # the ledger (merged by union) keeps the later day.
    assert a.entries() == b.entries()
    eecom = (a.root / ".squad/memory/cold/eecom.md").read_text(encoding="utf-8")
    assert not entries.parse(eecom).conflicts
    assert use.ledger(Memory(a.root).layout) == use.ledger(Memory(b.root).layout)
    if driver:
        for name in ("hot", "cold", "wiki"):
            for path in sorted((a.root / ".squad/memory" / name).glob("*.md")):
                other = b.root / path.relative_to(a.root)
                assert path.read_bytes() == other.read_bytes(), f"{path.name} differs"
    for clone in (a, b):
        assert_merged_store_is_sound(clone, marks)
    a.ok("2026-03-30T10:00:00Z", "hot", "note", "flight", "after the merge mark-after")
    assert "mark-after" in a.memory_text()
    # The next write of the file folds the two versions: the index is exact again.
    a.ok("2026-03-31T10:00:00Z", "search", "reader rewrite")
    a.ok("2026-03-31T10:00:00Z", "scribe", "run")  # writes the use into the file
    assert not entries.parse(
        (a.root / ".squad/memory/cold/eecom.md").read_text(encoding="utf-8")
    ).conflicts
    a.ok("2026-03-31T10:00:00Z", "stats")  # syncs the index after the refresh wrote
    assert a.ok("2026-03-31T10:00:00Z", "reindex", "--check") == "index matches the files\n"


@union_falls_short(
    "two entries appended in both clones under the same heading are interleaved by the "
    "union merge (git aligns the common heading line): one entry's metadata line ends up in "
    "the other's body, the second entry is gone, and the result depends on the direction"
)
def test_two_decisions_with_one_title_from_two_clones_stay_two_entries(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    a, b = two_clones(tmp_path, run_cli, driver=driver)
    written = {}
    for clone, day, ttl in ((a, 4, "one hour mark-ttl-a"), (b, 5, "five minutes mark-ttl-b")):
        out = clone.ok(
            f"2026-03-{day:02d}T10:00:00Z",
            "decision",
            "add",
            "--by",
            "flight",
            f"### 2026-03-04: Cache lifetime\n**What:** cache registry answers for {ttl}.\n"
            "**Why:** the registry is slow.",
        )
        written[clone.root.name] = re.findall(r"d-[0-9a-f]{10}", out)[0]
        clone.commit("cache decision")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    for clone in (a, b):
        text = clone.memory_text()
        assert "mark-ttl-a" in text and "mark-ttl-b" in text  # the texts are kept, at least
    team = entries.parse((a.root / ".squad/memory/cold/team.md").read_text(encoding="utf-8"))
    assert set(written.values()) <= {e.id for e in team.entries}
    assert a.entries()["cold/team.md"] == b.entries()["cold/team.md"]


def test_a_merge_conflict_on_one_entry_is_reported(tmp_path: Path, run_cli: RunCli) -> None:
    a, b = two_clones(tmp_path, run_cli)
    for clone, day in ((a, 4), (b, 5)):
        # Only the metadata differs: last use as a tiermem before the use ledger wrote it.
        _hand_edit(clone, "used=2026-03-01T10:00:00Z", f"used=2026-03-{day:02d}T00:00:00Z")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    # The same (newest) version wins whichever way the merge went.
    assert a.entries()["cold/eecom.md"] == b.entries()["cold/eecom.md"]
    layout = Layout(a.root)
    merged = store.load(layout, "cold", layout.tier_file("cold", "eecom"))
    assert merged is not None and [e.used for e in merged.entries] == ["2026-03-05T00:00:00Z"]
    for clone in (a, b):
        cold = clone.root / ".squad/memory/cold/eecom.md"
        [conflict] = entries.parse(cold.read_text(encoding="utf-8")).conflicts
        code, out, _ = clone.run_cli("--root", str(clone.root), "reindex", "--check")
        assert code == 1 and conflict.id in out and "merge conflict" in out
        _, _, err = clone.run_cli("--root", str(clone.root), "--now", NOW_AFTER, "stats")
        assert conflict.id in err


def _hand_edit(clone: Clone, old: str, new: str) -> None:
    cold = clone.root / ".squad" / "memory" / "cold" / "eecom.md"
    text = cold.read_text(encoding="utf-8")
    assert old in text
    cold.write_text(text.replace(old, new), encoding="utf-8")
    clone.commit("hand edit")


def test_hand_edits_of_one_entry_in_both_clones_resolve_the_same_way_and_are_reported(
    tmp_path: Path, run_cli: RunCli
) -> None:
    a, b = two_clones(tmp_path, run_cli)
    for clone, side in ((a, "a"), (b, "b")):
        # Title and body both change: each side's whole entry survives the union merge.
        _hand_edit(clone, "Reader rewrite started", f"Reader rewrite edited in {side}")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    assert a.entries() == b.entries()
    for clone in (a, b):
        cold = clone.root / ".squad/memory/cold/eecom.md"
        [conflict] = entries.parse(cold.read_text(encoding="utf-8")).conflicts
        assert conflict.lost is not None
        code, out, _ = clone.run_cli("--root", str(clone.root), "reindex", "--check")
        assert code == 1 and conflict.id in out
        clone.ok(NOW_AFTER, "search", "reader rewrite")  # the next write archives the loser
        text = clone.memory_text()
        assert "edited in a" in text and "edited in b" in text


@union_falls_short(
    "a union merge of two hand edits of the same body line keeps both lines, ours "
    "first, inside the one entry: what the entry says depends on the merge direction, and "
    "nothing reports it"
)
def test_hand_edits_of_one_body_line_in_both_clones_resolve_the_same_way_and_are_reported(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    a, b = two_clones(tmp_path, run_cli, driver=driver)
    for clone, side in ((a, "a"), (b, "b")):
        _hand_edit(clone, "-->\nReader rewrite started", f"-->\nReader rewrite edited in {side}")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    for clone in (a, b):
        text = clone.memory_text()
        assert "edited in a" in text and "edited in b" in text  # kept, at least
    assert a.entries() == b.entries(), "the merge direction decides what the entry says"
    code, out, _ = a.run_cli("--root", str(a.root), "reindex", "--check")
    assert code == 1 and "merge conflict" in out, "nothing reports the two versions"


# One clone uses two entries and appends a session; the other uses the first and promotes
# the second to the wiki. When use was folded into the entries, the union merge glued the
# other clone's version of the first entry (metadata line and body) into the body of the
# last; use goes to the team's ledger now, and both merges keep every boundary.
@BOTH_MERGES
def test_entries_used_in_both_clones_keep_their_boundaries(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    def session(clone: Clone, day: int, topic: str, steps: int) -> None:
        now, later = f"2026-03-{day:02d}T10:00:00Z", f"2026-03-{day:02d}T11:00:00Z"
        clone.ok(now, "hot", "set", "fido", "--new-agent", "--task", f"Pin the {topic} schema")
        for n in range(steps):
            clone.ok(now, "hot", "action", "fido", f"{topic} step {n}")
        # A one-line contract note: both the session summary's last line and the body of
        # the knowledge entry Scribe keeps from it.
        note = f"Note {topic} pipeline contract release module schema, pinned in all packages"
        note += " we ship"
        clone.ok(now, "hot", "note", "fido", note)
        clone.ok(later, "scribe", "end-session", "fido")

    def prepare(origin: Clone) -> None:
        session(origin, 1, "registry", 4)
        origin.commit("fido")

    a, b = two_clones(tmp_path, run_cli, prepare=prepare, driver=driver)
    a.ok("2026-03-02T11:00:00Z", "search", "registry pipeline contract", "--agent", "fido")
    a.ok("2026-03-02T11:00:00Z", "scribe", "run")  # folds the use into the ledger
    session(a, 2, "widget", 2)
    a.commit("used and added")
    b.ok("2026-03-03T11:00:00Z", "search", "registry pipeline contract", "--agent", "fido")
    assert re.search(r"promote: move [1-9]", b.ok("2026-03-12T10:00:00Z", "scribe", "run"))
    b.commit("used and promoted")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    for clone in (a, b):
        cold = clone.root / ".squad/memory/cold/fido.md"
        parsed = entries.parse(cold.read_text(encoding="utf-8"))
        assert not any("tiermem id=" in e.body for e in parsed.entries), "metadata in a body"
    assert a.entries() == b.entries()


@BOTH_MERGES
def test_a_session_left_open_in_both_clones_merges_the_same_way_in_both_directions(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    a, b = two_clones(tmp_path, run_cli, driver=driver)
    work(a, "a", 2, open_agent="flight")
    work(b, "b", 3, open_agent="flight")
    a.commit("work in a")
    b.commit("work in b")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    hot = entries.parse((a.root / ".squad/memory/hot/flight.md").read_text(encoding="utf-8"))
    assert not any("tiermem-file" in e.body for e in hot.entries), "a header inside a body"
    assert a.entries() == b.entries()


def test_an_entry_promoted_in_one_clone_and_used_in_the_other_is_found_once(
    tmp_path: Path, run_cli: RunCli
) -> None:
    a, b = two_clones(tmp_path, run_cli)
    out = a.ok("2026-03-12T10:00:00Z", "scribe", "run")
    assert re.search(r"promote: move [1-9]", out)
    a.commit("promotion")
    b.ok("2026-03-03T10:00:00Z", "search", "linter commit")
    b.ok("2026-03-03T10:00:00Z", "scribe", "run")  # folds the use into the file
    b.commit("use")
    into_a, _ = merge_both_ways(a.root, b.root)
    assert into_a.returncode == 0
    hits = json.loads(
        a.ok("2026-03-13T10:00:00Z", "search", "linter before commit", "--format", "json")
    )
    ids = [h["id"] for h in hits]
    assert len(ids) == len(set(ids)), ids


def test_decisions_from_two_clones_merge_without_squads_gitattributes(
    tmp_path: Path, run_cli: RunCli
) -> None:
    a, b = two_clones(tmp_path, run_cli, squad_attributes=False)
    for clone, side in ((a, "a"), (b, "b")):
        clone.ok("2026-03-04T10:00:00Z", "decision", "add", "--by", "flight", f"Use tool {side}")
        clone.commit("decision")
    into_a, _ = merge_both_ways(a.root, b.root)
    assert into_a.returncode == 0, into_a.stdout + into_a.stderr


# --- a session open in both clones, a standing entry imported again in both ---------------

LATER = "2026-03-20T10:00:00Z"


def _run(clone: Clone, *args: str) -> tuple[int, str]:
    code, out, err = clone.run_cli("--root", str(clone.root), "--now", LATER, *args)
    return code, out + err


def _session(clone: Clone, side: str, day: int) -> list[str]:
    """A session of flight's, left open in one clone; the marks of every line it wrote."""
    now = f"2026-03-{day:02d}T10:00:00Z"
    clone.ok(
        now,
        "hot",
        "set",
        "flight",
        "--task",
        f"Task of {side} mark-{side}-task",
        "--why",
        f"Why of {side} mark-{side}-why",
    )
    clone.ok(now, "hot", "action", "flight", f"{side} ran the build mark-{side}-action")
    clone.ok(now, "hot", "note", "flight", f"{side} found the cache stale mark-{side}-note")
    clone.ok(now, "hot", "block", "flight", f"{side} waits on the registry mark-{side}-block")
    clone.commit(f"open session in {side}")
    return [f"mark-{side}-{what}" for what in ("task", "why", "action", "note", "block")]


@BOTH_MERGES
def test_a_session_open_in_two_clones_merges_into_two_labelled_sessions(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    a, b = two_clones(tmp_path, run_cli, driver=driver)
    marks = _session(a, "a", 2) + _session(b, "b", 3)
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    shown = [clone.ok(LATER, "hot", "show", "flight") for clone in (a, b)]
    # Each clone shows the session it started as its own, the other as open elsewhere, in
    # the same words whichever way the merge went; none calls its own "another clone's".
    for text, own, other, started in (
        (shown[0], "a", "b", "s20260303"),
        (shown[1], "b", "a", "s20260302"),
    ):
        current, label, merged = text.partition(f"**Also open: session {started}")
        assert label and merged.split("\n", 1)[0].endswith("in another clone**")
        assert current.count("**Task:**") == 1 and f"mark-{own}-task" in current
        assert merged.count("**Task:**") == 1 and f"mark-{other}-task" in merged
        assert "merged from" not in text and "tiermem" not in text.split("\n\n1 blocker")[0]
    for clone in (a, b):
        _run(clone, "doctor", "--repair")
        code, said = _run(clone, "doctor")
        assert code == 0 and "holds 2 sessions merged from clones" in said, said
        clone.ok(LATER, "scribe", "end-session", "flight")
        cold = (clone.root / ".squad/memory/cold/flight.md").read_text(encoding="utf-8")
        assert all(mark in cold for mark in marks), [m for m in marks if m not in cold]
        summaries = entries.parse(cold).entries
        assert {e.session for e in summaries if e.created == LATER} == {
            "s20260302100000",
            "s20260303100000",
        }


def _history(core: str) -> str:
    return (
        "# Flight\n\n## Core Context\n\n"
        f"{core}\n\n## Learnings\n\n### 2026-03-01: First\nShipped the first build.\n"
    )


CORE = "Flight owns the release pipeline.\nUses npm workspaces."
CORES = {
    "a": CORE + "\nPublishes with provenance from CI mark-a-core.",
    "b": CORE.replace("pipeline.", "pipeline and the docs site mark-b-core."),
}


def _import_history(clone: Clone, core: str, now: str) -> None:
    folder = clone.root / ".squad/agents/flight"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "history.md").write_text(_history(core), encoding="utf-8")
    clone.ok(now, "import", "squad")
    clone.commit("import")


@BOTH_MERGES
def test_a_standing_entry_imported_again_in_two_clones_is_one_well_formed_entry(
    tmp_path: Path, run_cli: RunCli, driver: bool
) -> None:
    base = functools.partial(_import_history, core=CORE, now="2026-03-02T10:00:00Z")
    a, b = two_clones(tmp_path, run_cli, prepare=base, driver=driver)
    for clone, side, day in ((a, "a", 3), (b, "b", 4)):
        _import_history(clone, CORES[side], f"2026-03-{day:02d}T10:00:00Z")
    into_a, into_b = merge_both_ways(a.root, b.root)
    assert into_a.returncode == into_b.returncode == 0
    for clone in (a, b):
        cold = entries.parse((clone.root / ".squad/memory/cold/flight.md").read_text("utf-8"))
        standing = [e for e in cold.entries if e.standing]
        assert len(standing) == 1
        assert not any("tiermem" in e.body for e in cold.entries), "metadata in a text"
        hits = json.loads(clone.ok(LATER, "search", "provenance docs site", "--format", "json"))
        assert hits and not any("<!-- tiermem" in h["text"] for h in hits)
        code, said = _run(clone, "doctor")
        assert code == 1 and "cold/flight.md" in said and standing[0].id in said, said
        code, said = _run(clone, "reindex", "--check")
        assert code == 1 and standing[0].id in said, said
        code, said = _run(clone, "doctor", "--repair")
        assert code == 0 and "1 losing version(s) archived" in said, said
        assert _run(clone, "doctor")[0] == 0
        kept = files_text(clone.root)
        lines = {line for core in CORES.values() for line in core.splitlines()}
        assert all(line in kept for line in lines), [ln for ln in lines if ln not in kept]
