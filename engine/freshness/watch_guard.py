"""Keeping one agent's file watcher running, for its freshness keeper.

Watchers can fail to start (inotify limits, even polling out of file
descriptors) and can stop silently (a crashed emitter, an unmounted
folder). :class:`WatchGuard` starts the agent's :class:`~.watch.MemoryWatcher`
(when watchdog is installed: else it says once how to get it, and the keeper
syncs on a timer only), restarts a dead one (with polling when it dies again
soon after starting), tries one that could not start again later, and
re-plans the watches when memory folders appeared or vanished. It reports
its trouble through ``on_error`` and asks for a sync through ``on_resync``
after a gap in watching.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import TYPE_CHECKING, Callable

from ..memory.roots import MemoryRoots
from ..settings import AgentConfig

if TYPE_CHECKING:
    from .watch import MemoryWatcher

log = logging.getLogger("memext.keeper")

#: A watcher that could not start is tried again this long after (or at the
#: next reconcile scan, whichever comes first); one that dies again this
#: soon after starting is restarted with polling.
WATCH_RETRY_S = 60.0
#: What ``pip install`` gives file watching; said once when it is missing.
WATCH_EXTRA_NOTE = "file watching is off (watchdog is not installed): pip install 'memext[watch]'; syncing on a timer instead"


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


class WatchGuard:
    """Starts, checks and restarts one agent's watcher.

    ``on_change(paths)`` gets each debounced burst of changes;
    ``on_error(text or None)`` is told when watching fails or works again;
    ``on_resync(if_changed)`` asks for a sync after a gap in watching.
    """

    def __init__(
        self,
        agent: AgentConfig,
        on_change: Callable[[list[str]], None],
        *,
        polling: bool,
        on_error: Callable[[str | None], None],
        on_resync: Callable[[bool], None],
        on_seen: Callable[[], None] | None = None,
    ):
        self.agent = agent
        self._on_error = on_error
        self._on_resync = on_resync
        self._on_seen = on_seen or (lambda: None)
        #: Bumped whenever watching starts or stops: a gap in which changes
        #: went unseen (the keeper's freshness record, DESIGN.md §13).
        self.starts = 0
        #: Serialises starting and stopping the watcher (scheduler, menu, stop).
        self._lock = threading.RLock()
        self._tried_at = 0.0  # the last start attempt
        self._revived_at: float | None = None  # the last restart after a death
        self.error: str | None = None
        self.watcher: MemoryWatcher | None = None
        cls = watcher_class()
        if cls is not None:
            debounce_s = agent.settings.sync.watch_debounce_ms / 1000
            self.watcher = cls(
                MemoryRoots.for_agent(agent),
                on_change,
                debounce_s=debounce_s,
                polling=polling,
                poll_interval_s=max(1.0, debounce_s),
                name=agent.id,
                on_seen=self._on_seen,
            )

    @property
    def mode(self) -> str:
        """ "native", "polling" or "off"."""
        return self.watcher.mode if self.watcher is not None else "off"

    def watching_natively(self) -> bool:
        """Native events arrive and the watcher's threads are alive: every
        change is seen as it happens (polling sees it seconds later)."""
        with self._lock:
            w = self.watcher
            return w is not None and w.running and w.mode == "native" and w.healthy()

    def _gap(self) -> None:
        self.starts += 1
        self._on_seen()

    def _report(self, error: str | None) -> None:
        if error != self.error:
            self.error = error
            self._on_error(error)

    def start(self) -> bool:
        """Start watching; False (and ``on_error`` says why) when even
        polling failed: :meth:`check` tries again later."""
        with self._lock:
            if self.watcher is None:
                return True
            self._tried_at = time.monotonic()
            self._gap()
            try:
                self.watcher.start()
            except Exception as exc:
                log.error("cannot watch the memory of %s: %s", self.agent.id, exc)
                self._report(f"cannot watch the memory files: {exc}")
                return False
            if self.error is not None:
                log.info("%s: watching the memory files again (%s)", self.agent.id, self.watcher.mode)
                self._report(None)
            return True

    def stop(self) -> None:
        """Stop watching (pause, stop); a paused watcher has no error."""
        with self._lock:
            self._gap()
            if self.watcher is not None:
                self.watcher.stop()
            self._report(None)

    def check(self, *, full: bool = False) -> None:
        """Keep the watcher going (a scheduler calls this every few seconds).

        A watcher whose threads died is restarted at once (with polling when
        it dies again within WATCH_RETRY_S of starting); one that could not
        start is tried again WATCH_RETRY_S after the last try, or at the
        next reconcile scan (``full``), which also re-plans the watched
        folders when some appeared or vanished.
        """
        with self._lock:
            watcher = self.watcher
            if watcher is None:
                return
            now = time.monotonic()
            if not watcher.running:
                if full or now - self._tried_at >= WATCH_RETRY_S:
                    log.info("%s: trying to watch the memory files again", self.agent.id)
                    if self.start():
                        self._on_resync(True)
                return
            if not watcher.healthy():
                self._gap()
                again = self._revived_at is not None and now - self._revived_at < WATCH_RETRY_S
                self._revived_at = now
                mode = watcher.mode
                watcher.stop()
                if not again:
                    log.warning("the watcher of %s stopped; restarting it", self.agent.id)
                elif mode == "native":
                    log.warning("the watcher of %s stopped again soon after starting; polling instead", self.agent.id)
                    watcher.use_polling("native watching stopped again soon after starting")
                else:  # polling dies too: leave it off for a while
                    log.error("the watcher of %s keeps stopping; trying again later", self.agent.id)
                    self._report("the file watcher keeps stopping; changes are picked up by the reconcile scan")
                    return
                if self.start():
                    self._on_resync(False)
                return
            if full:
                try:
                    watcher.refresh()
                except Exception as exc:  # the restart failed: the watcher is off, tried again later
                    log.error("re-planning the watches of %s failed: %s", self.agent.id, exc)
                    self._report(f"cannot watch the memory files: {exc}")
