"""The tray's daemon: one worker per agent, watchers, interval sync, config reload.

Nothing here imports pystray, so the whole daemon runs (and is tested)
without a display; the icon only renders :meth:`TrayDaemon.snapshot`.

Per agent an :class:`AgentWorker` owns the agent's :class:`MemoryIndex`, a
:class:`~tray.watcher.MemoryWatcher` and one thread that runs its syncs, so
there is never more than one sync of an agent in this process; across
processes (a notebook, the CLI) ``MemoryIndex.sync`` takes the engine's
writer lock. Requests that arrive while a sync runs are merged into one
follow-up sync. A failing sync becomes that agent's error state and
touches neither the app nor the other agents.

One scheduler thread does the timed work: interval syncs
(``sync.interval_minutes``), a periodic reconcile scan (watchers miss what
happens while they are down, and can stop silently), keeping the watchers
alive (a dead one is restarted within seconds, one that could not start is
tried again), and noticing edits to ``config.toml`` (agents added, removed
or changed, without a restart).

An agent whose configured embedding provider cannot start (a local model
that crashes natively, an OpenAI key that is missing) still syncs, keyword
only, but shows as an error with the engine's reason: it is not doing what
the config asks for.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from memext.engine import ProviderStatus
from memext.engine.config import AgentConfig, Config, load_config
from memext.engine.errors import LockTimeout, MemextError
from memext.engine.index import MemoryIndex
from memext.engine.paths import AppPaths, app_paths
from memext.engine.sessions import discover_session_files
from memext.engine.sources import MEMORY_DIR, discover_memory_files
from memext.engine.sync import SyncCancelled, SyncProgress, SyncReport

from .watcher import MemoryWatcher, WatchRoots, describe

log = logging.getLogger("memext.tray")

#: How often every agent's files are compared with what was last synced.
DEFAULT_RECONCILE_S = 300.0
#: How often config.toml is checked for edits (one stat).
DEFAULT_CONFIG_POLL_S = 2.0
#: A sync waits for another process's sync in tries this long (so stop is prompt).
LOCK_TRY_S = 1.0
#: Progress updates reach listeners at most this often.
PROGRESS_EVERY_S = 0.5
#: A watcher that could not start is tried again this long after (or at the
#: next reconcile scan, whichever comes first); one that dies again this
#: soon after starting is restarted with polling.
WATCH_RETRY_S = 60.0

IndexFactory = Callable[[AgentConfig], MemoryIndex]
Notifier = Callable[[str, str], None]
Listener = Callable[[], None]


class AgentState(str, enum.Enum):
    IDLE = "idle"
    SYNCING = "syncing"
    ERROR = "error"
    PAUSED = "paused"


@dataclass(frozen=True)
class AgentSnapshot:
    """What the menu shows for one agent."""

    id: str
    workspace: Path
    state: AgentState
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
    #: Syncs this daemon finished for the agent (successful or not).
    syncs: int = 0

    @property
    def memory_folder(self) -> Path:
        """``<workspace>/memory`` when it exists, else the workspace."""
        folder = self.workspace / MEMORY_DIR
        return folder if folder.is_dir() else self.workspace


@dataclass(frozen=True)
class DaemonSnapshot:
    """The whole daemon, for the menu and the icon."""

    agents: tuple[AgentSnapshot, ...]
    paused: bool
    config_file: Path
    config_error: str | None = None

    @property
    def overall(self) -> AgentState:
        """error > syncing > paused > idle."""
        states = {a.state for a in self.agents}
        if self.config_error or AgentState.ERROR in states:
            return AgentState.ERROR
        if AgentState.SYNCING in states:
            return AgentState.SYNCING
        if self.paused:
            return AgentState.PAUSED
        return AgentState.IDLE

    def agent(self, agent_id: str) -> AgentSnapshot:
        for a in self.agents:
            if a.id == agent_id:
                return a
        raise KeyError(agent_id)


# Sync reasons, most important first. "manual" also indexes session
# transcripts below their delta thresholds; the others leave that to the engine.
_PRIORITY = ("manual", "watch", "interval", "startup", "resume", "reconcile")


@dataclass(frozen=True)
class SyncRequest:
    reason: str = "manual"
    force: bool = False
    #: Skip the sync when the files look as they did at the last one.
    if_changed: bool = False

    def merge(self, other: "SyncRequest") -> "SyncRequest":
        reason = min(self.reason, other.reason, key=lambda r: _PRIORITY.index(r) if r in _PRIORITY else len(_PRIORITY))
        return SyncRequest(reason, self.force or other.force, self.if_changed and other.if_changed)


def scan_signature(agent: AgentConfig) -> str:
    """A digest of every memory file's path, mtime and size (no reads)."""
    s = agent.settings
    files, _ = discover_memory_files(agent.workspace, agent.extra_path_list(), s.max_file_bytes)
    if "sessions" in s.sources:
        files += discover_session_files(agent.sessions_path, s.max_file_bytes)[0]
    h = hashlib.sha1()
    for f in files:
        h.update(f"{f.path}\0{f.mtime_ns}\0{f.size}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def default_index_factory(agent: AgentConfig) -> MemoryIndex:
    return MemoryIndex(agent)


def provider_problem(provider: ProviderStatus) -> str | None:
    """Why the configured embedding provider is not in force, or None
    (see :attr:`ProviderStatus.problem`)."""
    return provider.problem


@dataclass
class _AgentStatus:
    state: AgentState = AgentState.IDLE
    files: int = 0
    chunks: int = 0
    last_sync_at: float | None = None
    last_sync_duration_s: float | None = None
    error: str | None = None
    progress: str | None = None
    search_mode: str = ""
    syncs: int = 0
    #: Why the configured embedding provider is not in force (see provider_problem).
    provider_problem: str | None = None
    #: Why the memory files are not being watched (even polling failed).
    watch_error: str | None = None


class AgentWorker:
    """One agent: its index, its watcher and the thread that syncs it."""

    def __init__(
        self,
        agent: AgentConfig,
        *,
        index_factory: IndexFactory = default_index_factory,
        on_update: Callable[["AgentWorker"], None] = lambda w: None,
        notifier: Notifier | None = None,
        paused: bool = False,
        polling: bool = False,
        lock_timeout: float | None = 600,
    ):
        self.agent = agent
        self._index_factory = index_factory
        self._on_update = on_update
        self._notifier = notifier
        self._paused = paused
        self._lock_timeout = lock_timeout
        self._cond = threading.Condition()
        self._pending: SyncRequest | None = None
        self._stopping = False
        self._running_sync = False
        self._index: MemoryIndex | None = None
        self._status = _AgentStatus()
        self._signature: str | None = None
        self._last_sync_end = time.monotonic()
        self._last_progress_emit = 0.0
        #: Serialises starting and stopping the watcher (scheduler, menu, stop).
        self._watch_lock = threading.RLock()
        self._watch_tried_at = 0.0  # the last start attempt
        self._watch_revived_at: float | None = None  # the last restart after a death
        self._thread = threading.Thread(target=self._run, name=f"memext-agent-{agent.id}", daemon=True)
        sync = agent.settings.sync
        self.watcher = MemoryWatcher(
            WatchRoots.for_agent(agent),
            self._on_files_changed,
            debounce_s=sync.watch_debounce_ms / 1000,
            polling=polling,
            poll_interval_s=max(1.0, sync.watch_debounce_ms / 1000),
            name=agent.id,
        )

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Start the sync thread and the watcher, and sync once (watchers
        miss what changed while the app was not running)."""
        self._thread.start()
        if not self._paused:
            self._start_watcher()
        self.request(SyncRequest("startup"))

    def stop(self, timeout: float = 30) -> None:
        """Stop watching, cancel a running sync, close the index."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        with self._watch_lock:
            self.watcher.stop()
        self._close_index()  # cancels a running sync at its next check
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _wants_watcher(self) -> bool:
        s = self.agent.settings
        return s.sync.watch and s.enabled and not self._paused and not self._stopping

    def _start_watcher(self) -> bool:
        """Start watching; False (and the agent shows why) when even polling
        failed: the interval and reconcile syncs go on, and
        :meth:`check_watcher` tries again later."""
        with self._watch_lock:
            if not self._wants_watcher():
                return True
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

    # -- requests -------------------------------------------------------------------

    def request(self, req: SyncRequest) -> None:
        """Queue a sync; merged with one already waiting."""
        if not self.agent.settings.enabled and req.reason != "manual":
            return
        with self._cond:
            if self._stopping:
                return
            self._pending = req if self._pending is None else self._pending.merge(req)
            self._cond.notify_all()

    def _on_files_changed(self, paths: list[str]) -> None:
        if self._paused:
            return
        log.info("%s: changed %s", self.agent.id, describe(paths))
        self.request(SyncRequest("watch"))

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
                self.watcher.stop()
            self._set(watch_error=None)
            return
        self._start_watcher()
        self.request(SyncRequest("resume", if_changed=True))
        self._set()

    def seconds_since_sync(self) -> float:
        return time.monotonic() - self._last_sync_end

    def interval_s(self) -> float | None:
        """Seconds between interval syncs; None when this agent has none
        (no interval, or disabled: its timed syncs would be dropped)."""
        minutes = self.agent.settings.sync.interval_minutes
        return minutes * 60 if minutes > 0 and self.agent.settings.enabled else None

    def check_watcher(self, *, full: bool = False) -> None:
        """Keep the watcher going; the scheduler calls this every few seconds.

        A watcher whose threads died is restarted at once (with polling when
        it dies again within WATCH_RETRY_S of starting); one that could not
        start is tried again WATCH_RETRY_S after the last try, or at the
        next reconcile scan (``full``), which also re-plans the watched
        folders when some appeared or vanished.
        """
        with self._watch_lock:
            if not self._wants_watcher():
                return
            now = time.monotonic()
            if not self.watcher.running:
                if full or now - self._watch_tried_at >= WATCH_RETRY_S:
                    log.info("%s: trying to watch the memory files again", self.agent.id)
                    if self._start_watcher():
                        self.request(SyncRequest("reconcile", if_changed=True))
                return
            if not self.watcher.healthy():
                again = self._watch_revived_at is not None and now - self._watch_revived_at < WATCH_RETRY_S
                self._watch_revived_at = now
                mode = self.watcher.mode
                self.watcher.stop()
                if not again:
                    log.warning("the watcher of %s stopped; restarting it", self.agent.id)
                elif mode == "native":
                    log.warning("the watcher of %s stopped again soon after starting; polling instead", self.agent.id)
                    self.watcher.use_polling("native watching stopped again soon after starting")
                else:  # polling dies too: leave it off for a while
                    log.error("the watcher of %s keeps stopping; trying again later", self.agent.id)
                    self._set(watch_error="the file watcher keeps stopping; changes are picked up by the reconcile scan")
                    return
                if self._start_watcher():
                    self.request(SyncRequest("reconcile"))
                return
            if full:
                try:
                    self.watcher.refresh()
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
                    self._cond.notify_all()
        self._close_index()

    def _ensure_index(self) -> MemoryIndex:
        with self._cond:
            if self._index is not None:
                return self._index
        index = self._index_factory(self.agent)
        with self._cond:
            stopping = self._stopping
            if not stopping:
                self._index = index
        if stopping:  # stop() came while the index was opening
            index.close()
            raise SyncCancelled("stopping")
        self._load_status(index)
        return index

    def _close_index(self) -> None:
        with self._cond:
            index, self._index = self._index, None
        if index is not None:
            index.close()

    def _sync(self, req: SyncRequest) -> None:
        if req.if_changed and self._signature is not None:
            try:
                if scan_signature(self.agent) == self._signature:
                    return
            except OSError as exc:
                log.debug("scan of %s failed: %s", self.agent.id, exc)
        if not self.agent.workspace.is_dir():
            self._finish(None, f"the workspace folder {self.agent.workspace} does not exist (fix it in the config)")
            return
        if req.reason == "manual" and self._status.provider_problem and self._index is not None:
            # "Sync now" tries the configured provider again (a reopened
            # index chooses it afresh).
            log.info("%s: trying the embedding provider again", self.agent.id)
            self._close_index()
        self._set(state=AgentState.SYNCING, progress=None)
        try:
            signature = scan_signature(self.agent)
        except OSError:
            signature = None
        started = time.monotonic()
        try:
            index = self._ensure_index()
            report = self._sync_when_unlocked(index, req)
        except SyncCancelled:
            self._set(state=AgentState.IDLE, progress=None)
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
        self._signature = signature
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
        short tries, so that quitting never waits for the other process."""
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
                with self._cond:
                    self._status.progress = f"waiting {waited:.0f} s for another process's sync of this index"
                self._on_update(self)

    def _finish(self, report: SyncReport | None, error: str | None) -> None:
        index = self._index
        if index is not None:
            try:
                self._load_status(index)
            except Exception as exc:
                error = error or f"cannot read the index status: {exc}"
        # A provider that did not start: synced keyword-only, shown as an
        # error (notified once: the text is the same at every sync).
        error = error or self._status.provider_problem
        before = self._status.error
        with self._cond:
            self._status.syncs += 1
        self._set(state=AgentState.ERROR if error else AgentState.IDLE, error=error, progress=None)
        if error:
            log.error("%s: %s", self.agent.id, error)
            if error != before and self._notifier is not None:
                try:
                    self._notifier(f"memext: {self.agent.id}", error)
                except Exception as exc:
                    log.debug("notification failed: %s", exc)

    def _load_status(self, index: MemoryIndex) -> None:
        st = index.status(check_files=False)  # the sync that just ran scanned them
        last = st.last_sync
        with self._cond:
            s = self._status
            s.files, s.chunks = st.total_files, st.total_chunks
            s.last_sync_at = last.at if last else None
            s.last_sync_duration_s = last.duration_s if last else None
            s.search_mode = st.mode
            s.provider_problem = provider_problem(st.provider)

    def _on_progress(self, p: SyncProgress) -> None:
        if p.phase == "embed":
            text = f"embedding {p.chunks_done}/{p.chunks_total} chunks"
        elif p.phase == "write":
            text = f"indexing {p.files_done}/{p.files_total} files"
        elif p.phase == "scan":
            text = f"scanning {p.files_done}/{p.files_total} files"
        else:
            return
        if p.eta_s and p.eta_s >= 1:
            text += f", about {p.eta_s:.0f} s left"
        with self._cond:
            self._status.progress = ("rebuilding: " if p.rebuild else "") + text
        now = time.monotonic()
        if now - self._last_progress_emit >= PROGRESS_EVERY_S:
            self._last_progress_emit = now
            self._on_update(self)

    def _set(self, **changes) -> None:
        with self._cond:
            for k, v in changes.items():
                setattr(self._status, k, v)
        self._on_update(self)

    # -- reading -------------------------------------------------------------------------

    def snapshot(self) -> AgentSnapshot:
        with self._cond:
            s = replace(self._status)
        state = s.state
        error = s.error or s.watch_error
        if state == AgentState.IDLE and s.watch_error:
            state = AgentState.ERROR
        elif state == AgentState.IDLE and self._paused:
            state = AgentState.PAUSED
        return AgentSnapshot(
            id=self.agent.id,
            workspace=self.agent.workspace,
            state=state,
            files=s.files,
            chunks=s.chunks,
            last_sync_at=s.last_sync_at,
            last_sync_duration_s=s.last_sync_duration_s,
            error=error,
            progress=s.progress,
            watch_mode=self.watcher.mode,
            search_mode=s.search_mode,
            syncs=s.syncs,
        )

    def busy(self) -> bool:
        """A sync is running or waiting."""
        with self._cond:
            return self._running_sync or self._pending is not None


@dataclass
class DaemonOptions:
    """Knobs that are not in config.toml (command-line options, tests)."""

    config_path: Path | None = None
    polling: bool = False
    reconcile_s: float = DEFAULT_RECONCILE_S
    config_poll_s: float = DEFAULT_CONFIG_POLL_S
    lock_timeout: float | None = 600
    paths: AppPaths | None = None


class TrayDaemon:
    """All agents' workers, the scheduler and config reload.

    ``listener()`` callbacks run (on worker threads) after every state
    change; they should only schedule a redraw.
    """

    def __init__(
        self,
        options: DaemonOptions | None = None,
        *,
        index_factory: IndexFactory = default_index_factory,
        notifier: Notifier | None = None,
    ):
        self.options = options or DaemonOptions()
        self._index_factory = index_factory
        #: ``notifier(title, message)`` raises a desktop notification (errors).
        self.notifier = notifier
        self._lock = threading.RLock()
        self._workers: dict[str, AgentWorker] = {}
        self._listeners: list[Listener] = []
        self._paused = False
        self._config_error: str | None = None
        self._config_stamp: tuple | None = None
        self._stop = threading.Event()
        self._scheduler: threading.Thread | None = None
        self._last_reconcile = time.monotonic()

    # -- lifecycle -----------------------------------------------------------------

    @property
    def config_file(self) -> Path:
        return self.options.config_path or (self.options.paths or app_paths()).config_file

    def start(self) -> None:
        self.reload_config()
        self._scheduler = threading.Thread(target=self._schedule_loop, name="memext-scheduler", daemon=True)
        self._scheduler.start()

    def stop(self) -> None:
        """Stop every worker and the scheduler (cancels running syncs)."""
        self._stop.set()
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        threads = [threading.Thread(target=w.stop, daemon=True) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=35)
        if self._scheduler is not None and self._scheduler is not threading.current_thread():
            self._scheduler.join(timeout=5)

    def __enter__(self) -> "TrayDaemon":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- listeners -------------------------------------------------------------------

    def add_listener(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def _changed(self, worker: AgentWorker | None = None) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:
                log.exception("a state listener failed")

    def _notify(self, title: str, message: str) -> None:
        if self.notifier is not None:
            try:
                self.notifier(title, message)
            except Exception as exc:
                log.debug("notification failed: %s", exc)

    # -- actions (menu) ----------------------------------------------------------------

    def sync_now(self, agent_id: str) -> None:
        self._worker(agent_id).request(SyncRequest("manual"))

    def rebuild(self, agent_id: str) -> None:
        self._worker(agent_id).request(SyncRequest("manual", force=True))

    def sync_all(self) -> None:
        for w in self._all_workers():
            w.request(SyncRequest("manual"))

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        self._paused = paused
        log.info("watching %s", "paused" if paused else "resumed")
        for w in self._all_workers():
            w.set_paused(paused)
        self._changed()

    def _worker(self, agent_id: str) -> AgentWorker:
        with self._lock:
            try:
                return self._workers[agent_id]
            except KeyError:
                raise MemextError(f"no agent {agent_id!r} in the tray (known: {', '.join(self._workers) or 'none'})") from None

    def _all_workers(self) -> list[AgentWorker]:
        with self._lock:
            return list(self._workers.values())

    # -- state --------------------------------------------------------------------------

    def snapshot(self) -> DaemonSnapshot:
        return DaemonSnapshot(
            agents=tuple(w.snapshot() for w in self._all_workers()),
            paused=self._paused,
            config_file=self.config_file,
            config_error=self._config_error,
        )

    def wait_idle(self, timeout: float = 30) -> bool:
        """Wait until no agent has a sync running or queued (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(w.busy() for w in self._all_workers()):
                return True
            time.sleep(0.05)
        return False

    # -- config --------------------------------------------------------------------------

    def _stamp(self) -> tuple | None:
        try:
            st = os.stat(self.config_file)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def reload_config(self) -> bool:
        """Load the config and add, remove or restart agents to match.

        A broken config keeps the agents running as they were and shows
        the error; False is returned then.
        """
        self._config_stamp = self._stamp()
        try:
            config = load_config(self.options.config_path)
        except MemextError as exc:
            self._config_error = str(exc)
            log.error("config not reloaded: %s", exc)
            self._notify("memext: config error", str(exc))
            self._changed()
            return False
        self._config_error = None
        self._apply(self._tray_agents(config))
        self._changed()
        return True

    def _tray_agents(self, config: Config) -> Config:
        """The config without the engine's ad-hoc agent.

        With no ``[[agents]]`` (no config file, or the commented template)
        the engine makes an agent of the current folder, which for a tray
        started at login is the home folder. The tray watches only agents
        that are configured, or ``$MEMEXT_WORKSPACE`` when that is set.
        """
        keep = [a for a in config.agents if not a.adhoc or os.environ.get("MEMEXT_WORKSPACE")]
        if len(keep) < len(config.agents):
            where = config.path or self.config_file
            missing = "" if where.exists() else " (no such file yet)"
            log.info("no agents configured: add [[agents]] to %s%s (menu: Open config)", where, missing)
        return replace(config, agents=keep)

    def _apply(self, config: Config) -> None:
        wanted = {a.id: a for a in config.agents}
        with self._lock:
            current = dict(self._workers)
        to_stop = [w for aid, w in current.items() if aid not in wanted or w.agent != wanted[aid]]
        for w in to_stop:
            log.info("agent %s %s", w.agent.id, "changed: restarting it" if w.agent.id in wanted else "removed")
            w.stop()
        stopped = {w.agent.id for w in to_stop}
        fresh: dict[str, AgentWorker] = {}
        for aid, agent in wanted.items():
            if aid in current and aid not in stopped:
                fresh[aid] = current[aid]
                continue
            if aid not in current:
                log.info("agent %s added (%s)", aid, agent.workspace)
            fresh[aid] = AgentWorker(
                agent,
                index_factory=self._index_factory,
                on_update=self._changed,
                notifier=self._notify,
                paused=self._paused,
                polling=self.options.polling,
                lock_timeout=self.options.lock_timeout,
            )
        with self._lock:
            self._workers = fresh
        for aid, w in fresh.items():
            if aid not in current or aid in stopped:
                w.start()

    # -- timed work ------------------------------------------------------------------------

    def _schedule_loop(self) -> None:
        while not self._stop.wait(self._next_wake()):
            try:
                self._tick()
            except Exception:
                log.exception("scheduler tick failed")

    def _next_wake(self) -> float:
        """Seconds until the scheduler has something to do. A busy agent
        is left out: its timer restarts when its sync ends, and the config
        poll wakes the scheduler meanwhile."""
        wake = self.options.config_poll_s
        wake = min(wake, max(0.1, self.options.reconcile_s - (time.monotonic() - self._last_reconcile)))
        if self._paused:
            return wake
        for w in self._all_workers():
            interval = w.interval_s()
            if interval is not None and not w.busy():
                wake = min(wake, max(0.1, interval - w.seconds_since_sync()))
        return wake

    def _tick(self) -> None:
        if self._stamp() != self._config_stamp:
            log.info("config file changed: reloading %s", self.config_file)
            self.reload_config()
        if self._paused:
            return
        reconcile = time.monotonic() - self._last_reconcile >= self.options.reconcile_s
        if reconcile:
            self._last_reconcile = time.monotonic()
        for w in self._all_workers():
            try:
                w.check_watcher(full=reconcile)
            except Exception:  # one agent's watcher must not stop the others' timers
                log.exception("checking the watcher of %s failed", w.agent.id)
            interval = w.interval_s()
            if interval is not None and w.seconds_since_sync() >= interval and not w.busy():
                w.request(SyncRequest("interval"))
            if reconcile:
                w.request(SyncRequest("reconcile", if_changed=True))
