"""memext engine: index Markdown memory per agent and search it.

The public API::

    from memext.engine import open_index, load_config
    with open_index("work") as idx:
        idx.sync()
        hits = idx.search("deploy checklist")

See :class:`memext.engine.index.MemoryIndex` for the methods.
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
from .flush import FlushDecision, FlushPrompts, MemoryFlush, flush_prompts, is_no_reply
from .index import MemoryIndex, open_index
from .providers.base import EmbeddingProvider
from .read import ReadResult
from .search import SearchResponse, SearchResult
from .session_memory import SavedSession, save_session_memory
from .status import IndexStatus
from .sync import SyncProgress, SyncReport
from .tools import TOOLS, Freshness, MemoryTools, SyncWhenNeeded, ToolError, ToolSpec, openai_tools

__all__ = [
    "AccessDenied",
    "AgentConfig",
    "AppendResult",
    "LONG_TERM_FILE",
    "BadLineRange",
    "Chunk",
    "Config",
    "ConfigError",
    "EmbeddingProvider",
    "EmbeddingsPending",
    "FlushDecision",
    "FlushPrompts",
    "Freshness",
    "IndexBuildError",
    "IndexOpenError",
    "IndexStatus",
    "LockTimeout",
    "MemextError",
    "MemoryFlush",
    "MemoryIndex",
    "MemorySearchSettings",
    "MemoryTools",
    "ProviderError",
    "ReadResult",
    "SavedSession",
    "SearchResponse",
    "SearchDisabled",
    "SearchResult",
    "SyncProgress",
    "SyncReport",
    "SyncWhenNeeded",
    "TOOLS",
    "ToolError",
    "ToolSpec",
    "UnknownAgentError",
    "WorkspaceMissing",
    "append_entry",
    "chunk_markdown",
    "flush_prompts",
    "is_no_reply",
    "load_config",
    "open_index",
    "openai_tools",
    "save_session_memory",
]
