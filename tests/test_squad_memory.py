"""Squad's governed memory and tiermem share `.squad/memory/`: neither hides the other's files.

Squad 0.10 (squad-sdk 0.13) keeps the team's governed memory in `.squad/memory/`: `local/`
(`squad memory write --class LOCAL`), `policy-inbox/`, `semantic-inbox/`, `tombstones/`,
`config.json`, `index.json` and `audit.jsonl`, committed for every teammate. tiermem keeps
this clone's own state in `tiermem-local/`, which ignores itself. A store an earlier tiermem
made (its state in `local/`, its `.gitignore` ignoring `local/` whole) is moved on its next
write or by `doctor --repair`, and every byte of Squad's stays. The files here are written in
the format the SDK writes them (`LocalMemoryStore.renderMemoryFile`); the real Squad runs in
`test_squad_real.py`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tiermem.storage import clone

RunCli = Callable[..., tuple[int, str, str]]
T0 = "2026-03-02T10:00:00Z"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# An earlier tiermem's store .gitignore, as `tiermem init` wrote it before this layout.
OLD_GITIGNORE = """\
# Derived or transient: rebuilt from the markdown tiers at any time.
index.sqlite
index.sqlite-*
.locks/
.tmp-*
# Local to this clone: the log of spawns and the list of files git tracks.
spawns.jsonl
citations.cache
# This clone's own state (when entries were last used, the key that seals its index).
local/
# Files `tiermem doctor --repair` set aside: they may hold what a purge removed elsewhere.
damaged/
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def governed(
    memory: Path, folder: str, slug: str, cls: str, title: str, author: str, body: str
) -> Path:
    """A governed memory as squad-sdk 0.13 writes it."""
    ident = f"{abs(hash((slug, cls))) % 10**8:08d}-e176-45f2-bddf-2dc11802f779"
    guidance = "ALWAYS" if cls in ("POLICY", "DECISION") else "ON-DEMAND"
    text = (
        f"---\nid: {ident}\nclass: {cls}\nloadGuidance: [{guidance}]\n"
        f"title: {json.dumps(title)}\nauthor: {json.dumps(author)}\n"
        f"createdAt: 2026-03-01T09:15:09.795Z\nmetadata: {{}}\n---\n\n{body}\n"
    )
    path = memory / folder / f"{author}-{slug}-{ident[:8]}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def squad_memory(root: Path) -> dict[str, bytes]:
    """Squad's governed memory folder and files, as Squad's `squad init` lays them out."""
    memory = root / ".squad" / "memory"
    for name in ("local", "policy-inbox", "semantic-inbox", "tombstones"):
        (memory / name).mkdir(parents=True, exist_ok=True)
    (memory / "config.json").write_text('{\n  "version": 1\n}\n', encoding="utf-8")
    (memory / "index.json").write_text("[]\n", encoding="utf-8")
    (memory / "audit.jsonl").write_text("", encoding="utf-8")
    governed(
        memory,
        "local",
        "staging-database",
        "LOCAL",
        "Staging database",
        "eecom",
        "The staging database listens on port 5433; migrations run with make migrate.",
    )
    return squads_files(root)


# What an earlier tiermem wrote in `local/` (never Squad's).
EARLIER = {"used", "clone-key", ".gitignore", "report"}


def squads_files(root: Path) -> dict[str, bytes]:
    """Every file of Squad's governed memory, by path."""
    memory = root / ".squad" / "memory"
    found = {}
    for name in ("local", "policy-inbox", "semantic-inbox", "tombstones"):
        for path in sorted((memory / name).rglob("*")):
            mine = path.relative_to(memory / name).parts[0] in EARLIER
            if path.is_file() and not mine:
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    for name in ("config.json", "index.json", "audit.jsonl"):
        found[f".squad/memory/{name}"] = (memory / name).read_bytes()
    return found


def old_store(root: Path, run_cli: RunCli) -> None:
    """A store as an earlier tiermem left it: this clone's state in Squad's `local/`."""
    code, _, err = run_cli("--root", str(root), "--now", T0, "init")
    assert code == 0, err
    memory = root / ".squad" / "memory"
    (memory / ".gitignore").write_text(OLD_GITIGNORE, encoding="utf-8")
    shutil.rmtree(memory / "tiermem-local", ignore_errors=True)
    (memory / "local").mkdir(exist_ok=True)
    (memory / "local" / ".gitignore").write_text(clone.IGNORE_ALL, encoding="utf-8")
    (memory / "local" / "clone-key").write_text("ab" * 32 + "\n", encoding="utf-8")
    (memory / "local" / "used").write_text("2026-03-01 c-0123456789\n", encoding="utf-8")
    (memory / "local" / "report").mkdir()
    (memory / "local" / "report" / "report.html").write_text("<html></html>", encoding="utf-8")


def ignored(root: Path, rel: str) -> str:
    """The rule of tiermem's (in `.squad/`) that makes git ignore a path ('' when none)."""
    said = git(root, "check-ignore", "-v", "--no-index", rel).strip()
    return said if said.startswith(".squad/") else ""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "team"
    (root / ".squad" / "agents" / "eecom").mkdir(parents=True)
    git(root, "init", "-q")
    return root


def test_a_new_store_keeps_its_own_state_out_of_squads_folder(repo: Path, run_cli: RunCli) -> None:
    before = squad_memory(repo)
    root = ("--root", str(repo), "--now", T0)
    for args in (("init",), ("hot", "note", "eecom", "--new-agent", "x"), ("search", "port")):
        code, _, err = run_cli(*root, *args)
        assert code == 0, err
    assert run_cli(*root, "report")[0] == 0
    assert squads_files(repo) == before
    memory = repo / ".squad" / "memory"
    assert (memory / "tiermem-local" / "clone-key").is_file()
    assert (memory / "tiermem-local" / "report" / "report.html").is_file()
    assert sorted(p.name for p in (memory / "local").iterdir()) == [
        "eecom-staging-database-" + next(iter(before)).rsplit("-", 1)[1]
    ]
    for rel in before:
        assert ignored(repo, rel) == "", rel
    assert ignored(repo, ".squad/memory/tiermem-local/used")


def test_the_next_write_moves_an_earlier_stores_state_out_of_local(
    repo: Path, run_cli: RunCli
) -> None:
    squad_memory(repo)
    old_store(repo, run_cli)
    before = squads_files(repo)
    rel = next(r for r in before if r.startswith(".squad/memory/local/"))
    assert ignored(repo, rel)  # as an earlier tiermem left it: Squad's memory hidden
    code, _, err = run_cli("--root", str(repo), "--now", T0, "hot", "note", "eecom", "x")
    assert code == 0, err
    memory = repo / ".squad" / "memory"
    assert squads_files(repo) == before
    assert [p.name for p in (memory / "local").iterdir()] == [Path(rel).name]
    assert ignored(repo, rel) == ""
    assert "local/" not in (memory / ".gitignore").read_text(encoding="utf-8").split()
    assert "tiermem-local/" in (memory / ".gitignore").read_text(encoding="utf-8").split()
    used = (memory / "tiermem-local" / "used").read_text(encoding="utf-8")
    assert "2026-03-01 c-0123456789" in used
    assert (memory / "tiermem-local" / "report" / "report.html").is_file()


def test_a_read_moves_nothing_and_still_counts_the_earlier_record(
    repo: Path, run_cli: RunCli
) -> None:
    from tiermem.storage.layout import Layout
    from tiermem.team import use

    squad_memory(repo)
    old_store(repo, run_cli)
    gitignore = (repo / ".squad/memory/.gitignore").read_bytes()
    assert run_cli("--root", str(repo), "--now", T0, "search", "port")[0] == 0
    assert (repo / ".squad/memory/.gitignore").read_bytes() == gitignore
    assert use.recorded(Layout(repo))["c-0123456789"] == "2026-03-01"


def test_doctor_names_the_rule_that_hides_squads_memory_and_repair_moves_it(
    repo: Path, run_cli: RunCli
) -> None:
    squad_memory(repo)
    old_store(repo, run_cli)
    before = squads_files(repo)
    code, out, _ = run_cli("--root", str(repo), "--now", T0, "doctor", "--format", "json")
    found = [f for f in json.loads(out)["findings"] if f["path"] == ".squad/memory/local"]
    assert code == 1 and len(found) == 1 and found[0]["serious"]
    assert "Squad keeps the team's governed memory" in found[0]["problem"]
    assert run_cli("--root", str(repo), "--now", T0, "doctor", "--repair")[0] == 0
    code, out, _ = run_cli("--root", str(repo), "--now", T0, "doctor")
    assert code == 0, out
    assert squads_files(repo) == before
    assert not (repo / ".squad/memory/local/.gitignore").exists()


def test_doctor_never_calls_squads_committed_memory_this_clones_own(
    repo: Path, run_cli: RunCli
) -> None:
    squad_memory(repo)
    git(repo, "add", "-A")  # Squad's memories committed, as the team commits them
    assert run_cli("--root", str(repo), "--now", T0, "init")[0] == 0
    code, out, _ = run_cli("--root", str(repo), "--now", T0, "doctor")
    assert code == 0, out
    assert "git rm --cached" not in out


# --- a state backend tiermem refuses stops every write ---------------------------------------

WRITES = (
    ("init",),
    ("hot", "set", "eecom", "--task", "ship it"),
    ("hot", "note", "eecom", "a note"),
    ("hot", "decide", "eecom", "a decision"),
    ("hot", "block", "eecom", "a blocker"),
    ("hot", "unblock", "eecom", "blocker"),
    ("hot", "clear", "eecom"),
    ("scribe", "end-session", "eecom"),
    ("scribe", "run"),
    ("decision", "add", "--by", "eecom", "Use Postgres"),
    ("wiki", "write", "release", "Tags are signed by CI."),
    ("forget", "c-0123456789"),
    ("import", "squad"),
    ("doctor", "--repair"),
)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


@pytest.mark.parametrize("backend", ["orphan", "two-layer", "git-notes"])
def test_every_writing_command_refuses_a_state_backend_off_the_working_tree(
    repo: Path, run_cli: RunCli, backend: str
) -> None:
    root = ("--root", str(repo), "--now", T0)
    for args in (
        ("init",),
        ("hot", "set", "eecom", "--task", "ship it"),
        ("hot", "block", "eecom", "blocker"),
    ):
        assert run_cli(*root, *args)[0] == 0
    (repo / ".squad" / "config.json").write_text(
        json.dumps({"version": 1, "stateBackend": backend}), encoding="utf-8"
    )
    before = snapshot(repo)
    for args in WRITES:
        code, out, err = run_cli(*root, *args)
        assert (code, out) == (2, ""), (args, out, err)
        assert err.count("\n") == 1 and f"state backend '{backend}'" in err, (args, err)
        assert snapshot(repo) == before, args
    for args in (("hot", "show", "eecom"), ("search", "ship"), ("doctor",)):
        assert run_cli(*root, *args)[0] in (0, 1), args  # reads go on


def test_a_team_root_from_another_machine_naming_this_repository_is_the_team_here(
    repo: Path, run_cli: RunCli
) -> None:
    config = {"version": 1, "teamRoot": "C:\\src\\" + repo.name}
    (repo / ".squad" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (repo / ".squad" / "agents" / "eecom" / "charter.md").write_text("# eecom\n", encoding="utf-8")
    code, out, err = run_cli("squad", "install", "--root", str(repo))
    assert code == 0, err
    [said] = [line for line in out.splitlines() if "teamRoot" in line]
    assert said.startswith("left") and "this repository's own folder" in said
    assert run_cli("--root", str(repo), "hot", "note", "eecom", "x")[0] == 0
    for elsewhere in ("C:\\src\\Other", "../team", str(repo.parent)):
        config["teamRoot"] = elsewhere
        (repo / ".squad" / "config.json").write_text(json.dumps(config), encoding="utf-8")
        code, _, err = run_cli("--root", str(repo), "hot", "note", "eecom", "y")
        assert code == 2 and "teamRoot" in err and err.count("\n") == 1, elsewhere


def test_a_refused_write_moves_nothing(repo: Path, run_cli: RunCli) -> None:
    squad_memory(repo)
    old_store(repo, run_cli)
    before = snapshot(repo)
    code, _, err = run_cli("--root", str(repo), "--now", T0, "forget", "c-0123456789")
    assert code == 2 and err.count("\n") == 1
    assert snapshot(repo) == before


# --- Squad's governed memory, read as the team's ---------------------------------------------


def search(run_cli: RunCli, repo: Path, *query: str) -> list[dict[str, object]]:
    code, out, err = run_cli("--root", str(repo), "--now", T0, "search", *query, "--format", "json")
    assert code == 0, err
    return list(json.loads(out))


def spawn(run_cli: RunCli, repo: Path, task: str) -> str:
    code, out, err = run_cli(
        "--root", str(repo), "--now", T0, "spawn", "eecom", "--task", task, "--auto"
    )
    assert code == 0, err
    return out


def test_squads_memories_are_searched_with_their_class_author_and_date(
    repo: Path, run_cli: RunCli
) -> None:
    squad_memory(repo)
    assert run_cli("--root", str(repo), "--now", T0, "init")[0] == 0
    [hit] = search(run_cli, repo, "staging database port")[:1]
    assert hit["title"] == "Staging database" and hit["tier"] == "wiki"
    assert hit["class"] == "learning" and str(hit["created"]).startswith("2026-03-01T09:15:09")
    assert "eecom" in str(hit["text"]) and "eecom" in str(hit["origin"])
    assert str(hit["path"]).startswith(".squad/memory/local/")
    # Squad writes more: the next read has it, as a tier file written by hand would be.
    governed(
        repo / ".squad" / "memory",
        "local",
        "release-checklist",
        "LOCAL",
        "Release checklist",
        "flight",
        "The release checklist lives in docs/release.md; tag once CI is green.",
    )
    assert [h["title"] for h in search(run_cli, repo, "release checklist")][:1] == [
        "Release checklist"
    ]
    whole = search(run_cli, repo, str(hit["id"]))
    assert [h["id"] for h in whole] == [hit["id"]]
    assert "Staging database" in spawn(run_cli, repo, "Run the staging database migrations")


def test_a_policy_squad_says_to_load_always_is_pinned_in_every_spawn(
    repo: Path, run_cli: RunCli
) -> None:
    squad_memory(repo)
    governed(
        repo / ".squad" / "memory",
        "policy-inbox",
        "lint-before-push",
        "POLICY",
        "Lint before push",
        "flight",
        "Always run the linter before pushing a branch.",
    )
    assert run_cli("--root", str(repo), "--now", T0, "init")[0] == 0
    prompt = spawn(run_cli, repo, "Write the changelog for the next release")
    pinned = prompt.split('<memory tier="policy" pinned="true">', 1)[1].split("</memory>")[0]
    assert "Always run the linter before pushing a branch." in pinned


def test_a_memory_squad_superseded_is_not_served_as_current(repo: Path, run_cli: RunCli) -> None:
    squad_memory(repo)
    path = next((repo / ".squad/memory/local").glob("*.md"))
    text = path.read_text(encoding="utf-8").replace(
        "metadata: {}", "metadata: {}\nstatus: superseded\nloadGuidance: [ARCHIVE]"
    )
    path.write_text(text, encoding="utf-8")
    assert run_cli("--root", str(repo), "--now", T0, "init")[0] == 0
    assert "port 5433" not in spawn(run_cli, repo, "Run the staging database migrations")


def test_tiermem_never_changes_squads_memory(repo: Path, run_cli: RunCli) -> None:
    before = squad_memory(repo)
    root = ("--root", str(repo), "--now", T0)
    assert run_cli(*root, "init")[0] == 0
    found = search(run_cli, repo, "staging database")
    ident = str(found[0]["id"])
    code, _, err = run_cli(*root, "forget", ident)
    assert code == 2 and "squad memory delete" in err and err.count("\n") == 1
    for args in (
        ("hot", "note", "eecom", "--new-agent", "checked the staging database"),
        ("scribe", "end-session", "eecom"),
        ("scribe", "run"),
        ("doctor", "--repair"),
        ("reindex",),
    ):
        assert run_cli(*root, *args)[0] == 0, args
    code, out, _ = run_cli(*root, "doctor")
    assert code == 0 and "1 of Squad's governed memories" in out
    assert squads_files(repo) == before


# --- Squad's decision inbox merged as Squad merges it ----------------------------------------


def test_scribe_run_merges_a_governed_decision_with_its_header(repo: Path, run_cli: RunCli) -> None:
    inbox = repo / ".squad" / "decisions" / "inbox"
    path = governed(
        repo / ".squad",
        "decisions/inbox",
        "zod-for-config",
        "DECISION",
        "Zod for config",
        "flight",
        "We adopt Zod for config validation.",
    )
    header = path.read_text(encoding="utf-8").split("\n\n", 1)[0]
    (inbox / "eecom-retries.md").write_text(
        "### 2026-03-02T14-05-22: Retry the publish job once\n\n**By:** eecom\n"
        "**What:** Retry the publish job once\n\n**Why:** the registry lags\n",
        encoding="utf-8",
    )
    (repo / ".squad" / "decisions.md").write_text("# Decisions\n", encoding="utf-8")
    root = ("--root", str(repo), "--now", T0)
    assert run_cli(*root, "init")[0] == 0
    assert search(run_cli, repo, "Zod config validation")[0]["title"] == "Zod for config"
    assert run_cli(*root, "scribe", "run")[0] == 0
    log = (repo / ".squad" / "decisions.md").read_text(encoding="utf-8")
    assert header in log  # id, class, load guidance, title, author and time, as `squad nap`
    assert "### 2026-03-02T14-05-22: Retry the publish job once" in log
    assert not list(inbox.iterdir())
    assert run_cli(*root, "scribe", "run")[0] == 0
    assert (repo / ".squad" / "decisions.md").read_text(encoding="utf-8") == log
    [hit] = [
        h for h in search(run_cli, repo, "Zod config validation") if h["title"] == "Zod for config"
    ][:1]
    assert hit["agent"] == "team"
