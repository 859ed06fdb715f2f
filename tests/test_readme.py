"""The README's first two commands work in any order, each in a fresh shell, and CI runs exactly
the second; the lock pins every dependency within pyproject.toml's ranges.

Running the commands means two fresh copies of the checkout, four installs and two full test
runs: it takes minutes, so it runs in CI (CI=true) or when TIERMEM_README_TEST=1 is set. The
shells start from an empty environment (`env -i`, a login shell: what a new terminal gives), so
nothing of this test's own environment (its virtual environment, its variables) helps them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def readme_commands() -> list[str]:
    """The two commands of the README's first code block."""
    block = _BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert block, "the README opens with a sh block"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2, lines
    return lines


def test_ci_runs_exactly_the_readme_test_command() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert run[-1] == readme_commands()[1]
    assert ".ci/install-squad" in run
    assert "-c constraints.txt" in run[-1]


def test_the_second_line_adds_to_the_first_from_one_lock() -> None:
    # Both install tiermem's dependencies at the lock's versions: the second only adds the
    # development tools, never installs again what the first did (8 packages, unpinned).
    for line in readme_commands():
        assert "pip install -c constraints.txt -e " in line, line


def pinned() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = {}
    for line in lines:
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"not an exact pin: {line}"
            pins[canonicalize_name(name)] = version
    return pins


def test_the_lock_pins_every_dependency_within_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += extra
    pins = pinned()
    for spec in wanted:
        requirement = Requirement(spec)
        assert not any(s.operator == "==" for s in requirement.specifier), f"{spec}: a range"
        version = pins.get(canonicalize_name(requirement.name))
        assert version, f"{requirement.name} is not in constraints.txt"
        assert requirement.specifier.contains(version), f"{spec} does not allow {version}"


def _checkout_copy(target: Path) -> Path:
    """The files git would check out here (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _fresh_shell(command: str, cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    started = time.monotonic()
    done = subprocess.run(
        ["env", "-i", *(f"{k}={v}" for k, v in env.items()), "bash", "-lc", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return time.monotonic() - started, done


def _installed(out: str) -> set[str]:
    """The packages pip says it installed (name and version), from a command's output."""
    lines = [ln for ln in out.splitlines() if ln.startswith("Successfully installed ")]
    found = {p for ln in lines for p in ln.removeprefix("Successfully installed ").split()}
    return {p for p in found if not p.startswith("tiermem-")}  # itself: editable, each time


@pytest.mark.skipif(
    not (os.environ.get("CI") or os.environ.get("TIERMEM_README_TEST")),
    reason="minutes of installs and two full test runs: CI runs it (or TIERMEM_README_TEST=1)",
)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to list the checkout")
def test_the_readme_commands_work_in_either_order_in_fresh_shells(tmp_path: Path) -> None:
    demo, check = readme_commands()
    timings = []
    installed: dict[str, set[str]] = {}
    for order, commands in (("ci", (demo, check)), ("reversed", (check, demo))):
        checkout = _checkout_copy(tmp_path / order)
        for command in commands:
            seconds, done = _fresh_shell(command, checkout)
            name = "demo" if command == demo else "check"
            timings.append(f"{order}/{name} {seconds:.0f} s")
            # The failures first: a run's long list of skip reasons would push them out.
            failed = "\n".join(re.findall(r"^(?:FAILED|ERROR) .*$", done.stdout, re.MULTILINE))
            assert done.returncode == 0, (
                f"{order}: {command}\n{failed}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
            if command == demo:
                assert "What to try next" in done.stdout
            else:
                assert re.search(r"\d+ passed", done.stdout), done.stdout[-2000:]
            installed[name] = _installed(done.stdout)
        if order == "ci":  # the check's install adds to the demo's, from the same lock
            assert installed["check"] & installed["demo"] == set(), installed
    print("README commands:", ", ".join(timings), file=sys.stderr)
