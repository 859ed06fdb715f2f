"""The real teams' memory the benchmarks and some tests read: `../shared/corpora`, beside the
checkout. A fresh clone has none, so every test that needs it skips, each with the one reason
`MISSING`, and reads its path from here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# TIERMEM_TEST_CORPORA points elsewhere (a test of these skips hides them so).
CORPORA = Path(
    os.environ.get("TIERMEM_TEST_CORPORA")
    or Path(__file__).resolve().parents[2] / "shared" / "corpora"
)
MISSING = "needs ../shared/corpora (the real teams' memory), absent here"


def needs(*teams: str) -> pytest.MarkDecorator:
    """Skip unless the corpora are here (with these teams' folders, when named)."""
    present = CORPORA.is_dir() and all((CORPORA / team).is_dir() for team in teams)
    return pytest.mark.skipif(not present, reason=MISSING)


def require(path: Path) -> Path:
    """A path within the corpora, or a skip where it is absent."""
    if not path.exists():
        pytest.skip(MISSING)
    return path
