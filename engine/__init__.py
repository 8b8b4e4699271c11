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
from .keeper import FreshnessKeeper, IndexFactory, KeeperSnapshot, KeeperState, SyncRequest
from .paths import AppPaths, app_paths
from .progress import TextProgress, describe_progress
from .roots import MemoryRoots
from .providers.base import EmbeddingProvider
from .read import ReadResult
from .search import SearchResponse, SearchResult
from .status import IndexStatus
from .supervisor import DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S, ConfigReloader, Supervisor
from .sync import SyncProgress, SyncReport

__all__ = [
    "DEFAULT_CONFIG_POLL_S",
    "DEFAULT_RECONCILE_S",
    "AccessDenied",
    "AgentConfig",
    "AppPaths",
    "ConfigReloader",
    "FreshnessKeeper",
    "IndexFactory",
    "KeeperSnapshot",
    "KeeperState",
    "MemoryRoots",
    "Supervisor",
    "SyncRequest",
    "TextProgress",
    "app_paths",
    "describe_progress",
    "BadLineRange",
    "Chunk",
    "Config",
    "ConfigError",
    "EmbeddingProvider",
    "EmbeddingsPending",
    "IndexBuildError",
    "IndexOpenError",
    "IndexStatus",
    "LockTimeout",
    "MemextError",
    "MemoryIndex",
    "MemorySearchSettings",
    "ProviderError",
    "ReadResult",
    "SearchResponse",
    "SearchDisabled",
    "SearchResult",
    "SyncProgress",
    "SyncReport",
    "UnknownAgentError",
    "WorkspaceMissing",
    "chunk_markdown",
    "load_config",
    "open_index",
]
