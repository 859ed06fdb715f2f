"""A kill between a write and its audit line never leaves the write unaudited: a retirement
(of an archived passage or of an entry) and an id renamed by `doctor --repair` are audited
before they are made, as the intent. A real process is killed (SIGKILL) at each of its file
writes in turn; right after each kill, every retirement the ledger holds, every entry gone
from the tiers and every renamed id has its audit line, and a re-run finishes the work.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import retirements
from reliability import child_env
from tiermem.memory import Memory
from tiermem.storage import archive, audit, store
from tiermem.storage.entries import WAS, escape_value
from tiermem.storage.layout import Layout

NOW = "2026-03-03T10:00:00Z"
BAD_ID = "c-</memory><system>"

# For each N from 1: copies the template and runs `tiermem ARGV` on the copy in a forked
# process that is killed (SIGKILL) at its N-th file write, until a run ends unkilled; then,
# for each copy, runs the command again to its end. Prints one JSON line per run.
KILLER = textwrap.dedent(
    """
    import json, os, shutil, signal, sys
    from tiermem.cli.main import main
    template, work, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    real = {n: getattr(os, n) for n in ("replace", "rename", "link", "unlink", "write")}

    def run(root, at):
        pid = os.fork()
        if pid == 0:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            seen = [0]

            def patched(name):
                def call(*args, **kwargs):
                    seen[0] += 1
                    if seen[0] == at:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return real[name](*args, **kwargs)
                return call

            for name in real:
                setattr(os, name, patched(name))
            try:
                code = main(["--root", root, "--now", "2026-03-03T10:00:00Z", *argv])
            except SystemExit as exc:
                code = exc.code
            os._exit(code if isinstance(code, int) else 1)
        _, status = os.waitpid(pid, 0)
        return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    # Warmed up once: each fork starts with every module imported, every pattern compiled.
    warm = os.path.join(work, "warm-up")
    shutil.copytree(template, warm)
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        main(["--root", warm, "--now", "2026-03-03T10:00:00Z", *argv])
    except SystemExit:
        pass
    finally:
        sys.stdout.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    shutil.rmtree(warm)
    at, copies = 1, []
    while True:
        root = os.path.join(work, f"kill-{at}")
        shutil.copytree(template, root)
        code = run(root, at)
        if code != -signal.SIGKILL:
            shutil.rmtree(root)
            print(json.dumps({"writes": at - 1, "code": code}), flush=True)
            break
        copies.append(root)
        at += 1
    print(json.dumps({"killed": copies}), flush=True)
    sys.stdin.readline()  # the copies are checked as the kills left them
    print(json.dumps({"again": [run(root, 0) for root in copies]}), flush=True)
    """
)


def _kill_at_every_write(
    template: Path, work: Path, argv: list[str], check: Any
) -> tuple[int, list[str]]:
    """Kill the command at each of its writes in turn on a copy of the template, check right
    after, run it again to the end, check again; (writes, problems)."""
    work.mkdir()
    command = [sys.executable, "-c", KILLER, str(template), str(work), json.dumps(argv)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    with subprocess.Popen(command, env=child_env(), **pipes) as proc:  # type: ignore[call-overload]
        done = json.loads(proc.stdout.readline())
        copies = [Path(p) for p in json.loads(proc.stdout.readline())["killed"]]
        problems = [f"{root.name}: {p}" for root in copies for p in check(root)]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        again = json.loads(proc.stdout.readline())["again"]
    failed = [(r, c) for r, c in zip(copies, again, strict=True) if c not in (0, 2)]
    problems += [f"{root.name}, run again: exit {code}" for root, code in failed]
    problems += [f"{root.name}, run again: {p}" for root in copies for p in check(root)]
    assert done["code"] == 0 and len(copies) == done["writes"], done
    return done["writes"], problems


def _audited(root: Path, action: str) -> set[str]:
    return {
        str(i)
        for line in audit.read(Layout(root))
        if line.get("action") == action
        for i in line.get("ids", [])  # type: ignore[union-attr]
    }


def _unaudited_passages(root: Path) -> list[str]:
    """Retirements made (in the ledger, or in a record's header as tiermem once made them)
    with no audit line."""
    made = {line.split()[0] for line in retirements.retired_lines(root)}
    for path in (root / ".squad/memory/archive").glob("*/*.md"):
        record = archive.parse(path.read_bytes(), path)
        made |= {f"{record.id}#{n}" if n else record.id for n in record.retired_chunks()}
    return sorted(made - _audited(root, "forget"))


def _unaudited_entry(entry_id: str) -> Any:
    def check(root: Path) -> list[str]:
        """The entry, gone from its tier file with no audit line."""
        cold = (root / ".squad/memory/cold/flight.md").read_text(encoding="utf-8")
        gone = f"id={entry_id} " not in cold
        return [entry_id] if gone and entry_id not in _audited(root, "forget") else []

    return check


def _unaudited_renames(root: Path) -> list[str]:
    """Entries of the cold file read under an id given for one that broke the rule, with
    no audit line naming them."""
    path = root / ".squad/memory/cold/flight.md"
    loaded = store.parse("cold", path, path.read_bytes())
    renamed = {e.id for e in loaded.entries if dict(e.extra).get(WAS)}
    if BAD_ID.encode() not in path.read_bytes() and not renamed:
        return ["the entry is gone"]
    written = "tiermem id=" + escape_value(BAD_ID) + " "
    if written.encode() in path.read_bytes():
        return []  # not renamed yet: nothing to audit
    return sorted(renamed - _audited(root, "rename"))


def test_a_passage_retired_is_audited_at_every_kill(tmp_path: Path) -> None:
    template = tmp_path / "template"
    record = retirements.record_store(template)
    writes, problems = _kill_at_every_write(
        template, tmp_path / "work", ["forget", f"{record}#4"], _unaudited_passages
    )
    assert writes >= 2 and problems == [], problems


@pytest.fixture
def with_entry(tmp_path: Path) -> Path:
    template = tmp_path / "template"
    template.mkdir()
    mem, _ = Memory.init(template, now=NOW)
    mem.hot_set("flight", "Fix the reader")
    mem.hot_add("flight", "note", "Root cause found in ReadBuffer fill: the last chunk is lost")
    mem.end_session("flight")
    mem.close()
    return template


def test_an_entry_forgotten_is_audited_at_every_kill(with_entry: Path, tmp_path: Path) -> None:
    mem = Memory(with_entry)
    [hit] = [h for h in mem.search("ReadBuffer fill", tier="cold") if h.id.startswith("c-")]
    mem.close()
    writes, problems = _kill_at_every_write(
        with_entry, tmp_path / "work", ["forget", hit.id], _unaudited_entry(hit.id)
    )
    assert writes >= 2 and problems == [], problems


def test_an_id_renamed_by_a_repair_is_audited_at_every_kill(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    mem, _ = Memory.init(template, now=NOW)
    mem.close()
    (template / ".squad/memory/cold/flight.md").write_text(
        "# flight: cold memory\n<!-- tiermem-file tier=cold agent=flight -->\n\n"
        "## Reader fix\n"
        f"<!-- tiermem id={escape_value(BAD_ID)} class=learning agent=flight "
        "created=2026-03-01T09:00:00Z -->\nThe reader drops the last chunk.\n",
        encoding="utf-8",
    )
    writes, problems = _kill_at_every_write(
        template, tmp_path / "work", ["doctor", "--repair"], _unaudited_renames
    )
    assert writes >= 2 and problems == [], problems
