"""Opening folders and files with the desktop's default application."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

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


def open_path(path: Path) -> None:
    """Open a folder or file without waiting; problems are logged, not raised."""
    cmd = open_command(path)
    try:
        if cmd is None:
            os.startfile(str(path))  # type: ignore[attr-defined]  # Windows only
        else:
            subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
    except OSError as exc:
        log.error("cannot open %s: %s", path, exc)


def ensure_config_file(path: Path) -> Path:
    """Create a commented config file when there is none, so "Open config"
    always has something to open; an existing file is left alone."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(CONFIG_TEMPLATE)
    return path
