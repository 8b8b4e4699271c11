"""The indexes one IPython session keeps fresh, one keeper per agent.

Magics and widgets share a :class:`Session`: it holds the engine's
:class:`Supervisor` over the config, as the tray and the MCP server do (one
:class:`FreshnessKeeper` per configured agent, restarted when its config
changes), set up for a shell: no file watching, no scheduler thread (no
interval or reconcile syncs; the config is reloaded when the session is
used), no startup sync. A keeper runs the warm-up sync of an agent the
session warms up, the syncs after notes, and the background resync a stale
index gets before a search; the session holds no threads, search or
scheduling logic of its own.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from pathlib import Path
from typing import Iterable

from memext.engine import AgentConfig, Config, FreshnessKeeper, KeeperState, MemextError, MemoryIndex, Supervisor
from memext.engine.for_faces import IndexFactory


class Session:
    """Config and agents' keepers for one shell (or one widget)."""

    def __init__(
        self, config_path: str | Path | None = None, index_factory: IndexFactory | None = None, *, resync_after_s: float | None = None
    ):
        #: The keepers, one per configured agent; ``index_factory`` builds
        #: an agent's index (tests pass one with a test provider);
        #: ``resync_after_s``: how old an index's last sync may be before a
        #: search resyncs it in the background (None: the keeper's default).
        self.supervisor = Supervisor(
            config_path, index_factory=index_factory, watch=False, startup_sync=False, schedule=False, resync_after_s=resync_after_s
        )
        self.supervisor.start()
        self._closed = False
        self._lock = threading.RLock()
        # The keepers this session has used: a keeper's first use decides its warm-up.
        self._used: weakref.WeakSet[FreshnessKeeper] = weakref.WeakSet()
        self._notices_shown: set[str] = set()
        # At exit, stop the keepers before the interpreter tears down: a
        # background sync still embedding with a local model would crash
        # the process as llama.cpp's objects are freed under it.
        atexit.register(_close_at_exit, weakref.ref(self))

    @property
    def config_file(self) -> Path:
        """The config file in use (it may not exist: then the agent is ad hoc)."""
        return self.supervisor.config_file

    def config(self) -> Config:
        """The config, reloaded (and the keepers with it) when its file
        changed; raises ConfigError while it does not load."""
        self.supervisor.reload_if_changed()
        return self.supervisor.reloader.current()

    def agent_ids(self) -> list[str]:
        return [a.id for a in self.config().agents]

    def resolve_agent(self, agent: str | None) -> AgentConfig:
        """The named agent, or the first configured (raises UnknownAgentError)."""
        return self.config().agent(agent or None)

    def keeper(self, agent: str | None = None, *, warm_up: bool = False) -> FreshnessKeeper:
        """The keeper of an agent; its first use here starts the warm-up sync
        when ``warm_up`` and the agent's ``sync.on_session_start``. A new
        keeper after the agent's config changed."""
        with self._lock:
            if self._closed:
                raise MemextError("this memext session is closed (the extension was unloaded); run %load_ext memext again")
            cfg = self.resolve_agent(agent)
            keeper = self.supervisor.keeper(cfg.id)
            if keeper not in self._used:
                self._used.add(keeper)
                if warm_up and cfg.settings.sync.on_session_start:
                    keeper.request("startup")
            return keeper

    def index(self, agent: str | None = None) -> MemoryIndex:
        """The open index of an agent; reopened when its config changed."""
        return self.keeper(agent).index

    def warm_up(self, agent: str | None = None) -> FreshnessKeeper | None:
        """Start the agent's session-start sync, if the agent wants one
        (``sync.on_session_start``) and this session has not used it yet;
        None when it does not want one."""
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
        """The keeper of every configured agent (until the session closes)."""
        return [] if self._closed else self.supervisor.keepers()

    def open_indexes(self) -> list[MemoryIndex]:
        """The indexes this session has opened so far."""
        return [k.index for k in self.keepers() if k.index_open]

    def close(self) -> None:
        """Stop every keeper (cancelling its syncs) and close the indexes (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.supervisor.stop()

    @property
    def closed(self) -> bool:
        return self._closed


def _close_at_exit(ref: "weakref.ref[Session]") -> None:
    session = ref()
    if session is not None:
        session.close()
