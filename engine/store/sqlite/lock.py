"""One writer per SQLite index across processes: a file lock.

The SQLite driver's writer lock (the PostgreSQL one is
:class:`~memext.engine.store.postgres.lock.AdvisoryLock`); both satisfy
:class:`~memext.engine.store.drivers.AgentLock`, and the index, the keeper,
appends and syncs get theirs from the driver table
(:func:`~memext.engine.store.drivers.writer_lock`).

The lock is an OS file lock (``filelock``: ``flock`` on POSIX,
``LockFileEx`` on Windows) on ``<index>.lock``. The OS drops it when its
holder dies, however it dies, so a stale lock never blocks the next writer:
a leftover lock file holds no lock. Who holds it (pid, host, since when) is
written beside it in ``<index>.lock.owner`` for messages and status.
Readers never take this lock.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import LockTimeout
from ...paths import PRIVATE_FILE_MODE, private_dir, write_private_text

if TYPE_CHECKING:
    import filelock


def file_lock_held(db_path: Path) -> bool:
    """Probe a SQLite index's file lock without waiting (released at once if free)."""
    import filelock

    probe = filelock.FileLock(str(db_path) + ".lock", timeout=0)
    try:
        probe.acquire()
    except filelock.Timeout:
        return True
    except OSError:
        return False  # no lock file can be made there: nobody holds one
    probe.release()
    return False


class WriterLock:
    """``with WriterLock(db_path, timeout=...)``: hold the agent's writer lock.

    ``timeout`` is in seconds; 0 means "try once", None waits forever.
    """

    def __init__(self, db_path: Path, timeout: float | None = 600):
        self.path = Path(str(db_path) + ".lock")
        self.owner_path = Path(str(db_path) + ".lock.owner")
        self.timeout = timeout
        #: Set at acquire: the last holder's note was still there, so it
        #: died holding the lock (an unclean shutdown of a writer).
        self.previous_holder_died = False
        # Imported here: filelock (with its asyncio half) costs a one-shot
        # search that never writes about 20 ms.
        import filelock

        # 0600: the lock files sit beside the index in a folder that may not be private.
        self._lock: filelock.BaseFileLock = filelock.FileLock(
            str(self.path), timeout=-1 if timeout is None else timeout, mode=PRIVATE_FILE_MODE
        )

    def acquire(self) -> "WriterLock":
        import filelock

        private_dir(self.path.parent, tighten=False)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            holder = self.holder()
            who = f" by pid {holder['pid']} on {holder['host']}" if holder else ""
            raise LockTimeout(
                f"the index {self.path.with_suffix('')} is being written{who}; "
                f"gave up after {self.timeout:g} s (try again when that sync ends)"
            ) from None
        self.previous_holder_died = self.owner_path.exists()
        self._write_owner_note()
        return self

    def _write_owner_note(self) -> None:
        try:
            import socket  # here: a search that never writes does not load it

            write_private_text(self.owner_path, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}))
        except OSError:
            # The note is for messages only: on a full disk it is skipped
            # (write_private_text leaves no half-written temp file).
            pass

    def release(self) -> None:
        try:
            self.owner_path.unlink()
        except OSError:
            pass
        self._lock.release()

    def holder(self) -> dict | None:
        """Who holds (or last held) the lock, if recorded."""
        try:
            return json.loads(self.owner_path.read_text())
        except (OSError, ValueError):
            return None

    @property
    def is_locked(self) -> bool:
        return self._lock.is_locked

    def __enter__(self) -> "WriterLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
