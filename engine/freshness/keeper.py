"""``FreshnessKeeper``: the one place that keeps an agent's index fresh.

    keeper = FreshnessKeeper(agent)          # or FreshnessKeeper(index)
    keeper.start()                           # startup sync, file watching
    keeper.request("note")                   # memory was written: sync soon
    keeper.before_search()                   # what a face calls before searching
    hits = keeper.index.search("deploy")
    keeper.stop()

One keeper per agent owns the agent's :class:`MemoryIndex` and one thread
that runs its syncs, so there is never more than one sync of an agent in
this process (across processes ``MemoryIndex.sync`` takes the writer lock,
which the keeper waits for in short tries so that stopping stays prompt).
Requests that arrive while a sync runs merge into one follow-up sync; the
file watcher (:mod:`.watch`, when watchdog is installed) debounces bursts of
saves into one request. Interval and reconcile syncs and the watcher's
upkeep are driven by :class:`~memext.engine.freshness.supervisor.Supervisor`'s
scheduler through :meth:`FreshnessKeeper.tick`.

The keeper holds what a status display shows (:class:`KeeperSnapshot`): a
failing sync, a provider that could not start (the agent syncs keyword-only
but is not doing what its config asks) or a watcher that cannot run is the
agent's error state, and touches no other agent.

Over 500 lines, on purpose: requests, the sync thread, waiting and the
status all share one condition variable, and splitting them would spread
its invariants across modules. The keeper's vocabulary (requests, states,
snapshots) is in :mod:`.state`, the watcher's upkeep in
:mod:`.watch_guard`.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from ..errors import LockTimeout, MemextError, WorkspaceMissing
from ..index import MemoryIndex
from ..indexing.freshness_record import FreshnessRecord
from ..indexing.progress import describe_progress
from ..indexing.reports import SyncProgress, SyncReport
from ..indexing.sync import SyncCancelled
from ..memory.workspace import check_workspace
from ..settings import AgentConfig
from ..status import LongTermFile, SearchMode
from .state import (
    PRIORITY,
    WAITED_REASONS,
    KeeperListener,
    KeeperSnapshot,
    KeeperState,
    SyncRequest,
    status_facts,
)
from .watch_guard import WATCH_RETRY_S, WatchGuard, watcher_class

if TYPE_CHECKING:
    from .watch import MemoryWatcher

__all__ = [
    "PRIORITY",
    "WAITED_REASONS",
    "WATCH_RETRY_S",
    "FreshnessKeeper",
    "KeeperListener",
    "KeeperSnapshot",
    "KeeperState",
    "SyncRequest",
    "watcher_class",
]

log = logging.getLogger("memext.keeper")

#: A sync waits for another process's sync in tries this long (so stop is prompt).
LOCK_TRY_S = 1.0
#: Progress updates reach listeners at most this often.
PROGRESS_EVERY_S = 0.5
#: ``before_search`` starts a background sync (if files changed) when the
#: last sync is older than this, so edits made outside memext are picked up
#: without a watcher.
RESYNC_AFTER_S = 30.0
#: How long ``before_search`` waits by default for a sync it must see.
SEARCH_WAIT_S = 600.0

IndexFactory = Callable[[AgentConfig], MemoryIndex]
Notifier = Callable[[str, str], None]


@dataclass
class _Status:
    state: KeeperState = KeeperState.IDLE
    files: int = 0
    chunks: int = 0
    last_sync_at: float | None = None
    last_sync_duration_s: float | None = None
    error: str | None = None
    progress: str | None = None
    search_mode: SearchMode | None = None
    syncs: int = 0
    provider_problem: str | None = None
    server: str | None = None
    read_only: str | None = None
    long_term: LongTermFile | None = None
    #: Why the memory files are not being watched (even polling failed).
    watch_error: str | None = None


class FreshnessKeeper:
    """Keeps one agent's index fresh: requests, watching, waiting.

    Pass the agent's :class:`MemoryIndex`, or its :class:`AgentConfig`
    (the index is then opened on first use with ``index_factory``, and an
    index that cannot open is the agent's error rather than an exception in
    the keeper's thread). The keeper owns the index: :meth:`stop` closes it.

    ``watch=False`` never watches files (``sync.watch`` in the config can
    turn it off too); ``polling`` watches by polling instead of native
    events; ``paused`` starts paused (no watching, no timed syncs).
    ``notifier(title, message)`` is told about each new error.
    ``resync_after_s``: how old the last sync may be before
    :meth:`before_search` starts another in the background.
    """

    def __init__(
        self,
        index: MemoryIndex | AgentConfig,
        *,
        index_factory: IndexFactory | None = None,
        watch: bool = True,
        polling: bool = False,
        paused: bool = False,
        lock_timeout: float | None = 600,
        notifier: Notifier | None = None,
        resync_after_s: float = RESYNC_AFTER_S,
    ):
        if isinstance(index, MemoryIndex):
            self.agent: AgentConfig = index.agent
            self._index: MemoryIndex | None = index
            self._factory: IndexFactory | None = None
        else:
            self.agent = index
            self._index = None
            self._factory = index_factory or MemoryIndex
        self._notifier = notifier
        self._resync_after_s = resync_after_s
        self._paused = paused
        self._lock_timeout = lock_timeout
        self._cond = threading.Condition()
        self._open_lock = threading.Lock()
        self._listeners: list[KeeperListener] = []
        self._pending: SyncRequest | None = None
        self._stopping = False
        #: Set by stop(): a running sync stops at its next check.
        self._cancel = threading.Event()
        self._closed = False
        self._running_sync = False
        # Request counters: wait_fresh waits until the syncs finished cover
        # every request made before it was called.
        self._requested = 0
        self._taken = 0
        self._covered = 0
        self._last_waited = 0
        self._synced_ok = False
        self._status_of: MemoryIndex | None = None  # the index the status shows
        self._status = _Status()
        self._last_sync_end = time.monotonic()
        self._last_progress_emit = 0.0
        self._recheck_timer: threading.Timer | None = None
        self._thread = threading.Thread(target=self._run, name=f"memext-keeper-{self.agent.id}", daemon=True)
        # The freshness record (DESIGN.md §13): file events and gaps in
        # watching seen so far, and the record itself (made at the first sync,
        # when the index's place is known). Guarded by _record_lock, so that
        # an event and the end of a sync cannot cross.
        self._seen = 0
        self._record: FreshnessRecord | None = None
        self._record_lock = threading.Lock()
        self._watch: WatchGuard | None = None
        if watch and self.agent.settings.sync.watch and self.agent.settings.enabled:
            self._watch = WatchGuard(
                self.agent,
                self._on_files_changed,
                polling=polling,
                on_error=lambda error: self._set(watch_error=error),
                on_resync=lambda if_changed: self.request("reconcile", if_changed=if_changed),
                on_seen=self._on_seen,
            )

    # -- lifecycle ----------------------------------------------------------------

    def start(self, *, sync: bool = True) -> None:
        """Start the sync thread and the watcher; ``sync`` syncs once now
        (watchers miss what changed while nothing was watching)."""
        self._thread.start()
        if not self._paused:
            self._start_watcher()
        if sync:
            self.request("startup")

    def stop(self, timeout: float = 30) -> None:
        """Stop watching, cancel a running sync, close the index (idempotent)."""
        with self._record_lock:  # while it still watches: from now on searches check the files themselves
            self._seen += 1
            if self._record is not None:
                self._record.close()
        with self._cond:
            self._stopping = True
            self._cancel.set()
            self._cond.notify_all()
        if self._watch is not None:
            self._watch.stop()
        if self._recheck_timer is not None:
            self._recheck_timer.cancel()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            # Closing the index under a thread still using it could crash
            # the process (SQLite); leaving it open only holds a file.
            log.warning("the sync of %s did not stop within %g s; its index is left open", self.agent.id, timeout)
            with self._open_lock:
                self._closed = True
            return
        self._close_index(final=True)

    def __enter__(self) -> "FreshnessKeeper":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and the end of :meth:`stop`."""
        return self._thread.is_alive()

    @property
    def index(self) -> MemoryIndex:
        """The agent's index (opened on first use; raises MemextError when
        it cannot be opened, or after :meth:`stop`)."""
        with self._open_lock:
            if self._closed:
                raise MemextError(f"the index of agent {self.agent.id!r} is closed")
            if self._index is None:
                assert self._factory is not None  # only a keeper made from an AgentConfig drops its index
                self._index = self._factory(self.agent)
            return self._index

    @property
    def index_open(self) -> bool:
        """True while the keeper holds an open index (one made from an
        :class:`AgentConfig` opens it on first use)."""
        with self._open_lock:
            return self._index is not None and not self._closed

    def _close_index(self, *, final: bool = False) -> None:
        with self._open_lock:
            index, self._index = self._index, None
            self._closed = self._closed or final
        if index is not None:
            index.close()

    # -- requests -------------------------------------------------------------------

    def request(self, reason: str = "manual", *, force: bool = False, if_changed: bool = False) -> None:
        """Queue a sync; merged with one already waiting. ``if_changed``
        skips it when the index still matches the files. A disabled agent
        takes only manual requests."""
        if not self.agent.settings.enabled and reason != "manual":
            return
        with self._cond:
            if self._stopping:
                return
            req = SyncRequest(reason, force, if_changed)
            self._pending = req if self._pending is None else self._pending.merge(req)
            self._requested += 1
            if reason in WAITED_REASONS:
                self._last_waited = self._requested
            self._cond.notify_all()

    def wait_fresh(self, timeout: float | None = None) -> bool:
        """Wait until every sync requested so far has run; False on timeout
        (or when the keeper is not running)."""
        with self._cond:
            return self._wait_covered(self._requested, timeout)

    def _wait_covered(self, target: int, timeout: float | None) -> bool:
        # The caller holds self._cond.
        if not self._thread.is_alive():
            return self._covered >= target
        self._cond.wait_for(lambda: self._covered >= target or self._stopping, timeout)
        return self._covered >= target

    def before_search(self, timeout: float = SEARCH_WAIT_S) -> bool:
        """Make the next search see what it should; never waits past ``timeout``.

        Waits when the index was never built (a first search would be
        empty) and for requested syncs the caller expects to see (a note
        just written, "manual"); otherwise starts a background sync when
        the last one is older than ``resync_after_s`` and ``sync.on_search``
        is on (the search does not wait for it). False when it gave up
        waiting, or the index cannot be opened (the search says why).
        """
        if not self.agent.settings.enabled:
            return True
        try:
            index = self.index
            never_built = index.never_synced
        except MemextError:
            return False
        if never_built:
            if not self.busy():
                self.request("search")
            return self.wait_fresh(timeout)
        with self._cond:
            if self._covered < self._last_waited:
                return self._wait_covered(self._last_waited, timeout)
        if self.agent.settings.sync.on_search and self.seconds_since_sync() > self._resync_after_s and not self.busy():
            self.request("search", if_changed=True)
        return True

    def _on_files_changed(self, paths: list[str]) -> None:
        if not self._paused:
            self.request("watch")

    def _on_seen(self) -> None:
        """A file event (before its debounce) or a gap in watching: the
        index may miss a change until the next sync, so the record says so
        at once."""
        with self._record_lock:
            self._seen += 1
            if self._record is not None:
                self._record.mark(False)

    def _seen_now(self) -> int:
        with self._record_lock:
            return self._seen

    def _mark_record(self, index: MemoryIndex, seen_at_start: int, fresh: bool) -> None:
        """After a sync (or a check that found nothing to sync) that began
        when ``seen_at_start`` events had been seen: the record says
        "fresh" only when ``fresh`` and nothing was seen since, the files
        are watched with native events, and no sync is waiting."""
        with self._cond:
            waiting = self._pending is not None
        fresh = fresh and not self._paused and not self._stopping and not waiting
        fresh = fresh and self._watch is not None and self._watch.watching_natively()
        with self._record_lock:
            if self._stopping:
                return
            if self._record is None:
                if not fresh:
                    return
                self._record = FreshnessRecord(index.db_path, self.agent)
            self._record.mark(fresh and self._seen == seen_at_start)

    def busy(self) -> bool:
        """A sync is running or waiting."""
        with self._cond:
            return self._running_sync or self._pending is not None

    # -- listeners --------------------------------------------------------------------

    def add_listener(self, fn: KeeperListener) -> None:
        """``fn(snapshot)`` runs (on the keeper's threads) after every state
        change; it should only schedule work, not do it."""
        self._listeners.append(fn)

    def remove_listener(self, fn: KeeperListener) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def _changed(self) -> None:
        if not self._listeners:
            return
        snap = self.snapshot()
        for fn in list(self._listeners):
            try:
                fn(snap)
            except Exception:
                log.exception("a keeper listener failed")

    # -- pause, timers, watcher upkeep ----------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pausing stops the watcher and timed syncs; manual syncs still run.
        Resuming syncs whatever changed meanwhile."""
        if paused == self._paused:
            return
        self._paused = paused
        if paused:
            self._on_seen()  # nothing is watched from now on
            if self._watch is not None:
                self._watch.stop()
            return
        self._start_watcher()
        self.request("resume", if_changed=True)
        self._set()

    def seconds_since_sync(self) -> float:
        """Seconds since the last sync ended (done, failed or skipped)."""
        return time.monotonic() - self._last_sync_end

    def interval_s(self) -> float | None:
        """Seconds between interval syncs; None when this agent has none
        (no interval, or disabled: its timed syncs would be dropped)."""
        minutes = self.agent.settings.sync.interval_minutes
        return minutes * 60 if minutes > 0 and self.agent.settings.enabled else None

    def due_in_s(self) -> float | None:
        """Seconds until the next interval sync; None when none is due (no
        interval, or busy: the timer restarts when the sync ends)."""
        interval = self.interval_s()
        if interval is None or self.busy():
            return None
        return max(0.0, interval - self.seconds_since_sync())

    def tick(self, *, reconcile: bool = False) -> None:
        """The timed work, called by a scheduler: watcher upkeep, an
        interval sync when due and, with ``reconcile``, a sync if the files
        changed behind the watcher's back."""
        try:
            self.check_watcher(full=reconcile)
        except Exception:  # the watcher must not stop the timers
            log.exception("checking the watcher of %s failed", self.agent.id)
        due = self.due_in_s()
        if due is not None and due <= 0:
            self.request("interval")
        if reconcile:
            self.request("reconcile", if_changed=True)

    @property
    def watcher(self) -> "MemoryWatcher | None":
        """The file watcher (None: not watching, or watchdog is missing)."""
        return self._watch.watcher if self._watch is not None else None

    def _start_watcher(self) -> None:
        if self._watch is not None and not self._paused and not self._stopping:
            self._watch.start()

    def check_watcher(self, *, full: bool = False) -> None:
        """Keep the watcher going (see :meth:`WatchGuard.check`); ``full`` at
        a reconcile scan. Nothing to do while paused or stopping."""
        if self._watch is not None and not self._paused and not self._stopping:
            self._watch.check(full=full)

    # -- the sync thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    break
                req, self._pending = self._pending, None
                assert req is not None  # the wait above ends with a request or a stop
                self._taken = self._requested
                self._running_sync = True
            try:
                self._sync(req)
            except Exception:  # never let the thread die
                log.exception("sync thread of %s", self.agent.id)
            finally:
                # Every way out of a sync (done, failed, skipped) restarts
                # the interval timer: else the scheduler asks again at once.
                self._last_sync_end = time.monotonic()
                with self._cond:
                    self._running_sync = False
                    self._covered = self._taken
                    self._cond.notify_all()
        with self._cond:  # stopped: nobody waits for syncs that will not run
            self._cond.notify_all()

    def _unchanged(self) -> bool:
        """True when the last sync worked and the index still matches the files."""
        with self._open_lock:
            index = self._index
        if index is None or not self._synced_ok:
            return False
        try:
            return not index.needs_sync()
        except Exception as exc:  # cannot tell: sync
            log.debug("change check of %s failed: %s", self.agent.id, exc)
            return False

    def _sync(self, req: SyncRequest) -> None:
        seen = self._seen_now()
        # Before the change check, which finds nothing to do in a workspace
        # that is gone: a reconcile must see that it went.
        problem = self._workspace_problem()
        if problem:
            self._synced_ok = False  # when the folder is back, a sync runs (and clears the error)
            self._on_seen()
            self._finish(None, problem)
            return
        if req.if_changed and not req.force and self._unchanged():
            with self._open_lock:
                index = self._index
            if index is not None:
                self._mark_record(index, seen, fresh=True)
            return
        if req.reason == "manual" and self._status.provider_problem and self._factory is not None:
            # "Sync now" tries the configured provider again (a reopened
            # index chooses it afresh).
            log.info("%s: trying the embedding provider again", self.agent.id)
            self._close_index()
        self._set(state=KeeperState.SYNCING, progress=None)
        started = time.monotonic()
        try:
            index = self.index
            if self._stopping:
                raise SyncCancelled("stopping")
            if index is not self._status_of:  # show its counts while it syncs
                self._load_status(index)
            report = self._sync_when_unlocked(index, req)
        except SyncCancelled:
            self._set(state=KeeperState.IDLE, progress=None)
            return
        except Exception as exc:
            if self._stopping:
                return
            if not isinstance(exc, MemextError):
                log.exception("sync of %s crashed", self.agent.id)
            self._synced_ok = False  # the index may not match the files: the next request syncs
            self._on_seen()  # the index may miss what it was syncing
            self._finish(None, str(exc) or type(exc).__name__)
            return
        if self._stopping:
            return
        self._synced_ok = True
        if report.recheck_after_s is not None:
            self._recheck_later(report.recheck_after_s)
        # Files it could not verify (racy timestamps, DESIGN.md §5) or left
        # without vectors keep the record "dirty" until a sync completes them.
        self._mark_record(index, seen, fresh=report.recheck_after_s is None and not report.provider_error)
        error = f"embedding failed, indexed keyword-only: {report.provider_error}" if report.provider_error else None
        log.info(
            "%s: synced (%s%s) in %.2f s: %d files indexed, %d unchanged, %d deleted",
            self.agent.id,
            req.reason,
            ", rebuild" if report.rebuilt else "",
            time.monotonic() - started,
            report.files_indexed,
            report.files_unchanged,
            report.files_deleted,
        )
        self._finish(report, error)

    def _workspace_problem(self) -> str | None:
        """Why the workspace cannot be synced (gone, unreadable, or emptied
        while the index holds its files: :meth:`MemoryIndex.check_workspace`), or None."""
        with self._open_lock:
            index = self._index
        try:
            if index is not None:
                index.check_workspace()
            else:
                check_workspace(self.agent)
        except WorkspaceMissing as exc:
            return str(exc)
        except MemextError:
            return None  # the index cannot be read: the sync says why
        return None

    def _recheck_later(self, delay_s: float) -> None:
        """Sync again once files the last sync could not verify (an mtime in
        the same clock tick as its read, engine/indexing/changes.py) can be: no file
        event will come for an edit the watcher already reported."""
        if self._recheck_timer is not None:
            self._recheck_timer.cancel()
        timer = threading.Timer(delay_s + 0.05, self.request, args=("recheck",))
        timer.name = f"memext-recheck-{self.agent.id}"
        timer.daemon = True
        self._recheck_timer = timer
        timer.start()

    def _sync_when_unlocked(self, index: MemoryIndex, req: SyncRequest) -> SyncReport:
        """``index.sync``, waiting for another process's sync of the agent in
        short tries, so that stopping never waits for the other process."""
        waited = 0.0
        while True:
            try:
                return index.sync(
                    force=req.force, reason=req.reason, progress=self._on_progress, lock_timeout=LOCK_TRY_S, cancel=self._cancel
                )
            except LockTimeout:
                waited += LOCK_TRY_S
                if self._stopping:
                    raise SyncCancelled("stopping") from None
                if self._lock_timeout is not None and waited >= self._lock_timeout:
                    raise
                self._set(progress=f"waiting {waited:.0f} s for another process's sync of this index")

    def _finish(self, report: SyncReport | None, error: str | None) -> None:
        with self._open_lock:
            index = self._index
        if index is not None:
            try:
                self._load_status(index)
            except Exception as exc:
                error = error or f"cannot read the index status: {exc}"
        # A provider that did not start: synced keyword-only, shown as an
        # error (notified once: the text is the same at every sync).
        error = error or self._status.provider_problem
        with self._cond:
            before = self._status.error
            self._status.syncs += 1
        self._set(state=KeeperState.ERROR if error else KeeperState.IDLE, error=error, progress=None)
        if error:
            log.error("%s: %s", self.agent.id, error)
            if error != before and self._notifier is not None:
                try:
                    self._notifier(f"memext: {self.agent.id}", error)
                except Exception as exc:
                    log.debug("notification failed: %s", exc)

    def _load_status(self, index: MemoryIndex) -> None:
        facts = status_facts(index.status(check_files=False))  # a sync scans the files itself
        self._status_of = index
        with self._cond:
            s = self._status
            s.files, s.chunks = facts.files, facts.chunks
            s.last_sync_at, s.last_sync_duration_s = facts.last_sync_at, facts.last_sync_duration_s
            s.search_mode = facts.search_mode
            s.provider_problem = facts.provider_problem
            s.server = facts.server
            s.read_only = facts.read_only
            s.long_term = facts.long_term

    def _on_progress(self, p: SyncProgress) -> None:
        if p.phase == "done":
            return
        with self._cond:
            self._status.progress = describe_progress(p)
        now = time.monotonic()
        if now - self._last_progress_emit >= PROGRESS_EVERY_S:
            self._last_progress_emit = now
            self._changed()

    def _set(self, **changes: Any) -> None:
        with self._cond:
            for k, v in changes.items():
                setattr(self._status, k, v)
        self._changed()

    # -- reading -------------------------------------------------------------------------

    def snapshot(self) -> KeeperSnapshot:
        """The agent's state now (thread-safe, cheap: no file scan)."""
        with self._cond:
            s = replace(self._status)
        state = s.state
        error = s.error or s.watch_error
        if state == KeeperState.IDLE and s.watch_error:
            state = KeeperState.ERROR
        elif state == KeeperState.IDLE and self._paused:
            state = KeeperState.PAUSED
        return KeeperSnapshot(
            id=self.agent.id,
            workspace=self.agent.workspace,
            state=state,
            files=s.files,
            chunks=s.chunks,
            last_sync_at=s.last_sync_at,
            last_sync_duration_s=s.last_sync_duration_s,
            error=error,
            progress=s.progress,
            watch_mode=self._watch.mode if self._watch is not None else "off",
            search_mode=s.search_mode,
            syncs=s.syncs,
            server=s.server,
            read_only=s.read_only,
            long_term=s.long_term,
        )
