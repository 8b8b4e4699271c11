"""The indexes one IPython session keeps fresh, one keeper per agent.

Magics and widgets share a :class:`Session`: it loads the config (again when
the file changes, through the engine's :class:`ConfigReloader`) and keeps a
:class:`FreshnessKeeper` per agent used. The keeper runs the warm-up sync
(its startup sync), the syncs after notes, and the background resync a
stale index gets before a search; the session holds no threads, search or
scheduling logic of its own.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from pathlib import Path
from typing import Iterable

from memext.engine import AgentConfig, Config, FreshnessKeeper, KeeperState, MemextError, MemoryIndex
from memext.engine.plumbing import ConfigReloader, IndexFactory


class Session:
    """Config and agents' keepers for one shell (or one widget)."""

    def __init__(self, config_path: str | Path | None = None, index_factory: IndexFactory | None = None,
                 *, resync_after_s: float | None = None):
        self._reloader = ConfigReloader(config_path)
        #: Builds the index of an agent; tests pass one with a test provider.
        self._factory = index_factory
        #: How old an index's last sync may be before a search resyncs it
        #: in the background (``sync.on_search``); None: the keeper's default.
        self._resync_after_s = resync_after_s
        self._keepers: dict[str, FreshnessKeeper] = {}
        self._closed = False
        self._lock = threading.RLock()
        self._notices_shown: set[str] = set()
        # At exit, stop the keepers before the interpreter tears down: a
        # background sync still embedding with a local model would crash
        # the process as llama.cpp's objects are freed under it.
        atexit.register(_close_at_exit, weakref.ref(self))

    @property
    def config_file(self) -> Path:
        """The config file in use (it may not exist: then the agent is ad hoc)."""
        return self._reloader.config_file

    def config(self) -> Config:
        """The config, reloaded when its file changed (raises ConfigError)."""
        return self._reloader.current()

    def agent_ids(self) -> list[str]:
        return [a.id for a in self.config().agents]

    def resolve_agent(self, agent: str | None) -> AgentConfig:
        """The named agent, or the first configured (raises UnknownAgentError)."""
        return self.config().agent(agent or None)

    def keeper(self, agent: str | None = None, *, warm_up: bool = False) -> FreshnessKeeper:
        """The keeper of an agent, started on first use (with the warm-up
        sync when ``warm_up`` and the agent's ``sync.on_session_start``);
        restarted when the agent's config changed."""
        with self._lock:
            cfg = self.resolve_agent(agent)
            if self._closed:
                raise MemextError("this memext session is closed (the extension was unloaded); run %load_ext memext again")
            keeper = self._keepers.get(cfg.id)
            if keeper is not None and keeper.agent != cfg:
                keeper.stop()
                keeper = None
            if keeper is None:
                # No file watching in a shell: before_search resyncs a stale index.
                if self._resync_after_s is None:
                    keeper = FreshnessKeeper(cfg, index_factory=self._factory, watch=False)
                else:
                    keeper = FreshnessKeeper(cfg, index_factory=self._factory, watch=False,
                                             resync_after_s=self._resync_after_s)
                keeper.start(sync=warm_up and cfg.settings.sync.on_session_start)
                self._keepers[cfg.id] = keeper
            return keeper

    def index(self, agent: str | None = None) -> MemoryIndex:
        """The open index of an agent; reopened when its config changed."""
        return self.keeper(agent).index

    def warm_up(self, agent: str | None = None) -> FreshnessKeeper | None:
        """Start the agent's keeper with its session-start sync, if the agent
        wants one (``sync.on_session_start``); None when it does not."""
        keeper = self.keeper(agent, warm_up=True)
        return keeper if keeper.agent.settings.sync.on_session_start else None

    def syncing(self, agent: str | None = None) -> bool:
        """True while a sync of the agent really runs (not while a keeper
        only checks whether files changed, which finds nothing to do)."""
        return self.keeper(agent).snapshot().state == KeeperState.SYNCING

    def repeated_notices(self, notices: Iterable[str]) -> frozenset[str]:
        """Those of ``notices`` this session has shown before; the others
        count as shown from now on. A provider notice (keyword-only, a
        fallback) is then said once a session, not in every output."""
        with self._lock:
            notices = list(notices)
            repeated = frozenset(n for n in notices if n in self._notices_shown)
            self._notices_shown.update(notices)
            return repeated

    def keepers(self) -> list[FreshnessKeeper]:
        with self._lock:
            return list(self._keepers.values())

    def open_indexes(self) -> list[MemoryIndex]:
        return [k.index for k in self.keepers()]

    def close(self) -> None:
        """Stop every keeper (cancelling its syncs) and close the indexes (idempotent)."""
        with self._lock:
            self._closed = True
            keepers, self._keepers = list(self._keepers.values()), {}
        for keeper in keepers:
            keeper.stop()

    @property
    def closed(self) -> bool:
        return self._closed


def _close_at_exit(ref: "weakref.ref[Session]") -> None:
    session = ref()
    if session is not None:
        session.close()
