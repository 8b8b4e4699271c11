"""The indexes one IPython session keeps open, one per agent.

Magics and widgets share a :class:`Session`: it loads the config (again when
the file changes), opens each agent's :class:`engine.MemoryIndex` once, runs
the warm-up sync in the background, and closes everything on unload. It
holds no search logic; the engine does all of that.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from memext.engine import Config, MemextError, MemoryIndex, load_config
from memext.engine.config import AgentConfig
from memext.engine.paths import app_paths
from memext.engine.sync import SyncCancelled

log = logging.getLogger("memext")

#: Builds the index of an agent; tests pass one with a test provider.
IndexFactory = Callable[[AgentConfig], MemoryIndex]


def _config_stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class Session:
    """Config and open indexes for one shell (or one widget)."""

    def __init__(self, config_path: str | Path | None = None, index_factory: IndexFactory | None = None):
        self._config_path = Path(config_path).expanduser() if config_path else None
        self._factory: IndexFactory = index_factory or (lambda agent: MemoryIndex(agent))
        self._config: Config | None = None
        self._stamp: tuple[int, int] | None = None
        self._indexes: dict[str, MemoryIndex] = {}
        self._agents: dict[str, AgentConfig] = {}
        self._warmups: dict[str, threading.Thread] = {}
        self._note_syncs: dict[str, list[threading.Thread]] = {}
        self._lock = threading.RLock()
        self._closed = False

    @property
    def config_file(self) -> Path:
        """The config file in use (it may not exist: then the agent is ad hoc)."""
        return self._config_path or app_paths().config_file

    def config(self) -> Config:
        """The config, reloaded when its file changed (raises ConfigError)."""
        with self._lock:
            stamp = _config_stamp(self.config_file)
            if self._config is None or stamp != self._stamp:
                self._config = load_config(self._config_path)
                self._stamp = stamp
            return self._config

    def agent_ids(self) -> list[str]:
        return [a.id for a in self.config().agents]

    def resolve_agent(self, agent: str | None) -> AgentConfig:
        """The named agent, or the first configured (raises UnknownAgentError)."""
        return self.config().agent(agent or None)

    def index(self, agent: str | None = None) -> MemoryIndex:
        """The open index of an agent; reopened when its config changed."""
        cfg = self.resolve_agent(agent)
        with self._lock:
            if self._closed:
                raise MemextError("this memext session is closed (the extension was unloaded); run %load_ext memext again")
            idx = self._indexes.get(cfg.id)
            if idx is not None and self._agents[cfg.id] != cfg:
                idx.close()
                idx = None
            if idx is None:
                idx = self._factory(cfg)
                self._indexes[cfg.id] = idx
                self._agents[cfg.id] = cfg
            return idx

    def warm_up(self, agent: str | None = None) -> threading.Thread | None:
        """Start the session-start sync in the background, if the agent wants it."""
        idx = self.index(agent)
        if not idx.agent.settings.sync.on_session_start:
            return None
        thread = idx.sync_in_background(reason="session-start")
        self._warmups[idx.agent.id] = thread
        return thread

    def settle(self, idx: MemoryIndex, timeout: float = 600) -> None:
        """Wait for the background work a search should see: the warm-up when
        the index was never built (so the first search is not empty), and the
        syncs started for notes written in this session."""
        warm = self._warmups.get(idx.agent.id)
        if warm is not None and warm.is_alive() and idx.status(check_files=False).last_sync is None:
            warm.join(timeout)
        for thread in self._note_syncs.pop(idx.agent.id, []):
            thread.join(timeout)

    def refresh_in_background(self, idx: MemoryIndex, reason: str = "note") -> threading.Thread:
        """Mark the index dirty and sync it in a background thread.

        ``sync()`` waits for a sync already running (which may have scanned
        the files before the change) and then scans again, so the change is
        never missed. The next search waits for it (:meth:`settle`).
        """
        idx.mark_dirty()

        def work() -> None:
            try:
                idx.sync(reason=reason)
            except SyncCancelled:
                pass
            except Exception as exc:  # a background thread has no caller to tell
                log.warning("memext: syncing %s after a note failed: %s", idx.agent.id, exc)

        thread = threading.Thread(target=work, name=f"memext-note-sync-{idx.agent.id}", daemon=True)
        thread.start()
        self._note_syncs.setdefault(idx.agent.id, []).append(thread)
        return thread

    def open_indexes(self) -> list[MemoryIndex]:
        with self._lock:
            return list(self._indexes.values())

    def close(self) -> None:
        """Cancel background syncs and close every index (idempotent)."""
        with self._lock:
            self._closed = True
            indexes, self._indexes = list(self._indexes.values()), {}
            notes = [t for threads in self._note_syncs.values() for t in threads]
            self._warmups.clear()
            self._note_syncs.clear()
        for idx in indexes:
            idx.close()  # cancels and joins the index's own background sync
        for thread in notes:  # cancelled by close() too; wait for them to notice
            thread.join(60)

    @property
    def closed(self) -> bool:
        return self._closed
