"""Start at login: the file for each OS, and the Linux one written and removed."""

from __future__ import annotations

import configparser
import os
import plistlib
import shlex
import subprocess
import sys
import time
from pathlib import Path

from memext.tray.autostart import LAUNCH_AGENT_LABEL, autostart_entry, desktop_exec, tray_command

CMD = ["/opt/my env/bin/python", "-m", "memext.tray"]


def parse_desktop(text: str) -> dict[str, str]:
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str  # keys are case-sensitive
    cp.read_string(text)
    return dict(cp["Desktop Entry"])


def test_linux_desktop_entry(tmp_path):
    entry = autostart_entry("linux", command=CMD, home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert entry.path == tmp_path / "xdg" / "autostart" / "memext.desktop"
    d = parse_desktop(entry.content)
    assert d["Type"] == "Application"
    assert d["Name"] == "memext"
    assert d["Exec"] == '"/opt/my env/bin/python" -m memext.tray'
    assert d["Terminal"] == "false"
    assert d["X-GNOME-Autostart-enabled"] == "true"
    # Relative XDG_CONFIG_HOME is ignored, as the spec says.
    entry = autostart_entry("linux", command=CMD, home=tmp_path, env={"XDG_CONFIG_HOME": "rel"})
    assert entry.path == tmp_path / ".config" / "autostart" / "memext.desktop"


def test_desktop_exec_quoting_round_trips():
    # After the value's own unescaping (\\ -> \), Exec is split like a shell word list.
    for argv in (["/usr/bin/python3", "-m", "memext.tray"], ['/p/we"ird dir\\x/python', "-m", "memext.tray"], ["/p/100%/python"]):
        value = desktop_exec(argv).replace("\\\\", "\\")
        assert [a.replace("%%", "%") for a in shlex.split(value)] == argv
    assert desktop_exec(["/p/100%/python"]) == "/p/100%%/python"
    # Inside quotes ` and $ are escaped too; then every backslash is doubled.
    assert desktop_exec(["/a $b`c"]) == '"/a \\\\$b\\\\`c"'


def test_macos_launch_agent(tmp_path):
    entry = autostart_entry("darwin", command=CMD, home=tmp_path)
    assert entry.path == tmp_path / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT_LABEL}.plist"
    plist = plistlib.loads(entry.content.encode())
    assert plist["Label"] == LAUNCH_AGENT_LABEL
    assert plist["ProgramArguments"] == CMD
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] is False


def test_windows_startup_entry(tmp_path):
    appdata = tmp_path / "AppData" / "Roaming"
    cmd = [r"C:\Program Files\Python311\pythonw.exe", "-m", "memext.tray"]
    entry = autostart_entry("win32", command=cmd, home=tmp_path, env={"APPDATA": str(appdata)})
    assert entry.path == appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup" / "memext.cmd"
    lines = entry.content.splitlines()
    assert lines[0] == "@echo off"
    assert lines[-1] == r'start "" "C:\Program Files\Python311\pythonw.exe" -m memext.tray'


def test_windows_prefers_pythonw(tmp_path):
    (tmp_path / "python.exe").write_text("")
    assert tray_command(str(tmp_path / "python.exe"), "win32")[0] == str(tmp_path / "python.exe")
    (tmp_path / "pythonw.exe").write_text("")
    assert tray_command(str(tmp_path / "python.exe"), "win32") == [str(tmp_path / "pythonw.exe"), "-m", "memext.tray"]
    assert tray_command("/usr/bin/python3", "linux") == ["/usr/bin/python3", "-m", "memext.tray"]


def test_linux_entry_is_written_and_removed(isolated_user_dirs):
    entry = autostart_entry("linux")  # this user's real location (XDG_CONFIG_HOME is per test)
    assert entry.path == Path(os.environ["XDG_CONFIG_HOME"]) / "autostart" / "memext.desktop"
    assert not entry.enabled
    entry.enable()
    assert entry.enabled
    d = parse_desktop(entry.path.read_text())
    argv = shlex.split(d["Exec"].replace("\\\\", "\\"))
    assert argv == [sys.executable, "-m", "memext.tray"]
    # The command really starts the tray (here: its --help).
    out = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--headless" in out.stdout
    entry.disable()
    assert not entry.path.exists()
    entry.disable()  # idempotent
    assert list(entry.path.parent.iterdir()) == []


def test_refresh_rewrites_only_an_outdated_enabled_entry(tmp_path):
    entry = autostart_entry("linux", command=["/usr/bin/python3", "-m", "memext.tray"], env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert entry.refresh() is False and not entry.enabled  # not enabled: nothing written
    entry.enable()
    assert entry.refresh() is False  # up to date
    entry.path.write_text(entry.content.replace("-m memext.tray", "-m tray"))
    assert entry.refresh() is True
    assert entry.path.read_text() == entry.content


def test_an_entry_from_an_older_version_is_rewritten_when_the_tray_starts(isolated_user_dirs, tmp_path):
    """Before memext.tray, the login entry ran `python -m tray`, which now
    means the user's own `tray` module (or nothing): the tray rewrites it."""
    entry = autostart_entry("linux")
    old = "[Desktop Entry]\nType=Application\nName=memext\nExec=/usr/bin/python3 -m tray\n"
    entry.path.parent.mkdir(parents=True, exist_ok=True)
    entry.path.write_text(old)
    cfg = tmp_path / "config.toml"
    cfg.write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext.tray", "--headless", "--config", str(cfg)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while entry.path.read_text() == old and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    argv = shlex.split(parse_desktop(entry.path.read_text())["Exec"].replace("\\\\", "\\"))
    assert argv == [sys.executable, "-m", "memext.tray", "--config", str(cfg.resolve())]
