"""Logging for the tray: a rotating file in the platformdirs log folder.

The folder is 0700 and the log files 0600 (rotated ones included): log
lines may quote memory text or provider errors.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

from memext.engine.for_faces import PRIVATE_FILE_MODE, private_dir, private_file

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
    private_dir(log_dir)
    path = log_dir / LOG_NAME
    for old in [path, *(path.with_name(f"{LOG_NAME}.{i}") for i in range(1, BACKUPS + 1))]:
        private_file(old)
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_memext_tray", False)]:
        root.removeHandler(h)
        h.close()
    handlers: list[logging.Handler] = [_PrivateRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for h in handlers:
        h.setFormatter(logging.Formatter(FORMAT))
        h._memext_tray = True  # type: ignore[attr-defined]
        root.addHandler(h)
    root.setLevel(logging.WARNING)
    logging.getLogger("memext").setLevel(logging.DEBUG if verbose else logging.INFO)
    return path


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Opens (and after each rotation, re-creates) the log file 0600."""

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)
