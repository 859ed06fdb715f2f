"""Every test that needs the real teams' memory (`../shared/corpora`) skips in one wording where
it is absent, and finds it in one place (`corpora`)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import corpora

HERE = Path(__file__).resolve().parent


def _skip_reasons(tree: ast.AST) -> list[tuple[int, ast.expr]]:
    """(line, reason) of every `pytest.skip(...)` and `...skipif(..., reason=...)`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == "skip" and node.args:
            found.append((node.lineno, node.args[0]))
        found += [
            (node.lineno, k.value)
            for k in node.keywords
            if node.func.attr in ("skipif", "skip") and k.arg == "reason"
        ]
    return found


def _said(reason: ast.expr) -> str:
    """The words of a reason written out in the test (its literal parts)."""
    return " ".join(
        n.value
        for n in ast.walk(reason)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def test_every_skip_for_missing_corpora_says_it_the_same_way() -> None:
    found = []
    for path in sorted(HERE.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name != Path(__file__).name and '"shared" / "corpora"' in text:
            found.append(f"{path.name}: finds the corpora itself, not through `corpora`")
        for line, reason in _skip_reasons(ast.parse(text)):
            if "corpor" in _said(reason).lower() or "shared" in _said(reason).lower():
                found.append(f"{path.name}:{line}: {_said(reason)!r}")
    assert found == []


def test_absent_corpora_skip_with_one_reason(tmp_path: Path) -> None:
    env = {**os.environ, "TIERMEM_TEST_CORPORA": str(tmp_path / "none")}
    env.pop("CI", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "test_bench_ci.py",
            "test_token_pieces.py",
            "test_bench_probes.py",
            "-k",
            "real or corpora or ci or token",
        ],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    skipped = [ln for ln in done.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert done.returncode == 0 and skipped, done.stdout[-3000:]
    assert {ln.rsplit(": ", 1)[1] for ln in skipped} == {corpora.MISSING}
