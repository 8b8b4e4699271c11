"""Where agent tool calls find an agent's index, and who keeps it fresh.

:class:`~.tools.MemoryTools` answers calls through an :class:`IndexHost`:

- :class:`SyncWhenNeeded`, for an agent loop inside one process (an OpenAI
  loop, LangChain, LlamaIndex) and for ``memext search`` itself: each index
  is opened on first use and, before a search, synced in the caller's
  thread when its files changed (a stat scan). One policy for both
  (DESIGN.md §5): ``sync.on_search = false`` leaves edits for a later sync
  (an index never built is still built), a sync that cannot take the
  writer lock in ``lock_timeout`` seconds or fails leaves the search to
  answer from the index as it is, with a notice saying so.
- :class:`KeptFresh`, for a long-running server (``memext mcp``): a
  :class:`~memext.engine.Supervisor`'s keepers keep the indexes fresh in the
  background, as in the tray (file watchers, interval and reconcile
  syncs); a search never syncs. Before it answers, a stat scan checks that
  the index matches the files: when it does not, the answer says so
  (``stale``) and the keeper is asked to catch up. An append is synced by
  the keeper before the call returns, so the entry is searchable then.
"""

from __future__ import annotations

import dataclasses
import threading
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import LockTimeout, MemextError
from ..index import MemoryIndex

if TYPE_CHECKING:
    # A one-shot `memext search` goes through SyncWhenNeeded: appends and the
    # keeper load when used (DESIGN.md §12).
    from ..freshness.supervisor import Supervisor
    from ..indexing.reports import ProgressCallback
    from ..memory.append import AppendResult
    from ..memory.capture import CaptureReport
    from ..memory.entries import EntryMeta
    from ..memory.forget import RetireResult
    from ..search.results import SearchResponse

#: Opens a display of a sync's progress, given what the sync is (``"work:
#: first index"``); the CLI passes a progress bar when stderr is a terminal.
ProgressDisplay = Callable[[str], "AbstractContextManager[ProgressCallback | None]"]

#: How long a search waits for a first build or a pending note (KeptFresh).
SEARCH_WAIT_S = 30.0
#: How long an append waits for the sync that makes its entry searchable.
APPEND_WAIT_S = 30.0


@runtime_checkable
class IndexHost(Protocol):
    """What :class:`~.tools.MemoryTools` asks of the place its indexes live."""

    def index(self, agent: str) -> MemoryIndex:
        """The index of ``agent`` (an id the tools serve)."""
        ...

    def search(self, agent: str, run: Callable[[MemoryIndex], SearchResponse]) -> tuple[SearchResponse, str | None]:
        """``run(index)`` on an index fresh enough to search, and a notice
        when it did not match the memory files as it answered (the tool
        result then says ``stale``), else None."""
        ...

    def append(
        self, agent: str, text: str, file: str | None, heading: str | None, *, meta: EntryMeta | None = None, supersedes: str | None = None
    ) -> AppendResult:
        """Append an entry and make it searchable before returning (else the
        result says ``indexed: false`` and why)."""
        ...

    def forget(self, agent: str, citation: str, reason: str | None) -> RetireResult:
        """Mark the entries at ``citation`` forgotten (DESIGN.md §17)."""
        ...

    def capture(self, agent: str, messages: Sequence[Mapping[str, object]], *, include_assistant: bool, dry_run: bool) -> CaptureReport:
        """Automatic capture of ``messages`` (stored only when the agent's
        ``memory_search.capture.enabled`` is on), made searchable."""
        ...

    def close(self) -> None: ...


class SyncWhenNeeded:
    """Indexes opened with ``open_index(agent_id)`` on first use, synced in
    the caller's thread before a search when the files changed and the
    agent syncs on search (``sync.on_search``; an index never built is
    always built, so a first search is not empty). A sync that cannot take
    the writer lock within ``lock_timeout`` seconds, or fails, leaves the
    search to answer from the index as it is, saying so. ``progress``
    shows a sync that runs (None: none shown)."""

    def __init__(self, open_index: Callable[[str], MemoryIndex], lock_timeout: float = 2.0, *, progress: ProgressDisplay | None = None):
        self.lock_timeout = lock_timeout
        self._open_index = open_index
        self._progress = progress
        self._indexes: dict[str, MemoryIndex] = {}
        self._lock = threading.Lock()

    def index(self, agent: str) -> MemoryIndex:
        with self._lock:
            if agent not in self._indexes:
                self._indexes[agent] = self._open_index(agent)
            return self._indexes[agent]

    def search(self, agent: str, run: Callable[[MemoryIndex], SearchResponse]) -> tuple[SearchResponse, str | None]:
        index = self.index(agent)
        notice = self.sync_before_search(index)
        return run(index), notice

    def sync_before_search(self, index: MemoryIndex) -> str | None:
        """Sync ``index`` if a search should not answer from it as it is;
        a notice when the search must (the sync could not run), else None.
        The files are not walked when a running keeper vouches for them
        (:mod:`~memext.engine.indexing.freshness_record`)."""
        if not (index.agent.settings.sync.on_search or index.never_synced):
            return None
        if _keeper_vouches(index) or not index.needs_sync():
            return None
        label = f"{index.agent.id}: {'first index' if index.never_synced else 'syncing'}"
        try:
            with self._progress(label) if self._progress else nullcontext() as progress:
                index.sync(reason="search", lock_timeout=self.lock_timeout, progress=progress)
        except LockTimeout:
            return "another process is syncing this index; searched it as it is (results may miss the latest edits)"
        except MemextError as exc:
            return f"the index could not be brought up to date ({exc}); searched it as it is"
        return None

    def append(
        self, agent: str, text: str, file: str | None, heading: str | None, *, meta: EntryMeta | None = None, supersedes: str | None = None
    ) -> AppendResult:
        return self.index(agent).append(text, file=file, heading=heading, meta=meta, supersedes=supersedes)

    def forget(self, agent: str, citation: str, reason: str | None) -> RetireResult:
        return self.index(agent).forget(citation, reason)

    def capture(self, agent: str, messages: Sequence[Mapping[str, object]], *, include_assistant: bool, dry_run: bool) -> CaptureReport:
        from .capture import capture

        return capture(messages, index=self.index(agent), automatic=True, include_assistant=include_assistant, dry_run=dry_run)

    def close(self) -> None:
        """Close the indexes opened so far (idempotent)."""
        with self._lock:
            indexes, self._indexes = list(self._indexes.values()), {}
        for idx in indexes:
            idx.close()


class KeptFresh:
    """The indexes of a running :class:`~memext.engine.Supervisor`, kept fresh
    by its keepers. The supervisor belongs to the caller (``close`` leaves
    it running)."""

    def __init__(self, supervisor: "Supervisor", *, search_wait_s: float = SEARCH_WAIT_S, append_wait_s: float = APPEND_WAIT_S):
        self.supervisor = supervisor
        self.search_wait_s = search_wait_s
        self.append_wait_s = append_wait_s

    def index(self, agent: str) -> MemoryIndex:
        return self.supervisor.keeper(agent).index

    def search(self, agent: str, run: Callable[[MemoryIndex], SearchResponse]) -> tuple[SearchResponse, str | None]:
        keeper = self.supervisor.keeper(agent)
        # Waits only for a first build or a note just written (as a notebook does).
        waited = keeper.before_search(timeout=self.search_wait_s)
        index = keeper.index
        dirty = index.dirty  # a stat scan: does the index match the files?
        response = run(index)
        if not dirty:
            return response, None
        busy = keeper.busy()
        if not busy:  # no watcher has seen it (yet): catch up in the background
            keeper.request("search", if_changed=True)
        error = keeper.snapshot().error
        if not waited:
            why = f"a sync did not finish within {self.search_wait_s:g} s"
        elif error and not busy:
            why = f"the last sync failed: {error}"
        else:
            why = "they are being indexed now"
        return response, f"memory files changed since the index was last synced ({why}): results may miss the latest edits"

    def append(
        self, agent: str, text: str, file: str | None, heading: str | None, *, meta: EntryMeta | None = None, supersedes: str | None = None
    ) -> AppendResult:
        from ..memory.supersede import append_superseding

        keeper = self.supervisor.keeper(agent)
        keeper.index.check_workspace()
        written = append_superseding(keeper.agent, keeper.index.db_path, text, file=file, heading=heading, meta=meta, supersedes=supersedes)
        keeper.request("note")
        if not keeper.wait_fresh(self.append_wait_s):
            return dataclasses.replace(
                written, indexed=False, notice=f"written, but not indexed yet: its sync did not finish within {self.append_wait_s:g} s"
            )
        error = keeper.snapshot().error
        if error and keeper.index.dirty:
            return dataclasses.replace(written, indexed=False, notice=f"written, but not indexed yet: {error}")
        return written

    def forget(self, agent: str, citation: str, reason: str | None) -> RetireResult:
        from ..memory.forget import retire

        keeper = self.supervisor.keeper(agent)
        keeper.index.check_workspace()
        marked = retire(keeper.agent, keeper.index.db_path, citation, reason=reason)
        keeper.request("note")  # search reads the mark from the file at once; the index follows
        return marked

    def capture(self, agent: str, messages: Sequence[Mapping[str, object]], *, include_assistant: bool, dry_run: bool) -> CaptureReport:
        from .capture import capture

        keeper = self.supervisor.keeper(agent)
        keeper.index.check_workspace()
        # The keeper's thread syncs its index: capture writes, the keeper indexes.
        report = capture(messages, index=keeper.index, automatic=True, include_assistant=include_assistant, dry_run=dry_run, sync=False)
        if report.written and report.stored:
            keeper.request("note")
            keeper.wait_fresh(self.append_wait_s)
        return report

    def close(self) -> None:
        return None


def _keeper_vouches(index: MemoryIndex) -> bool:
    """A running keeper (the tray, ``memext mcp``) watches the agent's
    files and says the index matches them: a search need not walk them.
    A first build or a rebuild for new settings is never vouched for."""
    from ..indexing.freshness_record import vouches

    return vouches(index.agent, index.db_path) and not index.never_synced and not index.settings_changed()
