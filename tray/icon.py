"""The tray icon: pystray renders the daemon's state and the menu model.

pystray is imported only in :meth:`TrayApp.run` (its import fails without
a display). On Linux pystray picks AppIndicator, then GTK (both show real
menus; set ``PYSTRAY_BACKEND`` to choose), and without PyGObject falls back
to plain X (an icon with no menu), which the app then says, with how to get
the menu; ``run()`` stays on the main thread and every state change reaches
the icon through pystray's own main-loop scheduling (``update_menu``,
``icon``/``title`` setters).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from PIL import Image

from memext.engine.for_faces import terminal_safe

from .autostart import AutostartEntry
from .daemon import PAUSED_CHECK_S, AgentState, DaemonSnapshot, TrayDaemon
from .icon_image import STATE_COLOURS, icon_image, icon_style
from .menu import MenuEntry, build_menu, render_text, shorten, tooltip_text
from .opener import ensure_config_file, open_path

__all__ = ["STATE_COLOURS", "TrayApp", "icon_image", "icon_style", "menu_missing_warning", "to_pystray", "tooltip_icon_class"]

log = logging.getLogger("memext.tray")

#: How to get a tray menu on Linux (ECOSYSTEM_NOTES: pystray on Linux).
MENU_INSTALL_HINT = (
    "install PyGObject for a menu: apt-get install libgirepository1.0-dev libcairo2-dev pkg-config "
    'gir1.2-gtk-3.0 gir1.2-ayatanaappindicator3-0.1, then pip install "PyGObject<3.51" into memext\'s environment'
)


def menu_missing_warning(backend: str, *, platform: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The warning to give when pystray fell back to a backend without a menu.

    ``backend`` is the icon class's module (``pystray._xorg``). On Linux
    pystray tries AppIndicator, then GTK, then plain X; it lands on X only
    when PyGObject (or its GIR typelibs) is missing, and the icon then has
    no menu: no Sync now, no Pause, no Quit. Someone who chose a backend
    with ``PYSTRAY_BACKEND`` gets no warning.
    """
    platform = sys.platform if platform is None else platform
    env = os.environ if env is None else env
    if not platform.startswith("linux") or env.get("PYSTRAY_BACKEND"):
        return None
    if backend.rsplit(".", 1)[-1] != "_xorg":
        return None
    return f"the tray icon has no menu (pystray fell back to plain X: PyGObject is missing); {MENU_INSTALL_HINT}"


def template_icon_class(pystray: Any, base: type | None = None) -> type:
    """pystray's icon, with its macOS image marked as a template image
    (macOS then tints it for a light or dark menu bar). pystray has no
    option for it, so this marks the NSImage its ``_assert_image`` builds;
    where that image is missing (another backend) nothing changes."""
    base = base or pystray.Icon

    class TemplateIcon(base):  # type: ignore[misc, valid-type]
        def _assert_image(self) -> None:
            super()._assert_image()
            image = getattr(self, "_icon_image", None)
            if image is not None and hasattr(image, "setTemplate_"):
                image.setTemplate_(True)

    TemplateIcon.__module__ = pystray.Icon.__module__  # the backend name the log and warnings use
    return TemplateIcon


def tooltip_icon_class(pystray: Any) -> type:
    """pystray's icon, whose title is also the hover tooltip. pystray's GTK
    backend gives its status icon only a title, which no tray host shows
    on hover; this sets the tooltip text to it too. Other backends show
    the title already (X: the window name) or have no tooltip
    (AppIndicator): nothing changes there."""

    class TooltipIcon(pystray.Icon):
        def _show(self) -> None:
            super()._show()
            self._set_tooltip()  # the title given at construction, never "updated"

        def _update_title(self) -> None:
            super()._update_title()
            self._set_tooltip()

        def _set_tooltip(self) -> None:
            status_icon = getattr(self, "_status_icon", None)
            if status_icon is not None and hasattr(status_icon, "set_tooltip_text"):
                from gi.repository import GLib

                GLib.idle_add(status_icon.set_tooltip_text, self.title)  # on GTK's main loop, as pystray's own update

    TooltipIcon.__module__ = pystray.Icon.__module__
    return TooltipIcon


def _handler(fn):
    def handler(icon, item):  # pystray calls actions with (icon, item)
        fn()

    return handler


def to_pystray(pystray: Any, entries: tuple[MenuEntry, ...]) -> list:
    """pystray menu items for menu entries, one to one; their text (folder
    names, errors) with control characters made visible, so a label is
    never shown reordered."""
    items = []
    for e in entries:
        if e.separator:
            items.append(pystray.Menu.SEPARATOR)
        elif e.submenu is not None:
            items.append(pystray.MenuItem(terminal_safe(e.text), pystray.Menu(*to_pystray(pystray, e.submenu)), enabled=e.enabled))
        else:
            checked = None if e.checked is None else (lambda item, v=e.checked: v)
            action = _handler(e.action) if e.action else None
            items.append(pystray.MenuItem(terminal_safe(e.text), action, checked=checked, enabled=e.enabled and e.action is not None))
    return items


class TrayApp:
    """The icon and its menu over a :class:`TrayDaemon` (the menu's actions)."""

    def __init__(self, daemon: TrayDaemon, autostart: AutostartEntry, *, log_file: Path | None = None, style: str | None = None):
        self.daemon = daemon
        self.autostart = autostart
        #: What "Open log" opens.
        self.log_file = log_file
        #: "color", "symbolic" or "template" (default: chosen for the desktop).
        self.style = style or icon_style()
        self._icon: Any = None
        self._shown: tuple[AgentState, bool] | None = None
        self._last_menu_text = ""
        self._quitting = threading.Event()
        # Workers redraw from their own threads: without this an older
        # snapshot could be drawn last.
        self._refresh_lock = threading.Lock()
        #: Appended to the icon's title (e.g. that there is no menu).
        self.title_note: str | None = None
        #: The last thing the menu could not do (also a notification).
        self.last_problem: str | None = None
        self._pause_poll = threading.Event()

    # -- MenuActions ------------------------------------------------------------------------

    def sync_now(self, agent_id: str) -> None:
        self.daemon.sync_now(agent_id)

    def rebuild(self, agent_id: str) -> None:
        self.daemon.rebuild(agent_id)

    def sync_all(self) -> None:
        self.daemon.sync_all()

    def open_folder(self, agent_id: str) -> None:
        open_path(self.daemon.snapshot().agent(agent_id).memory_folder, self._cannot_open)

    def open_config(self) -> None:
        try:
            open_path(ensure_config_file(self.daemon.config_file), self._cannot_open)
        except OSError as exc:
            log.error("cannot create %s: %s", self.daemon.config_file, exc)
            self._cannot_open(f"cannot create {self.daemon.config_file}: {exc.strerror or exc}")

    def open_log(self) -> None:
        if self.log_file is None:
            log.error("no log file: the tray was started without one")
            self._cannot_open("no log file: the tray was started without one")
            return
        open_path(self.log_file, self._cannot_open)

    def _cannot_open(self, message: str) -> None:
        """Say that a file or folder could not be opened (where it is, and
        why): a notification, and the icon's tooltip until the next one."""
        self.last_problem = message
        self.notify("memext: cannot open", message)  # redraws: the tooltip says it too

    def toggle_pause(self) -> None:
        # Stopping watchers joins their threads: keep the UI thread free.
        paused = not self.daemon.paused
        threading.Thread(target=self.daemon.set_paused, args=(paused,), name="memext-pause", daemon=True).start()

    def toggle_autostart(self) -> None:
        try:
            self.autostart.set(not self.autostart.enabled)
            log.info("start at login %s (%s)", "on" if self.autostart.enabled else "off", self.autostart.path)
        except OSError as exc:
            log.error("cannot change start at login (%s): %s", self.autostart.path, exc)
        self.refresh()

    def quit(self) -> None:
        log.info("quit requested")
        self._quitting.set()
        if self._icon is not None:
            self._icon.stop()

    def _quit_from_signal(self, *_: object) -> bool:
        self.quit()
        return False  # GLib: remove the handler

    # -- rendering -----------------------------------------------------------------------------

    def menu_entries(self) -> tuple[MenuEntry, ...]:
        entries = build_menu(self.daemon.snapshot(), self, autostart=self.autostart.enabled)
        text = render_text(entries)
        if text != self._last_menu_text:
            self._last_menu_text = text
            log.debug("menu:\n%s", text)
        return entries

    def refresh(self) -> None:
        """Redraw the icon and the menu (called from any thread)."""
        icon = self._icon
        if icon is None:
            return
        with self._refresh_lock:  # snapshot and draw as one: the newest state is drawn last
            snap = self.daemon.snapshot()
            shown = (snap.overall, snap.paused)
            if shown != self._shown:
                self._shown = shown
                icon.icon = self.picture(snap)
            icon.title = self.tooltip(snap)
            icon.update_menu()

    def tooltip(self, snap: DaemonSnapshot) -> str:
        """The icon's title, shown on hover: the state, and what needs doing."""
        title = tooltip_text(snap)
        if self.title_note:
            title += f" ({self.title_note})"
        if self.last_problem:
            title += f"; {shorten(self.last_problem)}"
        return terminal_safe(title)

    def _watch_paused(self) -> None:
        """While paused no watcher reports edits: look now and then, and
        redraw when the menu would say something new (memory changed since
        the last sync); a redraw for nothing would close an open submenu."""
        while not self._pause_poll.wait(PAUSED_CHECK_S):
            if self.daemon.paused and self._menu_would_change():
                self.refresh()

    def _menu_would_change(self) -> bool:
        entries = build_menu(self.daemon.snapshot(), self, autostart=self.autostart.enabled)
        return render_text(entries) != self._last_menu_text

    def picture(self, snap: DaemonSnapshot) -> Image.Image:
        """The icon for a snapshot, in this desktop's style."""
        return icon_image(snap.overall, style=self.style, paused=snap.paused)

    def notify(self, title: str, message: str) -> None:
        """A desktop notification. The icon is redrawn first: the
        notification carries the icon's image, which must show the new
        state (red for an error), not the one before it."""
        self.refresh()
        icon = self._icon
        if icon is not None and getattr(icon, "HAS_NOTIFICATION", False):
            try:
                icon.notify(terminal_safe(message), terminal_safe(title))
            except Exception as exc:  # no notification daemon: the log has it
                log.debug("notification failed: %s", exc)

    # -- running -------------------------------------------------------------------------------

    def run(self) -> int:
        """Show the icon until Quit (on the main thread); returns the exit code."""
        glib_error: tuple[type[BaseException], ...] = ()
        try:
            from gi.repository import GLib

            glib_error = (GLib.Error,)
            # Before pystray initialises GTK: names the windows (WM_CLASS)
            # "memext" rather than after the script.
            GLib.set_prgname("memext")
            GLib.set_application_name("memext")
        except ImportError:
            GLib = None  # noqa: N806 - not a GTK backend

        import pystray  # needs a display: imported only now

        icon_class = tooltip_icon_class(pystray)
        if self.style == "template":
            icon_class = template_icon_class(pystray, icon_class)
        first = self.daemon.snapshot()
        self._icon = icon_class(
            "memext",
            self.picture(first),
            self.tooltip(first),
            menu=pystray.Menu(lambda: to_pystray(pystray, self.menu_entries())),
        )
        backend = type(self._icon).__module__
        log.info("tray icon backend: %s, %s icon", backend, self.style)
        no_menu = menu_missing_warning(backend)
        if no_menu:
            log.warning("%s", no_menu)
            self.title_note = "no menu: PyGObject is missing, see the log"
        self.daemon.add_listener(self.refresh)
        gtk_loop = GLib is not None and backend.endswith(("_gtk", "_appindicator"))
        if not gtk_loop:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *a: self.quit())

        def setup(icon) -> None:
            icon.visible = True
            if gtk_loop:
                # The GTK main loop runs in C: Python signal handlers would
                # wait for it, GLib's are dispatched by it.
                for sig in (signal.SIGTERM, signal.SIGINT):
                    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, self._quit_from_signal)
            self.refresh()
            log.info("tray icon shown")
            if no_menu:
                self.notify("memext: no tray menu", no_menu)  # once; plain X has no notifications, the title says it

        self.daemon.start()
        threading.Thread(target=self._watch_paused, name="memext-paused-check", daemon=True).start()
        try:
            self._icon.run(setup=setup)
        except glib_error as exc:
            # pystray hides its notification at stop; with no notification
            # daemon on the session bus that raises. Nothing is lost.
            log.debug("ignored at icon stop: %s", exc)
        finally:
            self._pause_poll.set()
            log.info("stopping the agents")
            t0 = time.monotonic()
            self.daemon.stop()
            log.info("stopped in %.1f s", time.monotonic() - t0)
        return 0
