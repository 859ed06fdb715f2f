"""`tiermem import squad`: a hand-written Squad folder, and the four real teams."""

from __future__ import annotations

import json
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

import corpora
from page_names import assert_named_by_the_team
from reliability import is_index
from tiermem.bench.imported import rebuild_check
from tiermem.bench.shape import sections_with_text, wiki_shape
from tiermem.cli.main import main
from tiermem.memory import Memory
from tiermem.squad.importer.import_sources import sources
from tiermem.storage import archive
from tiermem.storage import store as files
from tiermem.storage.clock import format_time, parse_time
from tiermem.storage.entries import Entry
from tiermem.team.wiki import PAGE_MAX_BYTES

RunCli = Callable[..., tuple[int, str, str]]
NOW = "2026-04-15T00:00:00Z"
CORPORA = corpora.CORPORA

ADA_HISTORY = """\
# Ada

> Release engineer

## Core Context

I own the release pipeline: `.github/workflows/publish.yml`, the changeset bot and the npm
automation token. Talk to Bo about test gates before changing the publish job.

## Learnings

### 2026-03-10: Publish retries for registry propagation
The publish job retries `npm publish` 5 times with a 15s sleep because the registry
takes time to propagate; see #412 and scripts/publish.mjs.

📌 Team update (2026-03-26T10:00:00Z): Bo merged the smoke test gate (#430); Ada owns the rollout.

### Pattern: preflight gate (2026-03-22)
Pattern: scan packages/*/package.json for `file:` references before any publish; the gate
runs in CI as the `preflight` job and blocks broken tarballs (#377).

### 2025-07: Changeset bot setup
Configured the changeset bot with the `changeset-release/main` branch naming; v0.4.0
was the first release cut this way.

### Token types for publishing
NPM_TOKEN must be an automation token, not a user token with 2FA, or publish fails with EOTP.

### 2026-04-12: Provenance flag on publish
Added `--provenance` to the publish step in .github/workflows/publish.yml; needs the
id-token: write permission (#451).

### 2026-04-12: Provenance flag on publish
Added `--provenance` to the publish step in .github/workflows/publish.yml; needs the
id-token: write permission (#451).
"""

BO_HISTORY = """\
# Bo

## Core Context

My domain is the test suite: the vitest config in `vitest.config.ts` and the fixtures under
test/fixtures/.

## Learnings

### 2026-03-24: Flaky snapshot test in renderer
The renderer snapshot flakes on CI because of font hinting; pinned the font in
test/setup.ts and raised the tolerance (#441).

📌 Team update (2026-03-25T09:00:00Z): Ada asked for the smoke test to gate publish.

### Retry helper (2026-01-05)
Added `withRetry` in src/net/retry.ts for network tests; default 3 attempts.
"""

DECISIONS = """\
# Decisions

### 2026-03-01: Use Vitest for unit tests
**By:** Bo
**What:** All unit tests run on Vitest; Jest is removed from devDependencies.
**Why:** Jest was slow on ESM and double-configured.

### 2026-03-05: User directive
**By:** user
**What:** Always use Zod for validating API input.
**Why:** One schema library across packages.

# Decision: Release branch naming

Release branches are named `release/vX.Y`; hotfix branches `hotfix/vX.Y.Z`.
**Why:** the changeset bot keys off these names.
"""

DECISIONS_ARCHIVE = """\
# Decisions Archive

### 2025-11-02: Node 20 minimum
**By:** Ada
**What:** The CLI requires Node.js >= 20 and ships ESM only.
**Why:** streaming APIs and top-level await.
"""

INBOX = """\
### 2026-03-26: Smoke test gates publish
**By:** Ada
**What:** The publish workflow depends on the `smoke-test` job passing.
**Why:** a broken CLI reached npm in v0.9.0.
"""

LOG = """\
# Session log 2026-03-26

**Agent:** Ada
Wired the smoke test gate into publish.yml; Bo reviewed #430.
"""


def write_squad(root: Path) -> Path:
    """A small Squad folder in the shapes of real ones; return `.squad/`."""
    squad = root / ".squad"
    texts = {
        "agents/ada/history.md": ADA_HISTORY,
        "agents/ada/charter.md": "# Ada — Release engineer\n\nOwns releases.\n",
        "agents/bo/history.md": BO_HISTORY,
        "decisions.md": DECISIONS,
        "decisions-archive.md": DECISIONS_ARCHIVE,
        "decisions/inbox/ada-smoke-gate.md": INBOX,
        "log/2026-03-26-release-session.md": LOG,
        "team.md": "# Team\n\n| Name | Role |\n|---|---|\n| Ada | Release |\n| Bo | Tests |\n",
    }
    for rel, text in texts.items():
        path = squad / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return squad


def snapshot(folder: Path, skip_memory: bool = False) -> dict[str, bytes]:
    """Files under a folder by relative path.

    Lock files (empty, git-ignored) are left out, and so is the search index: it is a cache
    derived from the markdown, and SQLite rewrites its pages on a sync that finds no change.
    """
    found = {}
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if not path.is_file() or ".locks" in parts or is_index(path):
            continue
        if skip_memory and "memory" in parts[:2]:
            continue
        found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


def import_args(root: Path, *extra: str, now: str = NOW) -> tuple[str, ...]:
    return ("import", "squad", "--root", str(root), "--now", now, *extra)


def entries(mem: Memory, tier: str) -> dict[str, tuple[str, Entry]]:
    """Every entry of a tier by id, with the name of its file."""
    found: dict[str, tuple[str, Entry]] = {}
    for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
        loaded = files.load(mem.layout, tier, path)
        assert loaded is not None
        for entry in loaded.entries:
            assert entry.id not in found, f"{entry.id} twice"
            found[entry.id] = (path.stem, entry)
    return found


def titled(table: dict[str, tuple[str, Entry]], title: str) -> list[tuple[str, Entry]]:
    return [(name, e) for name, e in table.values() if e.title == title]


@pytest.fixture(scope="module")
def imported_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture folder imported once through the CLI (each test gets a copy)."""
    root = tmp_path_factory.mktemp("imported")
    write_squad(root)
    assert main(list(import_args(root))) == 0
    return root


@pytest.fixture
def imported(imported_template: Path, tmp_path: Path) -> Iterator[Memory]:
    shutil.copytree(imported_template / ".squad", tmp_path / ".squad")
    mem = Memory(tmp_path, now=NOW)
    yield mem
    mem.close()


# --- the archive ------------------------------------------------------------------------------


def test_every_file_is_archived_byte_for_byte(imported: Memory) -> None:
    records = {}
    for path in archive.records(imported.layout):
        record = archive.parse(path.read_bytes(), path)
        if record.kind == "import":
            records[record.source] = record
    found = sources(imported.layout.squad)
    assert len(found) == 6  # two histories, decisions, archive, inbox, log
    for source in found:
        assert records[source.rel].text.encode("utf-8") == source.path.read_bytes()
    assert rebuild_check(imported.root) == {"files": 6, "exact": 6, "redacted": 0, "differ": 0}


def test_cold_and_wiki_entries_name_their_archive_source(imported: Memory) -> None:
    for tier in ("cold", "wiki"):
        for _, entry in entries(imported, tier).values():
            assert entry.sources
            for source in entry.sources:
                location = source.split("#")[0]
                assert (imported.layout.memory / location).is_file(), source


# --- where sections land ----------------------------------------------------------------------


def standing(mem: Memory, agent: str) -> list[Entry]:
    """The agent's standing entries in its cold tier (the contract: exactly one)."""
    return [e for name, e in entries(mem, "cold").values() if name == agent and e.standing]


def test_each_agent_keeps_its_standing_self_knowledge_as_one_entry_of_its_own(
    imported: Memory,
) -> None:
    for agent, words in (("ada", "I own the release pipeline"), ("bo", "My domain is the test")):
        [entry] = standing(imported, agent)
        assert (entry.cls, entry.title, entry.agent, entry.tags) == (
            "learning",
            "Core Context",
            agent,
            ("standing",),
        )
        assert words in entry.body
        assert all(source.startswith(f"archive/{agent}/") for source in entry.sources)
    assert "> Release engineer" in standing(imported, "ada")[0].body  # the text under its title
    wiki = "".join(imported.wiki_read(p.topic) for p in imported.wiki_pages())
    assert "I own the release pipeline" not in wiki and "My domain is the test" not in wiki
    assert not {p.topic for p in imported.wiki_pages()} & {"ada", "bo"}


def import_agent(tmp_path: Path, agent: str, history: str) -> Memory:
    """The fixture folder and one more agent's history, imported; the store at NOW."""
    squad = write_squad(tmp_path)
    (squad / "agents" / agent).mkdir()
    (squad / "agents" / agent / "history.md").write_text(history, encoding="utf-8")
    assert main(list(import_args(tmp_path))) == 0
    return Memory(tmp_path, now=NOW)


def test_project_context_and_role_sections_are_standing_too(tmp_path: Path) -> None:
    mem = import_agent(
        tmp_path,
        "cy",
        "# Project Context\n\n- **Owner:** dana\n- **Stack:** Rust, `tokio`\n\n"
        "## My Role\n\nI review every change to `src/net/`.\n\n---\n\n"
        "## Learnings\n\n### 2026-04-10: Backpressure\nBounded the `mpsc` channel to 64.\n",
    )
    [entry] = standing(mem, "cy")
    assert entry.body == (
        "### Project Context\n- **Owner:** dana\n- **Stack:** Rust, `tokio`\n\n"
        "### My Role\nI review every change to `src/net/`."
    )
    assert "Backpressure" not in entry.body
    mem.close()


def replaced_standing(mem: Memory, agent: str) -> list[archive.Record]:
    found = [archive.parse(p.read_bytes(), p) for p in archive.records(mem.layout, agent)]
    return [r for r in found if r.kind == "replace"]


def test_a_later_import_replaces_the_standing_entry_and_archives_the_old_text(
    imported: Memory, run_cli: RunCli
) -> None:
    history = imported.layout.squad / "agents" / "ada" / "history.md"
    history.write_text(
        ADA_HISTORY.replace("I own the release pipeline", "I own the release train"),
        encoding="utf-8",
    )
    code, _, err = run_cli(*import_args(imported.root))
    assert (code, err) == (0, "")
    [entry] = standing(imported, "ada")
    assert "I own the release train" in entry.body
    [replaced] = replaced_standing(imported, "ada")
    assert "I own the release pipeline" in replaced.text and entry.id in replaced.text
    # The same text once more replaces nothing.
    history.write_text(ADA_HISTORY.replace("release pipeline", "release train") + "\n")
    assert run_cli(*import_args(imported.root))[0] == 0
    assert len(replaced_standing(imported, "ada")) == 1
    assert len(standing(imported, "ada")) == 1


def test_active_decisions_and_policies_reach_the_wiki_at_once(imported: Memory) -> None:
    # decisions.md and the inbox are the team's record: the import files them in the wiki
    # without waiting for them to be stable ("Smoke test gates publish" is 20 days old).
    wiki = entries(imported, "wiki")
    cold = entries(imported, "cold")
    for title, cls in (
        ("User directive", "policy"),
        ("Use Vitest for unit tests", "decision"),
        ("Smoke test gates publish", "decision"),
    ):
        [(_, entry)] = titled(wiki, title)
        assert (entry.cls, entry.agent) == (cls, "team")
        assert not titled(cold, title)
    assert "Always use Zod for validating API input." in imported.wiki_read(
        titled(wiki, "User directive")[0][1].tags[0]
    )


def test_archived_decisions_stay_in_the_archive_reachable_by_search(imported: Memory) -> None:
    assert not titled(entries(imported, "wiki"), "Node 20 minimum")
    assert not titled(entries(imported, "cold"), "Node 20 minimum")
    hits = imported.search("Node 20 minimum ESM", tier="archive")
    assert any("requires Node.js >= 20" in h.text for h in hits)


def test_a_superseded_decision_leaves_for_the_archive_marked(tmp_path: Path) -> None:
    squad = write_squad(tmp_path)
    (squad / "decisions.md").write_text(
        DECISIONS
        + "\n### 2026-03-02: Staging deploy target region\n**By:** Bo\n**What:** eu-west-1.\n"
        + "\n### 2026-03-12: Staging deploy target region\n**By:** Ada\n**What:** us-east-2.\n",
        encoding="utf-8",
    )
    assert main(list(import_args(tmp_path))) == 0
    mem = Memory(tmp_path, now=NOW)
    [(_, newer)] = titled(entries(mem, "wiki"), "Staging deploy target region")
    assert "us-east-2" in newer.body
    assert not titled(entries(mem, "cold"), "Staging deploy target region")
    found = [archive.parse(p.read_bytes(), p) for p in archive.records(mem.layout, "team")]
    [retired] = [r for r in found if r.kind == "superseded"]
    assert retired.text.startswith(f"Superseded by {newer.id}.")
    assert "status=superseded" in retired.text
    # Its text is not copied whole a second time: the record names where the import keeps it.
    assert "eu-west-1" not in retired.text
    where, line = re.findall(r"kept whole in (archive/\S+\.md), line (\d+)", retired.text)[0]
    kept = archive.at(mem.layout, where)
    assert kept is not None and "eu-west-1" in kept.text.splitlines()[int(line) - 1 :][1]
    mem.close()


def test_an_agents_history_never_becomes_team_wiki(imported: Memory) -> None:
    # A pattern in a history is the agent's learning: in its cold tier (recent) or archive.
    [(agent, entry)] = titled(entries(imported, "cold"), "Pattern: preflight gate")
    assert (agent, entry.cls, entry.agent) == ("ada", "learning", "ada")
    for _, wiki_entry in entries(imported, "wiki").values():
        assert wiki_entry.agent == "team"
        assert all("/agents/" not in s and "archive/team/" in s for s in wiki_entry.sources)
    # Scribe's later runs keep it so: it ages out to the archive, never into the wiki.
    for days in (8, 40):
        later = format_time(parse_time(NOW) + timedelta(days=days))
        Memory(imported.root, now=later).scribe_run()
        assert not titled(entries(imported, "wiki"), "Pattern: preflight gate")


def test_an_undated_decision_stays_undated(imported: Memory) -> None:
    # decisions.md names 2026-03-05 last, and the import runs later: neither is when the
    # undated decision was written. The team recorded it, so the import filed it in the wiki.
    [(_, entry)] = titled(entries(imported, "wiki"), "Decision: Release branch naming")
    assert entry.created == ""
    assert not titled(entries(imported, "cold"), "Decision: Release branch naming")


def test_old_learnings_are_archive_only_and_recent_ones_are_cold(imported: Memory) -> None:
    cold = entries(imported, "cold")
    wiki = entries(imported, "wiki")
    for title in (
        "Publish retries for registry propagation",  # 2026-03-10: 36 days before --now
        "Changeset bot setup",  # 2025-07
        "Retry helper",  # 2026-01-05
    ):
        assert not titled(cold, title) and not titled(wiki, title), title
    hits = imported.search("publish retries registry propagation", tier="archive")
    assert any("registry" in h.text for h in hits)
    [(agent, recent)] = titled(cold, "Flaky snapshot test in renderer")  # 2026-03-24
    assert agent == "bo"
    assert recent.cls == "learning"
    assert recent.created.startswith("2026-03-24")


def test_union_merge_duplicates_fold(imported: Memory) -> None:
    matches = titled(entries(imported, "cold"), "Provenance flag on publish")
    assert len(matches) == 1
    text = imported.layout.tier_file("cold", "ada").read_text(encoding="utf-8")
    assert text.count("## Provenance flag on publish\n") == 1


def test_team_updates_are_status(imported: Memory) -> None:
    updates = [
        (agent, e)
        for agent, e in entries(imported, "cold").values()
        if "Team update" in e.title or "📌" in e.body
    ]
    assert {agent for agent, _ in updates} == {"ada", "bo"}
    assert all(e.cls == "status" for _, e in updates)


def test_log_is_a_team_status_entry(imported: Memory) -> None:
    logs = [e for agent, e in entries(imported, "cold").values() if agent == "team"]
    [log] = [e for e in logs if e.cls == "status"]
    assert "Wired the smoke test gate into publish.yml" in log.body
    assert log.created.startswith("2026-03-26")


# --- runs that change nothing -----------------------------------------------------------------


def test_second_run_changes_nothing(imported: Memory, run_cli: RunCli) -> None:
    before = snapshot(imported.layout.squad)
    code, out, _ = run_cli(*import_args(imported.root, "--format", "json"))
    assert code == 0
    data = json.loads(out)
    assert data["unchanged_files"] == data["files"] == 6
    assert data["entries_written"] == 0
    assert snapshot(imported.layout.squad) == before


def test_dry_run_writes_nothing_and_prints_a_plan(tmp_path: Path, run_cli: RunCli) -> None:
    write_squad(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = run_cli(*import_args(tmp_path, "--dry-run"))
    assert (code, err) == (0, "")
    assert "would import 6 files" in out
    assert "entries per class and tier" in out
    assert snapshot(tmp_path) == before
    assert not (tmp_path / ".squad" / "memory").exists()
    code, out, _ = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json"))
    assert code == 0
    plan = json.loads(out)
    assert plan["dry_run"] is True
    assert plan["entries_written"] == 0
    assert sum(sum(row.values()) for row in plan["classes"].values()) > 10
    assert snapshot(tmp_path) == before
    # The plan is what the import then does, after Scribe's pass: same tiers, same sizes.
    code, out, _ = run_cli(*import_args(tmp_path, "--format", "json"))
    assert code == 0
    done = json.loads(out)
    assert (done["classes"], done["after"]) == (plan["classes"], plan["after"])
    assert {"cold", "wiki", "archive"} <= set(done["after"])
    assert done["sections"] == []  # the rows are the dry run's


def test_dry_run_says_where_every_section_of_every_file_goes(
    tmp_path: Path, run_cli: RunCli
) -> None:
    write_squad(tmp_path)
    code, out, _ = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json"))
    assert code == 0
    rows = json.loads(out)["sections"]
    assert {(r["file"], r["line"]) for r in rows} == sections_with_text(tmp_path / ".squad")
    for row in rows:
        assert row["tier"] in ("cold", "wiki", "archive") and row["agent"] and row["page"]
        assert row["page"].startswith(f"{row['tier']}/"), row
    where = {(r["file"], r["section"]): (r["tier"], r["agent"], r["kind"]) for r in rows}
    history = ".squad/agents/ada/history.md"
    assert where[(history, "Core Context")] == ("cold", "ada", "standing")
    assert where[(history, "Publish retries for registry propagation")][:2] == ("archive", "ada")
    assert where[(history, "Provenance flag on publish")] == ("cold", "ada", "session")
    assert where[(".squad/decisions.md", "User directive")] == ("wiki", "team", "policy")
    assert where[(".squad/decisions-archive.md", "Node 20 minimum")] == (
        "archive",
        "team",
        "archived decision",
    )
    # In text: each file, then a line per section naming its tier, agent and page.
    text = run_cli(*import_args(tmp_path, "--dry-run"))[1]
    for row in rows:
        assert row["file"] in text.splitlines()
        line = f"  L{row['line']:<6} "
        assert any(ln.startswith(line) and row["page"] in ln for ln in text.splitlines())
    # Imported once, a file is one row saying so.
    assert run_cli(*import_args(tmp_path))[0] == 0
    out = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json"))[1]
    again = json.loads(out)["sections"]
    assert [(r["kind"], r["tier"]) for r in again] == [("unchanged", "archive")] * 6


def test_dry_run_of_an_imported_store_plans_nothing_new(imported: Memory, run_cli: RunCli) -> None:
    before = snapshot(imported.layout.squad)
    code, out, _ = run_cli(*import_args(imported.root, "--dry-run", "--format", "json"))
    assert code == 0
    plan = json.loads(out)
    assert plan["unchanged_files"] == plan["files"] == 6
    assert snapshot(imported.layout.squad) == before


def test_files_outside_memory_are_never_modified(tmp_path: Path, run_cli: RunCli) -> None:
    squad = write_squad(tmp_path)
    before = snapshot(squad, skip_memory=True)
    assert run_cli(*import_args(tmp_path))[0] == 0
    assert snapshot(squad, skip_memory=True) == before
    assert run_cli(*import_args(tmp_path))[0] == 0
    later = format_time(parse_time(NOW) + timedelta(days=40))
    assert run_cli(*import_args(tmp_path, now=later))[0] == 0
    assert snapshot(squad, skip_memory=True) == before
    # The inbox file is still there: merging it is Scribe's job, not the import's.
    assert (squad / "decisions" / "inbox" / "ada-smoke-gate.md").is_file()


def test_unreadable_files_are_reported_and_skipped(tmp_path: Path, run_cli: RunCli) -> None:
    squad = write_squad(tmp_path)
    history = b"# Cy\n\n## Learnings\n### 2026-04-01: Caf\xe9 build\nbroken byte above\n"
    (squad / "agents" / "cy").mkdir()
    (squad / "agents" / "cy" / "history.md").write_bytes(history)
    (squad / "log" / "2026-04-02-paste.md").write_bytes(
        b"# Pasted output\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n"
    )
    code, out, err = run_cli(*import_args(tmp_path, "--format", "json"))
    assert code == 1  # a partial import: one file skipped, the rest imported
    note = (
        ".squad/agents/cy/history.md:4: 1 byte(s) not valid UTF-8, read as U+FFFD "
        "(the archive keeps the original bytes)"
    )
    assert err.splitlines() == [
        f"tiermem: note: {note}",
        "tiermem: skipped .squad/log/2026-04-02-paste.md:4: binary data",
    ]
    data = json.loads(out)
    assert data["files"] == 8
    assert data["skipped"] == [".squad/log/2026-04-02-paste.md:4: binary data"]
    assert data["notes"] == [note]
    # The stray byte dropped nothing: the file is rebuilt from the archive byte for byte.
    assert rebuild_check(tmp_path)["exact"] == 7
    mem = Memory(tmp_path, now=NOW)
    assert standing(mem, "ada") and standing(mem, "cy") == []
    hits = [h for h in mem.search("broken byte above") if h.agent == "cy"]
    assert hits and all("Caf\ufffd build" in h.text for h in hits)
    [record] = [p for p in archive.records(mem.layout, "cy") if b"decode=replace" in p.read_bytes()]
    assert archive.body(record.read_bytes()) == history
    assert archive.parse(record.read_bytes(), record).text == history.decode("utf-8", "replace")
    mem.close()
    # A second run finds the same record: nothing new, and nothing said twice but the note.
    code, out, err = run_cli(*import_args(tmp_path, "--format", "json"))
    assert code == 1 and json.loads(out)["unchanged_files"] == 7


def test_a_stray_byte_alone_imports_everything_with_status_0(
    tmp_path: Path, run_cli: RunCli
) -> None:
    squad = write_squad(tmp_path)
    (squad / "agents" / "cy").mkdir()
    (squad / "agents" / "cy" / "history.md").write_bytes(b"# Cy\n### Ship\nA token: \xff ok\n")
    code, _, err = run_cli(*import_args(tmp_path))
    assert code == 0
    assert err.startswith("tiermem: note: .squad/agents/cy/history.md:3: 1 byte(s) not valid")
    assert rebuild_check(tmp_path)["differ"] == 0


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path, run_cli: RunCli) -> None:
    write_squad(tmp_path)
    before = snapshot(tmp_path / ".squad")
    code, out, err = run_cli(*import_args(tmp_path, "--format", "yaml"))
    assert (code, out, err.count("\n")) == (2, "", 1)
    code, _, err = run_cli("--root", str(tmp_path / "nowhere"), "import", "squad")
    assert code == 2 and err.count("\n") == 1
    assert snapshot(tmp_path / ".squad") == before


def test_a_credential_next_to_a_stray_byte_is_redacted_in_the_archive(
    tmp_path: Path, run_cli: RunCli
) -> None:
    squad = write_squad(tmp_path)
    token = "ghp_" + "A1b2" * 9
    raw = f"# Cy\n### Keys\nrotated {token} today \xfe\n".encode("utf-8", "surrogateescape")
    raw = raw.replace("\xfe".encode(), b"\xfe")
    (squad / "agents" / "cy").mkdir()
    (squad / "agents" / "cy" / "history.md").write_bytes(raw)
    assert run_cli(*import_args(tmp_path))[0] == 0
    folder = tmp_path / ".squad/memory/archive"
    archived = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert token.encode() not in archived
    assert b"today \xfe" in archived
    assert rebuild_check(tmp_path)["redacted"] == 1


def test_json_report(tmp_path: Path, run_cli: RunCli) -> None:
    squad = write_squad(tmp_path)
    code, out, _ = run_cli(*import_args(tmp_path, "--format", "json"))
    assert code == 0
    data = json.loads(out)
    assert {"classes", "before", "after"} <= set(data)
    assert data["files"] == 6 and data["skipped"] == []
    assert data["before"]["bytes"] == sum(s.path.stat().st_size for s in sources(squad))
    assert data["before"]["tokens"] > 0
    assert {"cold", "wiki", "archive"} <= set(data["after"])
    for slot in data["after"].values():
        assert set(slot) == {"entries", "bytes", "tokens"}
    assert set(data["classes"]) <= {"policy", "decision", "convention", "contract", "learning"} | {
        "status"
    }
    assert data["classes"]["policy"] == {"wiki": 1}
    for row in data["classes"].values():
        assert set(row) <= {"cold", "wiki", "archive"}
    # An agent's learnings stay its own (older sessions are in the archive, with no entry).
    assert data["classes"]["learning"] == {"cold": 5}
    assert data["entries_written"] > 0


def test_json_classes_count_each_entry_once(tmp_path: Path, run_cli: RunCli) -> None:
    write_squad(tmp_path)
    code, out, _ = run_cli(*import_args(tmp_path, "--format", "json"))
    assert code == 0
    data = json.loads(out)
    for tier in ("wiki", "cold"):
        counted = sum(row.get(tier, 0) for row in data["classes"].values())
        assert counted == data["after"][tier]["entries"], tier


def test_a_history_larger_than_a_piece_is_archived_in_parts_and_imported_whole(
    tmp_path: Path, run_cli: RunCli
) -> None:
    from tiermem.bench.import_scale import AGENT, write_history
    from tiermem.squad.importer.file_pieces import PIECE_BYTES

    history = write_history(tmp_path, 6000)
    size = history.stat().st_size
    assert size > 2 * PIECE_BYTES
    code, out, _ = run_cli(
        "--root", str(tmp_path), "--now", NOW, "import", "squad", "--format", "json"
    )
    assert code == 0
    parts = [
        r
        for p in archive.records(Memory(tmp_path).layout, AGENT)
        if (r := archive.parse(p.read_bytes(), p)).kind == "import"
    ]
    assert sorted(r.part for r in parts) == [f"{n}/{len(parts)}" for n in range(1, len(parts) + 1)]
    assert all(len(r.text.encode()) <= PIECE_BYTES for r in parts)
    assert rebuild_check(tmp_path) == {"files": 1, "exact": 1, "redacted": 0, "differ": 0}
    # One standing entry, the latest sessions in cold, and every section placed.
    mem = Memory(tmp_path, now=NOW)
    assert len(standing(mem, AGENT)) == 1
    assert 0 < len(entries(mem, "cold")) < 100
    code, out, _ = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json"))
    assert json.loads(out)["unchanged_files"] == 1
    mem.close()


def test_a_dry_run_of_a_large_history_places_every_section(tmp_path: Path, run_cli: RunCli) -> None:
    from tiermem.bench.import_scale import write_history

    write_history(tmp_path, 6000)
    code, out, _ = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json"))
    assert code == 0
    rows = json.loads(out)["sections"]
    assert {(r["file"], r["line"]) for r in rows} == sections_with_text(tmp_path / ".squad")
    assert sum(r["tier"] == "cold" for r in rows) + sum(
        r["tier"] == "archive" for r in rows
    ) == len(rows)


# --- the real teams ---------------------------------------------------------------------------


def _team(name: str) -> object:
    return name


@corpora.needs()
@pytest.mark.parametrize(
    "team",
    [
        _team(name)
        for name in (
            "Thraka__SadConsole",
            "bradygaster__squad",
            "dkirby-ms__primal-grid",
            "jguadagno__jjgnet-broadcast",
        )
    ],
)
def test_real_team_imports_cleanly(team: str, tmp_path: Path, run_cli: RunCli) -> None:
    from tiermem.bench.corpus import last_date, load_events

    corpus = CORPORA / team
    target = tmp_path / ".squad"
    shutil.copytree(corpus / ".squad", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    now = format_time(last_date(load_events(corpus)))

    # The dry run names a tier, agent and page for every section of every file.
    code, out, err = run_cli(*import_args(tmp_path, "--dry-run", "--format", "json", now=now))
    rows = json.loads(out)["sections"]
    placed = {(r["file"], r["line"]) for r in rows if r["tier"] and r["agent"] and r["page"]}
    assert placed >= sections_with_text(target)

    code, out, err = run_cli(*import_args(tmp_path, "--format", "json", now=now))
    assert err == ""
    assert code == 0
    data = json.loads(out)
    assert data["skipped"] == []
    assert data["entries_written"] > 0
    # The wiki holds the team's structured knowledge, on pages a person would name.
    mem = Memory(tmp_path, now=now)
    shape = wiki_shape(mem)
    mem.close()
    assert shape["max_page_bytes"] <= PAGE_MAX_BYTES
    assert shape["unnamed_pages"] == shape["personal_pages"] == []
    assert_named_by_the_team(shape["page_names"], set())
    assert set(shape["wiki_classes"]) <= {"policy", "decision", "convention", "contract"}
    assert shape["from_history"] == 0
    assert shape["wiki_share"] <= 0.40

    before = snapshot(target)
    code, out, err = run_cli(*import_args(tmp_path, "--format", "json", now=now))
    assert (code, err) == (0, "")
    assert json.loads(out)["entries_written"] == 0
    assert snapshot(target) == before

    check = rebuild_check(tmp_path)
    assert check["differ"] == 0
    assert check["files"] == check["exact"] + check["redacted"] > 0


# --- the shape of memory after an import ----------------------------------------------------

SKILL = """\
---
name: "release-checklist"
description: "How this team cuts a release"
---

## Steps
1. Run `pnpm changeset version` on main.
2. Tag `vX.Y.Z` and push; the publish workflow does the rest.
"""


def test_team_skills_are_conventions_filed_under_their_own_name(tmp_path: Path) -> None:
    squad = write_squad(tmp_path)
    for folder, text in (("release-checklist", SKILL), ("tiered-memory", SKILL)):
        (squad / "skills" / folder).mkdir(parents=True)
        (squad / "skills" / folder / "SKILL.md").write_text(text, encoding="utf-8")
    assert main(list(import_args(tmp_path))) == 0
    mem = Memory(tmp_path, now=NOW)
    [(page, entry)] = titled(
        entries(mem, "wiki"), "release-checklist: How this team cuts a release"
    )
    assert page == "release-checklist" and entry.cls == "convention"
    assert dict(entry.extra)["path"] == ".squad/skills/release-checklist/SKILL.md"
    # The entry points at the skill's file; its text is read from the file's one record.
    assert "pnpm changeset version" not in entry.body
    assert ".squad/skills/release-checklist/SKILL.md" in entry.body
    hit = mem.search("pnpm changeset version", tier="wiki")[0]
    assert hit.id == entry.id and "pnpm changeset version" in hit.text
    assert "description:" not in hit.text
    # A skill that describes tiered memory itself is no convention of the team's.
    assert [e.title for _, e in entries(mem, "wiki").values() if "release" in e.title] == [
        entry.title
    ]


def test_every_agent_with_a_history_starts_with_its_latest_work_in_cold(tmp_path: Path) -> None:
    mem = import_agent(
        tmp_path,
        "cleo",
        "# Cleo\n\n## Learnings\n\n"
        "### 2025-06-02: Docs site theme\nMoved the docs to `vitepress`.\n\n"
        "### 2025-06-20: Sidebar order\nThe sidebar follows `docs/.vitepress/config.ts`.\n\n"
        "### 2025-01-10: First docs build\nThe docs built with `docsify` then.\n",
    )
    cold = {e.title: (name, e) for name, e in entries(mem, "cold").values()}
    # Its last 30 days of activity stay in cold, with their own dates; the rest is archived.
    assert cold["Sidebar order"][0] == "cleo"
    assert cold["Sidebar order"][1].created.startswith("2025-06-20")
    assert cold["Docs site theme"][0] == "cleo"
    assert "First docs build" not in cold
    assert any("docsify" in h.text for h in mem.search("first docs build", tier="archive"))


def pages_after_import(tmp_path: Path, decisions: str) -> list[Path]:
    """The wiki pages an import of the fixture with these decisions in decisions.md makes."""
    squad = write_squad(tmp_path)
    (squad / "decisions.md").write_text(DECISIONS + decisions, encoding="utf-8")
    assert main(list(import_args(tmp_path))) == 0
    return sorted((tmp_path / ".squad" / "memory" / "wiki").glob("*.md"))


def test_a_topic_that_outgrows_its_page_goes_on_to_a_next_one(tmp_path: Path) -> None:
    from tiermem.team import wiki

    decisions = "".join(
        f"### 2026-02-{1 + n % 27:02d}: Publish gate g{n}x on step s{n}y\n**By:** Ada\n"
        + f"**What:** Gate g{n}x blocks the publish job until `check-{n}` passes. " * 12
        + "\n\n"
        for n in range(120)
    )
    pages = pages_after_import(tmp_path, decisions)
    assert max(p.stat().st_size for p in pages) <= wiki.PAGE_MAX_BYTES
    assert {p.stem for p in pages} >= {"publish", "publish-2", "publish-3"}


def test_the_page_bound_holds_for_one_huge_decision(tmp_path: Path) -> None:
    # 77 KB in one decision, most of it one code block and one line without an end.
    from tiermem.team import wiki

    code = "".join(f"    frame_{n} = parse(buffer[{n}:{n + 8}])  # at {n}\n" for n in range(1200))
    huge = (
        "### 2026-03-01: Parser frame layout\n**By:** Ada\n**What:** The layout below.\n\n"
        f"```python\n{code}```\n\n## Raw table\n\n{'|cell' * 5000}\n"
    )
    assert len(huge.encode()) > 77_000
    pages = pages_after_import(tmp_path, huge)
    assert max(p.stat().st_size for p in pages) <= wiki.PAGE_MAX_BYTES
    parser = "".join(p.read_text(encoding="utf-8") for p in pages if p.stem.startswith("parser"))
    assert parser.count("frame_") == 1200 and parser.count("|") == 5000  # all of it, in parts
    assert parser.count("```") % 2 == 0  # each part closes the code block it opens
