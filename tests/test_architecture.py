"""The shape of the code (DESIGN.md §12): no import cycles, the engine
imports no face, faces use only the engine's public API, and no Python file
runs past 500 lines without saying why in its opening docstring or comment.

Imports are read from the source (every ``import`` statement, also those
inside functions), so a lazy import counts like any other; so does a
package's ``_EXPORTS`` table of names that its ``__getattr__`` loads on
first use (name -> submodule). The cycle check counts the imports under
``if TYPE_CHECKING:`` too (a reader follows them as well); the other rules
are about what runs.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import memext.engine
import memext.engine.for_faces

ROOT = Path(__file__).resolve().parent.parent
#: Repository folder -> the package it installs as (pyproject package-dir).
PACKAGES = {"engine": "memext.engine", "memext": "memext", "tray": "memext.tray"}
MAX_LINES = 500

#: Faces allowed to import engine internals (none).
REWRITTEN_ELSEWHERE: set[str] = set()
#: Long files exempt from the 500-line rule (none).
SPLIT_ELSEWHERE: set[str] = set()
#: memext/cli.py builds the `memext` program from the engine's command group
#: (the CLI's engine half), which is a module, not a name of the API.
FACE_MAY_IMPORT_MODULES = {"memext/cli.py": {"memext.engine.faces.cli.commands"}}


@dataclass(frozen=True)
class Import:
    source: str  # repository-relative file
    module: str  # the memext module imported
    names: tuple[str, ...]  # for `from module import names`
    line: int


def _module_name(rel: Path) -> str:
    package = PACKAGES[rel.parts[0]]
    parts = list(rel.with_suffix("").parts[1:])
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _files() -> dict[str, Path]:
    """Module name -> file, for every module of the three packages."""
    out = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            out[_module_name(path.relative_to(ROOT))] = path
    return out


MODULES = _files()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _imports(module: str, path: Path, *, type_only: bool = False) -> list[Import]:
    """The memext modules ``module`` imports; with ``type_only``, those
    under ``if TYPE_CHECKING:`` too."""
    rel = str(path.relative_to(ROOT))
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    out = []
    for node in ast.walk(tree) if type_only else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            out += [Import(rel, a.name, (), node.lineno) for a in node.names if a.name.split(".")[0] == "memext"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "memext":
                continue
            names = tuple(a.name for a in node.names)
            # `from package import submodule` imports the submodule.
            subs = [n for n in names if f"{target}.{n}" in MODULES]
            out += [Import(rel, f"{target}.{n}", (), node.lineno) for n in subs]
            rest = tuple(n for n in names if n not in subs)
            if rest or not subs:
                out.append(Import(rel, target, rest, node.lineno))
    # A lazy table's submodules are relative to the package (memext.engine
    # for the for_faces module, which lends the engine's helpers to faces).
    anchor = module if is_package else module.rsplit(".", 1)[0]
    out += [Import(rel, f"{anchor}.{sub}", (name,), line) for name, sub, line in _lazy_exports(tree)]
    return out


def _lazy_exports(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(name, submodule, line) of a package's ``_EXPORTS = {"Name": "submodule"}``."""
    out = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values):
                assert isinstance(k, ast.Constant) and isinstance(v, ast.Constant), "_EXPORTS maps names to submodule names"
                out.append((k.value, v.value, k.lineno))
    return out


IMPORTS = {m: _imports(m, p) for m, p in MODULES.items()}
#: The same with the type-only imports (``if TYPE_CHECKING:``) counted.
ALL_IMPORTS = {m: _imports(m, p, type_only=True) for m, p in MODULES.items()}


def _graph(imports: dict[str, list[Import]] = ALL_IMPORTS) -> dict[str, set[str]]:
    return {m: {i.module for i in imps if i.module in MODULES and i.module != m} for m, imps in imports.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_the_imports():
    """The checks below would pass on an empty graph: make sure they do not."""
    graph = _graph()
    assert "memext.engine.index" in graph["memext.engine"]
    assert "memext.engine.indexing.last_failure" in graph["memext.engine.index"]  # imported inside a method only
    assert "memext.engine.for_faces" in graph["memext.engine.faces.cli.search_commands"]
    assert "memext.engine.search.explain" in graph["memext.engine.for_faces"]  # a lazy export of a module
    assert "memext.engine" in graph["memext.magics"]
    assert "memext.results" in graph["memext"]  # a lazy export (_EXPORTS)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    # Type-only imports are edges of the cycle check's graph, not of the others'.
    assert "memext.engine.store.base" in _graph()["memext.engine.store.drivers"]
    assert "memext.engine.store.base" not in _graph(IMPORTS)["memext.engine.store.drivers"]


def test_a_cycle_is_shown_with_its_import_lines():
    graph = {"memext.engine.store.drivers": {"memext.engine.store.base"}, "memext.engine.store.base": {"memext.engine.store.drivers"}}
    shown = _cycle_path(graph, sorted(graph)).splitlines()
    assert shown[0] == "  memext.engine.store.base -> memext.engine.store.drivers (?)"  # made up for the test
    assert shown[1].startswith("  memext.engine.store.drivers -> memext.engine.store.base (engine/store/drivers.py:")


def _cycle_path(graph: dict[str, set[str]], component: list[str]) -> str:
    """One cycle through a strongly connected component, as ``a -> b -> a``
    with the lines that import, so a failure says what to cut."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}
    while True:
        here = path[-1]
        nxt = sorted(graph[here] & members)
        back = start if start in nxt else None
        step = back or next((n for n in nxt if n not in seen), None) or nxt[0]
        path.append(step)
        if step in seen:
            path = path[path.index(step) :]
            break
        seen.add(step)
    lines = []
    for a, b in zip(path, path[1:]):
        where = next((f"{i.source}:{i.line}" for i in ALL_IMPORTS.get(a, []) if i.module == b), "?")
        lines.append(f"  {a} -> {b} ({where})")
    return "\n".join(lines)


def test_no_import_cycles():
    """No cycle, type-only imports counted."""
    graph = _graph()
    cycles = _cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n\n".join(_cycle_path(graph, c) for c in cycles)


def test_the_engine_imports_no_face():
    upward = [
        f"{i.source}:{i.line} imports {i.module}"
        for m, imps in IMPORTS.items()
        if m.startswith("memext.engine")
        for i in imps
        if not (i.module == "memext.engine" or i.module.startswith("memext.engine."))
    ]
    assert upward == []


#: The two modules a face may import from the engine, and what each offers.
FACE_API = {"memext.engine": set(memext.engine.__all__), "memext.engine.for_faces": set(memext.engine.for_faces.__all__)}


def _is_face(module: str) -> bool:
    """memext and memext.tray, and the faces that live inside the engine."""
    return not module.startswith("memext.engine") or module.startswith("memext.engine.faces")


def test_faces_use_only_the_engines_public_api():
    wrong = []
    for m, imps in IMPORTS.items():
        if not _is_face(m):
            continue
        for i in imps:
            if i.source in REWRITTEN_ELSEWHERE or _is_face(i.module):
                continue
            if i.module in FACE_API:
                wrong += [f"{i.source}:{i.line} imports {n}, not in {i.module}.__all__" for n in i.names if n not in FACE_API[i.module]]
            elif i.module not in FACE_MAY_IMPORT_MODULES.get(i.source, set()):
                wrong.append(f"{i.source}:{i.line} imports {i.module} (use what memext.engine or memext.engine.for_faces exports)")
    assert wrong == []


def _type_checking_names(path: Path) -> dict[str, str]:
    """name -> module of the ``from .module import name`` lines under ``if TYPE_CHECKING:``."""
    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1 and imp.module, "only `from .module import names` here"
                out.update({a.name: imp.module for a in imp.names})
    return out


@pytest.mark.parametrize("module", [*sorted(FACE_API), "memext.engine.store", "memext.engine.providers"])
def test_the_api_is_listed_once(module):
    """``__all__`` is the lazy table's names, and the names type checkers
    see (the ``TYPE_CHECKING`` imports) are that table, module for module."""
    mod = importlib.import_module(module)
    path = MODULES[module]
    table = {name: sub for name, sub, _ in _lazy_exports(ast.parse(path.read_text(encoding="utf-8")))}
    assert list(mod.__all__) == list(table)
    assert _type_checking_names(path) == table
    assert FACE_API["memext.engine"].isdisjoint(FACE_API["memext.engine.for_faces"])


#: What each engine subpackage may not import (DESIGN.md §12): the folders
#: are the pipeline, and each stage sees only the stages below it. The
#: foundation modules at the top (config, errors, paths, text, db, ...)
#: import no stage; ``index`` (MemoryIndex, the facade) and the package's
#: ``__init__`` tie the stages together and may import any of them.
STAGES = ("memory", "store", "providers", "search", "indexing", "freshness", "agents", "faces")
MAY_NOT_IMPORT: dict[str, set[str]] = {
    "memory": {"providers", "search", "indexing", "freshness", "agents", "faces"},
    # The store is the bottom stage: memory's appends take its writer lock
    # (through memext.engine.store), and a backend needs nothing of memory.
    "store": {"memory", "providers", "search", "indexing", "freshness", "agents", "faces"},
    "providers": {"memory", "store", "search", "indexing", "freshness", "agents", "faces"},
    "search": {"indexing", "freshness", "agents", "faces"},
    "indexing": {"search", "freshness", "agents", "faces"},
    "freshness": {"search", "agents", "faces"},
    "agents": {"freshness", "faces"},
    "faces": set(),  # faces use the public API: test_faces_use_only_the_engines_public_api
}
FACADES = {"memext.engine", "memext.engine.for_faces", "memext.engine.index"}
#: Foundation modules that reach into a stage, and why.
FOUNDATION_EXCEPTIONS: dict[str, set[str]] = {
    # The names config accepts are rows of the two extension tables: the
    # store drivers (store/drivers.py, whose rows also check their own
    # settings where the config is read, so a bad store.url is a config
    # error with its line) and the providers (providers/registry.py).
    # Neither table imports a backend or a provider until one is used.
    "memext.engine.config": {"store", "providers"},
    # Text must split and fold words exactly as the index's keyword side
    # does: the case table asks the index's FTS5 tokenizer (store/).
    "memext.engine.unicode_tables": {"store"},
}


def _stage(module: str) -> str | None:
    """The engine subpackage a module belongs to; "" for a foundation
    module; None outside the engine or for the facades."""
    if module in FACADES or not module.startswith("memext.engine."):
        return None
    first = module.split(".")[2]
    return first if first in STAGES else ""


def test_every_stage_is_a_subpackage():
    """The rules below name real folders (a renamed folder would make them vacuous)."""
    assert [s for s in STAGES if f"memext.engine.{s}" not in MODULES] == []
    assert set(MAY_NOT_IMPORT) == set(STAGES)
    assert _stage("memext.engine.search.pipeline") == "search"
    assert _stage("memext.engine.config") == ""


def test_each_stage_imports_only_the_stages_below_it():
    wrong = []
    for m, imps in IMPORTS.items():
        stage = _stage(m)
        if stage is None:
            continue
        for i in imps:
            target = _stage(i.module)
            if not target or target == stage:
                continue
            if stage == "" and target not in FOUNDATION_EXCEPTIONS.get(m, set()):
                wrong.append(f"{i.source}:{i.line}: foundation module imports {i.module}")
            elif stage and target in MAY_NOT_IMPORT[stage]:
                wrong.append(f"{i.source}:{i.line}: {stage} imports {i.module}")
    assert wrong == []


def test_the_stage_rules_can_fail():
    """A search module importing the keeper would be caught."""
    assert "freshness" in MAY_NOT_IMPORT["search"] and _stage("memext.engine.freshness.keeper") == "freshness"


BACKENDS = ("memext.engine.store.sqlite", "memext.engine.store.postgres")


def _in_backend(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BACKENDS)


def test_only_the_store_reaches_a_backend():
    """A backend's modules are reached through the store interface (the
    package's names, the driver table and its rows), never imported from
    outside engine/store/ (DESIGN.md §14); the store package exports none
    of a backend's own names."""
    reaching = [
        f"{i.source}:{i.line} imports {i.module}"
        for m, imps in ALL_IMPORTS.items()
        if not m.startswith("memext.engine.store")
        for i in imps
        if _in_backend(i.module)
    ]
    assert reaching == []
    table = {name: sub for name, sub, _ in _lazy_exports(ast.parse(MODULES["memext.engine.store"].read_text(encoding="utf-8")))}
    assert [n for n, sub in table.items() if _in_backend(f"memext.engine.store.{sub}")] == []
    assert _in_backend("memext.engine.store.sqlite.db") and not _in_backend("memext.engine.store.tokenizer")


def test_the_settings_types_import_only_leaf_modules():
    """engine/settings.py, which the tables and backends import for its
    types, imports only modules that import nothing of the engine, so no
    cycle can run through it."""
    imported = {i.module for i in ALL_IMPORTS["memext.engine.settings"]}
    assert imported == {"memext.engine.errors", "memext.engine.paths"}
    assert [(m, i.module) for m in imported for i in ALL_IMPORTS[m] if i.module in MODULES] == []


def test_every_exported_name_exists():
    assert [n for n in memext.engine.__all__ if not hasattr(memext.engine, n)] == []


def _opening_text(path: Path) -> str:
    """The module docstring, or the comment lines the file starts with."""
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text))
    if doc:
        return doc
    return "\n".join(line for line in text.splitlines()[:30] if line.startswith("#"))


def _python_files() -> list[Path]:
    """Every Python file of the repository, not of its virtual environment,
    build output or caches (folders starting with a dot, build/)."""
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "dist") and not d.endswith(".egg-info")]
        out += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(out)


def test_long_files_say_why():
    long_files = []
    for path in _python_files():
        rel = str(path.relative_to(ROOT))
        if rel in SPLIT_ELSEWHERE:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and not re.search(rf"\b{MAX_LINES} lines\b", _opening_text(path)):
            long_files.append(f"{rel}: {lines} lines")
    assert long_files == [], f"split these, or say why in the opening docstring ('Over {MAX_LINES} lines because ...')"


#: Hard limits for the three packages, reasons or not.
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 120


def _long_functions(tree: ast.AST, rel: str) -> list[str]:
    """Functions (methods and nested functions included) longer than
    MAX_FUNCTION_LINES, counted from the first decorator to the last line."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    return out


def test_no_module_or_function_is_too_long():
    """No module of engine/, memext/ or tray/ over 700 lines and no
    function over 120: split them along what they do."""
    too_long = []
    for path in MODULES.values():
        rel = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{rel}: {lines} lines")
        too_long += _long_functions(ast.parse(text), rel)
    assert too_long == []


def test_the_length_check_sees_a_long_function():
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES))
    assert _long_functions(ast.parse(f"@decorated\ndef f():\n{body}\n"), "m.py") == [f"m.py:2 f: {MAX_FUNCTION_LINES + 2} lines"]


#: Test folders that are not an engine stage: the faces outside the engine
#: (memext/ is the notebook's package, tray/ the tray's) and the benchmarks.
TEST_FOLDERS_OF_FACES = {"notebook": "memext", "tray": "tray", "bench": "bench"}


def test_the_tests_mirror_the_packages():
    """tests/<stage>/ for engine/<stage>/ (and deeper: tests/store/sqlite/),
    tests/notebook/ and tests/tray/ for memext/ and tray/, tests/bench/ for
    bench/; a test folder with no package to mirror fails here."""
    tests = ROOT / "tests"
    folders = [p.relative_to(tests) for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__" and "data" not in p.parts]
    wrong = []
    for folder in folders:
        first, *rest = folder.parts
        source = ROOT / TEST_FOLDERS_OF_FACES[first] if first in TEST_FOLDERS_OF_FACES else ROOT / "engine" / first
        if not source.joinpath(*rest).is_dir():
            wrong.append(str(folder))
    assert wrong == []
    assert {"search", "store", "memory"} <= {str(f) for f in folders}
