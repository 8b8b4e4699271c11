"""What the faces need from the engine and users do not.

The CLI commands, the MCP server, the adapters, the notebook extension
and the tray import from :mod:`memext.engine` (the public API) and from
here, nothing else of the engine (``tests/test_architecture.py`` checks
it). These are the helpers behind those faces: private files and folders,
progress text, highlight spans, control characters made visible, the tool
hosts, the config reloader's timings, parsing a ``get`` citation, editing
the config, installing and probing local models, index files left behind,
where an index lives. They
may change between releases without notice; a program built on memext
should need only :mod:`memext.engine`.
"""

from typing import TYPE_CHECKING

from .lazy_exports import lazy_names

if TYPE_CHECKING:
    from .agents.index_hosts import IndexHost, KeptFresh, SyncWhenNeeded
    from .citations import parse_get_spec
    from .config import add_agent, build_settings
    from .config_edit import change_memory_search_list, remove_agent, set_memory_search_value
    from .controls import json_safe, terminal_safe
    from .freshness.keeper import IndexFactory
    from .freshness.supervisor import DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S, ConfigReloader
    from .human_size import human_size
    from .indexing.progress import TextProgress, describe_progress
    from .indexing.removal import orphaned_indexes, purge_agent_index, remove_index
    from .memory.capture import read_transcript
    from .memory.read import resolve_memory_path
    from .memory.roots import MEMORY_DIR, ROOT_FILES
    from .paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, private_dir, private_file, write_private_text
    from .providers.local.install import FORMATS, RECIPES, check_local_extra, choose_format, install_model, installed_path
    from .providers.local.model import model_cache_dir, resolve_model_file
    from .providers.local.probe import cached_probe, forget_probe, probe_model
    from .providers.registry import local_model_spec, provider_spec, remote_names
    from .search.explain import explain_table
    from .store.drivers import driver_of, store_location
    from .text import term_spans

#: Each name and the engine submodule that defines it (loaded on first use).
_EXPORTS: dict[str, str] = {
    "add_agent": "config",
    "build_settings": "config",
    "cached_probe": "providers.local.probe",
    "change_memory_search_list": "config_edit",
    "check_local_extra": "providers.local.install",
    "choose_format": "providers.local.install",
    "ConfigReloader": "freshness.supervisor",
    "DEFAULT_CONFIG_POLL_S": "freshness.supervisor",
    "DEFAULT_RECONCILE_S": "freshness.supervisor",
    "describe_progress": "indexing.progress",
    "driver_of": "store.drivers",
    "explain_table": "search.explain",
    "forget_probe": "providers.local.probe",
    "FORMATS": "providers.local.install",
    "human_size": "human_size",
    "IndexFactory": "freshness.keeper",
    "IndexHost": "agents.index_hosts",
    "install_model": "providers.local.install",
    "installed_path": "providers.local.install",
    "json_safe": "controls",
    "KeptFresh": "agents.index_hosts",
    "local_model_spec": "providers.registry",
    "MEMORY_DIR": "memory.roots",
    "model_cache_dir": "providers.local.model",
    "orphaned_indexes": "indexing.removal",
    "parse_get_spec": "citations",
    "private_dir": "paths",
    "PRIVATE_DIR_MODE": "paths",
    "private_file": "paths",
    "PRIVATE_FILE_MODE": "paths",
    "probe_model": "providers.local.probe",
    "provider_spec": "providers.registry",
    "purge_agent_index": "indexing.removal",
    "read_transcript": "memory.capture",
    "RECIPES": "providers.local.install",
    "remote_names": "providers.registry",
    "remove_agent": "config_edit",
    "remove_index": "indexing.removal",
    "resolve_memory_path": "memory.read",
    "resolve_model_file": "providers.local.model",
    "ROOT_FILES": "memory.roots",
    "set_memory_search_value": "config_edit",
    "store_location": "store.drivers",
    "SyncWhenNeeded": "agents.index_hosts",
    "term_spans": "text",
    "terminal_safe": "controls",
    "TextProgress": "indexing.progress",
    "write_private_text": "paths",
}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, anchor="memext.engine")
