"""What the reliability tests and tests/stress.py both use: the CLI in process, child
processes on this checkout, and the files of a store read back.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

from tiermem.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def cli(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """`tiermem ARGV` in this process: (exit status, stdout, stderr); exceptions propagate."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def child_env() -> dict[str, str]:
    """The environment of a child process: tiermem from this checkout, no ambient store."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("TIERMEM_ROOT", None)
    env.pop("TIERMEM_NOW", None)
    return env


def is_index(path: Path) -> bool:
    """Whether a file is the index (a cache), or the key of this clone that seals it (made
    with the first index, in `tiermem-local/`, with the `.gitignore` that keeps it out of git)."""
    local = path.parent.name == "tiermem-local" and path.name in ("clone-key", ".gitignore")
    return path.name.startswith("index.sqlite") or local


def files_text(root: Path, folder: str = ".squad/memory") -> str:
    """Every file under a folder, as text (the index is a cache: left out)."""
    parts = []
    base = root / folder
    if not base.exists():
        return ""
    for path in sorted(base.rglob("*")):
        if path.is_file() and not is_index(path):
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under .squad (links by target), but the index and the locks."""
    found: dict[str, bytes] = {}
    for path in sorted((root / ".squad").rglob("*")):
        if ".locks" in path.parts or is_index(path):
            continue
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = b"-> " + os.readlink(path).encode("utf-8", "surrogateescape")
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found
