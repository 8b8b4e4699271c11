"""An index's status, assembled (DESIGN.md §10): its counts, the provider
in force and why, the state of its vectors, keyword index, cache and
storage, what the last sync did, skipped and failed, and the workspace's
long-term file, as the typed records of engine/status.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..memory.workspace import workspace_files_indexed, workspace_problem
from ..providers.registry import where_embedded
from ..store import CorruptIndex

if TYPE_CHECKING:
    from ..providers import ProviderChoice
    from ..settings import AgentConfig
    from ..status import IndexStatus, LastSync, LongTermFile, SkippedFile
    from ..store import IndexStore


class IndexFacts(NamedTuple):
    """What only the open index knows, for its status."""

    #: Files on disk differ from the index (None: not checked).
    dirty: bool | None
    #: This or another process is writing the index.
    syncing: bool
    #: The index's own last error (a failed sync, a damaged file replaced).
    last_error: str | None
    #: Why a search now would be keyword-only although a provider is in force.
    keyword_only_reason: str | None
    #: The index was built for other settings than those in force.
    settings_changed: bool
    #: The disk holding the index file has no space left (:func:`disk_full`).
    disk_full: bool = False


def index_status(agent: AgentConfig, store: IndexStore, choice: ProviderChoice, db_path: Path, facts: IndexFacts) -> IndexStatus:
    """The status of ``agent``'s index, read from its open ``store``."""
    from ..status import CacheStatus, FallbackStatus, IndexStatus, ProviderStatus

    st = store
    provider = choice.provider
    last_sync = last_sync_of(st)
    sources = agent.settings.sources
    cache = agent.settings.cache
    return IndexStatus(
        agent=agent.id,
        workspace=str(agent.workspace),
        db_path=st.location,
        enabled=agent.settings.enabled,
        files={s: st.file_count(s) for s in sources},
        chunks={s: st.chunk_count(s) for s in sources},
        dirty=facts.dirty,
        syncing=facts.syncing,
        last_sync=last_sync,
        provider=ProviderStatus(
            requested=choice.requested,
            in_force=provider.id if provider else "none",
            model=provider.model if provider else "",
            reason=choice.reason,
            failed=choice.failed,
            cause=choice.cause,
            advice=choice.advice,
            embedded=where_embedded(provider.id if provider else "none"),
        ),
        fallback=FallbackStatus(choice.fallback_from, choice.fallback_reason or "") if choice.fallback_from else None,
        vector=st.vector_status(),
        fts=st.fts_status(),
        cache=CacheStatus(enabled=cache.enabled, entries=st.cache_count(), max_entries=cache.max_entries),
        storage=st.storage_status(),
        batch=provider.batch_status() if provider else None,
        local_model=provider.model_status() if provider else None,
        skipped=_skipped(st),
        # A workspace out of reach first: it is what is wrong now.
        last_error=workspace_problem(agent, lambda: workspace_files_indexed(st))
        or facts.last_error
        or _recorded_failure(db_path, last_sync)
        or (last_sync.provider_error if last_sync else None),
        keyword_only_reason=facts.keyword_only_reason,
        read_only=st.read_only,
        settings_changed=facts.settings_changed,
        long_term=_long_term(agent),
        disk_full=facts.disk_full,
    )


def disk_full(folder: Path) -> bool:
    """True when the disk holding ``folder`` has no space left for this user
    (what SQLite's "database or disk is full" comes from)."""
    try:
        return os.statvfs(folder).f_bavail == 0
    except (OSError, AttributeError):  # no statvfs (Windows), or no folder
        return False


def last_sync_of(store: IndexStore) -> LastSync | None:
    """What the last complete sync recorded, None before the first one."""
    from ..status import LastSync

    record = store.get_meta_json("last_sync")
    try:
        return LastSync.from_dict(record)
    except (TypeError, ValueError, KeyError) as exc:
        raise CorruptIndex(f"{store.location} has damaged bookkeeping: meta 'last_sync' ({exc})") from None


def _long_term(agent: AgentConfig) -> LongTermFile | None:
    """The workspace's long-term file and its size (one stat)."""
    from ..memory.roots import ROOT_FILES
    from ..status import LongTermFile

    for name in ROOT_FILES:
        try:
            size = os.stat(agent.workspace / name).st_size
        except OSError:
            continue
        return LongTermFile(name, size, agent.settings.memory_file_warn_bytes)
    return None


def _recorded_failure(db_path: Path, last_sync: LastSync | None) -> str | None:
    """A failure another process's sync recorded after the last good
    sync (a full disk: engine/indexing/last_failure.py)."""
    from .last_failure import last_failure

    failure = last_failure(db_path)
    if failure is None or (last_sync is not None and last_sync.at >= failure.at):
        return None
    return failure.describe()


def _skipped(store: IndexStore) -> list[SkippedFile]:
    """Files the last sync skipped, and every indexed file with a problem
    noted when it was read (invalid UTF-8), however long ago that was."""
    from ..status import SkippedFile

    try:
        out = [SkippedFile(str(p), str(r)) for p, r in store.get_meta_json("skipped", [])]
    except (TypeError, ValueError) as exc:
        raise CorruptIndex(f"{store.location} has damaged bookkeeping: meta 'skipped' ({exc})") from None
    listed = {k.path for k in out}
    for row in store.file_rows().values():
        if row.note and row.path not in listed:
            out.append(SkippedFile(row.path, f"{row.note} (indexed)"))
    return out
