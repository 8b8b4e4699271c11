"""Logging for the tray: a rotating file in the platformdirs log folder."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOG_NAME = "tray.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def setup_logging(log_dir: Path, *, verbose: bool = False, stderr: bool = False) -> Path:
    """Send memext's logs to ``<log_dir>/tray.log`` (rotated at 1 MB, 3
    old files kept), and to stderr too when asked. Returns the log file.

    Other libraries log warnings and up; memext logs info (debug with
    ``verbose``). Calling it again replaces the handlers it added.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / LOG_NAME
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_memext_tray", False)]:
        root.removeHandler(h)
        h.close()
    handlers: list[logging.Handler] = [
        logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    ]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for h in handlers:
        h.setFormatter(logging.Formatter(FORMAT))
        h._memext_tray = True  # type: ignore[attr-defined]
        root.addHandler(h)
    root.setLevel(logging.WARNING)
    logging.getLogger("memext").setLevel(logging.DEBUG if verbose else logging.INFO)
    return path
