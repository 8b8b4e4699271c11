"""What the faces need from the engine and users do not.

The CLI commands, the MCP server, the notebook extension and the tray
import from :mod:`memext.engine` (the public API) and from here, nothing
else of the engine (``tests/test_architecture.py`` checks it). These are
the helpers behind those faces: private files and folders, progress text,
highlight spans, the tool hosts, the config reloader's timings, parsing a
``get`` citation. They may change between releases without notice; a
program built on memext should need only :mod:`memext.engine`.
"""

from typing import TYPE_CHECKING

from .lazy import lazy_names

if TYPE_CHECKING:
    from .agents.hosts import IndexHost, KeptFresh, SyncWhenNeeded
    from .freshness.keeper import IndexFactory
    from .freshness.supervisor import ConfigReloader, DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S
    from .indexing.progress import describe_progress, TextProgress
    from .memory.read import parse_get_spec, resolve_memory_path
    from .paths import private_dir, PRIVATE_DIR_MODE, private_file, PRIVATE_FILE_MODE, write_private_text
    from .search.explain import explain_table
    from .text import term_spans

#: Each name and the engine submodule that defines it (loaded on first use).
_EXPORTS: dict[str, str] = {
    "ConfigReloader": "freshness.supervisor",
    "DEFAULT_CONFIG_POLL_S": "freshness.supervisor",
    "DEFAULT_RECONCILE_S": "freshness.supervisor",
    "describe_progress": "indexing.progress",
    "explain_table": "search.explain",
    "IndexFactory": "freshness.keeper",
    "IndexHost": "agents.hosts",
    "KeptFresh": "agents.hosts",
    "parse_get_spec": "memory.read",
    "private_dir": "paths",
    "PRIVATE_DIR_MODE": "paths",
    "private_file": "paths",
    "PRIVATE_FILE_MODE": "paths",
    "resolve_memory_path": "memory.read",
    "SyncWhenNeeded": "agents.hosts",
    "term_spans": "text",
    "TextProgress": "indexing.progress",
    "write_private_text": "paths",
}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, anchor="memext.engine")
