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
from memext.engine.store.sqlite.lock import WriterLock

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memext.engine.store.sqlite.lock import WriterLock
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


FULL_DISK_CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from memext.engine.store.sqlite.lock import WriterLock
    if sys.argv[2] == "rlimit":
        # Stand-in for a full disk where no tmpfs can be mounted: writes
        # past 1 byte fail with EFBIG instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))
    with WriterLock(Path(sys.argv[1]), timeout=5) as lock:
        print("held", lock.holder(), flush=True)
    """
)


def _mount_full_tmpfs(folder) -> bool:
    """A 64 KiB tmpfs at ``folder``, filled up; False where mounting is not allowed."""
    folder.mkdir()
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        return False
    try:
        with open(folder / "filler", "wb") as f:
            f.write(b"x" * 1024 * 1024)
    except OSError:
        pass  # ENOSPC: full, as wanted
    return True


def test_full_disk_leaves_no_owner_temp_files(tmp_path):
    # A full file system: on a tiny full tmpfs when this user may mount
    # one (root in CI containers), else with RLIMIT_FSIZE in the child.
    disk = tmp_path / "disk"
    mounted = _mount_full_tmpfs(disk)
    try:
        db = disk / "agent.sqlite"
        mode = "tmpfs" if mounted else "rlimit"
        out = subprocess.run([sys.executable, "-c", FULL_DISK_CHILD, str(db), mode], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("held None")  # the lock held; only the owner note was lost
        leftovers = sorted(p.name for p in disk.iterdir() if ".lock.owner" in p.name)
        assert leftovers == [], f"{mode}: {leftovers}"
    finally:
        if mounted:
            subprocess.run(["umount", str(disk)], check=False)
