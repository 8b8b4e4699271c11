"""Watching one agent's memory files with watchdog, debounced.

watchdog is an optional dependency (``pip install 'memext[watch]'``): the
keeper imports this module through :func:`memext.engine.freshness.keeper.watcher_class`,
which falls back to interval and reconcile syncs when it is missing.

What is watched (DESIGN.md §1) comes from :meth:`MemoryRoots.schedules`: the
workspace itself without recursion (for ``MEMORY.md``/``memory.md`` and for
a ``memory/`` folder that appears later), ``memory/`` and folders in
``extra_paths`` recursively, the folders holding single-file
``extra_paths``, and the sessions folder when the agent indexes
transcripts. Events for hidden, temporary and non-``.md`` files are
dropped before they reach the debouncer (:meth:`MemoryRoots.is_relevant`),
and so are the open/close-no-write events a sync's own reads cause.

An editor's atomic save (write a temp file, rename it over the target)
arrives as a move whose ``dest_path`` is the memory file: moves are judged
by both ends. When the native observer cannot start (inotify instance or
watch limits: ``EMFILE``/``ENOSPC``) the watcher falls back to polling.
Neither follows folder symlinks (inotify's recursive watch skips them; the
polling snapshot uses ``lstat``), so symlink loops cannot trap a watcher.
Reaching the watch limit later, in a new subfolder, does not stop watchdog
7's observer: it skips that folder's watch silently (the supervisor's reconcile
scan still syncs what changes there). A start that fails even with polling
leaves nothing running, so the supervisor's scheduler can simply try again.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from pathlib import Path
from typing import Callable, Iterable

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserverVFS
from watchdog.utils.event_debouncer import EventDebouncer

from ..memory.roots import MemoryRoots

log = logging.getLogger("memext.watch")

#: Only these event kinds can change what is indexed; reads made by a sync
#: (open / close-without-write) must never trigger another sync.
WATCHED_EVENTS = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
)
#: Errors that mean "the OS will not give us more native watches".
LIMIT_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.ENOMEM}

ObserverFactory = Callable[[], BaseObserver]


def event_paths(event: FileSystemEvent) -> list[str]:
    paths = [os.fsdecode(event.src_path)]
    dest = getattr(event, "dest_path", "")
    if dest:
        paths.append(os.fsdecode(dest))
    return paths


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: "MemoryWatcher"):
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        # An exception here would kill the observer thread silently.
        try:
            self._watcher.on_event(event)
        except Exception:
            log.exception("watcher event handling failed")


class MemoryWatcher:
    """Calls ``on_change(paths)`` once per burst of relevant changes.

    Changes are batched by watchdog's :class:`EventDebouncer`: the callback
    runs once no event has come for ``debounce_s`` (and at the latest
    ``debounce_s`` after the first event of a burst, so a file written
    continuously is still picked up). ``on_seen()`` is called at once for
    every relevant event.
    """

    def __init__(
        self,
        roots: MemoryRoots,
        on_change: Callable[[list[str]], None],
        *,
        debounce_s: float = 1.5,
        polling: bool = False,
        poll_interval_s: float = 2.0,
        observer_factory: ObserverFactory | None = None,
        name: str = "",
        on_seen: Callable[[], None] | None = None,
    ):
        self.roots = roots
        self._on_change = on_change
        #: Told of every relevant event as it arrives, before the debounce
        #: (the keeper's freshness record, DESIGN.md §13).
        self._on_seen = on_seen
        self._debounce_s = debounce_s
        self._force_polling = polling
        self._poll_interval_s = poll_interval_s
        self._observer_factory = observer_factory or Observer
        self._name = name
        self._lock = threading.RLock()
        self._observer: BaseObserver | None = None
        self._debouncer: EventDebouncer | None = None
        self._scheduled: list[tuple[Path, bool]] = []
        self.mode = "off"  # "native", "polling" or "off"
        #: Why the watcher is polling instead of using native events.
        self.fallback_reason: str | None = None

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> None:
        """Start watching (native events, else polling)."""
        with self._lock:
            if self._observer is not None:
                return
            self._debouncer = EventDebouncer(self._debounce_s, self._flush)
            self._debouncer.name = f"memext-debounce-{self._name}"
            self._debouncer.daemon = True
            self._debouncer.start()
            try:
                self._start_observers()
            except BaseException:
                # Even polling failed: leave nothing running, so that a
                # later start() begins afresh.
                debouncer, self._debouncer = self._debouncer, None
                debouncer.stop()
                raise

    def _start_observers(self) -> None:
        with self._lock:
            schedules = self.roots.schedules()
            if not self._force_polling:
                try:
                    self._observer = self._start_observer(self._observer_factory, schedules)
                    self.mode = "native"
                    self.fallback_reason = None
                except OSError as exc:
                    if exc.errno not in LIMIT_ERRNOS:
                        log.warning("native file watching failed for %s (%s); polling instead", self._name, exc)
                    else:
                        log.warning(
                            "the OS limit on file watches is reached for %s (%s); polling every %g s instead. "
                            "Raise fs.inotify.max_user_instances / max_user_watches to use native events.",
                            self._name,
                            exc,
                            self._poll_interval_s,
                        )
                    self.fallback_reason = str(exc)
            if self._observer is None:
                self._observer = self._start_observer(self._polling_observer, schedules)
                self.mode = "polling"
            self._scheduled = schedules

    def _polling_observer(self) -> BaseObserver:
        return PollingObserver(timeout=self._poll_interval_s)

    def _start_observer(self, factory: ObserverFactory, schedules: list[tuple[Path, bool]]) -> BaseObserver:
        observer = factory()
        observer.name = f"memext-watch-{self._name}"
        observer.daemon = True
        handler = _Handler(self)
        try:
            for folder, recursive in schedules:
                observer.schedule(handler, str(folder), recursive=recursive, event_filter=list(WATCHED_EVENTS))
            observer.start()
        except BaseException:
            _stop_quietly(observer)
            raise
        return observer

    def stop(self) -> None:
        """Stop watching (idempotent). Pending debounced events are dropped."""
        with self._lock:
            observer, self._observer = self._observer, None
            debouncer, self._debouncer = self._debouncer, None
            self.mode = "off"
        if observer is not None:
            _stop_quietly(observer)
        if debouncer is not None:
            debouncer.events_callback = lambda events: None
            debouncer.stop()
            if debouncer is not threading.current_thread():
                debouncer.join(timeout=5)

    def restart(self) -> None:
        if self._on_seen is not None:  # changes made while it restarts go unseen
            self._on_seen()
        self.stop()
        self.start()

    def use_polling(self, reason: str) -> None:
        """Poll from the next start on (native watching proved unreliable)."""
        with self._lock:
            self._force_polling = True
            self.fallback_reason = reason

    @property
    def running(self) -> bool:
        return self._observer is not None

    def healthy(self) -> bool:
        """False when a started watcher's threads have died (watchers can
        stop silently: a crashed emitter, an unmounted folder)."""
        with self._lock:
            obs, deb = self._observer, self._debouncer
            if obs is None:
                return True
            if not (obs.is_alive() and deb is not None and deb.is_alive()):
                return False
            return all(e.is_alive() for e in obs.emitters)

    def refresh(self) -> bool:
        """Re-plan the watches when folders appeared or vanished; True if changed."""
        with self._lock:
            if self._observer is None or self.roots.schedules() == self._scheduled:
                return False
        log.info("memory folders of %s changed: re-planning watches", self._name)
        self.restart()
        return True

    # -- events -------------------------------------------------------------------

    def on_event(self, event: FileSystemEvent) -> None:
        """Take one watchdog event (the observer's handler forwards them here)."""
        if not isinstance(event, WATCHED_EVENTS):
            return
        if any(self.roots.is_relevant(p, event.is_directory) for p in event_paths(event)):
            if self._on_seen is not None:
                self._on_seen()
            deb = self._debouncer
            if deb is not None:
                deb.handle_event(event)

    def _flush(self, events: list[FileSystemEvent]) -> None:
        paths = sorted({p for e in events for p in event_paths(e) if self.roots.is_relevant(p, e.is_directory)})
        log.info("%s: changed %s", self._name, describe(paths))
        try:
            self._on_change(paths)
        except Exception:
            log.exception("handling changes of %s failed", self._name)
        if any(e.is_directory for e in events):
            # A memory folder may have appeared (or gone): watch it. Off
            # this thread, as a restart stops the debouncer running us.
            threading.Thread(target=self._refresh_quietly, name=f"memext-rewatch-{self._name}", daemon=True).start()

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except Exception as exc:  # the watcher is off now; the supervisor's scheduler starts it again
            log.error("re-planning the watches of %s failed: %s", self._name, exc)


class PollingObserver(PollingObserverVFS):
    """watchdog's polling observer on ``lstat``: with its default ``stat`` the
    snapshot walks into every folder symlink, and two loops in one folder
    (``x -> .``, ``y -> .``) make it list 2^40 paths. Discovery does not
    follow such links either (engine/memory/discovery.py)."""

    def __init__(self, *, timeout: float = 1.0):
        super().__init__(os.lstat, os.scandir, polling_interval=timeout)


def _stop_quietly(observer: BaseObserver) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception as exc:  # stopping must never take the app down
        log.debug("stopping an observer failed: %s", exc)


def describe(paths: Iterable[str], limit: int = 3) -> str:
    """A short list of changed files for logs."""
    names = [Path(p).name for p in paths]
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")
