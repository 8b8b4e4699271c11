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
        "this folder is the package `memext.engine`; install memext (`pip install -e .`) and import `memext.engine` instead of `engine`"
    )


from typing import TYPE_CHECKING

from .lazy_exports import lazy_names

if TYPE_CHECKING:
    from .agents.capture import capture
    from .agents.chat_recall import Recaller, with_recall
    from .agents.consolidate import apply_proposal, consolidate
    from .agents.flush import FlushDecision, FlushPrompts, MemoryFlush, flush_prompts, is_no_reply
    from .agents.recall import recall
    from .agents.session_memory import SavedSession, save_session_memory
    from .agents.tool_specs import TOOLS, ToolSpec, openai_tools
    from .agents.tools import MemoryTools, ToolError
    from .config import load_config
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
        LinesNotFound,
        LockTimeout,
        MemextError,
        ProviderError,
        ProviderTimeout,
        SearchDisabled,
        UnknownAgentError,
        WorkspaceMissing,
    )
    from .freshness.keeper import FreshnessKeeper, KeeperSnapshot, KeeperState, SyncRequest
    from .freshness.supervisor import Supervisor
    from .index import MemoryIndex, open_index
    from .indexing.reports import SyncProgress, SyncReport
    from .indexing.sync import SyncCancelled
    from .memory.append import LONG_TERM_FILE, AppendResult, append_entry
    from .memory.capture import CaptureReport
    from .memory.chunking import Chunk, chunk_markdown
    from .memory.consolidation import ConsolidatedFact, LeftOutFact, Proposal
    from .memory.dates import BadDate
    from .memory.entries import EntryMeta
    from .memory.forget import RetireResult
    from .memory.hostile import HostileText
    from .memory.read import ReadResult
    from .memory.roots import MemoryRoots
    from .paths import AppPaths, app_paths
    from .providers.base import EmbeddingProvider
    from .search.excerpt import Excerpt, ExcerptLine
    from .search.explain import ExplainRow, explain_rows
    from .search.options import SearchOptions
    from .search.recall import Recall
    from .search.results import SearchResponse, SearchResult
    from .settings import AgentConfig, Config, MemorySearchSettings
    from .status import (
        BatchJob,
        BatchStatus,
        CacheStatus,
        FallbackStatus,
        FtsStatus,
        IndexStatus,
        LastSync,
        LocalModelStatus,
        LongTermFile,
        ProviderStatus,
        SearchKind,
        SearchMode,
        SkippedFile,
        StorageStatus,
        VectorStatus,
    )

#: The public API, listed once: each name and the submodule that defines
#: it. Names load on first use (PEP 562), so a one-shot `memext search`
#: imports only the modules it runs, not the keeper, tools, MCP or notebook
#: halves of the API (DESIGN.md §12). What the faces need and users do not
#: is in :mod:`memext.engine.for_faces`.
_EXPORTS: dict[str, str] = {
    "AccessDenied": "errors",
    "AgentConfig": "settings",
    "app_paths": "paths",
    "append_entry": "memory.append",
    "apply_proposal": "agents.consolidate",
    "AppendResult": "memory.append",
    "AppPaths": "paths",
    "BadDate": "memory.dates",
    "BadEmbeddings": "errors",
    "BadLineRange": "errors",
    "BadPath": "errors",
    "BatchJob": "status",
    "BatchStatus": "status",
    "CacheStatus": "status",
    "capture": "agents.capture",
    "CaptureReport": "memory.capture",
    "Chunk": "memory.chunking",
    "chunk_markdown": "memory.chunking",
    "Config": "settings",
    "ConfigError": "errors",
    "consolidate": "agents.consolidate",
    "ConsolidatedFact": "memory.consolidation",
    "DiskFull": "errors",
    "EmbeddingProvider": "providers.base",
    "EmbeddingsPending": "errors",
    "EntryMeta": "memory.entries",
    "Excerpt": "search.excerpt",
    "ExcerptLine": "search.excerpt",
    "explain_rows": "search.explain",
    "ExplainRow": "search.explain",
    "FallbackStatus": "status",
    "flush_prompts": "agents.flush",
    "FlushDecision": "agents.flush",
    "FlushPrompts": "agents.flush",
    "ForeignDatabase": "errors",
    "FreshnessKeeper": "freshness.keeper",
    "FtsStatus": "status",
    "HostileText": "memory.hostile",
    "IndexBuildError": "errors",
    "IndexOpenError": "errors",
    "IndexReadOnly": "errors",
    "IndexStatus": "status",
    "is_no_reply": "agents.flush",
    "KeeperSnapshot": "freshness.keeper",
    "KeeperState": "freshness.keeper",
    "LastSync": "status",
    "LinesNotFound": "errors",
    "LeftOutFact": "memory.consolidation",
    "load_config": "config",
    "LocalModelStatus": "status",
    "LockTimeout": "errors",
    "LongTermFile": "status",
    "LONG_TERM_FILE": "memory.append",
    "MemextError": "errors",
    "MemoryFlush": "agents.flush",
    "MemoryIndex": "index",
    "MemoryRoots": "memory.roots",
    "MemorySearchSettings": "settings",
    "MemoryTools": "agents.tools",
    "open_index": "index",
    "openai_tools": "agents.tool_specs",
    "ProviderError": "errors",
    "ProviderTimeout": "errors",
    "ProviderStatus": "status",
    "Proposal": "memory.consolidation",
    "ReadResult": "memory.read",
    "recall": "agents.recall",
    "Recaller": "agents.chat_recall",
    "Recall": "search.recall",
    "save_session_memory": "agents.session_memory",
    "RetireResult": "memory.forget",
    "SavedSession": "agents.session_memory",
    "SearchDisabled": "errors",
    "SearchOptions": "search.options",
    "SearchResponse": "search.results",
    "SearchKind": "status",
    "SearchMode": "status",
    "SearchResult": "search.results",
    "SkippedFile": "status",
    "StorageStatus": "status",
    "Supervisor": "freshness.supervisor",
    "SyncCancelled": "indexing.sync",
    "SyncProgress": "indexing.reports",
    "SyncReport": "indexing.reports",
    "SyncRequest": "freshness.keeper",
    "ToolError": "agents.tools",
    "TOOLS": "agents.tool_specs",
    "ToolSpec": "agents.tool_specs",
    "UnknownAgentError": "errors",
    "VectorStatus": "status",
    "with_recall": "agents.chat_recall",
    "WorkspaceMissing": "errors",
}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
