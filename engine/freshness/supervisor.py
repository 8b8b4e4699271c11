"""``Supervisor``: freshness keepers for the agents of a config, kept in step
with the config file, and the one scheduler thread that drives their timers.

    with Supervisor() as sup:                 # every configured agent
        keeper = sup.keeper("work")
        keeper.before_search()
        hits = keeper.index.search("deploy checklist")

The scheduler does the timed work of every keeper: interval syncs
(``sync.interval_minutes``), a periodic reconcile scan (watchers miss what
happens while they are down, and can stop silently), keeping the watchers
alive, and noticing edits to ``config.toml`` through :class:`ConfigReloader`
(agents added, removed or changed, without a restart). A broken config
keeps the agents running as they were and shows the error.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

from ..config import Config, load_config
from ..errors import MemextError
from ..paths import AppPaths, app_paths
from ..store.drivers import driver_of, store_location
from .keeper import RESYNC_AFTER_S, FreshnessKeeper, IndexFactory, KeeperSnapshot, Notifier

log = logging.getLogger("memext.supervisor")

#: How often every agent's files are compared with what was last synced.
DEFAULT_RECONCILE_S = 300.0
#: How often config.toml is checked for edits (one stat).
DEFAULT_CONFIG_POLL_S = 2.0

Listener = Callable[[], None]
AgentFilter = Callable[[Config], Config]


class ConfigReloader:
    """The config, loaded again when its file changed (one stat per check).

    A file that fails to load is not tried again until it changes; the
    error is raised by :meth:`load`/:meth:`current` and kept in ``error``.
    """

    def __init__(self, config_path: str | Path | None = None, *, paths: AppPaths | None = None):
        self._config_path = Path(config_path).expanduser() if config_path else None
        self._paths = paths
        self._config: Config | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._loaded = False
        self.error: str | None = None

    @property
    def config_file(self) -> Path:
        """The config file in use (it may not exist: then the agent is ad hoc)."""
        return self._config_path or (self._paths or app_paths()).config_file

    @property
    def loaded_stamp(self) -> tuple[int, int, int] | None:
        """(mtime_ns, size, inode) of the file at the last load; None when it
        did not exist then (or nothing was loaded yet)."""
        return self._stamp

    def _read_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.config_file)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def changed(self) -> bool:
        """True when the file differs from the last load (or none was made)."""
        return not self._loaded or self._read_stamp() != self._stamp

    def load(self) -> Config:
        """Load the config now (raises ConfigError, also kept in ``error``)."""
        self._stamp = self._read_stamp()
        self._loaded = True
        try:
            self._config = load_config(self._config_path)
        except MemextError as exc:
            self.error = str(exc)
            raise
        self.error = None
        return self._config

    def current(self) -> Config:
        """The config, reloaded when the file changed; a config that failed to
        load raises again until it is fixed."""
        if self._config is None or self.error is not None or self.changed():
            return self.load()
        return self._config


class Supervisor:
    """Keepers for every agent of a config (or those in ``agent_ids``).

    ``agent_filter(config)`` may narrow the agents further (the tray drops
    the engine's ad-hoc agent). ``startup_sync``: each keeper syncs once as
    it starts (watchers miss what changed while nothing watched).
    ``schedule=False`` runs no scheduler thread: no interval or reconcile
    syncs, and the config is reloaded only by :meth:`reload_if_changed`
    (a notebook session, which calls it on every use and syncs an index
    only when it is searched, noted or warmed up). The other arguments are
    passed to each :class:`FreshnessKeeper`. ``add_listener(fn)``: ``fn()``
    runs (on worker threads) after every state change; it should only
    schedule a redraw.
    """

    def __init__(
        self,
        config_path: str | Path | None = None,
        *,
        agent_ids: Sequence[str] | None = None,
        agent_filter: AgentFilter | None = None,
        index_factory: IndexFactory | None = None,
        notifier: Notifier | None = None,
        watch: bool = True,
        polling: bool = False,
        reconcile_s: float = DEFAULT_RECONCILE_S,
        config_poll_s: float = DEFAULT_CONFIG_POLL_S,
        lock_timeout: float | None = 600,
        paths: AppPaths | None = None,
        startup_sync: bool = True,
        schedule: bool = True,
        resync_after_s: float | None = None,
    ):
        self.reloader = ConfigReloader(config_path, paths=paths)
        self._agent_ids = tuple(agent_ids) if agent_ids is not None else None
        self._agent_filter = agent_filter
        self._index_factory = index_factory
        self._notifier = notifier
        self._watch = watch
        self._polling = polling
        self.reconcile_s = reconcile_s
        self.config_poll_s = config_poll_s
        self._lock_timeout = lock_timeout
        self._startup_sync = startup_sync
        self._schedule = schedule
        #: How old a keeper's last sync may be before a search resyncs it (None: the keeper's default).
        self._resync_after_s = RESYNC_AFTER_S if resync_after_s is None else resync_after_s
        self._started = False
        self._lock = threading.RLock()
        # One reload at a time: the scheduler's poll and a caller's
        # reload_if_changed() must not both start keepers for a new agent.
        self._reload_lock = threading.Lock()
        self._keepers: dict[str, FreshnessKeeper] = {}
        self._listeners: list[Listener] = []
        self._paused = False
        self._stop = threading.Event()
        self._scheduler: threading.Thread | None = None
        self._last_reconcile = time.monotonic()
        #: Scheduler wake-ups so far (diagnostics: an idle scheduler sleeps).
        self.ticks = 0

    # -- lifecycle -----------------------------------------------------------------

    @property
    def config_file(self) -> Path:
        return self.reloader.config_file

    @property
    def config_error(self) -> str | None:
        """Why the config file could not be loaded (the agents run as before)."""
        return self.reloader.error

    def start(self) -> None:
        """Load the config, start a keeper per agent and the scheduler."""
        self._started = True
        self.reload_config()
        if self._schedule:
            self._scheduler = threading.Thread(target=self._schedule_loop, name="memext-scheduler", daemon=True)
            self._scheduler.start()

    def stop(self) -> None:
        """Stop every keeper (in parallel: each may be finishing a sync) and the scheduler."""
        self._stop.set()
        with self._lock:
            keepers = list(self._keepers.values())
            self._keepers.clear()
        threads = [threading.Thread(target=k.stop, daemon=True) for k in keepers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=35)
        if self._scheduler is not None and self._scheduler is not threading.current_thread():
            self._scheduler.join(timeout=5)

    @property
    def running(self) -> bool:
        """Started and not stopped (with ``schedule``: the scheduler is alive)."""
        if self._schedule:
            return self._scheduler is not None and self._scheduler.is_alive()
        return self._started and not self._stop.is_set()

    def __enter__(self) -> "Supervisor":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- keepers ----------------------------------------------------------------------

    def keeper(self, agent_id: str) -> FreshnessKeeper:
        """The keeper of an agent (raises MemextError for an unknown one)."""
        with self._lock:
            try:
                return self._keepers[agent_id]
            except KeyError:
                known = ", ".join(self._keepers) or "none"
                raise MemextError(f"no agent {agent_id!r} is kept fresh here (known: {known})") from None

    def keepers(self) -> list[FreshnessKeeper]:
        """Every keeper, in config order."""
        with self._lock:
            return list(self._keepers.values())

    def snapshots(self) -> tuple[KeeperSnapshot, ...]:
        return tuple(k.snapshot() for k in self.keepers())

    def wait_idle(self, timeout: float = 30) -> bool:
        """Wait until no agent has a sync running or queued."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(k.busy() for k in self.keepers()):
                return True
            time.sleep(0.05)
        return False

    # -- listeners and pause ------------------------------------------------------------

    def add_listener(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def _changed(self, _snapshot: KeeperSnapshot | None = None) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:
                log.exception("a state listener failed")

    def _notify(self, title: str, message: str) -> None:
        if self._notifier is not None:
            try:
                self._notifier(title, message)
            except Exception as exc:
                log.debug("notification failed: %s", exc)

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume watching and timed syncs of every agent."""
        log.info("watching %s", "paused" if paused else "resumed")
        for k in self.keepers():
            k.set_paused(paused)
        # After the keepers: whoever sees the supervisor paused sees them paused.
        self._paused = paused
        self._changed()

    # -- config --------------------------------------------------------------------------

    def agent_ids(self) -> list[str]:
        """The ids of the agents kept fresh now, in config order."""
        return [k.agent.id for k in self.keepers()]

    def reload_if_changed(self) -> bool:
        """Reload the config now if its file changed since the last load,
        rather than at the scheduler's next poll (a server about to answer a
        call for an agent just added). True when it was reloaded."""
        if not self.reloader.changed():
            return False
        log.info("config file changed: reloading %s", self.config_file)
        return self.reload_config()

    def reload_config(self) -> bool:
        """Load the config and add, remove or restart keepers to match.

        A broken config keeps the keepers running as they were and shows
        the error (``config_error``); False is returned then.
        """
        with self._reload_lock:
            return self._reload_config()

    def _reload_config(self) -> bool:
        try:
            config = self.reloader.load()
        except MemextError as exc:
            # Unscheduled, the caller reloads the config itself and gets the
            # error raised (a notebook shows it): logged, it would be said twice.
            log.log(logging.ERROR if self._schedule else logging.DEBUG, "config not reloaded: %s", exc)
            self._notify("memext: config error", str(exc))
            self._changed()
            return False
        if self._agent_ids is not None:
            config = config._replace(agents=[a for a in config.agents if a.id in self._agent_ids])
        if self._agent_filter is not None:
            config = self._agent_filter(config)
        self._apply(config)
        self._changed()
        return True

    def _apply(self, config: Config) -> None:
        wanted = {a.id: a for a in config.agents}
        with self._lock:
            current = dict(self._keepers)
        to_stop = [k for aid, k in current.items() if aid not in wanted or k.agent != wanted[aid]]
        for k in to_stop:
            log.info("agent %s %s", k.agent.id, "changed: restarting it" if k.agent.id in wanted else "removed")
            k.stop()
        stopped = {k.agent.id for k in to_stop}
        fresh: dict[str, FreshnessKeeper] = {}
        for aid, agent in wanted.items():
            if aid in current and aid not in stopped:
                fresh[aid] = current[aid]
                continue
            if aid not in current:
                # A shared index says where it is (the server, never its password).
                on_server = not driver_of(agent).local
                log.info("agent %s added (%s%s)", aid, agent.workspace, f"; index {store_location(agent)}" if on_server else "")
            keeper = FreshnessKeeper(
                agent,
                index_factory=self._index_factory,
                watch=self._watch,
                polling=self._polling,
                paused=self._paused,
                lock_timeout=self._lock_timeout,
                notifier=self._notify,
                resync_after_s=self._resync_after_s,
            )
            keeper.add_listener(self._changed)
            fresh[aid] = keeper
        with self._lock:
            self._keepers = fresh
        for aid, k in fresh.items():
            if aid not in current or aid in stopped:
                k.start(sync=self._startup_sync)

    # -- timed work ------------------------------------------------------------------------

    def _schedule_loop(self) -> None:
        while not self._stop.wait(self._next_wake()):
            self.ticks += 1
            try:
                self._tick()
            except Exception:
                log.exception("scheduler tick failed")

    def _next_wake(self) -> float:
        """Seconds until the scheduler has something to do. A busy agent
        is left out: its timer restarts when its sync ends, and the config
        poll wakes the scheduler meanwhile."""
        wake = self.config_poll_s
        wake = min(wake, max(0.1, self.reconcile_s - (time.monotonic() - self._last_reconcile)))
        if self._paused:
            return wake
        for k in self.keepers():
            due = k.due_in_s()
            if due is not None:
                wake = min(wake, max(0.1, due))
        return wake

    def _tick(self) -> None:
        self.reload_if_changed()
        if self._paused:
            return
        reconcile = time.monotonic() - self._last_reconcile >= self.reconcile_s
        if reconcile:
            self._last_reconcile = time.monotonic()
        for k in self.keepers():
            try:
                k.tick(reconcile=reconcile)
            except Exception:  # one agent must not stop the others' timers
                log.exception("the timed work of %s failed", k.agent.id)
