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
upkeep are driven by :class:`~memext.engine.supervisor.Supervisor`'s
scheduler through :meth:`FreshnessKeeper.tick`.

The keeper holds what a status display shows (:class:`KeeperSnapshot`): a
failing sync, a provider that could not start (the agent syncs keyword-only
but is not doing what its config asks) or a watcher that cannot run is the
agent's error state, and touches no other agent.

This file holds the keeper's whole state machine (requests, the sync
thread, watcher upkeep, status): it is a little over 500 lines because
splitting it would spread one lock's invariants across modules.
"""

from __future__ import annotations

import enum
import functools
import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .config import AgentConfig
from .errors import LockTimeout, MemextError
from .index import MemoryIndex
from .progress import describe_progress
from .roots import MEMORY_DIR, MemoryRoots
from .status import IndexStatus
from .sync import SyncCancelled, SyncProgress, SyncReport

if TYPE_CHECKING:
    from .watch import MemoryWatcher

log = logging.getLogger("memext.keeper")

#: A sync waits for another process's sync in tries this long (so stop is prompt).
LOCK_TRY_S = 1.0
#: Progress updates reach listeners at most this often.
PROGRESS_EVERY_S = 0.5
#: A watcher that could not start is tried again this long after (or at the
#: next reconcile scan, whichever comes first); one that dies again this
#: soon after starting is restarted with polling.
WATCH_RETRY_S = 60.0
#: ``before_search`` starts a background sync (if files changed) when the
#: last sync is older than this, so edits made outside memext are picked up
#: without a watcher.
RESYNC_AFTER_S = 30.0
#: How long ``before_search`` waits by default for a sync it must see.
SEARCH_WAIT_S = 600.0
#: What ``pip install`` gives file watching; said once when it is missing.
WATCH_EXTRA_NOTE = "file watching is off (watchdog is not installed): pip install 'memext[watch]'; syncing on a timer instead"

IndexFactory = Callable[[AgentConfig], MemoryIndex]
Notifier = Callable[[str, str], None]


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
    #: "hybrid" or "keyword-only".
    search_mode: str = ""
    #: Syncs this keeper finished (successful or not).
    syncs: int = 0

    @property
    def memory_folder(self) -> Path:
        """``<workspace>/memory`` when it exists, else the workspace."""
        folder = self.workspace / MEMORY_DIR
        return folder if folder.is_dir() else self.workspace


KeeperListener = Callable[[KeeperSnapshot], None]

# Sync reasons, most important first. "manual" also indexes session
# transcripts below their delta thresholds; the others leave that to the engine.
PRIORITY = ("manual", "note", "append", "watch", "search", "interval", "startup", "resume", "reconcile")
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


def provider_problem(provider: Any) -> str | None:
    """Why the configured embedding provider is not in force, or None.

    ``provider`` is ``IndexStatus.provider``: its ``failed`` names a provider
    that was to be used (asked for, or picked by ``auto``) but did not start,
    with no fallback taking over. Keyword-only by choice (``none``, or
    ``auto`` finding nothing) is not a problem, nor is a fallback in force.
    """
    failed = _field(provider, "failed")
    if not failed:
        return None
    return _field(provider, "reason") or f"the {failed} embedding provider is not available; keyword-only search"


@dataclass(frozen=True)
class _StatusFacts:
    files: int
    chunks: int
    last_sync_at: float | None
    last_sync_duration_s: float | None
    search_mode: str
    provider_problem: str | None


def _field(part: Any, name: str) -> Any:
    # ADAPTER (the one place): IndexStatus parts are dataclasses in the typed
    # contract (st.provider.failed) and dicts before it lands (st.provider["failed"]).
    if part is None:
        return None
    return part.get(name) if isinstance(part, dict) else getattr(part, name)


def _facts(st: IndexStatus) -> _StatusFacts:
    return _StatusFacts(
        files=st.total_files,
        chunks=st.total_chunks,
        last_sync_at=_field(st.last_sync, "at"),
        last_sync_duration_s=_field(st.last_sync, "duration_s"),
        search_mode=st.mode,
        provider_problem=provider_problem(st.provider),
    )


@functools.cache
def _say_watching_is_off() -> None:
    # Cached: the note is said once per process, however many keepers start.
    log.warning(WATCH_EXTRA_NOTE)


def watcher_class() -> "type[MemoryWatcher] | None":
    """The file watcher, or None when watchdog (``memext[watch]``) is missing."""
    try:
        from .watch import MemoryWatcher
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "watchdog":
            raise
        _say_watching_is_off()
        return None
    return MemoryWatcher


@dataclass
class _Status:
    state: KeeperState = KeeperState.IDLE
    files: int = 0
    chunks: int = 0
    last_sync_at: float | None = None
    last_sync_duration_s: float | None = None
    error: str | None = None
    progress: str | None = None
    search_mode: str = ""
    syncs: int = 0
    provider_problem: str | None = None
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
        self._closed = False
        self._running_sync = False
        # Request counters: wait_fresh waits until the syncs finished cover
        # every request made before it was called.
        self._requested = 0
        self._taken = 0
        self._covered = 0
        self._last_waited = 0
        self._synced_ok = False
        self._status = _Status()
        self._last_sync_end = time.monotonic()
        self._last_progress_emit = 0.0
        #: Serialises starting and stopping the watcher (scheduler, menu, stop).
        self._watch_lock = threading.RLock()
        self._watch_tried_at = 0.0
        self._watch_revived_at: float | None = None
        self._thread = threading.Thread(target=self._run, name=f"memext-keeper-{self.agent.id}", daemon=True)
        sync = self.agent.settings.sync
        self.watcher: MemoryWatcher | None = None
        if watch and sync.watch and self.agent.settings.enabled:
            cls = watcher_class()
            if cls is not None:
                self.watcher = cls(
                    MemoryRoots.for_agent(self.agent),
                    self._on_files_changed,
                    debounce_s=sync.watch_debounce_ms / 1000,
                    polling=polling,
                    poll_interval_s=max(1.0, sync.watch_debounce_ms / 1000),
                    name=self.agent.id,
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
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        with self._watch_lock:
            if self.watcher is not None:
                self.watcher.stop()
        self._close_index(final=True)  # cancels a running sync at its next check
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def __enter__(self) -> "FreshnessKeeper":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def index(self) -> MemoryIndex:
        """The agent's index (opened on first use; raises MemextError when
        it cannot be opened, or after :meth:`stop`)."""
        with self._open_lock:
            if self._closed:
                raise MemextError(f"the index of agent {self.agent.id!r} is closed")
            opened = self._index is None
            if opened:
                assert self._factory is not None  # only a keeper made from an AgentConfig drops its index
                self._index = self._factory(self.agent)
            index = self._index
        if opened:
            try:
                self._load_status(index)
            except Exception as exc:  # shown at the next sync; opening worked
                log.debug("%s: cannot read the index status: %s", self.agent.id, exc)
        return index

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
            with self._watch_lock:
                if self.watcher is not None:
                    self.watcher.stop()
            self._set(watch_error=None)
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

    def _wants_watcher(self) -> bool:
        return self.watcher is not None and not self._paused and not self._stopping

    def _start_watcher(self) -> bool:
        """Start watching; False (and the agent shows why) when even polling
        failed: the timed syncs go on, and :meth:`check_watcher` tries again."""
        with self._watch_lock:
            if not self._wants_watcher():
                return True
            assert self.watcher is not None
            self._watch_tried_at = time.monotonic()
            try:
                self.watcher.start()
            except Exception as exc:
                log.error("cannot watch the memory of %s: %s", self.agent.id, exc)
                self._set(watch_error=f"cannot watch the memory files: {exc}")
                return False
        with self._cond:
            had_error = self._status.watch_error is not None
        if had_error:
            log.info("%s: watching the memory files again (%s)", self.agent.id, self.watcher.mode)
            self._set(watch_error=None)
        return True

    def check_watcher(self, *, full: bool = False) -> None:
        """Keep the watcher going (a scheduler calls this every few seconds).

        A watcher whose threads died is restarted at once (with polling when
        it dies again within WATCH_RETRY_S of starting); one that could not
        start is tried again WATCH_RETRY_S after the last try, or at the
        next reconcile scan (``full``), which also re-plans the watched
        folders when some appeared or vanished.
        """
        with self._watch_lock:
            if not self._wants_watcher():
                return
            watcher = self.watcher
            assert watcher is not None
            now = time.monotonic()
            if not watcher.running:
                if full or now - self._watch_tried_at >= WATCH_RETRY_S:
                    log.info("%s: trying to watch the memory files again", self.agent.id)
                    if self._start_watcher():
                        self.request("reconcile", if_changed=True)
                return
            if not watcher.healthy():
                again = self._watch_revived_at is not None and now - self._watch_revived_at < WATCH_RETRY_S
                self._watch_revived_at = now
                mode = watcher.mode
                watcher.stop()
                if not again:
                    log.warning("the watcher of %s stopped; restarting it", self.agent.id)
                elif mode == "native":
                    log.warning("the watcher of %s stopped again soon after starting; polling instead", self.agent.id)
                    watcher.use_polling("native watching stopped again soon after starting")
                else:  # polling dies too: leave it off for a while
                    log.error("the watcher of %s keeps stopping; trying again later", self.agent.id)
                    self._set(watch_error="the file watcher keeps stopping; changes are picked up by the reconcile scan")
                    return
                if self._start_watcher():
                    self.request("reconcile")
                return
            if full:
                try:
                    watcher.refresh()
                except Exception as exc:  # the restart failed: the watcher is off, tried again later
                    log.error("re-planning the watches of %s failed: %s", self.agent.id, exc)
                    self._set(watch_error=f"cannot watch the memory files: {exc}")

    # -- the sync thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    break
                req, self._pending = self._pending, None
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
        if req.if_changed and not req.force and self._unchanged():
            return
        if not self.agent.workspace.is_dir():
            self._finish(None, f"the workspace folder {self.agent.workspace} does not exist (fix it in the config)")
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
            report = self._sync_when_unlocked(index, req)
        except SyncCancelled:
            self._set(state=KeeperState.IDLE, progress=None)
            return
        except Exception as exc:
            if self._stopping:
                return
            if not isinstance(exc, MemextError):
                log.exception("sync of %s crashed", self.agent.id)
            self._finish(None, str(exc) or type(exc).__name__)
            return
        if self._stopping:
            return
        self._synced_ok = True
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

    def _sync_when_unlocked(self, index: MemoryIndex, req: SyncRequest) -> SyncReport:
        """``index.sync``, waiting for another process's sync of the agent in
        short tries, so that stopping never waits for the other process."""
        waited = 0.0
        while True:
            try:
                return index.sync(force=req.force, reason=req.reason, progress=self._on_progress, lock_timeout=LOCK_TRY_S)
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
        facts = _facts(index.status(check_files=False))  # a sync scans the files itself
        with self._cond:
            s = self._status
            s.files, s.chunks = facts.files, facts.chunks
            s.last_sync_at, s.last_sync_duration_s = facts.last_sync_at, facts.last_sync_duration_s
            s.search_mode = facts.search_mode
            s.provider_problem = facts.provider_problem

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
            watch_mode=self.watcher.mode if self.watcher is not None else "off",
            search_mode=s.search_mode,
            syncs=s.syncs,
        )
