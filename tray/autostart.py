"""Start the tray at login: one file per platform, written or removed.

- Linux (and other XDG desktops): ``$XDG_CONFIG_HOME/autostart/memext.desktop``.
- macOS: ``~/Library/LaunchAgents/io.github.memext.tray.plist`` (``RunAtLoad``).
- Windows: ``memext.cmd`` in the Startup folder, starting ``pythonw`` (no console).

The command is this Python running ``-m memext.tray``, so the entry keeps working
inside a virtual environment.
"""

from __future__ import annotations

import os
import plistlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

APP_ID = "memext"
LAUNCH_AGENT_LABEL = "io.github.memext.tray"


@dataclass(frozen=True)
class AutostartEntry:
    """The file that starts the tray at login, and what it holds."""

    path: Path
    content: str

    @property
    def enabled(self) -> bool:
        return self.path.is_file()

    def enable(self) -> None:
        """Write the file (atomically, replacing an older one)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(self.content, encoding="utf-8", newline="\r\n" if self.path.suffix == ".cmd" else "\n")
        os.replace(tmp, self.path)

    def disable(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def set(self, enabled: bool) -> None:
        self.enable() if enabled else self.disable()

    def refresh(self) -> bool:
        """Rewrite an enabled entry whose content is out of date (one
        written by an older memext, e.g. ``-m tray`` before the package
        became ``memext.tray``); True when it was rewritten."""
        try:
            current = self.path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return False  # not enabled (or not ours to judge)
        if current.replace("\r\n", "\n") == self.content:
            return False
        self.enable()
        return True


def tray_command(python: str | None = None, platform: str | None = None) -> list[str]:
    """``[python, "-m", "memext.tray"]``; on Windows ``pythonw.exe`` when it exists."""
    platform = platform or sys.platform
    python = python or sys.executable
    if platform == "win32":
        p = Path(python)
        windowed = p.with_name("pythonw.exe")
        if p.name.lower() == "python.exe" and windowed.exists():
            python = str(windowed)
    return [python, "-m", "memext.tray"]


# -- Linux: XDG autostart -----------------------------------------------------------

_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec(argv: Sequence[str]) -> str:
    """An ``Exec=`` value per the Desktop Entry spec: arguments with
    reserved characters are double-quoted (with ``"`$\\`` escaped inside),
    ``%`` is doubled, then the value's own backslash escaping is applied."""
    parts = []
    for arg in argv:
        arg = arg.replace("%", "%%")
        if not arg or any(c in _DESKTOP_RESERVED for c in arg):
            arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
        parts.append(arg)
    return " ".join(parts).replace("\\", "\\\\")


def linux_entry(command: Sequence[str], config_home: Path) -> AutostartEntry:
    content = "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Name=memext",
            "GenericName=Agent memory search",
            "Comment=Keeps every agent's memory index fresh in the background",
            f"Exec={desktop_exec(command)}",
            "Terminal=false",
            "Categories=Utility;",
            "X-GNOME-Autostart-enabled=true",
            "",
        ]
    )
    return AutostartEntry(config_home / "autostart" / f"{APP_ID}.desktop", content)


# -- macOS: LaunchAgent ----------------------------------------------------------------


def macos_entry(command: Sequence[str], home: Path, log_dir: Path | None = None) -> AutostartEntry:
    plist: dict = {
        "Label": LAUNCH_AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        # Quit from the menu means quit: no relaunch.
        "KeepAlive": False,
        "ProcessType": "Interactive",
    }
    if log_dir is not None:
        plist["StandardErrorPath"] = str(log_dir / "tray-launchd.log")
    content = plistlib.dumps(plist, sort_keys=False).decode("utf-8")
    return AutostartEntry(home / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT_LABEL}.plist", content)


# -- Windows: Startup folder --------------------------------------------------------------


def _cmd_quote(arg: str) -> str:
    return '"' + arg.replace('"', '""') + '"' if (not arg or any(c in arg for c in ' \t&|<>^()"%')) else arg


def windows_entry(command: Sequence[str], appdata: Path) -> AutostartEntry:
    # `start ""` returns at once, so no console window stays open.
    args = " ".join(_cmd_quote(a.replace("%", "%%")) for a in command)
    content = f'@echo off\nrem Starts the memext tray at login.\nstart "" {args}\n'
    folder = appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
    return AutostartEntry(folder / f"{APP_ID}.cmd", content)


# -- this platform ------------------------------------------------------------------------


def autostart_entry(
    platform: str | None = None,
    *,
    command: Sequence[str] | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> AutostartEntry:
    """The entry for ``platform`` (default: this one)."""
    platform = platform or sys.platform
    env = os.environ if env is None else env
    home = home or Path.home()
    command = list(command) if command is not None else tray_command(platform=platform)
    if platform == "darwin":
        return macos_entry(command, home)
    if platform == "win32":
        appdata = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        return windows_entry(command, appdata)
    xdg = env.get("XDG_CONFIG_HOME", "")
    config_home = Path(xdg) if os.path.isabs(xdg) else home / ".config"  # the spec ignores relative values
    return linux_entry(command, config_home)
