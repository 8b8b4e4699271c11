"""A running keeper's word that an index matches its memory files
(DESIGN.md §5, §13), so that a one-shot search can skip the walk.

A :class:`~memext.engine.freshness.keeper.FreshnessKeeper` that watches an
agent's memory folders with native file events keeps a small record beside
the index, ``<index>.keeper``, and holds an OS file lock on
``<index>.keeper.lock`` for as long as it runs. The record says "fresh"
only when the keeper's last sync worked, left no file unverified (the
racy-timestamp rule, §5: such a file makes it "dirty" until a recheck has
read it again), and saw no file event and no gap in watching from that
sync's start to its end; the first file event the watcher passes on after
that makes it "dirty" again at once, before the event's debounce, as do
pausing and stopping (the record is removed) and a watcher that stops or
falls back to polling.

:func:`vouches` is the reader's side: it trusts the record only while the
lock is held (the OS drops it when its holder dies, however it dies, so a
crashed keeper's "fresh" is never believed), only for the memory roots the
reader itself would walk (a config edited since the keeper loaded it names
other folders), and only for an index on this machine on a POSIX system;
otherwise the caller checks the files itself. A change no event has
reached the keeper for yet (an edit made in the last milliseconds) is not
covered: the record speaks for what the keeper has seen.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import AgentConfig

SUFFIX = ".keeper"
LOCK_SUFFIX = ".keeper.lock"


def roots_key(agent: "AgentConfig") -> str:
    """What the files a change check walks depend on: the record holds the
    keeper's, so a reader whose config names other folders walks itself."""
    s = agent.settings
    sessions = str(agent.sessions_path) if "sessions" in s.sources else ""
    extra = [str(p) for p in agent.extra_path_list()]
    return json.dumps([str(agent.workspace), extra, s.max_file_bytes, sorted(s.sources), sessions])


def _lock_module():
    """``fcntl`` where file locks can be probed without waiting (POSIX), else None."""
    try:
        import fcntl
    except ImportError:  # Windows: the record is neither kept nor trusted
        return None
    return fcntl


class FreshnessRecord:
    """The keeper's side: the lock held while it runs, and the record it
    writes. Writes only when the verdict changes (a few per sync at most).
    Nothing here raises: a record that cannot be written or locked is no
    record, and searches check the files themselves."""

    def __init__(self, db_path: Path, agent: "AgentConfig"):
        self.path = Path(str(db_path) + SUFFIX)
        self._lock_path = Path(str(db_path) + LOCK_SUFFIX)
        self._roots = roots_key(agent)
        self._fd: int | None = None
        self._fresh: bool | None = None

    @property
    def held(self) -> bool:
        """This keeper holds the lock (another keeper of the agent may)."""
        return self._fd is not None

    def _take_lock(self) -> bool:
        fcntl = _lock_module()
        if fcntl is None:
            return False
        if self._fd is not None:
            return True
        try:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another keeper (the tray and `memext mcp`, say) speaks for the agent
            os.close(fd)
            return False
        self._fd = fd
        return True

    def mark(self, fresh: bool) -> None:
        """Say whether the index matches the files as the keeper has seen them."""
        if fresh and not self._take_lock():
            return
        if self._fd is None or fresh == self._fresh:
            return  # nothing new to say (or never said "fresh": nothing to take back)
        data = json.dumps({"pid": os.getpid(), "fresh": fresh, "roots": self._roots})
        tmp = self.path.with_name(f"{self.path.name}.tmp{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data.encode())
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError:
            # A "fresh" that cannot be written must not leave an older
            # "fresh" standing: take the record away.
            self._remove(tmp)
            self._remove(self.path)
            self._fresh = None
            return
        self._fresh = fresh

    def close(self) -> None:
        """Take the record away, then let go of the lock (a stopping keeper)."""
        if self._fd is None:
            return
        self._remove(self.path)
        fd, self._fd, self._fresh = self._fd, None, None
        os.close(fd)  # closing the descriptor releases the lock

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass


def vouches(agent: "AgentConfig", db_path: Path) -> bool:
    """True when a running keeper says the index at ``db_path`` matches
    the memory files that ``agent``'s config names (see the module): the
    record says "fresh" for the same roots, and its lock is held."""
    from ..store.drivers import driver_of

    fcntl = _lock_module()
    if fcntl is None or not driver_of(agent).local:
        return False
    try:
        with open(str(db_path) + SUFFIX, "rb") as f:
            record = json.loads(f.read())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("fresh") is not True or record.get("roots") != roots_key(agent):
        return False
    # The record first, then the lock: a keeper stopping in between has
    # released the lock by the time it is probed, and is not believed.
    try:
        fd = os.open(str(db_path) + LOCK_SUFFIX, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        # Held: the keeper that wrote it is running. Any other failure
        # (no locks on this file system) proves nothing.
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
    finally:
        os.close(fd)  # also releases the probe's own lock, if it got one
    return False
