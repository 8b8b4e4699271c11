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
from .index import MemoryIndex, open_index
from .providers.base import EmbeddingProvider
from .read import ReadResult
from .search import SearchResponse, SearchResult
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
from .sync import SyncProgress, SyncReport

__all__ = [
    "AccessDenied",
    "AgentConfig",
    "BadLineRange",
    "BatchJob",
    "BatchStatus",
    "CacheStatus",
    "Chunk",
    "Config",
    "ConfigError",
    "EmbeddingProvider",
    "EmbeddingsPending",
    "FallbackStatus",
    "FtsStatus",
    "IndexBuildError",
    "IndexOpenError",
    "IndexStatus",
    "LastSync",
    "LocalModelStatus",
    "LockTimeout",
    "MemextError",
    "MemoryIndex",
    "MemorySearchSettings",
    "ProviderError",
    "ProviderStatus",
    "ReadResult",
    "SearchDisabled",
    "SearchResponse",
    "SearchResult",
    "SkippedFile",
    "StorageStatus",
    "SyncProgress",
    "SyncReport",
    "UnknownAgentError",
    "VectorStatus",
    "WorkspaceMissing",
    "chunk_markdown",
    "load_config",
    "open_index",
]
