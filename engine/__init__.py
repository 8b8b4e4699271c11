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


from .append import LONG_TERM_FILE, AppendResult, append_entry
from .chunking import Chunk, chunk_markdown
from .config import AgentConfig, Config, MemorySearchSettings, load_config
from .errors import (
    AccessDenied,
    BadLineRange,
    BadPath,
    ConfigError,
    EmbeddingsPending,
    IndexBuildError,
    IndexOpenError,
    LockTimeout,
    MemextError,
    ProviderError,
    SearchDisabled,
    UnknownAgentError,
    WorkspaceMissing,
)
from .excerpt import Excerpt, ExcerptLine
from .explain import ExplainRow, explain_rows, explain_table
from .flush import FlushDecision, FlushPrompts, MemoryFlush, flush_prompts, is_no_reply
from .index import MemoryIndex, open_index
from .keeper import FreshnessKeeper, IndexFactory, KeeperSnapshot, KeeperState, SyncRequest
from .paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, AppPaths, app_paths, private_dir, private_file, write_private_text
from .progress import TextProgress, describe_progress
from .roots import MemoryRoots
from .providers.base import EmbeddingProvider
from .read import ReadResult, parse_get_spec, resolve_memory_path
from .search import SearchResponse, SearchResult
from .session_memory import SavedSession, save_session_memory
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
from .supervisor import DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S, ConfigReloader, Supervisor
from .sync import SyncCancelled, SyncProgress, SyncReport
from .text import term_spans
from .tools import TOOLS, Freshness, MemoryTools, SyncWhenNeeded, ToolError, ToolSpec, openai_tools

__all__ = [
    "AccessDenied",
    "AgentConfig",
    "app_paths",
    "append_entry",
    "AppendResult",
    "AppPaths",
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
    "EmbeddingProvider",
    "EmbeddingsPending",
    "FallbackStatus",
    "flush_prompts",
    "FlushDecision",
    "FlushPrompts",
    "Freshness",
    "FreshnessKeeper",
    "FtsStatus",
    "IndexBuildError",
    "IndexFactory",
    "IndexOpenError",
    "IndexStatus",
    "is_no_reply",
    "KeeperSnapshot",
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
