"""One writer per agent across processes, with stale-lock recovery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from memext.engine.errors import LockTimeout
from memext.engine.lock import WriterLock

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memext.engine.lock import WriterLock
    lock = WriterLock(Path(sys.argv[1]), timeout=5).acquire()
    print("locked", flush=True)
    time.sleep(600)
    """
)


def start_holder(db):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_a_held_lock_times_out_with_the_holder_named(tmp_path):
    db = tmp_path / "a.sqlite"
    holder = start_holder(db)
    try:
        with pytest.raises(LockTimeout, match=f"pid {holder.pid}"):
            WriterLock(db, timeout=0.2).acquire()
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    db = tmp_path / "a.sqlite"
    holder = start_holder(db)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / "a.sqlite.lock").exists()  # the file stays...
    start = time.monotonic()
    with WriterLock(db, timeout=0):  # ...but holds no lock
        pass
    assert time.monotonic() - start < 1


def test_lock_excludes_threads_of_one_process(tmp_path):
    import threading

    db = tmp_path / "a.sqlite"
    first = WriterLock(db, timeout=1).acquire()
    errors = []

    def other():
        try:
            WriterLock(db, timeout=0.1).acquire()
        except LockTimeout as exc:
            errors.append(exc)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    first.release()
    assert errors
