"""Names a package loads on first use (PEP 562), from one table.

A package lists its names once, as ``_EXPORTS`` (name -> the submodule that
defines it), and sets ``__all__ = list(_EXPORTS)`` and
``__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)``: a one-shot
command then imports only the modules it uses (DESIGN.md §12). The
architecture test reads every ``_EXPORTS`` table as imports.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Mapping


def lazy_names(module: str, exports: Mapping[str, str], anchor: str | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module`` for the names of
    ``exports``, whose submodules are relative to ``anchor`` (default: the
    module itself, a package). A name once loaded is kept in the module, so
    later lookups skip ``__getattr__``."""
    package = anchor or module

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f".{exports[name]}", package), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module])) | set(exports))

    return __getattr__, __dir__
