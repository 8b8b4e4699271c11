"""The real tray app under a real X server (Xvfb), a tray host (openbox +
tint2) and a D-Bus session: start it, edit a memory file, see the index and
the menu change, open the menu with the mouse, use it, quit from it.

Screenshots land in ``test-artifacts/`` (tray-*.png) with the app's log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image, ImageStat
from tray_helpers import make_workspace, search_paths, wait_for, write_config
from Xlib import X, display

from memext.engine.paths import app_paths
from memext.tray.daemon import AgentState
from memext.tray.icon import STATE_COLOURS

ARTIFACTS = ROOT / "test-artifacts"
#: Wide enough for the menu and its submenu side by side, as on a real desktop.
SCREEN = (1024, 600)

TINT2RC = """\
panel_items = S
panel_size = 100% 32
panel_position = bottom center horizontal
panel_background_id = 0
systray_padding = 4 4 4
systray_icon_size = 24
"""


class XSession:
    """Xvfb + openbox + tint2, and helpers to look at and click the screen."""

    def __init__(self, tmp: Path):
        self.procs: list[subprocess.Popen] = []
        r, w = os.pipe()
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
            pass_fds=(w,),
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(xvfb)
        os.close(w)
        with os.fdopen(r) as f:
            number = f.readline().strip()
        assert number, "Xvfb did not start"
        self.display = f":{number}"
        self.env = {**os.environ, "DISPLAY": self.display}
        self.env.pop("WAYLAND_DISPLAY", None)
        (tmp / "tint2rc").write_text(TINT2RC)
        self.procs.append(subprocess.Popen(["openbox", "--sm-disable"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.procs.append(
            subprocess.Popen(["tint2", "-c", str(tmp / "tint2rc")], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        self.x = display.Display(self.display)
        self.root = self.x.screen().root
        tray_atom = self.x.intern_atom("_NET_SYSTEM_TRAY_S0")
        wait_for(lambda: self.x.get_selection_owner(tray_atom) != X.NONE, what="tint2's system tray")

    def close(self) -> None:
        self.x.close()
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    def windows(self, wm_class: str | None = None) -> list[tuple[int, int, int, int, object]]:
        """Viewable windows ``(x, y, width, height, window)`` in screen
        coordinates, optionally only those of a WM_CLASS."""
        out = []

        def walk(w):
            for c in w.query_tree().children:
                try:
                    attrs = c.get_attributes()
                    if attrs.map_state != X.IsViewable:
                        continue
                    g = c.get_geometry()
                    cls = c.get_wm_class() or ()
                    pos = self.root.translate_coords(c, 0, 0)
                except Exception:  # windows come and go
                    continue
                if wm_class is None or wm_class in cls:
                    out.append((pos.x, pos.y, g.width, g.height, c))
                walk(c)

        walk(self.root)
        return out

    def popups(self) -> list[tuple[int, int, int, int, object]]:
        """Mapped override-redirect windows bigger than a dot: open menus."""
        out = []
        for c in self.root.query_tree().children:
            try:
                a = c.get_attributes()
                g = c.get_geometry()
            except Exception:
                continue
            if a.map_state == X.IsViewable and a.override_redirect and g.width > 50 and g.height > 50:
                out.append((g.x, g.y, g.width, g.height, c))
        return out

    def screenshot(self, name: str | None = None) -> Image.Image:
        g = self.root.get_geometry()
        raw = self.root.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF)
        img = Image.frombytes("RGB", (g.width, g.height), raw.data, "raw", "BGRX")
        if name:
            ARTIFACTS.mkdir(exist_ok=True)
            img.save(ARTIFACTS / name)
        return img

    def overlays(self) -> list[tuple[int, int, int, int, object]]:
        """Mapped override-redirect windows wider than a dot: menus, tooltips."""
        out = []
        for c in self.root.query_tree().children:
            try:
                a = c.get_attributes()
                g = c.get_geometry()
            except Exception:
                continue
            if a.map_state == X.IsViewable and a.override_redirect and g.width > 50 and g.height > 10:
                out.append((g.x, g.y, g.width, g.height, c))
        return out

    def open_menu(self, x: int, y: int) -> list[tuple[int, int, int, int, object]]:
        """Right-click at (x, y) until a menu shows (a click that lands while
        a heavily loaded machine is still embedding the icon can be lost)."""
        for attempt in range(3):
            self.xdotool("mousemove", str(x), str(y), "click", "3")
            try:
                return wait_for(self.popups, timeout=7, what="the menu to open")
            except AssertionError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def xdotool(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], env=self.env, check=True, timeout=30)


@pytest.fixture(scope="module")
def xsession(tmp_path_factory):
    for tool in ("Xvfb", "openbox", "tint2", "xdotool", "dbus-run-session"):
        assert shutil.which(tool), f"{tool} is missing: run scripts/install-system-deps.sh"
    s = XSession(tmp_path_factory.mktemp("x"))
    yield s
    s.close()


class NotificationSession:
    """A D-Bus session bus with a real notification daemon (dunst) on the X
    display, for the app to run on instead of an empty ``dbus-run-session``."""

    def __init__(self, xsession: XSession):
        r, w = os.pipe()
        self.bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", f"--print-address={w}"], pass_fds=(w,), stderr=subprocess.DEVNULL
        )
        os.close(w)
        with os.fdopen(r) as f:
            self.address = f.readline().strip()
        assert self.address, "dbus-daemon did not start"
        self.env = {**xsession.env, "DBUS_SESSION_BUS_ADDRESS": self.address}
        self.dunst = subprocess.Popen(["dunst"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.dunstctl("count", "displayed") is not None, what="dunst on the session bus")

    def dunstctl(self, *args: str) -> str | None:
        out = subprocess.run(["dunstctl", *args], env=self.env, capture_output=True, text=True, timeout=30)
        return out.stdout if out.returncode == 0 else None

    def shown(self) -> list[tuple[str, str]]:
        """(summary, body) of every notification so far (closing them first)."""
        self.dunstctl("close-all")
        history = json.loads(self.dunstctl("history") or '{"data": [[]]}')
        return [(n["summary"]["data"], n["body"]["data"]) for n in history["data"][0]]

    def close(self) -> None:
        for p in (self.dunst, self.bus):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def menu_shot(xsession: XSession, x: int, y: int, keys: list[str], name: str) -> None:
    """Open the menu, walk to a submenu with ``keys`` (none: the menu
    itself), keep a screenshot, close it. A state change that redraws the
    menu meanwhile closes it: then the shot is taken again."""
    menus = 2 if keys else 1
    for attempt in range(3):
        xsession.open_menu(x, y)
        if keys:
            xsession.xdotool("key", *keys)
        wait_for(lambda: len(xsession.popups()) >= menus, what="the menu")
        xsession.screenshot(name)
        shown = len(xsession.popups()) >= menus
        xsession.xdotool("key", *["Escape"] * menus)
        wait_for(lambda: not xsession.popups(), what="the menu to close")
        if shown:
            return
    raise AssertionError(f"the menu kept closing before {name} was taken")


def close_to(rgb: tuple[int, int, int], want: tuple[int, int, int], tol: int = 40) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(rgb, want, strict=True))


def latest_menu(log: Path) -> str:
    text = log.read_text() if log.exists() else ""
    return text.rsplit("menu:\n", 1)[-1] if "menu:\n" in text else ""


# AppIndicator runs with a notification daemon, GTK with none (pystray's
# notification cleanup then fails at stop, which the app must survive).
@pytest.mark.parametrize("backend,notifications", [("appindicator", True), ("gtk", False)])
def test_tray_app_under_xvfb(xsession, tmp_path, backend, notifications):
    ws = make_workspace(tmp_path, "alpha", {"memory/2026-01-01.md": "# Jan 1\n- Planted tomatoes.\n"})
    auto = {"alpha": {"provider": "auto"}}  # no model, no key: keyword-only, and the menu says how to fix it
    cfg = write_config(tmp_path / "config.toml", {"alpha": ws}, **auto)
    log = app_paths().log_dir / "tray.log"
    # os.environ now, not at fixture time: it holds this test's private XDG folders.
    env = {**os.environ, "DISPLAY": xsession.display, "PYSTRAY_BACKEND": backend, "NO_AT_BRIDGE": "1"}
    env.pop("MEMEXT_TRAY_ICON", None)
    env.pop("XDG_CURRENT_DESKTOP", None)
    prefix = f"tray-{backend}"
    ARTIFACTS.mkdir(exist_ok=True)
    output = open(ARTIFACTS / f"{prefix}.out", "w")
    command = [sys.executable, "-m", "memext.tray", "--verbose", "--config", str(cfg)]
    notes = None
    if notifications:
        notes = NotificationSession(xsession)
        env["DBUS_SESSION_BUS_ADDRESS"] = notes.address
    else:
        command = ["dbus-run-session", "--", *command]
    app = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, for cleanup
    )
    try:
        # Started: the icon sits in the tray, green (idle), the menu lists the agent.
        wait_for(lambda: "Files: 2," in latest_menu(log), timeout=30, what="the first menu with the agent's files")
        assert f"tray icon backend: pystray._{backend}" in log.read_text()
        icons = wait_for(lambda: [w for w in xsession.windows("memext") if w[2] >= 16], what="the tray icon window")
        ix, iy, iw, ih, _ = icons[0]
        assert iy >= SCREEN[1] - 32  # inside tint2's panel at the bottom
        probe = (ix + iw // 6, iy + ih // 2)  # on the disc, off the white mark
        wait_for(
            lambda: close_to(xsession.screenshot().getpixel(probe), STATE_COLOURS[AgentState.IDLE]),
            what="a green (idle) icon",
        )
        xsession.screenshot(f"{prefix}-icon.png")
        if backend == "gtk":  # AppIndicator hosts have no tooltips; GTK's status icon has one
            xsession.xdotool("mousemove", str(ix + iw // 2), str(iy + ih // 2))
            tip = wait_for(lambda: [w for w in xsession.overlays() if w[3] < 60], timeout=15, what="the icon's tooltip")
            tx, ty, tw, th, _ = tip[0]
            xsession.screenshot().crop((max(0, tx - 10), max(0, ty - 10), tx + tw + 10, SCREEN[1])).save(
                ARTIFACTS / f"{prefix}-tooltip.png"
            )
            xsession.xdotool("mousemove", "10", "10")
            wait_for(lambda: not [w for w in xsession.overlays() if w[3] < 60], what="the tooltip to go")

        # Edit a memory file: the index and the menu follow.
        (ws / "memory" / "2026-01-02.md").write_text("# Jan 2\n- Repainted the greenhouse.\n")
        wait_for(lambda: search_paths(cfg, "alpha", "greenhouse"), what="the edit to be searchable")
        wait_for(lambda: "Files: 3," in latest_menu(log), what="the menu to show 3 files")
        menu_text = latest_menu(log)
        assert "alpha: up to date" in menu_text and "State: up to date" in menu_text  # one wording
        assert "Search: keyword-only: run `memext model install minilm` for local semantic search" in menu_text
        assert "Open log" in menu_text

        # Open the menu with a right click on the icon, then the agent's submenu.
        cx, cy = ix + iw // 2, iy + ih // 2
        menu = xsession.open_menu(cx, cy)
        mx, my, mw, mh, _ = menu[0]
        xsession.xdotool("key", "Down", "Right")  # the first active item is the agent
        wait_for(lambda: len(xsession.popups()) >= 2 and xsession.popups(), what="the agent's submenu")
        shot = xsession.screenshot(f"{prefix}-menu.png")
        # GTK's menus are light on the black root window.
        assert ImageStat.Stat(shot.crop((mx, my, mx + mw, my + mh)).convert("L")).mean[0] > 150
        # Activate "Sync now" (the submenu's first active item).
        syncs_before = log.read_text().count("synced (manual)")
        xsession.xdotool("key", "Return")
        wait_for(lambda: log.read_text().count("synced (manual)") > syncs_before, what="Sync now from the menu")
        wait_for(lambda: not xsession.popups(), what="the menu to close")

        # An agent with a missing workspace: config reloaded, icon turns red.
        write_config(cfg, {"alpha": ws, "ghost": tmp_path / "nowhere"}, **auto)
        wait_for(lambda: "ghost: folder missing" in latest_menu(log), what="the new agent's missing folder in the menu")
        wait_for(
            lambda: close_to(xsession.screenshot().getpixel(probe), STATE_COLOURS[AgentState.ERROR]),
            what="the icon to turn red",
        )
        xsession.screenshot(f"{prefix}-error.png")
        if notes is not None:  # the error was also announced
            wait_for(lambda: xsession.windows("Dunst"), what="the notification bubble")
            xsession.screenshot(f"{prefix}-notification.png")
            shown = wait_for(notes.shown, what="the notification in dunst's history")
            assert [s for s, b in shown if s == "memext: ghost" and "does not exist" in b], shown

        # Pause watching while ghost fails: the icon and the header show both.
        xsession.open_menu(cx, cy)
        xsession.xdotool("key", "Down", "Down", "Down", "Down", "Return")  # alpha, ghost, Sync all now, Pause watching
        wait_for(lambda: "failing, watching paused" in latest_menu(log), what="the header to say paused too")
        badge = [(ix + iw * x // 64, iy + ih * y // 64) for x in (50, 51, 52) for y in (50, 51, 52)]
        wait_for(
            lambda: any(close_to(xsession.screenshot().getpixel(b), STATE_COLOURS[AgentState.PAUSED]) for b in badge),
            what="the pause badge on the red icon",
        )
        assert close_to(xsession.screenshot().getpixel(probe), STATE_COLOURS[AgentState.ERROR])
        xsession.screenshot(f"{prefix}-error-paused.png")

        # Paused, a memory file edited: the menu says memory changed since the last sync.
        (ws / "memory" / "2026-01-03.md").write_text("# Jan 3\n- Watered the seedlings.\n")
        wait_for(
            lambda: "alpha: paused, memory changed" in latest_menu(log), timeout=30, what="the menu to say memory changed while paused"
        )
        assert "State: paused, memory changed since the last sync" in latest_menu(log)
        menu_shot(xsession, cx, cy, ["Down", "Right"], f"{prefix}-paused-changed.png")

        # The agent whose folder is missing: said, and its actions are off.
        ghost = latest_menu(log).split("ghost: folder missing", 1)[1]
        assert "Watcher: off (no folder)" in ghost and "Watcher: on" not in ghost.split("Open memory folder")[0]
        for action in ("Sync now", "Rebuild index", "Open memory folder"):
            assert f"{action} (disabled)" in ghost.split("----\n", 2)[1], ghost
        menu_shot(xsession, cx, cy, ["Down", "Down", "Right"], f"{prefix}-missing-folder.png")

        # A broken config: the menu keeps the error's line and column; the
        # notification carries the red icon (the icon is redrawn first).
        cfg.write_text(cfg.read_text() + "\nbroken = \n")
        wait_for(lambda: "Config: config.toml: not valid TOML" in latest_menu(log), what="the config error in the menu")
        assert "column" in latest_menu(log).split("----", 1)[0]
        wait_for(
            lambda: close_to(xsession.screenshot().getpixel(probe), STATE_COLOURS[AgentState.ERROR]),
            what="the icon to stay red",
        )
        menu_shot(xsession, cx, cy, [], f"{prefix}-config-error.png")
        if notes is not None:
            shown = wait_for(lambda: [s for s, b in notes.shown() if s == "memext: config error"], what="the config error notification")
            assert shown

        # Quit from the menu (its last item), cleanly.
        xsession.open_menu(cx, cy)
        xsession.xdotool("key", "Up", "Return")
        assert app.wait(timeout=30) == 0, (ARTIFACTS / f"{prefix}.out").read_text()
        text = log.read_text()
        assert "quit requested" in text and "memext-tray exiting" in text
        assert "Traceback" not in text
        assert not [w for w in xsession.windows("memext")]  # the icon is gone
    finally:
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait(timeout=30)
        output.close()
        if notes is not None:
            notes.close()
        if log.exists():
            shutil.copy(log, ARTIFACTS / f"{prefix}.log")


def test_gnome_gets_the_symbolic_icon(xsession, tmp_path):
    """Under GNOME (``XDG_CURRENT_DESKTOP``) the icon is a light monochrome
    glyph, as its top bar expects, chosen without any setting."""
    ws = make_workspace(tmp_path, "alpha", {"memory/2026-01-01.md": "# Jan 1\n- Planted tomatoes.\n"})
    cfg = write_config(tmp_path / "config.toml", {"alpha": ws})
    log = app_paths().log_dir / "tray.log"
    env = {**os.environ, "DISPLAY": xsession.display, "PYSTRAY_BACKEND": "gtk", "NO_AT_BRIDGE": "1", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}
    env.pop("MEMEXT_TRAY_ICON", None)
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "tray-symbolic.out", "w") as output:
        app = subprocess.Popen(
            ["dbus-run-session", "--", sys.executable, "-m", "memext.tray", "--config", str(cfg)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(
                lambda: "Files: 2," in latest_menu(log) or "symbolic icon" in (log.read_text() if log.exists() else ""),
                timeout=30,
                what="the tray to start",
            )
            assert "pystray._gtk, symbolic icon" in log.read_text()
            icons = wait_for(lambda: [w for w in xsession.windows("memext") if w[2] >= 16], what="the tray icon window")
            ix, iy, iw, ih, _ = icons[0]

            def glyph():
                crop = xsession.screenshot().crop((ix, iy, ix + iw, iy + ih))
                return [tuple(px) for px in np.asarray(crop).reshape(-1, 3).tolist() if max(px) > 60]  # off tint2's black panel

            inked = wait_for(lambda: len(glyph()) > 20 and glyph(), what="the glyph drawn")
            # Grey ink only, light at its core (edges blend into the panel):
            # no state colour (a grey's channels are equal).
            assert all(max(px) - min(px) <= 12 for px in inked), set(inked)
            assert max(min(px) for px in inked) >= 220
            xsession.screenshot().crop((0, SCREEN[1] - 40, 120, SCREEN[1])).save(ARTIFACTS / "tray-symbolic-icon.png")
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            app.wait(timeout=30)


MENU_TEXTS = """
import json, sys, time
from pathlib import Path
import pystray
from memext.tray.autostart import autostart_entry
from memext.tray.daemon import DaemonOptions, TrayDaemon
from memext.tray.icon import TrayApp, to_pystray

app = TrayApp(TrayDaemon(DaemonOptions(config_path=Path(sys.argv[1]))), autostart_entry())
app.last_problem = sys.argv[2]

def texts(items):
    for item in items:
        if item is pystray.Menu.SEPARATOR:
            continue
        yield item.text
        if item.submenu:
            yield from texts(item.submenu)

with app.daemon:
    while not app.daemon.snapshot().agents:
        time.sleep(0.05)
    print(json.dumps([*texts(to_pystray(pystray, app.menu_entries())), app.tooltip(app.daemon.snapshot())]))
"""


def test_menu_labels_and_tooltip_show_bidi_controls_escaped(xsession, tmp_path):
    """A folder name or an error holding a right-to-left override would
    show reversed in a menu label (GTK applies the bidi algorithm): the
    tray's pystray items and tooltip show it escaped."""
    gone = tmp_path / "notes \u202egnp.exe"  # reads "notes exe.png"
    cfg = write_config(tmp_path / "config.toml", {"work": gone})
    env = {**os.environ, "DISPLAY": xsession.display, "NO_AT_BRIDGE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", MENU_TEXTS, str(cfg), "sync failed: \u2067evil\u2069 \x1b[2J"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    texts = json.loads(out.stdout)
    shown = "\n".join(texts)
    assert not [c for c in "\u202e\u2067\u2069\x1b" if c in shown], texts
    assert any(r"Folder missing: " in t and r"notes \u202egnp.exe" in t for t in texts), texts
    assert r"sync failed: \u2067evil\u2069 \x1b[2J" in texts[-1]
