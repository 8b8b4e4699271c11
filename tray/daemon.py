"""The tray's daemon: the engine's :class:`Supervisor`, as the menu sees it.

Nothing here imports pystray, so the whole daemon runs (and is tested)
without a display; the icon only renders :meth:`TrayDaemon.snapshot`.

All scheduling (one freshness keeper per agent, file watching, interval
and reconcile syncs, config reload) is the engine's; the tray adds what is
its own: which agents a tray started at login should watch, desktop
notifications, and one snapshot of every agent for the menu and the icon.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from memext.engine import AppPaths, Config, FreshnessKeeper, KeeperSnapshot, KeeperState, Supervisor
from memext.engine.for_faces import DEFAULT_CONFIG_POLL_S, DEFAULT_RECONCILE_S, IndexFactory

log = logging.getLogger("memext.tray")

Notifier = Callable[[str, str], None]
Listener = Callable[[], None]

#: How long a paused agent's "memory changed" answer is reused (seconds).
PAUSED_CHECK_S = 5.0

#: The menu's names for the engine's keeper state and snapshot.
AgentState = KeeperState
AgentSnapshot = KeeperSnapshot


@dataclass(frozen=True)
class DaemonSnapshot:
    """The whole daemon, for the menu and the icon."""

    agents: tuple[AgentSnapshot, ...]
    paused: bool
    config_file: Path
    config_error: str | None = None
    #: Agents whose workspace folder does not exist (nothing to sync, watch or open).
    missing_folders: frozenset[str] = frozenset()
    #: While paused: agents whose memory changed since their last sync
    #: (resuming syncs them).
    changed_while_paused: frozenset[str] = frozenset()

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
    """Every configured agent kept fresh, for the tray menu.

    ``listener()`` callbacks run (on worker threads) after every state
    change; they should only schedule a redraw. ``notifier(title,
    message)`` raises a desktop notification (errors); it may be set after
    construction.
    """

    def __init__(
        self,
        options: DaemonOptions | None = None,
        *,
        index_factory: IndexFactory | None = None,
        notifier: Notifier | None = None,
    ):
        self.options = options or DaemonOptions()
        self.notifier = notifier
        o = self.options
        self.supervisor = Supervisor(
            o.config_path,
            agent_filter=self._tray_agents,
            index_factory=index_factory,
            notifier=self._notify,
            polling=o.polling,
            reconcile_s=o.reconcile_s,
            config_poll_s=o.config_poll_s,
            lock_timeout=o.lock_timeout,
            paths=o.paths,
        )
        #: agent id -> (when, whether its memory differed from its index).
        self._pause_checks: dict[str, tuple[float, bool]] = {}

    @property
    def config_file(self) -> Path:
        return self.supervisor.config_file

    def start(self) -> None:
        self.supervisor.start()

    def stop(self) -> None:
        """Stop every agent's keeper and the scheduler (cancels running syncs)."""
        self.supervisor.stop()

    def __enter__(self) -> "TrayDaemon":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def add_listener(self, fn: Listener) -> None:
        self.supervisor.add_listener(fn)

    def _notify(self, title: str, message: str) -> None:
        if self.notifier is not None:
            try:
                self.notifier(title, message)
            except Exception as exc:
                log.debug("notification failed: %s", exc)

    # -- actions (menu) ----------------------------------------------------------------

    def keeper(self, agent_id: str) -> FreshnessKeeper:
        return self.supervisor.keeper(agent_id)

    def sync_now(self, agent_id: str) -> None:
        self.keeper(agent_id).request("manual")

    def rebuild(self, agent_id: str) -> None:
        self.keeper(agent_id).request("manual", force=True)

    def sync_all(self) -> None:
        for k in self.supervisor.keepers():
            k.request("manual")

    @property
    def paused(self) -> bool:
        return self.supervisor.paused

    def set_paused(self, paused: bool) -> None:
        self._pause_checks.clear()  # what changed is measured from now on
        self.supervisor.set_paused(paused)

    # -- state --------------------------------------------------------------------------

    def snapshot(self) -> DaemonSnapshot:
        agents = self.supervisor.snapshots()
        paused = self.supervisor.paused
        missing = frozenset(a.id for a in agents if not a.workspace.is_dir())
        return DaemonSnapshot(
            agents=agents,
            paused=paused,
            config_file=self.config_file,
            config_error=self.supervisor.config_error,
            missing_folders=missing,
            changed_while_paused=self._changed_while_paused(agents, missing) if paused else frozenset(),
        )

    def _changed_while_paused(self, agents: tuple[AgentSnapshot, ...], missing: frozenset[str]) -> frozenset[str]:
        """The agents whose files differ from their index: a stat scan, so
        each agent's answer is reused for PAUSED_CHECK_S (the menu asks for
        a snapshot at every redraw)."""
        now = time.monotonic()
        changed = set()
        for a in agents:
            if a.id in missing:
                continue
            checked = self._pause_checks.get(a.id)
            if checked is None or now - checked[0] > PAUSED_CHECK_S:
                checked = (now, self._needs_sync(a.id))
                self._pause_checks[a.id] = checked
            if checked[1]:
                changed.add(a.id)
        return frozenset(changed)

    def _needs_sync(self, agent_id: str) -> bool:
        try:
            return self.keeper(agent_id).index.needs_sync()
        except Exception as exc:  # an index that cannot be opened: its error is shown already
            log.debug("change check of %s failed: %s", agent_id, exc)
            return False

    def wait_idle(self, timeout: float = 30) -> bool:
        """Wait until no agent has a sync running or queued (tests, benchmarks)."""
        return self.supervisor.wait_idle(timeout)

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
        return config._replace(agents=keep)


__all__ = ["AgentSnapshot", "AgentState", "DaemonOptions", "DaemonSnapshot", "TrayDaemon"]
