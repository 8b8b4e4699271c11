"""The tray's daemon: a thin face on the engine's Supervisor. What is the
tray's own: no ad-hoc agent for a tray started at login, the snapshot the
menu and icon show, menu actions, notifications. (The scheduling itself is
tested in tests/freshness/test_supervisor.py and tests/freshness/test_keeper.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from tray_helpers import make_workspace, search_paths, wait_for, write_config

from memext.engine import MemextError
from memext.tray.daemon import AgentState, DaemonOptions, TrayDaemon


@pytest.fixture
def setup(tmp_path):
    """Two agents' workspaces and a config file naming both."""
    a = make_workspace(tmp_path, "alpha", {"memory/2026-01-01.md": "# Jan 1\n- Alpha planted tomatoes.\n"})
    b = make_workspace(tmp_path, "beta", {"memory/2026-01-02.md": "# Jan 2\n- Beta fixed the boiler.\n"})
    cfg = write_config(tmp_path / "config.toml", {"alpha": a, "beta": b})
    return cfg, a, b


def start_daemon(cfg: Path, **kw) -> TrayDaemon:
    factory = kw.pop("index_factory", None)
    notifier = kw.pop("notifier", None)
    opts = DaemonOptions(config_path=cfg, config_poll_s=0.2, **kw)
    d = TrayDaemon(opts, notifier=notifier, index_factory=factory)
    d.start()
    return d


def settled(d: TrayDaemon, agent_id: str, *, min_syncs: int = 1):
    """The agent's snapshot once it has finished ``min_syncs`` syncs and is not syncing."""

    def check():
        a = d.snapshot().agent(agent_id)
        return a if a.syncs >= min_syncs and a.state != AgentState.SYNCING and not d.keeper(agent_id).busy() else None

    return wait_for(check, what=f"{agent_id} to settle after {min_syncs} sync(s)")


def test_the_snapshot_and_the_menu_actions(setup):
    cfg, a, b = setup
    with start_daemon(cfg) as d:
        for agent_id in ("alpha", "beta"):
            snap = settled(d, agent_id)
            assert snap.state == AgentState.IDLE and snap.files == 2 and snap.watch_mode == "native"
        snap = d.snapshot()
        assert snap.overall == AgentState.IDLE and [x.id for x in snap.agents] == ["alpha", "beta"]
        assert snap.config_file == cfg and snap.config_error is None
        assert snap.agent("alpha").memory_folder == a / "memory"
        # Sync now, Rebuild and Sync all each run one more sync.
        d.sync_now("alpha")
        settled(d, "alpha", min_syncs=2)
        d.rebuild("beta")
        settled(d, "beta", min_syncs=2)
        d.sync_all()
        assert settled(d, "alpha", min_syncs=3).error is None and settled(d, "beta", min_syncs=3).error is None
        with pytest.raises(MemextError, match="no agent 'nobody'"):
            d.sync_now("nobody")
        d.set_paused(True)
        assert d.paused and d.snapshot().overall == AgentState.PAUSED
        d.set_paused(False)
        assert d.snapshot().overall == AgentState.IDLE
    assert search_paths(cfg, "alpha", "tomatoes") == ["memory/2026-01-01.md"]


def test_a_notifier_set_after_construction_is_used(setup, tmp_path):
    cfg, a, _ = setup
    write_config(cfg, {"alpha": a, "ghost": tmp_path / "nowhere"})
    d = TrayDaemon(DaemonOptions(config_path=cfg, config_poll_s=0.2))
    notes: list[tuple[str, str]] = []
    d.notifier = lambda t, m: notes.append((t, m))  # as the icon does once it exists
    with d:
        assert settled(d, "ghost").state == AgentState.ERROR
        assert d.snapshot().overall == AgentState.ERROR
        wait_for(lambda: notes, what="the notification")
        assert notes[0][0] == "memext: ghost" and "does not exist" in notes[0][1]


def test_no_agents_without_a_config_file(tmp_path, monkeypatch):
    from memext.engine.paths import app_paths
    from memext.tray.autostart import autostart_entry
    from memext.tray.icon import TrayApp
    from memext.tray.menu import find, header_text
    from memext.tray.opener import ensure_config_file

    home = make_workspace(tmp_path, "home", {"memory/2026-01-01.md": "- private notes\n"})
    monkeypatch.chdir(home)  # a tray started at login runs in the home folder
    config_file = app_paths().config_file
    assert not config_file.exists()
    d = TrayDaemon(DaemonOptions(config_poll_s=0.2))
    app = TrayApp(d, autostart_entry())
    with d:
        snap = d.snapshot()
        assert snap.agents == () and snap.config_error is None and snap.config_file == config_file
        menu = app.menu_entries()
        assert find(menu, "No agents configured").enabled is False
        assert header_text(snap) == "memext: no agents configured"
        assert find(menu, "Open config").action is not None
        # "Open config" creates the commented template: still no agents.
        ensure_config_file(config_file)
        wait_for(lambda: d.supervisor.reloader.loaded_stamp is not None, what="the template to be loaded")
        assert d.snapshot().agents == () and d.snapshot().config_error is None
        # An agent added to it is picked up.
        ws = make_workspace(tmp_path, "work")
        write_config(config_file, {"work": ws})
        wait_for(lambda: [x.id for x in d.snapshot().agents] == ["work"], what="the configured agent")
        assert settled(d, "work").files == 1
    # $MEMEXT_WORKSPACE names a folder on purpose: that one is watched.
    config_file.unlink()
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(home))
    with TrayDaemon(DaemonOptions(config_poll_s=0.2)) as d2:
        (agent,) = d2.snapshot().agents
        assert agent.workspace == home
