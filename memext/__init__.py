"""memext for IPython: ``%load_ext memext``.

Magics: ``%memsearch``, ``%memrecall``, ``%memget``, ``%memstatus``,
``%memindex``, ``%%memnote``, ``%memforget`` and ``%memconsolidate``; settings through ``%config MemExt.<name>``;
:func:`search_widget` for live search; and plain functions for code,
``memext.search("query")``, ``memext.recall(message)``, ``memext.get(citation)``,
``memext.status()`` and ``memext.note(text)`` (:mod:`memext.api`). Loading the extension warms
the default agent's index in the background (``sync.on_session_start``);
unloading it stops that work and closes the indexes.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import default_session, get, note, recall, search, status
    from .recalled import RecalledMemories
    from .results import SearchResults
    from .session import Session
    from .views import FileLines, StatusTable, SyncSummary

#: The notebook classes load on first use, so the ``memext`` command (which
#: imports this package first) does not pay for them (DESIGN.md §12).
_EXPORTS = {
    "FileLines": "views",
    "SearchResults": "results",
    "RecalledMemories": "recalled",
    "Session": "session",
    "StatusTable": "views",
    "SyncSummary": "views",
    "search": "api",
    "get": "api",
    "status": "api",
    "note": "api",
    "recall": "api",
    "default_session": "api",
}

__all__ = [
    "FileLines",
    "RecalledMemories",
    "SearchResults",
    "Session",
    "StatusTable",
    "SyncSummary",
    "default_session",
    "get",
    "load_ipython_extension",
    "note",
    "recall",
    "search",
    "search_widget",
    "status",
    "unload_ipython_extension",
]

_MAGICS_NAME = "MemExt"


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and start the warm-up sync (``%load_ext memext``)."""
    from memext.engine import MemextError

    from .magic_lines import question_mark_is_query, semicolon_after_quiet_call, space_before_semicolon
    from .magics import MemExt

    magics = MemExt(shell=ipython)
    ipython.register_magics(magics)
    _add_transformer(ipython, "input_transformers_cleanup", space_before_semicolon)
    _add_transformer(ipython, "input_transformers_cleanup", question_mark_is_query)
    _add_transformer(ipython, "input_transformers_post", semicolon_after_quiet_call)
    try:
        magics.session.warm_up(magics.agent)
    except MemextError as exc:
        # The magics still load: the user can fix the config and retry.
        print(f"memext: {exc}", file=sys.stderr)


def unload_ipython_extension(ipython: Any) -> None:
    """Stop background syncs, close the indexes and remove the magics."""
    from .magic_lines import question_mark_is_query, semicolon_after_quiet_call, space_before_semicolon

    _remove_transformer(ipython, "input_transformers_cleanup", space_before_semicolon)
    _remove_transformer(ipython, "input_transformers_cleanup", question_mark_is_query)
    _remove_transformer(ipython, "input_transformers_post", semicolon_after_quiet_call)
    manager = ipython.magics_manager
    magics = manager.registry.pop(_MAGICS_NAME, None)
    if magics is None:
        return
    magics.close()
    for kind, table in manager.magics.items():
        for name in list(magics.magics.get(kind, {})):
            if getattr(table.get(name), "__self__", None) is magics:
                del table[name]
    if magics in getattr(ipython, "configurables", []):
        ipython.configurables.remove(magics)


def _add_transformer(ipython: Any, kind: str, transform: Any) -> None:
    transforms = _transformers(ipython, kind)
    if transforms is not None and transform not in transforms:
        transforms.append(transform)


def _remove_transformer(ipython: Any, kind: str, transform: Any) -> None:
    transforms = _transformers(ipython, kind)
    while transforms is not None and transform in transforms:
        transforms.remove(transform)


def _transformers(ipython: Any, kind: str) -> list | None:
    """The shell's list of input transformers of ``kind``, if it has one."""
    return getattr(ipython, kind, None)


def search_widget(agent: str | None = None, **kwargs: Any):
    """A live search widget for ``agent`` (default: ``MemExt.agent`` or the
    first configured agent).

    Inside a shell where ``%load_ext memext`` ran, it shares the magics'
    open indexes and settings; elsewhere it opens its own.
    """
    from .api import loaded_magics
    from .widget import SearchWidget

    magics = loaded_magics()
    if magics is None:
        return SearchWidget(agent=agent, **kwargs)
    kwargs.setdefault("max_results", magics.max_results)
    kwargs.setdefault("min_score", magics.min_score)
    return SearchWidget(magics.session, agent=agent or magics.agent, **kwargs)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
