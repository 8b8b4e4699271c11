"""What a freshness keeper talks about: sync requests and how they merge,
the agent's state, and the snapshot a status display shows.

The snapshot reads :class:`IndexStatus` in one place (:func:`status_facts`),
so the keeper does not depend on the shape of the status parts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..memory.roots import MEMORY_DIR
from ..status import IndexStatus, LongTermFile, SearchMode


class KeeperState(str, enum.Enum):
    IDLE = "idle"
    SYNCING = "syncing"
    ERROR = "error"
    PAUSED = "paused"


@dataclass(frozen=True)
class KeeperSnapshot:
    """How one agent's index is doing, as a status display shows it."""

    id: str
    workspace: Path
    state: KeeperState
    files: int = 0
    chunks: int = 0
    last_sync_at: float | None = None
    last_sync_duration_s: float | None = None
    error: str | None = None
    progress: str | None = None
    #: "native", "polling" or "off".
    watch_mode: str = "off"
    #: How a search runs (hybrid, keyword-only or off) and why; None until
    #: the index's status was first read.
    search_mode: SearchMode | None = None
    #: Syncs this keeper finished (successful or not).
    syncs: int = 0
    #: Where the index is when it is on a server (``store.driver =
    #: "postgres"``): the URL without its password, the schema and the
    #: server's version; None for a local SQLite index.
    server: str | None = None
    #: Why the index cannot be updated (a read-only file, folder or
    #: database): it is searched as it is and syncs fail (state ERROR, the
    #: error says so); None when it can be.
    read_only: str | None = None
    #: MEMORY.md and its size against ``memory_search.memory_file_warn_bytes``
    #: (``long_term.too_big``: warn); None when there is none or the index's
    #: status was not read yet.
    long_term: LongTermFile | None = None

    @property
    def memory_folder(self) -> Path:
        """``<workspace>/memory`` when it exists, else the workspace."""
        folder = self.workspace / MEMORY_DIR
        return folder if folder.is_dir() else self.workspace


KeeperListener = Callable[[KeeperSnapshot], None]

# Sync reasons, most important first. "manual" also indexes session
# transcripts below their delta thresholds; the others leave that to the engine.
# "recheck" reads again files a sync could not verify (engine/indexing/changes.py).
PRIORITY = ("manual", "note", "append", "watch", "recheck", "search", "interval", "startup", "resume", "reconcile")
#: Requests for these reasons are waited for by the next ``before_search``:
#: the caller wrote memory and expects to find it.
WAITED_REASONS = frozenset({"manual", "note", "append"})


@dataclass(frozen=True)
class SyncRequest:
    """A wish for a sync; two pending ones merge into one."""

    reason: str = "manual"
    force: bool = False
    #: Skip the sync when the files look as they did at the last one.
    if_changed: bool = False

    def merge(self, other: "SyncRequest") -> "SyncRequest":
        reason = min(self.reason, other.reason, key=lambda r: PRIORITY.index(r) if r in PRIORITY else len(PRIORITY))
        return SyncRequest(reason, self.force or other.force, self.if_changed and other.if_changed)


@dataclass(frozen=True)
class StatusFacts:
    files: int
    chunks: int
    last_sync_at: float | None
    last_sync_duration_s: float | None
    search_mode: SearchMode
    provider_problem: str | None
    server: str | None = None
    read_only: str | None = None
    long_term: LongTermFile | None = None


def status_facts(st: IndexStatus) -> StatusFacts:
    """The numbers a keeper shows, from an index status."""
    return StatusFacts(
        files=st.total_files,
        chunks=st.total_chunks,
        last_sync_at=st.last_sync.at if st.last_sync else None,
        last_sync_duration_s=st.last_sync.duration_s if st.last_sync else None,
        search_mode=st.search_mode,
        provider_problem=st.provider.problem,
        server=f"{st.db_path}, {st.storage.version}" if st.storage.server else None,
        read_only=st.read_only,
        long_term=st.long_term,
    )
