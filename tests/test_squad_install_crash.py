"""`tiermem squad install` and `--uninstall` killed before each of their file-system changes,
in turn, then run again: nothing left that `git add -A` would stage beside the team's files
(no `.tmp-*`), no install record that says the store was there before when the install made
it, and the run again finishes the job: the repository ends as one uninterrupted run leaves it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from reliability import ROOT, child_env
from test_squad_install import make_team

# For each N: copy the template, fork a child that dies just before its N-th file-system
# change, look at what it left, run the command again to the end in another child, and
# compare the repository with one run uninterrupted.
CRASHER = textwrap.dedent(
    """
    import json, os, shutil, subprocess, sys
    from pathlib import Path
    from tiermem.cli.main import main

    template, work, argv = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    names = ("replace", "rename", "link", "unlink", "write", "mkdir", "rmdir")
    real = {name: getattr(os, name) for name in names}
    RECORD = ".squad/memory/tiermem-install.json"

    def child(root, crash_at):
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reader)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            seen = [0]

            def patched(name):
                def call(*args, **kwargs):
                    seen[0] += 1
                    if seen[0] == crash_at:
                        os._exit(137)
                    return real[name](*args, **kwargs)
                return call

            for name in names:
                setattr(os, name, patched(name))
            os.fsync = lambda fd: None  # a kill loses nothing the page cache holds
            try:
                code = main([*argv, "--root", str(root)])
            except BaseException as exc:
                code = f"{type(exc).__name__}: {exc}"
            real["write"](writer, json.dumps({"code": code, "points": seen[0]}).encode())
            os._exit(0)
        os.close(writer)
        data = b""
        while chunk := os.read(reader, 65536):
            data += chunk
        os.close(reader)
        os.waitpid(pid, 0)
        return json.loads(data) if data else {"crashed": True}

    def tree(root):
        found = {}
        for folder, dirs, files in os.walk(root):
            skip = {".git", ".locks"} if folder.endswith("memory") else {".git"}
            dirs[:] = [d for d in dirs if d not in skip]
            for name in dirs + files:
                path = Path(folder, name)
                rel = path.relative_to(root).as_posix()
                found[rel] = None if path.is_dir() else path.read_bytes().hex()
        return found

    def staged_temps(root):
        # Temp files `git add -A` would take: beside the team's files, and (counted apart,
        # before the store's .gitignore is written) in .squad/memory/.
        out = subprocess.run(["git", "add", "-A", "--dry-run"], cwd=root, capture_output=True,
                             text=True, check=True).stdout
        found = [line for line in out.splitlines() if "/.tmp-" in line or "'.tmp-" in line]
        inside = [line for line in found if "'.squad/memory/" in line]
        return [line for line in found if line not in inside], len(inside)

    def fresh(name):
        root = work / name
        shutil.copytree(template, root, symlinks=True)
        return root

    # Run once in this process first: the children then fork with every module imported
    # and every pattern compiled, and each crash point costs milliseconds.
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        main([*argv, "--root", str(fresh("warm-up"))])
    finally:
        sys.stdout.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    ref = fresh("reference")
    first = child(ref, 0)
    once = tree(ref)
    report = {"points": first["points"], "code": first["code"], "tried": 0, "bad": [],
              "temps_in_store": 0}
    for n in range(1, first["points"] + 1):
        report["tried"] += 1
        root = fresh(f"crash-{n}")
        child(root, n)
        temps, inside = staged_temps(root)
        report["temps_in_store"] += inside
        record = root / RECORD
        says = json.loads(record.read_text()).get("store") if record.is_file() else None
        again = child(root, 0)
        got = tree(root)
        if temps or says == "found" or again.get("code") != first["code"] or got != once:
            diff = sorted(k for k in set(got) | set(once) if got.get(k) != once.get(k))
            report["bad"].append({"point": n, "temps": temps[:3], "store": says,
                                  "rerun": again.get("code"), "differs": diff[:4]})
        shutil.rmtree(root)
    print(json.dumps(report))
    """
)
SQUAD_LINES = {
    ".github/agents/squad.agent.md": "# Squad\n\n- **Inputs:** User request, repository "
    "state, `.squad/decisions.md`\n",
    ".github/copilot-instructions.md": "- Follow any project conventions in "
    "`.squad/decisions.md`\n",
}


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def team_in_git(root: Path) -> Path:
    """A hand-made Squad team (its coordinator and @copilot instructions too), committed."""
    make_team(root, vscode=True)
    for rel, text in SQUAD_LINES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a Squad team")
    return root


def crash_points(template: Path, work: Path, argv: list[str]) -> dict[str, Any]:
    """Crash before every file-system change of the command; the report."""
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(template), str(work), json.dumps(argv)],
        capture_output=True,
        timeout=900,
        check=False,
        env=child_env(),
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode("utf-8", "replace")[-3000:])
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


INSTALL = ["squad", "install", "--coordinator"]


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_killed_install_or_uninstall_leaves_nothing_and_a_rerun_finishes(
    tmp_path: Path, action: str
) -> None:
    template = team_in_git(tmp_path / "template")
    if action == "uninstall":
        from reliability import cli

        assert cli([*INSTALL, "--root", str(template)])[0] == 0
        argv = ["squad", "install", "--uninstall"]
    else:
        argv = INSTALL
    report = crash_points(template, tmp_path / "work", argv)
    assert report["code"] == 0
    assert report["tried"] >= 20, report
    assert report["bad"] == [], report["bad"]
