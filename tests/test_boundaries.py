"""The import graph, built from the source: the parts stand on floors and import only
downward, the top of `src/tiermem/` holds the API and little else, and the core reaches Squad
and Scribe's checkpoint through the `Context` (`ctx.host`, `ctx.keeper`), never by
importing them."""

from __future__ import annotations

import ast
import functools
import importlib
import itertools
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import tiermem
from tiermem.memory import Memory

SRC = Path(tiermem.__file__).parent
MISSING = object()  # what getattr gives for a name a module does not have
PAGE = SRC.parent.parent / "docs" / "ARCHITECTURE.md"
# The parts, bottom floor first: a module imports only from its own part or from a part
# listed before it. A part is a package or a module at the top of src/tiermem/.
FLOORS = (
    "vocabulary",
    "errors",
    "results",
    "text",
    "render",
    "storage",
    "index",
    "relevance",
    "host",
    "context",
    "options",
    "operations",
    "hot",
    "team",
    "search",
    "spawn",
    "scribe",
    "upkeep",
    "report",
    "squad",
    "doors",
    "memory",
    "testing",
    "__init__",
    "server",
    "bench",
    "cli",
    "__main__",
)
MOST_AT_THE_TOP = 12
MOST_CLIMBS = 10  # following the agent from `Memory.hot_set` back up the import floors
# Who may import the Squad package: itself, the composition root (`Memory` and its doors),
# the command line (`squad install`) and the benchmarks, which measure Squad's own load.
SQUAD_EDGE = ("squad.", "doors", "memory", "cli.", "bench.")


def _module(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


MODULES = {_module(path): path for path in SRC.rglob("*.py")}


def _known(name: str) -> str:
    """The module a dotted name lies in (`storage.files.locked` lies in `storage.files`)."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def _imports(path: Path) -> set[str]:
    """The tiermem modules a file imports, anywhere in it (relative imports resolved; imports
    inside functions and type-only ones count: the design is the same at every import)."""
    module = _module(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if module == "__init__":
        package = []
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tiermem."):
            stem = (node.module or "").removeprefix("tiermem.")
        else:
            continue
        found |= {_known(f"{stem}.{a.name}".strip(".")) for a in node.names}
    return {m for m in found if m in MODULES and m != module}


GRAPH = {module: _imports(path) for module, path in MODULES.items()}


def _part(module: str) -> str:
    return module.split(".")[0]


def _importers_of(prefix: str) -> set[str]:
    return {m for m, found in GRAPH.items() if any(f.startswith(prefix) for f in found)}


def test_every_part_stands_on_a_floor() -> None:
    unplaced = sorted({_part(m) for m in MODULES} - set(FLOORS))
    assert not unplaced, f"parts not in FLOORS: {unplaced}"


def test_no_import_runs_up_a_floor() -> None:
    floor = {part: n for n, part in enumerate(FLOORS)}
    assert GRAPH["memory"], "the walk sees imports"
    upward = sorted(
        f"{module} -> {found}"
        for module, imported in GRAPH.items()
        for found in imported
        if floor[_part(found)] > floor[_part(module)]
    )
    assert not upward, f"imports that run up a floor: {upward}"


def _circle_from(start: str) -> list[str]:
    """A path of imports from `start` back to itself, or [] when there is none."""
    trail, seen = [start], set()
    stack = [iter(sorted(GRAPH[start]))]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            trail.pop()
        elif nxt == start:
            return [*trail, start]
        elif nxt not in seen:
            seen.add(nxt)
            trail.append(nxt)
            stack.append(iter(sorted(GRAPH[nxt])))
    return []


def test_no_import_circle() -> None:
    circles = [path for path in map(_circle_from, sorted(GRAPH)) if path]
    assert not circles, f"import circles: {[' -> '.join(c) for c in circles]}"


def test_the_top_holds_the_api() -> None:
    top = sorted(p.stem for p in SRC.glob("*.py"))
    assert len(top) <= MOST_AT_THE_TOP, f"{len(top)} modules at the top: {top}"


def test_each_package_says_what_it_owns() -> None:
    for init in SRC.glob("*/__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{init.parent.name}/ has no docstring"
        assert "import" in (ast.get_docstring(tree) or ""), f"{init.parent.name}/: may import?"
        eager = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        assert all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in eager), (
            f"{init.parent.name}/__init__.py imports at start-up"
        )


def test_only_the_edge_imports_squad() -> None:
    importers = _importers_of("squad")
    assert "squad.host" in importers or "memory" in importers  # the walk sees imports
    outside = {m for m in importers if not m.startswith(SQUAD_EDGE)}
    assert not outside, f"core modules import tiermem.squad: {sorted(outside)}"


def test_a_hot_write_reaches_scribe_through_its_context() -> None:
    assert "memory" in _importers_of("scribe")  # the walk sees imports
    assert not {m for m in _importers_of("scribe") if _part(m) == "hot"}


def _private_names_taken(path: Path) -> list[str]:
    """The private names (`_name`) a module takes from another tiermem module: imported
    (`from .handlers import _held`), or read off a module it imported (`handlers._held`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    taken: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("tiermem")
        ):
            taken += [f"{node.module or '.'}.{a.name}" for a in node.names if _private(a.name)]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or "tiermem" for a in node.names if a.name.startswith("tiermem")}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            taken.append(f"{node.value.id}.{node.attr}")
    return taken


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_takes_another_modules_private_names() -> None:
    """A module's private names are its own: what another module needs of it is public,
    named for what it is."""
    taken = {
        f"{_module(path)}: {name}"
        for path in MODULES.values()
        for name in _private_names_taken(path)
    }
    assert GRAPH["cli.main"], "the walk sees imports"
    assert not taken, f"private names taken across modules: {sorted(taken)}"


def test_the_architecture_page_places_every_part_in_floor_order() -> None:
    page = PAGE.read_text(encoding="utf-8")
    parts = {p.stem for p in SRC.glob("*.py")} | {
        f"{p.name}/" for p in SRC.iterdir() if (p / "__init__.py").is_file()
    }
    missing = sorted(m for m in parts if f"`{m}`" not in page)
    assert not missing, f"docs/ARCHITECTURE.md does not place: {missing}"
    table = page[page.index("## The parts") :]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    named = [next((r for r, row in enumerate(rows) if _names(row, p)), -1) for p in FLOORS]
    assert named == sorted(named, reverse=True), "the parts table runs top floor first"


def _names(row: str, part: str) -> bool:
    """Whether a row of the parts table names the part (outside its parentheses, which list
    a package's modules)."""
    cell = re.sub(r"\([^)]*\)", "", row.split("|")[2])
    return f"`{part}`" in cell or f"`{part}/`" in cell


@functools.cache
def _height(module: str) -> int:
    """How many floors of imports stand below a module (0: it imports no tiermem module)."""
    return 1 + max((_height(m) for m in GRAPH[module]), default=-1)


def _modules_handed(agent: str, call: Any) -> list[str]:
    """The modules of the tiermem functions that `call` hands the agent (or a path naming it)
    to, in call order, a module said once for calls in a row."""
    seen: list[str] = []

    def carries(value: object) -> bool:
        return isinstance(value, str | Path) and agent in str(value)

    def profile(frame: FrameType, event: str, _: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(str(SRC)):
            return
        params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        module = _module(Path(code.co_filename))
        if any(carries(frame.f_locals.get(p)) for p in params) and seen[-1:] != [module]:
            seen.append(module)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def test_the_agent_of_a_hot_write_climbs_back_up_at_most_ten_times(tmp_path: Path) -> None:
    Memory.init(tmp_path, now="2026-04-01T00:00:00Z")
    mem = Memory(tmp_path, now="2026-04-01T00:00:00Z")
    mem.hot_set("warmup", "load every module the write needs")  # imports are not the path
    path = _modules_handed("zorblax", lambda: mem.hot_set("zorblax", "a task", why="a why"))
    assert {"doors", "hot.writes", "storage.files"} <= set(path), path  # the trace follows
    climbs = [(a, b) for a, b in itertools.pairwise(path) if _height(b) > _height(a)]
    assert len(climbs) <= MOST_CLIMBS, f"{len(climbs)} climbs: {' > '.join(path)}"


# --- what each package's `__init__` says, held against its modules and imports ---------

PACKAGES = sorted(
    _module(init) for init in SRC.rglob("__init__.py") if init.parent != SRC
)  # "cli", "squad", "squad.adapter", ...
ANYONE = {"vocabulary"}  # its own docstring: it imports nothing of tiermem, so every part may


def _docstring(package: str) -> str:
    init = SRC.joinpath(*package.split("."), "__init__.py")
    return ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""


def _members(package: str) -> list[str]:
    """The modules and packages right inside a package, as its docstring names them
    (`name`, `name/`)."""
    folder = SRC.joinpath(*package.split("."))
    modules = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
    packages = [p.name + "/" for p in folder.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + packages)


def test_each_package_names_every_module_it_holds() -> None:
    assert "squad.adapter" in PACKAGES and "squad_host" in _members("squad.adapter")
    unnamed = {
        package: missing
        for package in PACKAGES
        if (missing := [m for m in _members(package) if not _named(_docstring(package), m)])
    }
    assert not unnamed, f"modules a package's docstring does not name: {unnamed}"


def _named(text: str, member: str) -> bool:
    return f"`{member}`" in text or f"`{member.rstrip('/')}`" in text


def _may_import(package: str) -> set[str] | None:
    """What a package's docstring says it may import, read from its sentence "... may import
    A, B and C[, never ...; ...]": the parts named (`x/`, `x`, a sibling `squad.reading`, "the
    Context"), "everything below them" (every part on a floor below the highest named),
    "the core" (every part on a floor below the package's own), "only the standard library"
    (nothing). None: every part ("every part", "everything")."""
    said = " ".join(_docstring(package).split())
    assert "may import" in said, f"{package}: what may it import?"
    clause = re.split(r";|\.(?:\s|$)|,? never ", said.split("may import", 1)[1], maxsplit=1)[0]
    if re.search(r"\bevery(thing| part)\b", clause) and "below" not in clause:
        return None
    named = {n.rstrip("/") for n in re.findall(r"`([a-z_.]+/?)`", clause)}
    named |= {"context"} if "the Context" in clause else set()
    unknown = {n for n in named if n not in MODULES and n not in FLOORS}
    assert not unknown, f"{package}: may import what? {sorted(unknown)}"
    floor = {part: n for n, part in enumerate(FLOORS)}
    if "everything below" in clause:
        top = max(floor[_part(n)] for n in named)
        named |= {p for p in FLOORS if floor[p] < top}
    if "the core" in clause:
        named |= {p for p in FLOORS if floor[p] < floor[_part(package)]}
    return named


def _imported_from(package: str) -> set[str]:
    """What a package's modules import from outside it: the part, or, within its own part,
    the sibling package (`squad.reading`)."""
    def within(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    outside = {f for m in GRAPH if within(m) for f in GRAPH[m] if not within(f)}
    top = _part(package)
    depth = package.count(".") + 1
    return {".".join(f.split(".")[:depth]) if _part(f) == top else _part(f) for f in outside}


def test_each_package_imports_only_what_its_docstring_allows() -> None:
    assert _may_import("text") == {"errors"} and _imported_from("squad.adapter")
    beyond = {}
    for package in PACKAGES:
        allowed = _may_import(package)
        if allowed is None:
            continue
        taken = _imported_from(package) - allowed - ANYONE
        if taken:
            beyond[package] = sorted(taken)
    assert not beyond, f"imports a package's docstring does not allow: {beyond}"


# --- docs/ARCHITECTURE.md held against the code ---------------------------------------

ROOT = SRC.parent.parent


def _picture() -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """The rows of the page's picture, top first: each row's label and its parts, each part
    with the modules named in parentheses after it."""
    page = PAGE.read_text(encoding="utf-8")
    block = page.split("## The shape in one picture", 1)[1].split("```text\n", 1)[1]
    rows = []
    for line in block.split("```", 1)[0].splitlines():
        label, drawn = line[:19].strip(), line[19:]
        named = re.findall(r"([\w.]+/?)(?:\s*\(([^)]*)\))?", drawn)
        if label:
            parts = [(p, [m.strip() for m in re.split("[,;]", inner)]) for p, inner in named]
            rows.append((label, parts))
    return rows


def test_the_picture_places_every_part_on_its_floor() -> None:
    rows = _picture()
    assert rows[-1][1][0][0] == "vocabulary", "the picture is read"
    drawn = [part for _, parts in rows for part, _ in parts]
    packages = {f"{p.name}/" for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    wanted = sorted(f"{p}/" if f"{p}/" in packages else p for p in FLOORS)
    assert sorted(drawn) == wanted, "the picture draws each part once, a package with its '/'"
    floor = {part: n for n, part in enumerate(FLOORS)}
    floors = [(label, [floor[p.rstrip("/")] for p, _ in parts]) for label, parts in rows]
    for (upper, above), (lower, below) in itertools.pairwise(floors):
        assert min(above) > max(below), f"'{upper}' stands on or under '{lower}'"


def test_the_picture_names_only_modules_its_packages_hold() -> None:
    missing = [
        f"{part}{module}"
        for _, parts in _picture()
        for part, modules in parts
        for module in modules
        if module and module != "..." and not _holds(part.rstrip("/"), module)
    ]
    assert not missing, f"the picture names modules that do not exist: {missing}"


def _holds(package: str, name: str) -> bool:
    """Whether a package holds a module or package of this name, at any depth."""
    name = name.rstrip("/")
    return any(m.split(".")[-1] == name for m in MODULES if m.startswith(package + "."))


def _code_names(text: str) -> list[str]:
    """The names of code a text gives in backticks: a path (`index/queries.py`,
    `src/tiermem/relevance/`, `tests/test_options.py`) or a dotted name that starts with a
    part (`relevance.ranking.Ranker`, `cli.plain`)."""
    tokens = re.findall(r"`([^`\s]+)`", text)
    paths = [t for t in tokens if re.fullmatch(r"[a-z_]+/[\w/.]*", t) and "/" in t.rstrip("/")]
    files = [t for t in tokens if re.fullmatch(r"\w+\.py", t)]
    parts = {*FLOORS, "tiermem"}
    dotted = [t for t in tokens if re.fullmatch(r"[a-z_]+(\.\w+)+", t) and t.split(".")[0] in parts]
    return paths + files + [t for t in dotted if t not in files]


def _exists(name: str) -> bool:
    if "/" in name or name.endswith(".py"):
        top = ("src/", "tests/", "scripts/", "docs/")
        where = ROOT / name if name.startswith(top) else SRC / name
        return where.exists() or where.with_suffix(".py").exists()
    if any(SRC.rglob(name)):
        return True  # a file of a part that is no module (`report.html.j2`)
    words = name.removeprefix("tiermem.").split(".")
    for n in range(len(words), 0, -1):
        module = ".".join(words[:n])
        if module in MODULES:
            value: object = importlib.import_module(f"tiermem.{module}")
            for attribute in words[n:]:
                value = getattr(value, attribute, MISSING)
            return value is not MISSING
    return False


def test_the_architecture_page_names_only_code_that_exists() -> None:
    names = _code_names(PAGE.read_text(encoding="utf-8"))
    assert "index/queries.py" in names and "relevance.ranking.Ranker" in names  # the walk reads
    missing = sorted({n for n in names if not _exists(n)})
    assert not missing, f"docs/ARCHITECTURE.md names what does not exist: {missing}"


def test_the_parts_table_lists_the_modules_its_packages_hold() -> None:
    """Where a row lists a package's modules, in parentheses, they are the modules it holds."""
    page = PAGE.read_text(encoding="utf-8")
    table = page[page.index("## The parts") :].split("\n## ", 1)[0]
    missing: list[str] = []
    unnamed: list[str] = []
    for row in (r for r in table.splitlines() if r.startswith("| ")):
        cell = row.split("|")[2]
        for package, inner in re.findall(r"`(\w+)/` \(((?:[^()]|\([^()]*\))*)\)", cell):
            names = re.findall(r"`([a-z_][a-z0-9_]*/?)`", inner)
            missing += [f"{package}/{n}" for n in names if not _holds(package, n)]
            unnamed += [f"{package}/{m}" for m in _members(package) if not _named(inner, m)]
    assert "squad/squad_host" not in missing, "the table is read"
    assert not missing, f"the parts table names modules that do not exist: {missing}"
    assert not unnamed, f"modules the parts table's list of their package leaves out: {unnamed}"
