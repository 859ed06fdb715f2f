"""The import graph keeps Squad at the edge: the core reaches Squad and Scribe's checkpoint
through the `Context` (`ctx.host`, `ctx.keeper`), never by importing them."""

from __future__ import annotations

import ast
from pathlib import Path

import tiermem

SRC = Path(tiermem.__file__).parent
# Who may import the Squad package: itself, the importer, the composition root (`Memory`),
# the command line (`squad install`) and the benchmarks, which measure Squad's own load.
SQUAD_EDGE = ("squad.", "importer", "import_sections", "memory", "cli", "bench.")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    """The tiermem modules a file imports (relative imports resolved), type-only ones too."""
    package = _module(path).split(".")[:-1]  # a package's __init__ counts as inside it
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found |= {f"{stem}.{a.name}".strip(".") for a in node.names} | {stem}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tiermem."):
            found.add(node.module.removeprefix("tiermem.") if node.module else "")
    return found


def _importers_of(prefix: str) -> set[str]:
    return {
        _module(path)
        for path in SRC.rglob("*.py")
        if any(m == prefix or m.startswith(prefix + ".") for m in _imports(path))
    }


def test_only_the_edge_imports_squad() -> None:
    importers = _importers_of("squad")
    assert "squad.host" in importers or "memory" in importers  # the walk sees imports
    outside = {m for m in importers if not m.startswith(SQUAD_EDGE)}
    assert not outside, f"core modules import tiermem.squad: {sorted(outside)}"


def test_a_hot_write_reaches_scribe_through_its_context() -> None:
    assert "hot_writes" not in _importers_of("scribe")
    assert "hot" not in _importers_of("scribe")


def test_the_architecture_page_places_every_module() -> None:
    page = (SRC.parent.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = {p.stem for p in SRC.glob("*.py")} | {
        f"{p.name}/" for p in SRC.iterdir() if (p / "__init__.py").is_file()
    }
    missing = sorted(m for m in modules if f"`{m}`" not in page)
    assert not missing, f"docs/ARCHITECTURE.md does not place: {missing}"
