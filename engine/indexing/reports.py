"""What a sync tells its caller: :class:`SyncProgress` while it runs and
:class:`SyncReport` when it is done (DESIGN.md §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..memory.discovery import Skipped


@dataclass
class SyncProgress:
    """A progress report: where the sync is and how long it has left."""

    phase: str  # "scan", "embed", "write" or "done"
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    rebuild: bool = False


ProgressCallback = Callable[[SyncProgress], None]


@dataclass
class SyncReport:
    """What a sync did."""

    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_deferred: int = 0
    chunks_written: int = 0
    texts_embedded: int = 0
    cache_hits: int = 0
    embed_calls: int = 0
    rebuilt: bool = False
    duration_s: float = 0.0
    skipped: list[Skipped] = field(default_factory=list)
    #: Set when the provider failed and files were indexed keyword-only.
    provider_error: str | None = None
    #: Set when the provider accepted the texts but has no vectors yet.
    embeddings_pending: str | None = None
    #: Files indexed from a read their mtime cannot vouch for (edited in the
    #: same clock tick, or changing while read): a later sync reads them again.
    files_unverified: int = 0
    #: When that later sync can verify them (seconds from now), if any.
    recheck_after_s: float | None = None
    #: Set when a provider call ran out its deadline: nothing more was asked of it (DESIGN.md §6).
    provider_gone: str | None = None
