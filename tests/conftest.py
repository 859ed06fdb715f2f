"""Shared fixtures: a hermetic environment, a fresh store, and the CLI run in process."""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tiermem.cli.main import main
from tiermem.memory import Memory

RunCli = Callable[..., tuple[int, str, str]]

pytest_plugins = ["ci_skips"]  # under CI, a test that needs what CI installs may not skip


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small repository with a Squad team and a store holding every tier, built once; the
    tests that damage or attack it work on copies (`store_copy`)."""
    import attacks

    root = tmp_path_factory.mktemp("built") / "repo"
    root.mkdir()
    attacks.build_store(root)
    return root


def copy_of(repo: Path, folder: Path) -> Path:
    """A copy of a repository in `folder/repo` (links copied as links), without the search
    index: one copied is not this copy's own, and its first read would build it again."""
    copy = folder / "repo"
    shutil.copytree(repo, copy, symlinks=True, ignore=_no_index)
    return copy


def _no_index(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("index.sqlite")] if folder.endswith("memory") else []


@pytest.fixture
def store_copy(built_store: Path, tmp_path: Path) -> Path:
    """A copy of `built_store` of this test's own."""
    return copy_of(built_store, tmp_path)


@pytest.fixture(autouse=True)
def _no_ambient_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store or clock from the caller's shell must never leak into a test."""
    monkeypatch.delenv("TIERMEM_ROOT", raising=False)
    monkeypatch.delenv("TIERMEM_NOW", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Memory]:
    """A freshly initialised store rooted at the test's temp folder."""
    mem, _ = Memory.init(tmp_path)
    yield mem
    mem.close()


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """Run `tiermem ARGS...` in process; return (exit status, stdout, stderr).

    `stdin=b"..."` feeds those bytes to commands that read '-'.
    """

    def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        capsys.readouterr()
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, --version and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return code, out, err

    return run


# A note archived as it left hot, and the session summary made from it (archived later as it
# expired): the summary's sentences all show in the note.
PINNED_NOTE = (
    "## Note: tokenizer pin\n"
    "We pin the tokenizer to o200k_base for every count. "
    "The pin lives in tokens.py next to the counter. "
    "Counting with another tokenizer drifts by five percent on code.\n"
)
PIN_SUMMARY = (
    "- We pin the tokenizer to o200k_base for every count. "
    "Counting with another tokenizer drifts by five percent on code.\n"
)


def archive_note_and_summary(mem: Memory, when: str, summary_title: str) -> None:
    """Archive `PINNED_NOTE` for ada, and its summary under `summary_title`."""
    from tiermem.storage import archive

    summary = f"## {summary_title}\n{PIN_SUMMARY}"
    for kind, text in (("hot", PINNED_NOTE), ("expire", summary)):
        archive.write(mem.layout, archive.new_record("ada", when, kind, "hot/ada.md", "", text))
