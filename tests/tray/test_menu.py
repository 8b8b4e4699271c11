"""The menu model and the icon image, without a display: what the menu says
for each state, and that its items drive the real daemon."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from tray_helpers import make_workspace, wait_for, write_config

from memext.engine import SearchKind, SearchMode
from memext.tray.autostart import autostart_entry
from memext.tray.daemon import AgentSnapshot, AgentState, DaemonOptions, DaemonSnapshot, TrayDaemon
from memext.tray.icon import STATE_COLOURS, TrayApp, icon_image, icon_style, menu_missing_warning, template_icon_class
from memext.tray.menu import SEPARATOR, build_menu, duration_text, find, header_text, last_sync_text, render_text
from memext.tray.opener import CONFIG_TEMPLATE, ensure_config_file, open_command


class NoActions:
    """Actions that do nothing, for checking the menu's text only."""

    def __getattr__(self, name):
        return lambda *a: None


def snap(*agents: AgentSnapshot, paused=False, config_error=None) -> DaemonSnapshot:
    return DaemonSnapshot(agents=agents, paused=paused, config_file=Path("/cfg/config.toml"), config_error=config_error)


def agent(agent_id="work", state=AgentState.IDLE, **kw) -> AgentSnapshot:
    return AgentSnapshot(id=agent_id, workspace=Path("/ws") / agent_id, state=state, **kw)


def test_menu_layout():
    now = time.time()
    s = snap(
        agent(
            "work",
            files=12,
            chunks=40,
            last_sync_at=now - 5,
            last_sync_duration_s=0.25,
            watch_mode="native",
            search_mode=SearchMode(SearchKind.HYBRID, "local", "all-MiniLM-L6-v2"),
        ),
        agent("home"),
    )
    menu = build_menu(s, NoActions(), autostart=False, now=now)
    texts = [e.text for e in menu if not e.separator]
    assert texts == [
        "memext: 2 agents, up to date",
        "work: up to date",
        "home: up to date",
        "Sync all now",
        "Pause watching",
        "Open config",
        "Open log",
        "Start at login",
        "Quit",
    ]
    assert menu[1] == SEPARATOR and menu[-2] == SEPARATOR
    work = find(menu, "work")
    sub = [e.text for e in work.submenu if not e.separator]
    when = time.strftime("%H:%M:%S", time.localtime(now - 5))
    assert sub == [
        "State: up to date",  # the main menu's word for it
        "Files: 12, chunks: 40",
        f"Last sync: {when} (took 250 ms)",
        "Search: hybrid (semantic + keyword)",
        "Watcher: on",
        "Sync now",
        "Rebuild index",
        "Open memory folder",
    ]
    assert all(not e.enabled for e in work.submenu[:5])
    assert find(menu, "Pause watching").checked is False
    assert find(menu, "Start at login").checked is False
    assert find(menu, "home").find("Last sync").text == "Last sync: never"


def test_menu_per_state():
    syncing = agent("a", AgentState.SYNCING, progress="indexing 3/9 files")
    failing = agent("b", AgentState.ERROR, error="openai: 401 Unauthorized " + "x" * 200)
    menu = build_menu(snap(syncing, failing, paused=True), NoActions(), autostart=True)
    assert find(menu, "a:").text == "a: syncing (indexing 3/9 files)"
    assert find(menu, "a:").find("Sync now").enabled is False  # one sync per agent at a time
    b = find(menu, "b:")
    assert b.text == "b: error"
    err = b.find("Error:").text
    assert err.startswith("Error: openai: 401 Unauthorized") and len(err) < 110 and err.endswith("…")
    assert find(menu, "Pause watching").checked is True
    assert find(menu, "Start at login").checked is True
    # Paused and failing: both are said (paused must not be hidden).
    assert find(menu, "memext").text == "memext: 1 of 2 agents failing, watching paused"
    assert find(menu, "a:").find("State:").text == "State: syncing (indexing 3/9 files)"
    assert header_text(snap(syncing, paused=True)) == "memext: 1 agent, syncing, watching paused"
    assert header_text(snap(agent("c", AgentState.PAUSED), paused=True)) == "memext: 1 agent, paused"
    assert snap(syncing, failing).overall == AgentState.ERROR
    assert snap(syncing, agent("c")).overall == AgentState.SYNCING
    assert snap(agent("c", AgentState.PAUSED), paused=True).overall == AgentState.PAUSED
    assert snap(agent("c")).overall == AgentState.IDLE


def test_config_error_and_no_agents():
    s = snap(config_error="config.toml: agents[x].workspace: needs a workspace folder (a string)")
    menu = build_menu(s, NoActions(), autostart=False)
    assert header_text(s) == "memext: config error (0 agents)"
    assert find(menu, "Config:").text.startswith("Config: config.toml: agents[x].workspace")
    assert find(menu, "No agents configured").enabled is False
    assert find(menu, "Sync all now").enabled is False
    assert s.overall == AgentState.ERROR


@pytest.mark.parametrize(
    "mode,line",
    [
        (SearchMode(SearchKind.HYBRID, "gemini", "gemini-embedding-001"), "Search: hybrid (semantic + keyword)"),
        (
            SearchMode(SearchKind.HYBRID, "gemini", "gemini-embedding-001", fallback_from="openai"),
            "Search: hybrid (semantic + keyword), fallback from openai",
        ),
        (
            SearchMode(
                SearchKind.KEYWORD_ONLY,
                reason="auto: no local model (local.model_path), no OPENAI_API_KEY or GEMINI_API_KEY",
                advice="run `memext model install minilm` for local semantic search",
            ),
            "Search: keyword-only: run `memext model install minilm` for local semantic search",
        ),
        (SearchMode(SearchKind.KEYWORD_ONLY, reason='provider = "none"'), 'Search: keyword-only (provider = "none")'),
        (
            SearchMode(SearchKind.KEYWORD_ONLY, "local", "m.gguf", "the index has no vectors yet"),
            "Search: keyword-only (the index has no vectors yet)",
        ),
        (SearchMode(SearchKind.OFF, reason="memory_search.enabled = false"), "Search: off (memory_search.enabled = false)"),
        (
            SearchMode(SearchKind.OFF, reason="memory_search.enabled = false", advice="set memory_search.enabled = true"),
            "Search: off: set memory_search.enabled = true",
        ),
    ],
)
def test_the_search_line_words_the_typed_mode(mode, line):
    """Each kind of the engine's SearchMode, in words: the advice when there
    is some, else why; nothing is read out of the engine's sentences."""
    a = agent(search_mode=mode)
    assert find(build_menu(snap(a), NoActions(), autostart=False), "work").find("Search:").text == line


def test_no_search_line_before_the_index_status_is_read():
    with pytest.raises(KeyError):
        find(build_menu(snap(agent()), NoActions(), autostart=False), "work").find("Search:")


def test_keyword_only_reason_comes_from_the_engine(tmp_path):
    ws = make_workspace(tmp_path, "work", {"memory/2026-01-01.md": "- one\n"})
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "auto"\n[[agents]]\nid = "work"\nworkspace = "{ws}"\n')
    with TrayDaemon(DaemonOptions(config_path=cfg)) as daemon:
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= 1, what="the first sync")
        line = find(build_menu(daemon.snapshot(), NoActions(), autostart=False), "work").find("Search:").text
    assert line == "Search: keyword-only: run `memext model install minilm` for local semantic search"


def test_a_memory_file_past_its_size_is_warned_about(tmp_path):
    ws = make_workspace(tmp_path, "work", {"memory/2026-01-01.md": "- one\n"})
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "- an old fact that could live elsewhere\n" * 30, encoding="utf-8")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\nmemory_file_warn_bytes = 1000\n[[agents]]\nid = "work"\nworkspace = "{ws}"\n')
    with TrayDaemon(DaemonOptions(config_path=cfg)) as daemon:
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= 1, what="the first sync")
        menu = build_menu(daemon.snapshot(), NoActions(), autostart=False)
    assert menu[0].text == "memext: 1 agent, up to date, MEMORY.md too big"
    sub = find(menu, "work: up to date, MEMORY.md too big")
    assert sub.find("MEMORY.md is 1.2 KB, over 1000 bytes").enabled is False
    assert sub.find("Move old facts out of it, or raise memory_search.memory_file_warn_bytes")
    # Under the size: no word of it.
    quiet = build_menu(snap(agent("work")), NoActions(), autostart=False)
    assert "too big" not in render_text(quiet)


def test_last_sync_on_another_day_shows_the_date():
    then = time.mktime((2026, 1, 2, 9, 30, 0, 0, 0, -1))
    text = last_sync_text(agent(last_sync_at=then, last_sync_duration_s=1.5), now=then + 3 * 86400)
    assert text == "Last sync: 2026-01-02 09:30 (took 1.5 s)"


def test_durations():
    assert duration_text(0.004) == "4 ms"
    assert duration_text(2.44) == "2.4 s"
    assert duration_text(185) == "3 min 5 s"


def test_render_text_marks_checks_and_disabled():
    menu = build_menu(snap(agent("w")), NoActions(), autostart=True)
    text = render_text(menu)
    assert "[x] Start at login" in text and "[ ] Pause watching" in text
    assert "    State: up to date (disabled)" in text


@pytest.mark.parametrize("state", list(AgentState))
def test_icon_image_shows_the_state(state):
    img = icon_image(state)
    assert img.size == (64, 64) and img.mode == "RGBA"
    assert img.getpixel((8, 32))[:3] == STATE_COLOURS[state]  # the disc's colour
    assert img.getpixel((0, 0))[3] == 0  # transparent corners
    assert len({icon_image(s).tobytes() for s in AgentState}) == 4


@pytest.mark.parametrize("style,ink", [("symbolic", (242, 242, 242)), ("template", (0, 0, 0))])
def test_symbolic_and_template_icons_are_one_colour_and_tell_states_apart_by_shape(style, ink):
    images = {s: icon_image(s, style=style) for s in AgentState}
    for img in list(images.values()) + [icon_image(AgentState.ERROR, style=style, paused=True)]:
        colours = {tuple(px[:3]) for px in np.asarray(img).reshape(-1, 4).tolist() if px[3] > 0}
        assert colours == {ink}, colours  # monochrome: alpha carries the shape
    assert len({img.getchannel("A").tobytes() for img in images.values()}) == 4


def test_paused_while_failing_shows_both():
    # An agent in error must not hide that watching is paused.
    plain, both = icon_image(AgentState.ERROR), icon_image(AgentState.ERROR, paused=True)
    assert plain.getpixel((8, 32))[:3] == both.getpixel((8, 32))[:3] == STATE_COLOURS[AgentState.ERROR]
    assert both.getpixel((51, 51))[:3] == STATE_COLOURS[AgentState.PAUSED]  # the pause badge
    assert plain.getpixel((51, 51))[:3] == STATE_COLOURS[AgentState.ERROR]
    assert icon_image(AgentState.PAUSED, paused=True).tobytes() == icon_image(AgentState.PAUSED).tobytes()


@pytest.mark.parametrize(
    "platform,env,style",
    [
        ("linux", {"XDG_CURRENT_DESKTOP": "GNOME"}, "symbolic"),
        ("linux", {"XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}, "symbolic"),
        ("linux", {"XDG_CURRENT_DESKTOP": "Unity"}, "symbolic"),
        ("linux", {"XDG_CURRENT_DESKTOP": "KDE"}, "color"),
        ("linux", {"XDG_CURRENT_DESKTOP": "XFCE"}, "color"),
        ("linux", {}, "color"),
        ("darwin", {}, "template"),
        ("win32", {}, "color"),
        ("linux", {"XDG_CURRENT_DESKTOP": "GNOME", "MEMEXT_TRAY_ICON": "color"}, "color"),
        ("linux", {"MEMEXT_TRAY_ICON": "Symbolic"}, "symbolic"),
    ],
)
def test_icon_style_is_chosen_for_the_desktop(platform, env, style):
    assert icon_style(platform, env) == style


def test_template_icon_class_marks_the_macos_image():
    class FakeNSImage:  # TEST DOUBLE: AppKit's NSImage exists only on macOS
        template = False

        def setTemplate_(self, value):
            self.template = value

    class FakeIcon:  # TEST DOUBLE: pystray's darwin Icon, which needs macOS
        def _assert_image(self):
            self._icon_image = FakeNSImage()

    class FakePystray:
        Icon = FakeIcon

    icon = template_icon_class(FakePystray)()
    icon._assert_image()
    assert icon._icon_image.template is True and isinstance(icon, FakeIcon)


def test_open_log_opens_the_log_file(tmp_path, monkeypatch):
    # TEST DOUBLE: an xdg-open on PATH that records what it was asked to
    # open (the real one needs a desktop session to hand the file to).
    bin_dir, record = tmp_path / "bin", tmp_path / "opened.txt"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    (bin_dir / "xdg-open").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    log_file = tmp_path / "logs" / "tray.log"
    app = TrayApp(TrayDaemon(DaemonOptions(config_path=tmp_path / "config.toml")), autostart_entry(), log_file=log_file)
    find(app.menu_entries(), "Open log").action()
    wait_for(lambda: record.exists(), what="xdg-open to run")
    assert record.read_text().strip() == str(log_file)


def test_menu_items_drive_the_daemon(tmp_path):
    ws = make_workspace(tmp_path, "work", {"memory/2026-01-01.md": "- one\n"})
    cfg = write_config(tmp_path / "config.toml", {"work": ws})
    daemon = TrayDaemon(DaemonOptions(config_path=cfg, config_poll_s=0.2))
    app = TrayApp(daemon, autostart_entry())
    with daemon:
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= 1 and daemon.wait_idle(), what="the first sync")
        menu = app.menu_entries()
        syncs = daemon.snapshot().agent("work").syncs
        find(menu, "work").find("Sync now").action()
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= syncs + 1, what="Sync now")
        find(app.menu_entries(), "Sync all now").action()
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= syncs + 2, what="Sync all now")
        find(app.menu_entries(), "work").find("Rebuild index").action()
        wait_for(lambda: daemon.snapshot().agent("work").syncs >= syncs + 3, what="Rebuild index")
        # Pause is a check item that follows the daemon.
        find(app.menu_entries(), "Pause watching").action()
        wait_for(lambda: find(app.menu_entries(), "Pause watching").checked, what="the pause check")
        # A sync a watcher event started just before may still be ending.
        wait_for(lambda: find(app.menu_entries(), "work").text == "work: paused", what="the agent shown paused")
        find(app.menu_entries(), "Pause watching").action()
        wait_for(lambda: not daemon.paused and daemon.snapshot().agent("work").watch_mode == "native", what="resume")
        # Start at login writes and removes the autostart file.
        entry = app.autostart
        assert not entry.enabled
        find(app.menu_entries(), "Start at login").action()
        assert entry.enabled and find(app.menu_entries(), "Start at login").checked
        find(app.menu_entries(), "Start at login").action()
        assert not entry.path.exists()
        # Quit without an icon just records the request.
        find(app.menu_entries(), "Quit").action()
        assert app._quitting.is_set()


def test_open_config_creates_a_commented_file(tmp_path):
    path = tmp_path / "cfgdir" / "config.toml"
    assert ensure_config_file(path) == path
    assert path.read_text() == CONFIG_TEMPLATE
    from memext.engine.config import load_config

    assert load_config(path).agents[0].adhoc  # a comments-only file loads
    path.write_text("[[agents]]\n")
    ensure_config_file(path)
    assert path.read_text() == "[[agents]]\n"  # never overwritten


def test_open_commands_per_platform(tmp_path):
    assert open_command(tmp_path, "linux") == ["xdg-open", str(tmp_path)]
    assert open_command(tmp_path, "darwin") == ["open", str(tmp_path)]
    assert open_command(tmp_path, "win32") is None  # os.startfile


def test_memory_folder_falls_back_to_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    a = AgentSnapshot(id="x", workspace=ws, state=AgentState.IDLE)
    assert a.memory_folder == ws
    (ws / "memory").mkdir()
    assert a.memory_folder == ws / "memory"


@pytest.mark.parametrize(
    "backend,platform,env,warn",
    [
        ("pystray._xorg", "linux", {}, True),  # PyGObject missing: pystray fell back
        ("pystray._xorg", "linux", {"PYSTRAY_BACKEND": "xorg"}, False),  # chosen on purpose
        ("pystray._appindicator", "linux", {}, False),
        ("pystray._gtk", "linux", {}, False),
        ("pystray._darwin", "darwin", {}, False),
        ("pystray._win32", "win32", {}, False),
    ],
)
def test_menu_missing_warning(backend, platform, env, warn):
    text = menu_missing_warning(backend, platform=platform, env=env)
    if not warn:
        assert text is None
        return
    assert "no menu" in text and "PyGObject" in text
    assert "gir1.2-ayatanaappindicator3-0.1" in text and "gir1.2-gtk-3.0" in text


def test_no_agents_header():
    assert header_text(snap()) == "memext: no agents configured"
    assert header_text(snap(agent("w"))) == "memext: 1 agent, up to date"


class SlowIcon:
    """TEST DOUBLE for a pystray icon (a real one needs a display, and its
    redraw timing cannot be steered): records what is drawn; the first
    image it is given takes a while to draw, so a second refresh on another
    thread overtakes it unless refreshes are serialised."""

    def __init__(self):
        self.drawn: list[bytes] = []
        self.title = ""
        self._first = True

    @property
    def icon(self):
        return None

    @icon.setter
    def icon(self, image):
        if self._first:
            self._first = False
            time.sleep(0.4)
        self.drawn.append(image.tobytes())

    def update_menu(self):
        pass


def test_refreshes_from_two_threads_draw_the_newest_state_last(tmp_path):
    import threading

    daemon = TrayDaemon(DaemonOptions(config_path=tmp_path / "config.toml"))
    app = TrayApp(daemon, autostart_entry())
    app._icon = SlowIcon()
    older = threading.Thread(target=app.refresh)  # snapshot: idle, then a slow draw
    older.start()
    time.sleep(0.1)
    daemon.set_paused(True)  # the state changes meanwhile (no agents: nothing else to pause)
    app.refresh()  # snapshot: paused
    older.join()
    assert app._icon.drawn[-1] == icon_image(AgentState.PAUSED, style=app.style, paused=True).tobytes()
    assert "no agents" in app._icon.title
