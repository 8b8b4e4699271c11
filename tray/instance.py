"""One tray per user: an OS file lock in the state folder.

``filelock`` takes an ``flock``/``LockFileEx`` lock that the OS drops when
the holder exits or is killed, so a crashed tray never blocks the next one.
The holder's pid is written beside the lock for the "already running" message.
"""

from __future__ import annotations

import os
from pathlib import Path

import filelock

from memext.engine import AppPaths, app_paths
from memext.engine.for_faces import private_dir


def instance_lock_path(paths: AppPaths | None = None) -> Path:
    return (paths or app_paths()).state_dir / "tray.lock"


class SingleInstance:
    """``acquire()`` is True for the first tray of this user, False after."""

    def __init__(self, path: Path | None = None):
        self.path = path or instance_lock_path()
        self.pid_path = self.path.with_name(self.path.name + ".pid")
        self._lock = filelock.FileLock(str(self.path))
        self.held = False

    def acquire(self) -> bool:
        private_dir(self.path.parent, tighten=False)
        try:
            self._lock.acquire(timeout=0)
        except filelock.Timeout:
            return False
        self.held = True
        try:
            self.pid_path.write_text(str(os.getpid()))
        except OSError:
            pass  # only used for messages
        return True

    def holder_pid(self) -> int | None:
        """The pid of the running tray, when recorded."""
        try:
            return int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if not self.held:
            return
        try:
            self.pid_path.unlink()
        except OSError:
            pass
        self._lock.release()
        self.held = False

    def __enter__(self) -> "SingleInstance":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
