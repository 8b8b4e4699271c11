"""One writer per agent across machines: a PostgreSQL advisory lock.

The lock is ``pg_try_advisory_lock(key)`` on a connection of its own, the
key derived from the agent id (:func:`~.url.lock_key`). The server drops
it when that connection ends, however the holder died (keepalives notice a
machine that vanished), so no stale lock blocks the next writer. The
holder's connection carries ``application_name = "memext writer <agent>
pid N on HOST"``, which messages and status read from ``pg_stat_activity``.
Readers never take it.
"""

from __future__ import annotations

import time
from typing import Any

from ...errors import LockTimeout
from .connection import connect_plain, process_tag
from .url import lock_key, redact_url

#: How often a waiting writer asks again.
POLL_S = 0.2


def _lock_ids(agent_id: str) -> tuple[int, int]:
    """The (classid, objid) under which pg_locks lists a bigint advisory key."""
    key = lock_key(agent_id) & 0xFFFFFFFFFFFFFFFF
    return key >> 32, key & 0xFFFFFFFF


_HOLDER = (
    "SELECT a.application_name, host(a.client_addr), a.backend_start FROM pg_locks l "
    "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
    "AND l.classid = %s AND l.objid = %s AND l.objsubid = 1 AND l.database = "
    "(SELECT oid FROM pg_database WHERE datname = current_database())"
)


class AdvisoryLock:
    """``with AdvisoryLock(url, agent_id, timeout=...)``: hold the agent's writer lock.

    ``timeout`` is in seconds; 0 means "try once", None waits forever.
    """

    def __init__(self, url: str, agent_id: str, timeout: float | None = 600):
        self.url = url
        self.agent_id = agent_id
        self.timeout = timeout
        #: Always False: a writer that died left no half-written
        #: transaction behind (the server rolled it back).
        self.previous_holder_died = False
        self._conn: Any = None

    def acquire(self) -> "AdvisoryLock":
        conn = connect_plain(self.url, f"memext writer {self.agent_id} {process_tag()}")
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        try:
            while not conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(self.agent_id),)).fetchone()[0]:
                if deadline is not None and time.monotonic() >= deadline:
                    holder = _describe(self._holder(conn))
                    raise LockTimeout(
                        f"the index of agent {self.agent_id} at {redact_url(self.url)} is being written{holder}; "
                        f"gave up after {self.timeout:g} s (try again when that sync ends)"
                    )
                time.sleep(POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic())))
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return self

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(self.agent_id),))
        except Exception:
            pass  # the connection is gone, and the lock with it
        finally:
            conn.close()

    def _holder(self, conn: Any) -> dict | None:
        row = conn.execute(_HOLDER, _lock_ids(self.agent_id)).fetchone()
        if row is None:
            return None
        return {"application": row[0], "client": row[1], "since": row[2].timestamp() if row[2] else None}

    def holder(self) -> dict | None:
        """Who holds the lock now (its connection's application name and
        address), or None."""
        conn = connect_plain(self.url, f"memext probe {self.agent_id}")
        try:
            return self._holder(conn)
        finally:
            conn.close()

    @property
    def is_locked(self) -> bool:
        """True while this object holds the lock."""
        return self._conn is not None

    def __enter__(self) -> "AdvisoryLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe(holder: dict | None) -> str:
    if not holder:
        return ""
    app = str(holder.get("application") or "")
    who = app.removeprefix("memext writer ").split(" ", 1)[-1] if app.startswith("memext writer ") else app or "another client"
    client = f" from {holder['client']}" if holder.get("client") else ""
    return f" by {who}{client}"


def advisory_lock_held(url: str, agent_id: str) -> bool:
    """True while some connection holds the agent's writer lock."""
    return AdvisoryLock(url, agent_id).holder() is not None
