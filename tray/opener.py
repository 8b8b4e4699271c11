"""Opening folders and files with the desktop's default application."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger("memext.tray")

CONFIG_TEMPLATE = """\
# memext configuration. The tray picks up edits to this file without a restart.
#
# [memory_search]              # defaults for every agent
# provider = "auto"            # auto | openai | gemini | local | none
# sync.watch_debounce_ms = 1500
# sync.interval_minutes = 0    # 0: only on changes
#
# [[agents]]
# id = "work"
# workspace = "~/agents/work"  # holds MEMORY.md and memory/YYYY-MM-DD.md
"""


def open_command(path: Path, platform: str | None = None) -> list[str] | None:
    """The command that opens ``path``; None on Windows (``os.startfile``)."""
    platform = platform or sys.platform
    if platform == "win32":
        return None
    if platform == "darwin":
        return ["open", str(path)]
    return ["xdg-open", str(path)]


#: What xdg-open's exit codes mean (its manual page), in words.
XDG_OPEN_FAILURES = {
    1: "the command line was refused",
    2: "the file does not exist",
    3: "a tool it needs is missing",
    4: "no application is set up to open it",
}

#: Called with a message a person can act on when opening fails.
Failed = Callable[[str], None]


def open_path(path: Path, on_failure: Failed | None = None) -> threading.Thread | None:
    """Open a folder or file without blocking the caller.

    The opener (``xdg-open``, ``open``) runs in its own session and a
    waiter thread reaps it, so no zombie is left behind; when it cannot be
    started or exits with an error (no application for the file type), the
    problem is logged and ``on_failure`` gets a message that says where the
    file is. Returns the waiter thread (None on Windows or when nothing
    started)."""
    cmd = open_command(path)
    try:
        if cmd is None:
            os.startfile(str(path))  # type: ignore[attr-defined]  # Windows only
            return None
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        _failed(f"cannot open {path}: {exc.strerror or exc}", on_failure)
        return None
    waiter = threading.Thread(target=_wait, args=(proc, cmd[0], path, on_failure), name="memext-open", daemon=True)
    waiter.start()
    return waiter


def _wait(proc: subprocess.Popen, opener: str, path: Path, on_failure: Failed | None) -> None:
    code = proc.wait()
    if code != 0:
        why = XDG_OPEN_FAILURES.get(code, "it failed") if opener == "xdg-open" else "it failed"
        _failed(f"cannot open {path}: {why} ({opener} exited with {code}); open the file from a file manager or a terminal", on_failure)


def _failed(message: str, on_failure: Failed | None) -> None:
    log.error("%s", message)
    if on_failure is not None:
        try:
            on_failure(message)
        except Exception as exc:  # a failed notification must not hide the log line
            log.debug("could not show %r: %s", message, exc)


def ensure_config_file(path: Path) -> Path:
    """Create a commented config file when there is none, so "Open config"
    always has something to open; an existing file is left alone."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(CONFIG_TEMPLATE)
    return path
