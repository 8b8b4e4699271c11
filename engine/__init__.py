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
from .index import MemoryIndex, open_index
from .paths import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, AppPaths, app_paths, private_dir, private_file, write_private_text
from .progress import TextProgress
from .providers.base import EmbeddingProvider
from .read import ReadResult, parse_get_spec, resolve_memory_path
from .search import SearchResponse, SearchResult
from .status import IndexStatus
from .sync import SyncCancelled, SyncProgress, SyncReport
from .text import term_spans

__all__ = [
    "AccessDenied",
    "AgentConfig",
    "app_paths",
    "AppPaths",
    "BadLineRange",
    "BadPath",
    "Chunk",
    "chunk_markdown",
    "Config",
    "ConfigError",
    "EmbeddingProvider",
    "EmbeddingsPending",
    "IndexBuildError",
    "IndexOpenError",
    "IndexStatus",
    "load_config",
    "LockTimeout",
    "MemextError",
    "MemoryIndex",
    "MemorySearchSettings",
    "open_index",
    "parse_get_spec",
    "private_dir",
    "PRIVATE_DIR_MODE",
    "private_file",
    "PRIVATE_FILE_MODE",
    "ProviderError",
    "ReadResult",
    "resolve_memory_path",
    "SearchDisabled",
    "SearchResponse",
    "SearchResult",
    "SyncCancelled",
    "SyncProgress",
    "SyncReport",
    "term_spans",
    "TextProgress",
    "UnknownAgentError",
    "WorkspaceMissing",
    "write_private_text",
]
