"""Every cross-reference in a docstring of engine/, memext/ and tray/
(``:mod:``, ``:class:``, ``:func:``, ``:meth:``, ``:data:``, ``:attr:``,
``:exc:``) names something that exists, so a move or a rename that leaves
a docstring behind fails here.

A name is looked up as Python would read it: a leading dot is relative to
the module's package (``..text.words`` from ``engine/search/stems.py`` is
``memext.engine.text.words``), or to the module itself; a bare or dotted
name in the enclosing class, the module (type-only imports included), its
packages, then the public API (``memext.engine``, ``memext``); else as an
absolute name (``memext.engine.MemoryIndex.search``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"engine": "memext.engine", "memext": "memext", "tray": "memext.tray"}
ROLE = re.compile(r":(mod|class|func|meth|data|attr|exc):`~?([^`<>]+?)(?:\(\))?`")
_MISSING = object()


class Reference(NamedTuple):
    path: str  # repository-relative file
    line: int
    module: str
    cls: str | None  # the enclosing class's dotted name inside the module
    role: str
    target: str


def _module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    parts[0] = PACKAGES[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files() -> dict[str, Path]:
    return {_module_name(p.relative_to(ROOT)): p for folder in PACKAGES for p in sorted((ROOT / folder).rglob("*.py"))}


FILES = _files()


def _docstrings(tree: ast.Module) -> list[tuple[ast.AST, str | None]]:
    """(node, enclosing class path) of every node with a docstring."""
    out: list[tuple[ast.AST, str | None]] = [(tree, None)]

    def walk(node: ast.AST, cls: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                inner = f"{cls}.{child.name}" if cls else child.name
                out.append((child, inner))
                walk(child, inner)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((child, cls))
                walk(child, None)  # a nested function's names are not the class's
            else:
                walk(child, cls)

    walk(tree, None)
    return out


def _references() -> list[Reference]:
    refs = []
    for module, path in FILES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(ROOT))
        for node, cls in _docstrings(tree):
            doc = ast.get_docstring(node, clean=False)  # type: ignore[arg-type]
            if not doc:
                continue
            first = node.body[0].lineno if hasattr(node, "body") and node.body else 1  # type: ignore[attr-defined]
            for m in ROLE.finditer(doc):
                line = first + doc[: m.start()].count("\n")
                refs.append(Reference(rel, line, module, cls, m.group(1), m.group(2).strip()))
    return refs


REFERENCES = _references()


def _is_package(module: str) -> bool:
    return FILES[module].name == "__init__.py" if module in FILES else False


def _relative(module: str, dots: int) -> str:
    """The package ``dots`` leading dots name from ``module``, as Python reads a relative import."""
    parts = module.split(".") if _is_package(module) else module.split(".")[:-1]
    return ".".join(parts[: len(parts) - (dots - 1)])


def _load(module: str) -> ModuleType | None:
    if module.endswith("__main__"):
        return None  # running it would start the program
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(FILES[module].read_text(encoding="utf-8"))


@functools.cache
def _type_only_names(module: str) -> dict[str, str]:
    """name -> dotted target of the imports under ``if TYPE_CHECKING:``."""
    out = {}
    tree = _tree(module)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
            continue
        for imp in node.body:
            if isinstance(imp, ast.ImportFrom):
                base = _relative(module, imp.level) if imp.level else ""
                source = ".".join(p for p in (base, imp.module or "") if p)
                out.update({(a.asname or a.name): f"{source}.{a.name}" for a in imp.names})
            elif isinstance(imp, ast.Import):
                out.update({(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0]) for a in imp.names})
    return out


@functools.cache
def _instance_attributes(obj: type) -> set[str]:
    """Names a class's instances have besides its class attributes: fields
    (dataclass, named tuple, annotations) and ``self.x =`` in its methods."""
    names: set[str] = set()
    for klass in getattr(obj, "__mro__", ()):
        names |= set(getattr(klass, "__annotations__", {}))
        names |= set(getattr(klass, "__dataclass_fields__", {}))
        module = getattr(klass, "__module__", "")
        if module in FILES:
            for node in ast.walk(_tree(module)):
                if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                            names.add(sub.attr)
    return names


def _attribute(obj: Any, name: str) -> Any:
    value = getattr(obj, name, _MISSING)
    if value is _MISSING and isinstance(obj, type) and name in _instance_attributes(obj):
        return "an instance attribute"
    if value is _MISSING and isinstance(obj, ModuleType):
        value = _load(f"{obj.__name__}.{name}") or _MISSING
    return value


def _resolve_absolute(name: str) -> Any:
    """The object a dotted name names: the longest importable module prefix,
    then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        module = _load(head)
        if module is None:
            continue
        obj: Any = module
        for part in parts[cut:]:
            obj = _attribute(obj, part)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def resolve(ref: Reference) -> Any:
    target = ref.target
    dots = len(target) - len(target.lstrip("."))
    name = target[dots:]
    candidates: list[str] = []
    if dots:
        candidates.append(f"{_relative(ref.module, dots)}.{name}" if name else _relative(ref.module, dots))
        candidates.append(f"{ref.module}.{name}")
    else:
        if ref.cls:
            candidates.append(f"{ref.module}.{ref.cls}.{name}")
        candidates.append(f"{ref.module}.{name}")
        first, _, rest = name.partition(".")
        type_only = _type_only_names(ref.module).get(first)
        if type_only:
            candidates.append(f"{type_only}.{rest}" if rest else type_only)
        package = ref.module
        while "." in package:
            package = package.rsplit(".", 1)[0]
            candidates.append(f"{package}.{name}")
        candidates += [f"memext.engine.{name}", f"memext.{name}", name]
    for candidate in candidates:
        found = _resolve_absolute(candidate)
        if found is not _MISSING and (ref.role != "mod" or isinstance(found, ModuleType)):
            return found
    return _MISSING


def test_the_references_are_found():
    """The walk sees references of every role (the check is not vacuous)."""
    roles = {r.role for r in REFERENCES}
    assert {"mod", "class", "func", "meth", "data", "attr"} <= roles
    assert len(REFERENCES) > 300


def test_resolving_reads_names_as_python_would():
    here = Reference("engine/search/stems.py", 1, "memext.engine.search.stems", None, "func", "..text.find_terms")
    assert resolve(here) is sys.modules["memext.engine.text"].find_terms
    assert resolve(here._replace(target="..text.no_such_function")) is _MISSING
    assert resolve(here._replace(role="mod", target="engine.spans")) is _MISSING  # the folder's name is no package
    assert resolve(here._replace(role="class", target="MemoryIndex")) is importlib.import_module("memext.engine").MemoryIndex
    index = Reference("engine/index.py", 1, "memext.engine.index", "MemoryIndex", "meth", "sync")
    assert resolve(index) is not _MISSING
    assert resolve(index._replace(role="attr", target="db_path")) is not _MISSING  # set in __init__


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_every_docstring_reference_names_something_that_exists(folder):
    stale = [f"{r.path}:{r.line}: :{r.role}:`{r.target}`" for r in REFERENCES if r.path.startswith(folder + "/") and resolve(r) is _MISSING]
    assert stale == [], "stale docstring references:\n" + "\n".join(stale)
