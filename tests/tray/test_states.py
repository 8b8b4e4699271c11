"""What the tray says of the states a person must act on, without a
display: paused with memory changed, an agent whose folder is missing, a
config error (its line and column kept), an opener that finds no
application (said, and reaped), and a notification drawn with the new
state's icon. tests/tray/test_xvfb.py shows the same menus on a real tray."""

from __future__ import annotations

import os
from pathlib import Path

from tray_helpers import make_workspace, search_paths, wait_for, write_config

from memext.tray import daemon as daemon_module
from memext.tray.autostart import autostart_entry
from memext.tray.daemon import AgentSnapshot, AgentState, DaemonOptions, DaemonSnapshot, TrayDaemon
from memext.tray.icon import STATE_COLOURS, TrayApp
from memext.tray.menu import build_menu, config_error_lines, find, tooltip_text
from memext.tray.opener import open_path


class NoActions:
    """Actions that do nothing, for checking the menu's text only."""

    def __getattr__(self, name):
        return lambda *a: None


def snap(*agents: AgentSnapshot, paused=False) -> DaemonSnapshot:
    return DaemonSnapshot(agents=agents, paused=paused, config_file=Path("/cfg/config.toml"))


def agent(agent_id="work", state=AgentState.IDLE, **kw) -> AgentSnapshot:
    return AgentSnapshot(id=agent_id, workspace=Path("/ws") / agent_id, state=state, **kw)


def test_paused_with_changes_says_memory_changed_since():
    a = agent("work", AgentState.PAUSED, watch_mode="off")
    calm = build_menu(snap(a, paused=True), NoActions(), autostart=False)
    assert find(calm, "work").text == "work: paused"
    s = DaemonSnapshot(agents=(a,), paused=True, config_file=Path("/cfg/config.toml"), changed_while_paused=frozenset({"work"}))
    menu = build_menu(s, NoActions(), autostart=False)
    assert find(menu, "memext").text == "memext: 1 agent, paused, memory changed"
    work = find(menu, "work")
    assert work.text == "work: paused, memory changed"
    assert work.find("State:").text == "State: paused, memory changed since the last sync"
    assert work.find("Resume watching").enabled is False
    assert tooltip_text(s) == "memext: 1 agent, paused, memory changed"


def test_an_agent_whose_folder_is_missing_says_so_and_offers_nothing_that_cannot_work():
    ghost = agent(
        "ghost", AgentState.ERROR, watch_mode="native", error="the workspace folder /ws/ghost does not exist (fix it in the config)"
    )
    s = DaemonSnapshot(
        agents=(agent("work"), ghost), paused=False, config_file=Path("/cfg/config.toml"), missing_folders=frozenset({"ghost"})
    )
    menu = build_menu(s, NoActions(), autostart=False)
    entry = find(menu, "ghost")
    assert entry.text == "ghost: folder missing"
    sub = [e.text for e in entry.submenu if not e.separator]
    assert "Watcher: off (no folder)" in sub and "Watcher: on" not in sub
    assert "Folder missing: /ws/ghost" in sub
    for action in ("Sync now", "Rebuild index", "Open memory folder"):
        assert entry.find(action).enabled is False, action
    assert find(menu, "work").find("Sync now").enabled is True  # the others still work
    assert tooltip_text(s) == "memext: 1 of 2 agents failing (work: up to date; ghost: folder missing)"


def test_a_config_error_keeps_its_line_and_column():
    config = Path("/home/someone/with/a/rather/long/home/folder/.config/memext/config.toml")
    error = f"{config}: not valid TOML: Invalid value, expected a string, a number or a table (at line 2, column 12)"
    s = DaemonSnapshot(agents=(), paused=False, config_file=config, config_error=error)
    lines = [e.text for e in build_menu(s, NoActions(), autostart=False) if e.text.startswith(("Config:", "    "))]
    assert lines[0].startswith("Config: config.toml: not valid TOML")  # the file by name: Open config opens it
    assert lines[-1].endswith("(at line 2, column 12)".replace(" ", "\u00a0"))  # one piece, never split
    assert all(len(t) <= 70 for t in lines)
    huge = config_error_lines(f"{config}: " + "word " * 200 + "(at line 9, column 3)", config)
    assert len(huge) == 4 and huge[1] == "    …" and huge[-1].endswith("(at\u00a0line\u00a09,\u00a0column\u00a03)")


def test_the_daemon_sees_changes_while_paused_and_missing_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(daemon_module, "PAUSED_CHECK_S", 0.0)
    ws = make_workspace(tmp_path, "work", {"memory/2026-01-01.md": "- one\n"})
    cfg = write_config(tmp_path / "config.toml", {"work": ws, "ghost": tmp_path / "nowhere"})
    with TrayDaemon(DaemonOptions(config_path=cfg)) as daemon:
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= 1, what="the first sync")
        assert daemon.snapshot().missing_folders == {"ghost"}
        daemon.set_paused(True)
        assert daemon.snapshot().changed_while_paused == frozenset()
        (ws / "memory" / "2026-01-02.md").write_text("- two\n")
        assert daemon.snapshot().changed_while_paused == {"work"}
        daemon.set_paused(False)  # resuming syncs the change
        assert daemon.snapshot().changed_while_paused == frozenset()
        wait_for(lambda: search_paths(cfg, "work", "two"), what="the change to be synced on resume")


def _zombies() -> list[str]:
    """This process's children that exited and were never waited for."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            out.append(stat.parent.name)
    return out


def test_open_log_without_a_handler_says_so_and_leaves_no_zombie(tmp_path, monkeypatch):
    # TEST DOUBLE: an xdg-open that finds no application for the file, as
    # the real one does on a desktop where nothing opens .log files (exit 3 or 4).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text("#!/bin/sh\nexit 4\n")
    (bin_dir / "xdg-open").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    log_file = tmp_path / "logs" / "tray.log"
    said: list[str] = []
    waiter = open_path(log_file, said.append)
    assert waiter is not None
    waiter.join(10)
    assert said == [
        f"cannot open {log_file}: no application is set up to open it (xdg-open exited with 4); "
        "open the file from a file manager or a terminal"
    ]
    assert _zombies() == []
    # From the menu: the icon's tooltip says it too (and a notification, where there is one).
    app = TrayApp(TrayDaemon(DaemonOptions(config_path=tmp_path / "config.toml")), autostart_entry(), log_file=log_file)
    find(app.menu_entries(), "Open log").action()
    wait_for(lambda: app.last_problem, what="the failure to be said")
    assert "no application is set up to open it" in app.last_problem
    assert "cannot open" in app.tooltip(app.daemon.snapshot())
    wait_for(lambda: not _zombies(), what="the opener to be reaped")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no xdg-open at all
    said.clear()
    assert open_path(log_file, said.append) is None
    assert said and said[0].startswith(f"cannot open {log_file}: ")


class RecordingIcon:
    """TEST DOUBLE for a pystray icon (a real one needs a display): records
    the order of redraws and notifications."""

    HAS_NOTIFICATION = True

    def __init__(self):
        self.events: list[tuple[str, object]] = []
        self.title = ""

    @property
    def icon(self):
        return None

    @icon.setter
    def icon(self, image):
        self.events.append(("icon", image.getpixel((8, 32))[:3]))

    def update_menu(self):
        pass

    def notify(self, message, title):
        self.events.append(("notify", title))


def test_a_config_error_notification_carries_the_error_icon(tmp_path):
    ws = make_workspace(tmp_path, "work", {"memory/2026-01-01.md": "- one\n"})
    cfg = write_config(tmp_path / "config.toml", {"work": ws})
    daemon = TrayDaemon(DaemonOptions(config_path=cfg, config_poll_s=0.1))
    app = TrayApp(daemon, autostart_entry(), style="color")
    app._icon = RecordingIcon()
    daemon.notifier = app.notify
    daemon.add_listener(app.refresh)
    with daemon:
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= 1, what="the first sync")
        app.refresh()
        cfg.write_text(cfg.read_text() + "\nbroken = \n")
        wait_for(lambda: ("notify", "memext: config error") in app._icon.events, what="the notification")
    events = app._icon.events
    at = events.index(("notify", "memext: config error"))
    drawn = [colour for kind, colour in events[:at] if kind == "icon"]
    # The icon the notification shows is the error one, drawn before it.
    assert drawn[-1] == STATE_COLOURS[AgentState.ERROR]
    assert "config error" in app._icon.title
