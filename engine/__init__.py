"""memext engine: index Markdown memory per agent and search it.

The public API::

    from memext.engine import open_index, load_config
    with open_index("work") as idx:
        idx.sync()
        hits = idx.search("deploy checklist")

See :class:`memext.engine.index.MemoryIndex` for the methods. The index
is synchronous (search never syncs); :class:`FreshnessKeeper` keeps one
agent's index fresh in the background and :class:`Supervisor` does it for
every agent of a config.
"""

if __name__ != "memext.engine":
    # Run from the repository root, `import engine` would find this folder
    # as a second, top-level copy of the package (with its own state).
    raise ImportError(
        "this folder is the package `memext.engine`; install memext (`pip install -e .`) "
        "and import `memext.engine` instead of `engine`"
    )


from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .memory.append import LONG_TERM_FILE, AppendResult, append_entry
    from .memory.chunking import Chunk, chunk_markdown
    from .config import AgentConfig, Config, MemorySearchSettings, load_config
    from .errors import (
        AccessDenied,
        BadEmbeddings,
        BadLineRange,
        BadPath,
        ConfigError,
        DiskFull,
        EmbeddingsPending,
        ForeignDatabase,
        IndexBuildError,
        IndexOpenError,
        IndexReadOnly,
        LockTimeout,
        MemextError,
        ProviderError,
        SearchDisabled,
        UnknownAgentError,
        WorkspaceMissing,
    )
    from .search.excerpt import Excerpt, ExcerptLine
    from .search.explain import ExplainRow, explain_rows, explain_table
    from .agents.flush import FlushDecision, FlushPrompts, MemoryFlush, flush_prompts, is_no_reply
    from .index import MemoryIndex, open_index
    from .freshness.keeper import FreshnessKeeper, IndexFactory, KeeperSnapshot, KeeperState, SyncRequest
    from .paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, AppPaths, app_paths, private_dir, private_file, write_private_text
    from .indexing.progress import TextProgress, describe_progress
    from .memory.roots import MemoryRoots
    from .providers.base import EmbeddingProvider
    from .memory.read import ReadResult, parse_get_spec, resolve_memory_path
    from .search.pipeline import SearchResponse, SearchResult
    from .agents.session_memory import SavedSession, save_session_memory
    from .status import (
        BatchJob,
        BatchStatus,
        CacheStatus,
        FallbackStatus,
        FtsStatus,
        IndexStatus,
        LastSync,
        LocalModelStatus,
        ProviderStatus,
        SkippedFile,
        StorageStatus,
        VectorStatus,
    )
    from .freshness.supervisor import DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S, ConfigReloader, Supervisor
    from .indexing.sync import SyncCancelled, SyncProgress, SyncReport
    from .text import term_spans
    from .memory.dates import BadDate
    from .agents.hosts import IndexHost, KeptFresh, SyncWhenNeeded
    from .agents.tools import TOOLS, MemoryTools, ToolError, ToolSpec, openai_tools

#: Where each public name lives. Names load on first use (PEP 562), so a
#: one-shot `memext search` imports only the modules it runs, not the
#: keeper, tools, MCP or notebook halves of the API (DESIGN.md §12).
_EXPORTS: dict[str, str] = {
    "AccessDenied": "errors",
    "AgentConfig": "config",
    "app_paths": "paths",
    "append_entry": "memory.append",
    "AppendResult": "memory.append",
    "AppPaths": "paths",
    "BadDate": "memory.dates",
    "BadLineRange": "errors",
    "BadPath": "errors",
    "BatchJob": "status",
    "BatchStatus": "status",
    "CacheStatus": "status",
    "Chunk": "memory.chunking",
    "chunk_markdown": "memory.chunking",
    "Config": "config",
    "ConfigError": "errors",
    "ConfigReloader": "freshness.supervisor",
    "DEFAULT_CONFIG_POLL_S": "freshness.supervisor",
    "DEFAULT_RECONCILE_S": "freshness.supervisor",
    "describe_progress": "indexing.progress",
    "DiskFull": "errors",
    "EmbeddingProvider": "providers.base",
    "EmbeddingsPending": "errors",
    "Excerpt": "search.excerpt",
    "ExcerptLine": "search.excerpt",
    "explain_rows": "search.explain",
    "explain_table": "search.explain",
    "ExplainRow": "search.explain",
    "FallbackStatus": "status",
    "flush_prompts": "agents.flush",
    "FlushDecision": "agents.flush",
    "FlushPrompts": "agents.flush",
    "FreshnessKeeper": "freshness.keeper",
    "FtsStatus": "status",
    "IndexBuildError": "errors",
    "IndexFactory": "freshness.keeper",
    "IndexHost": "agents.hosts",
    "IndexOpenError": "errors",
    "IndexReadOnly": "errors",
    "BadEmbeddings": "errors",
    "ForeignDatabase": "errors",
    "IndexStatus": "status",
    "is_no_reply": "agents.flush",
    "KeeperSnapshot": "freshness.keeper",
    "KeptFresh": "agents.hosts",
    "KeeperState": "freshness.keeper",
    "LastSync": "status",
    "load_config": "config",
    "LocalModelStatus": "status",
    "LockTimeout": "errors",
    "LONG_TERM_FILE": "memory.append",
    "MemextError": "errors",
    "MemoryFlush": "agents.flush",
    "MemoryIndex": "index",
    "MemoryRoots": "memory.roots",
    "MemorySearchSettings": "config",
    "MemoryTools": "agents.tools",
    "open_index": "index",
    "openai_tools": "agents.tools",
    "parse_get_spec": "memory.read",
    "private_dir": "paths",
    "PRIVATE_DIR_MODE": "paths",
    "private_file": "paths",
    "PRIVATE_FILE_MODE": "paths",
    "ProviderError": "errors",
    "ProviderStatus": "status",
    "ReadResult": "memory.read",
    "resolve_memory_path": "memory.read",
    "save_session_memory": "agents.session_memory",
    "SavedSession": "agents.session_memory",
    "SearchDisabled": "errors",
    "SearchResponse": "search.pipeline",
    "SearchResult": "search.pipeline",
    "SkippedFile": "status",
    "StorageStatus": "status",
    "Supervisor": "freshness.supervisor",
    "SyncCancelled": "indexing.sync",
    "SyncProgress": "indexing.sync",
    "SyncReport": "indexing.sync",
    "SyncRequest": "freshness.keeper",
    "SyncWhenNeeded": "agents.hosts",
    "term_spans": "text",
    "TextProgress": "indexing.progress",
    "ToolError": "agents.tools",
    "TOOLS": "agents.tools",
    "ToolSpec": "agents.tools",
    "UnknownAgentError": "errors",
    "VectorStatus": "status",
    "WorkspaceMissing": "errors",
    "write_private_text": "paths",
}


__all__ = [
    "AccessDenied",
    "AgentConfig",
    "app_paths",
    "append_entry",
    "AppendResult",
    "AppPaths",
    "BadDate",
    "BadLineRange",
    "BadPath",
    "BatchJob",
    "BatchStatus",
    "CacheStatus",
    "Chunk",
    "chunk_markdown",
    "Config",
    "ConfigError",
    "ConfigReloader",
    "DEFAULT_CONFIG_POLL_S",
    "DEFAULT_RECONCILE_S",
    "describe_progress",
    "DiskFull",
    "EmbeddingProvider",
    "EmbeddingsPending",
    "FallbackStatus",
    "flush_prompts",
    "FlushDecision",
    "FlushPrompts",
    "FreshnessKeeper",
    "FtsStatus",
    "IndexBuildError",
    "IndexFactory",
    "IndexHost",
    "IndexOpenError",
    "IndexReadOnly",
    "BadEmbeddings",
    "ForeignDatabase",
    "IndexStatus",
    "is_no_reply",
    "KeeperSnapshot",
    "KeptFresh",
    "KeeperState",
    "LastSync",
    "load_config",
    "LocalModelStatus",
    "LockTimeout",
    "LONG_TERM_FILE",
    "MemextError",
    "MemoryFlush",
    "MemoryIndex",
    "MemoryRoots",
    "MemorySearchSettings",
    "MemoryTools",
    "open_index",
    "openai_tools",
    "parse_get_spec",
    "private_dir",
    "PRIVATE_DIR_MODE",
    "private_file",
    "PRIVATE_FILE_MODE",
    "ProviderError",
    "ProviderStatus",
    "ReadResult",
    "resolve_memory_path",
    "save_session_memory",
    "SavedSession",
    "SearchDisabled",
    "SearchResponse",
    "SearchResult",
    "SkippedFile",
    "StorageStatus",
    "Supervisor",
    "SyncCancelled",
    "SyncProgress",
    "SyncReport",
    "SyncRequest",
    "SyncWhenNeeded",
    "term_spans",
    "Excerpt",
    "ExcerptLine",
    "ExplainRow",
    "explain_rows",
    "explain_table",
    "TextProgress",
    "ToolError",
    "TOOLS",
    "ToolSpec",
    "UnknownAgentError",
    "VectorStatus",
    "WorkspaceMissing",
    "write_private_text",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
