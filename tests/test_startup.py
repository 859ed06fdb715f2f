"""A command starts with what it uses: modules it never needs are never imported.

Each command runs in a fresh process, which then lists the modules it imported. The figures
(what each costs) are `tiermem bench speed`'s; this pins what must stay out.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from reliability import child_env

# What no command below needs: a TOML parser for a config as init wrote it, the typo
# matcher, the terminal's width (and the compression libraries that come with it), the
# package metadata, and every other command's code.
NEVER = {
    "tomllib",
    "difflib",
    "shutil",
    "importlib.metadata",
    "tiermem.scribe.maintenance",
    "tiermem.squad.importer.squad_import",
    "tiermem.report.html_page",
    "tiermem.server.mcp_server",
    "tiermem.bench",
}
# What a line read plainly (`cli.plain`) never needs: argparse and the translations it loads.
PARSER = {"argparse", "gettext", "locale", "tiermem.cli.parser"}
# OpenSSL, for a few short digests (`storage.digest` hashes them without it).
OPENSSL = {"hashlib", "hmac", "_hashlib"}
# The results of other commands: a hot tier's reads and writes return hot's alone.
NOT_HOT_RESULTS = {
    f"tiermem.results.{part}"
    for part in ("reading", "figures", "scribe", "upkeep", "spawn", "report", "imports")
}
# Per command, beside NEVER: what it does not need either.
NOT_FOR = {
    ("hot", "show", "ada"): {
        "typing",
        "sqlite3",
        "json",
        "hashlib",
        "threading",
        "tiermem.text.redact",
        "tiermem.scribe.session",
        "tiermem.storage.archive",
        "tiermem.index.fts",
        "tiermem.storage.config",
        *PARSER,
        *NOT_HOT_RESULTS,
    },
    ("hot", "note", "ada", "a plain note"): {
        "sqlite3",
        "tiermem.index.fts",
        "tiermem.scribe.session",  # nothing leaves hot: no checkpoint, no queue
        "tiermem.storage.archive",
        "tiermem.team.decisions",
        "threading",  # a lock keeps what a thread holds in _thread's own local
        *PARSER,
        *OPENSSL,
        *NOT_HOT_RESULTS,
    },
    ("search", "release"): {
        "tiermem.text.redact",
        "tiermem.scribe.session",
        "tiermem.storage.config",
        *PARSER,
        *OPENSSL,
    },
    ("spawn", "ada", "--task", "Draft the release notes", "--auto"): {
        "tiermem.scribe.session",
        *OPENSSL,
    },
}

LISTER = (  # prints with repr: importing json itself would hide whether a command does
    "import sys\n"
    "from tiermem.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print(repr({'code': code, 'modules': sorted(sys.modules)}))\n"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("startup")
    # The last step builds the index: the commands below find it there, as most do.
    made = (["init"], ["hot", "note", "ada", "--new-agent", "Release notes drafted"], ["stats"])
    for argv in made:
        done = subprocess.run(
            [sys.executable, "-m", "tiermem", "--root", str(root), *argv],
            capture_output=True,
            env=child_env(),
            check=True,
        )
        assert done.returncode == 0
    return root


@pytest.mark.parametrize("argv", list(NOT_FOR), ids=" ".join)
def test_a_command_imports_only_what_it_uses(store: Path, argv: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LISTER, "--root", str(store), *argv],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    result = ast.literal_eval(done.stdout.splitlines()[-1])
    assert result["code"] == 0, done.stderr
    loaded = {m for m in result["modules"] if m in NEVER | NOT_FOR[argv]}
    assert not loaded, f"{' '.join(argv)} imported {sorted(loaded)}"
