"""Hostile input on the command line: random arguments, texts, stdin bytes and store files.

Properties, for every command tiermem has:
- no traceback, ever; exit status 0, or 2 for a failure (1 only where a command reports a
  finding: `reindex --check` drift, `import squad` skipped files);
- a failure prints exactly one line on stderr, naming the problem;
- bad arguments or input write nothing (every file under .squad but the index and locks
  is byte-identical afterwards);
- a tier file that cannot be parsed is never overwritten, a symbolic link is never
  replaced or written through, and text outside the store never shows up in any output.

The CLI runs in process (`tiermem.cli.main`) so hundreds of commands fit in seconds. Each
known bug has its own strict xfail test below; the property tests leave out only the inputs
that trigger one (a year before 1000 in --now, a folder where a tier file should be, a
failure on a damaged store writing first), so they keep guarding everything else. The raw
inputs and damage are in tests/hostile.py, which tests/stress.py (`hostile`) also uses.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import hostile
from hostile import (
    DAMAGE,
    OUTSIDE_MARK,
    T0,
    TARGETS,
    as_placed,
    build_template,
    overwritten,
    place,
    write_outside,
)
from reliability import cli, snapshot

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# --- running the CLI ------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(argv: list[str], stdin: bytes = b"") -> Result:
    """`tiermem ARGV` in process; an exception other than SystemExit propagates."""
    return Result(*cli(argv, stdin))


def assert_clean_failure(result: Result, warnings: bool = False) -> None:
    """One line on stderr names the problem (after any skipped-file warnings, if allowed)."""
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    if warnings:  # see test_a_broken_hot_file_fails_spawn_in_one_line
        lines = [ln for ln in lines if not ln.startswith("tiermem: skipped ")]
    assert len(lines) == 1, f"stderr has {len(lines)} lines: {result.err!r}"
    prefix, sep, problem = lines[0].partition(": error: ")
    assert prefix.startswith("tiermem") and sep, lines[0]
    assert problem.strip(), "the error line names no problem"


# --- the store every example starts from ----------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-template")
    build_template(root)
    outside = write_outside(tmp_path_factory.mktemp("hostile-outside") / "outside.md")
    (root / "outside-path").write_text(str(outside), encoding="utf-8")
    return root


@contextlib.contextmanager
def fresh_copy(template: Path) -> Iterator[tuple[Path, Path]]:
    """A private copy of the template store, and the file outside it."""
    scratch = Path(tempfile.mkdtemp(prefix="tiermem-hostile-"))
    try:
        root = scratch / "repo"
        shutil.copytree(template, root, symlinks=True)
        outside = Path((template / "outside-path").read_text(encoding="utf-8"))
        yield root, outside
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --- strategies -----------------------------------------------------------------------

AGENTS = st.one_of(st.sampled_from(hostile.AGENTS), st.text(max_size=8))
TEXTS = st.one_of(st.sampled_from(hostile.TEXTS), st.text(max_size=120))
STDIN = st.one_of(st.sampled_from(hostile.STDIN), st.binary(max_size=200))
NOW = st.sampled_from(hostile.CLOCKS)
SOURCES = st.sampled_from([[], ["--source", "web"], ["--source", "tool"], ["--source", "bogus"]])
FORMAT = st.sampled_from([[], ["--format", "json"], ["--format", "yaml"]])
IDS = st.one_of(
    TEXTS,
    st.sampled_from(["c-0000000000", "a-0000000000", "a-0000000000#2", "d-0123456789-0123456789"]),
)
PURGE = st.sampled_from([[], ["--purge"]])
OPT = st.one_of(st.just([]), st.builds(lambda flag, v: [flag, v], st.just("--why"), TEXTS))


def _commands() -> st.SearchStrategy[list[str]]:
    def cat(*parts: object) -> list[str]:
        out: list[str] = []
        for part in parts:
            out.extend(part if isinstance(part, list) else [str(part)])
        return out

    verb = st.sampled_from(["note", "action", "decide", "block"])
    return st.one_of(
        st.builds(lambda v, a, t, s: cat("hot", v, a, t, s), verb, AGENTS, TEXTS, SOURCES),
        st.builds(lambda a, t, o: cat("hot", "set", a, "--task", t, o), AGENTS, TEXTS, OPT),
        st.builds(
            lambda a, t: cat("hot", "set", a, "--task", "x", "--talking-to", t), AGENTS, TEXTS
        ),
        st.builds(lambda a, f: cat("hot", "show", a, f), AGENTS, FORMAT),
        st.builds(lambda a: cat("hot", "clear", a), AGENTS),
        st.builds(lambda a, t: cat("hot", "unblock", a, t), AGENTS, TEXTS),
        st.builds(lambda a, t: cat("decision", "add", "--by", a, t), AGENTS, TEXTS),
        st.builds(lambda p, t, a: cat("wiki", "write", p, t, "--by", a), AGENTS, TEXTS, AGENTS),
        st.builds(lambda p: cat("wiki", "show", p), AGENTS),
        st.just(["wiki", "list"]),
        st.builds(
            lambda q, a, n: cat("search", q, "--agent", a, "--limit", n),
            TEXTS,
            AGENTS,
            st.integers(-3, 50),
        ),
        st.builds(lambda q, t: cat("search", q, "--tier", t), TEXTS, st.sampled_from(["hot", "x"])),
        st.builds(
            lambda a, t, b, c: cat("spawn", a, "--task", t, "--budget", b, c),
            AGENTS,
            TEXTS,
            st.integers(-5, 5000),
            st.sampled_from(
                [[], ["--include-cold"], ["--include-wiki"], ["--auto"], ["--charter"]]
            ),
        ),
        st.builds(lambda a: cat("scribe", "end-session", a), AGENTS),
        st.builds(lambda i, r, p: cat("forget", i, "--reason", r, p), IDS, TEXTS, PURGE),
        st.builds(lambda a, i, f: cat("log", "--agent", a, "--entry", i, f), AGENTS, IDS, FORMAT),
        st.sampled_from(
            [
                ["scribe", "run"],
                ["scribe", "run", "--dry-run"],
                ["scribe", "end-session"],
                ["stats"],
                ["stats", "--format", "json"],
                ["reindex"],
                ["reindex", "--check"],
                ["import", "squad", "--dry-run"],
            ]
        ),
        st.lists(st.one_of(TEXTS, AGENTS), max_size=4),
    ).flatmap(lambda argv: st.builds(lambda now: [*now, *argv], NOW))


COMMANDS = _commands()

KINDS = st.one_of(
    st.sampled_from([*DAMAGE, "symlink-out", "symlink-dangling"]),
    st.binary(min_size=1, max_size=64).map(lambda b: b"\x00" + b + b"\xff"),
)
DAMAGES = st.lists(st.tuples(st.sampled_from(TARGETS), KINDS), min_size=1, max_size=3)


# --- properties -----------------------------------------------------------------------


@PROPERTY
@given(argv=COMMANDS, stdin=STDIN)
def test_bad_arguments_fail_in_one_line_and_write_nothing(
    template: Path, argv: list[str], stdin: bytes
) -> None:
    with fresh_copy(template) as (root, _):
        before = snapshot(root)
        result = run(["--root", str(root), *argv], stdin)
        assert result.code in (0, 1, 2), result
        if result.code == 1:
            assert argv[-2:] == ["reindex", "--check"] or "import" in argv, result
            return
        if result.code == 2:
            assert_clean_failure(result)
            assert snapshot(root) == before, "a failed command changed the store"


@PROPERTY
@given(argv=COMMANDS, stdin=STDIN, damages=DAMAGES)
# Found by this property, only sometimes: a hot file that is a link to nothing made every read
# crash while the index fingerprinted the tier folders.
@example(argv=["search", "login"], stdin=b"", damages=[("hot/flight.md", "symlink-dangling")])
@example(argv=["stats"], stdin=b"", damages=[("cold/eecom.md", "symlink-dangling")])
def test_damaged_store_never_crashes_and_is_never_overwritten(
    template: Path, argv: list[str], stdin: bytes, damages: list[tuple[str, str | bytes]]
) -> None:
    with fresh_copy(template) as (root, outside):
        kept = as_placed(place(root, outside, damages))
        outside_before = outside.read_bytes()
        result = run(["--root", str(root), *argv], stdin)
        assert result.code in (0, 1, 2), result
        if result.code == 2:
            assert_clean_failure(result, warnings=True)
        assert overwritten(kept) == [], [p.relative_to(root).as_posix() for p in kept]
        assert outside.read_bytes() == outside_before
        assert OUTSIDE_MARK not in result.out + result.err


def test_every_command_in_the_strategy_can_succeed(template: Path) -> None:
    """The property tests are not vacuous: well-formed commands do work on the template."""
    with fresh_copy(template) as (root, _):
        for argv in (
            ["hot", "note", "flight", "a note"],
            ["hot", "set", "eecom", "--task", "-"],
            ["decision", "add", "--by", "flight", "Use pnpm"],
            ["wiki", "write", "release", "Changelog always\nWrite one."],
            ["search", "login", "--agent", "flight"],
            ["spawn", "flight", "--task", "fix login", "--include-cold"],
            ["scribe", "end-session", "flight"],
            ["scribe", "run"],
            ["stats"],
            ["reindex", "--check"],
        ):
            result = run(["--root", str(root), "--now", T0, *argv], b"stdin task")
            assert result.code == 0, (argv, result)


# --- known bugs -----------------------------------------------------------------------


@pytest.fixture
def root(template: Path) -> Iterator[Path]:
    with fresh_copy(template) as (copy, _):
        yield copy


def test_symlink_out_of_the_store_fails_in_one_line(root: Path, tmp_path: Path) -> None:
    cold = root / ".squad" / "memory" / "cold" / "eecom.md"
    cold.unlink()
    cold.symlink_to(tmp_path / "elsewhere.md")
    run(["--root", str(root), "hot", "note", "eecom", "one more note"])
    before = snapshot(root)
    result = run(["--root", str(root), "scribe", "end-session", "eecom"])
    assert result.code == 2
    assert_clean_failure(result)
    assert snapshot(root) == before


def test_a_folder_in_place_of_a_tier_file_fails_in_one_line(root: Path) -> None:
    hot = root / ".squad" / "memory" / "hot" / "flight.md"
    hot.unlink()
    hot.mkdir()
    result = run(["--root", str(root), "hot", "note", "flight", "x"])
    assert result.code == 2, result
    assert_clean_failure(result)
    # Reads go on without the unreadable file, say so once, and serve nothing of it.
    result = run(["--root", str(root), "search", "login"])
    assert result.code == 0, result
    assert result.err.count("\n") == 1 and "hot/flight.md:1: cannot be read" in result.err
    assert "hot/flight.md" not in result.out
    result = run(["--root", str(root), "stats"])
    assert result.code == 0, result
    assert result.err.count("\n") <= 1


def test_a_time_before_the_start_of_the_calendar_fails_in_one_line(root: Path) -> None:
    result = run(["--root", str(root), "--now", "0001-01-01T00:00:00+01:00", "stats"])
    assert result.code == 2
    assert_clean_failure(result)


def test_a_clock_outside_this_century_still_records_decisions(root: Path) -> None:
    for now in ("1999-12-31T23:59:59Z", "2100-01-01T00:00:00Z"):
        result = run(["--root", str(root), "--now", now, "decision", "add", "--by", "flight", "x"])
        assert result.code == 0, result


def test_a_time_before_the_year_1000_writes_a_file_that_reads_back(root: Path) -> None:
    now = ["--root", str(root), "--now", "0999-06-01T00:00:00Z"]
    assert run([*now, "hot", "note", "flight", "an old note"]).code == 0
    result = run([*now, "hot", "show", "flight"])
    assert result.code == 0, result


def test_a_broken_hot_file_fails_spawn_in_one_line(root: Path) -> None:
    (root / ".squad" / "memory" / "hot" / "eecom.md").write_bytes(DAMAGE["invalid-utf8"])
    result = run(["--root", str(root), "spawn", "eecom", "--task", "carry on"])
    assert result.code == 2
    assert_clean_failure(result)


def test_a_huge_search_limit_fails_in_one_line(root: Path) -> None:
    result = run(["--root", str(root), "search", "login", "--limit", str(2**64)])
    assert result.code in (0, 2)
    if result.code == 2:
        assert_clean_failure(result)


def test_stats_reads_an_author_that_is_no_agents_name_as_the_files_agent(root: Path) -> None:
    (root / ".squad" / "memory" / "cold" / "bob.md").write_text(
        "# bob: cold memory\n<!-- tiermem-file tier=cold agent=bob -->\n\n"
        "## hello\n<!-- tiermem id=c-1 class=learning agent=[/] -->\nbody\n",
        encoding="utf-8",
    )
    result = run(["--root", str(root), "stats"])
    assert result.code == 0, result
    assert "[/]" not in result.out and "bob" in result.out


def test_end_session_all_with_a_stray_file_name_writes_nothing(root: Path) -> None:
    (root / ".squad" / "memory" / "hot" / "zz..x.md").write_text("# stray\n", encoding="utf-8")
    before = snapshot(root)
    result = run(["--root", str(root), "scribe", "end-session", "--all"])
    if result.code == 2:
        assert_clean_failure(result)
        assert snapshot(root) == before, "a failed command changed the store"
    else:
        assert result.code == 0


def test_hand_written_hot_file_is_kept_on_the_next_write(root: Path) -> None:
    hot = root / ".squad" / "memory" / "hot" / "fido.md"
    hot.write_text("# fido notes\nremember the mark-hand-written deadline\n", encoding="utf-8")
    result = run(["--root", str(root), "hot", "note", "fido", "a new note"])
    assert result.code == 0, result
    everything = b"".join(snapshot(root).values())
    assert b"mark-hand-written" in everything


def test_refused_write_of_a_secret_leaves_the_audit_alone(root: Path) -> None:
    (root / ".squad" / "memory" / "hot" / "flight.md").write_bytes(DAMAGE["invalid-utf8"])
    before = snapshot(root)
    result = run(["--root", str(root), "hot", "note", "flight", "POSTGRES_PASSWORD=Sup3rS3cret!x"])
    assert result.code == 2
    assert_clean_failure(result)
    assert snapshot(root) == before, "a failed command changed the store"


def test_end_session_fails_before_writing_when_a_tier_file_is_broken(root: Path) -> None:
    run(["--root", str(root), "hot", "decide", "flight", "Use zod for validation"])
    (root / ".squad" / "memory" / "cold" / "team.md").write_bytes(DAMAGE["unknown-class"])
    before = snapshot(root)
    result = run(["--root", str(root), "scribe", "end-session", "flight"])
    assert result.code == 2
    assert_clean_failure(result)
    assert snapshot(root) == before, "a failed command changed the store"
