"""The examples in the docs run, in order, against a scratch store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks(name: str) -> list[str]:
    return _BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


def test_api_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks("api.md")
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"root": tmp_path}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "must not contain" in printed  # the error examples printed their one-line messages
    assert "unknown agent 'nobody'" in printed
