"""`tiermem report` options at their edges: a preview's task read from stdin, an out folder
made however deep, a file or an unknown agent refused in one line with nothing written, and the
figures the command prints counted from the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot

T1 = "2026-03-03T10:00:00Z"


def report(
    run_cli: RunCli, root: Path, *args: str, stdin: bytes | None = None
) -> dict[str, object]:
    code, out, err = run_cli(
        "report", *args, "--format", "json", "--root", str(root), "--now", T1, stdin=stdin
    )
    assert (code, err) == (0, ""), err
    result: dict[str, object] = json.loads(out)
    return result


def test_a_preview_task_from_stdin_is_the_task_given(
    store_copy: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    piped = tmp_path / "piped"
    given = tmp_path / "given"
    task = "Ship the login fix"
    first = report(
        run_cli,
        store_copy,
        "--agent",
        "flight",
        "--task",
        "-",
        "--out",
        str(piped),
        stdin=f"{task}\n".encode(),
    )
    second = report(run_cli, store_copy, "--agent", "flight", "--task", task, "--out", str(given))
    assert first["preview"] is True and second["preview"] is True
    assert (piped / "report.html").read_bytes() == (given / "report.html").read_bytes()
    assert task in (piped / "report.html").read_text(encoding="utf-8")


def test_an_out_folder_is_made_however_deep_and_said_as_given(
    store_copy: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "a" / "b" / "c"
    result = report(run_cli, store_copy, "--out", str(out))
    assert result["path"] == str(out / "report.html") and result["local"] is False
    assert (out / "report.html").stat().st_size == result["bytes"]


def test_the_figures_are_counted_from_the_store(store_copy: Path, run_cli: RunCli) -> None:
    result = report(run_cli, store_copy)
    records = list((store_copy / ".squad" / "memory" / "archive").rglob("*.md"))
    assert result["records"] == len(records)
    assert result["local"] is True and result["preview"] is False
    assert result["stale"] == 0 and result["superseded"] == 0
    assert isinstance(result["entries"], int) and result["entries"] > 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--agent", "nobody", "--task", "x"), "unknown agent 'nobody' (agents: eecom, flight)"),
        (("--agent", "flight", "--task", "   "), "task is empty"),
        (("--agent", "flight"), "both a task and an agent"),
        (("--task", "x"), "both a task and an agent"),
    ],
    ids=["unknown agent", "blank task", "agent alone", "task alone"],
)
def test_a_bad_preview_is_refused_in_one_line_and_writes_nothing(
    store_copy: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    before = snapshot(store_copy)
    code, out, err = run_cli("report", *args, "--root", str(store_copy), "--now", T1)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(store_copy) == before


def test_an_out_path_that_is_a_file_is_refused_and_kept(
    store_copy: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    taken = tmp_path / "report.html"
    taken.write_text("someone's page", encoding="utf-8")
    code, out, err = run_cli("report", "--out", str(taken), "--root", str(store_copy))
    assert (code, out) == (2, "")
    assert err == f"tiermem: error: {taken} is not a folder (nothing was written)\n"
    assert taken.read_text(encoding="utf-8") == "someone's page"
