"""A sync that fails on a full disk is recorded where every process sees it
(engine/indexing/last_failure.py, DESIGN.md §5): `memext status` afterwards shows the
error and the changed files, never "fresh", and no temp files stay behind.
On a real full tmpfs when this user may mount one (root in CI containers),
else with RLIMIT_FSIZE capping the failing process (see fault_helpers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import make_agent
from fault_helpers import CAPPED_MEMEXT, fill, mount_tmpfs, unmount

from memext.engine import DiskFull, MemoryIndex
from memext.engine.indexing.last_failure import RECORD_BYTES, clear_failure, last_failure, record_failure, record_path


def test_the_record_is_written_in_place_and_read_back(tmp_path):
    db = tmp_path / "idx.sqlite"
    assert last_failure(db) is None
    clear_failure(db)
    assert record_path(db).stat().st_size == RECORD_BYTES and last_failure(db) is None
    record_failure(db, "database or disk is full " + "é" * 5000)  # cut to fit
    got = last_failure(db)
    assert got is not None and got.error.startswith("database or disk is full") and got.error.endswith("...")
    assert record_path(db).stat().st_size == RECORD_BYTES
    assert "the last sync failed (" in got.describe()
    clear_failure(db)
    assert last_failure(db) is None


def test_a_failed_sync_shows_in_another_processes_status(workspace, tmp_path):
    """Any failure, not only a full disk: the workspace vanished mid-way."""
    db = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=db)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
    record_failure(db, "rebuilding failed: database or disk is full")
    with MemoryIndex(agent, provider=None) as other:
        assert "database or disk is full" in (other.status().last_error or "")
        other.sync()
        assert other.status().last_error is None
    assert last_failure(db) is None


def lots_of_new_memory(workspace: Path) -> None:
    for i in range(40):
        (workspace / "memory" / f"2026-02-{i:02d}.md").write_text(
            "".join(f"- note {i}.{j} about the quarterly plan and item{i}x{j}\n" for j in range(400))
        )


class FullDisk:
    """An index on a 16 MB tmpfs (root), run through the real `memext`."""

    def __init__(self, workspace: Path, tmp_path: Path):
        self.disk = tmp_path / "disk"
        self.mounted = mount_tmpfs(self.disk, "16m")
        self.index_dir = self.disk / "index"
        self.db = self.index_dir / "a.sqlite"
        cfg = tmp_path / "config.toml"
        cfg.write_text(
            f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(self.db))}\n'
            f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
        )
        self.env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}

    def memext(self, *args: str, cap: int | None = None) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "memext", *args]
        if cap is not None:
            cmd = [sys.executable, "-c", CAPPED_MEMEXT, str(cap), *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=120)

    def status(self) -> tuple[int, dict, str, str]:
        """Exit status and row of `memext status --json`, and the stdout
        and stderr of plain `memext status` (which exits the same)."""
        out = self.memext("status", "--json")
        plain = self.memext("status")
        assert plain.returncode == out.returncode and "Traceback" not in plain.stderr, plain.stderr
        return out.returncode, json.loads(out.stdout)[0], plain.stdout, plain.stderr

    def no_temp_files(self) -> bool:
        return not [p.name for p in self.index_dir.iterdir() if ".lock.owner" in p.name or ".tmp" in p.name or ".rebuild-" in p.name]

    def close(self) -> None:
        if self.mounted:
            unmount(self.disk)


def test_a_sync_failing_on_a_full_disk_is_recorded(workspace, tmp_path):
    """The disk fills while the tray (here: this process) holds the index
    open: the sync fails writing, the failure is recorded, and `memext
    status` in another process says so instead of "fresh"."""
    d = FullDisk(workspace, tmp_path)
    try:
        assert d.memext("index").returncode == 0
        tray = MemoryIndex(make_agent(workspace, db_path=d.db), provider=None)  # keeps the -wal/-shm open
        try:
            lots_of_new_memory(workspace)
            if d.mounted:
                fill(d.disk)
                failed = d.memext("index")
            else:
                failed = d.memext("index", cap=d.db.stat().st_size + 8192)
            assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
            assert "full" in failed.stderr or "I/O error" in failed.stderr, failed.stderr
            assert d.no_temp_files()
            code, st, text, err = d.status()  # the old code: no error, as if nothing had happened
            assert code == 2 and st["last_error"] and "the last sync failed" in st["last_error"]
            assert err.startswith("memext: error: a: the last sync failed"), err
            if d.mounted:
                assert st["disk_full"] is True and "is full: syncs fail until there is room" in err, err
            assert st["dirty"] is True
            assert "the last sync failed" in text and "changed since the last sync" in text
            assert tray.status().last_error and "the last sync failed" in tray.status().last_error
            if d.mounted:
                (d.disk / "filler").unlink()
                assert d.memext("index").returncode == 0
                code, st, _, err = d.status()
                assert code == 0 and st["last_error"] is None and st["dirty"] is False and err == ""
        finally:
            tray.close()
    finally:
        d.close()


def test_an_index_on_a_full_disk_is_still_searched_and_says_why_it_is_stale(workspace, tmp_path):
    """Nothing holds the index open and the disk is full: SQLite cannot even
    make the index's -shm, so it is opened read-only (the old code: "disk
    I/O error" for status and search alike)."""
    d = FullDisk(workspace, tmp_path)
    if not d.mounted:
        d.close()
        return  # RLIMIT_FSIZE cannot stop a -shm from being made: only a real full disk shows this
    try:
        assert d.memext("index").returncode == 0
        lots_of_new_memory(workspace)
        fill(d.disk)
        found = d.memext("search", "Anna")
        assert found.returncode == 0 and "MEMORY.md" in found.stdout, found.stderr
        assert "disk is full" in found.stderr
        failed = d.memext("index")
        assert failed.returncode == 2 and "disk is full" in failed.stderr and "Traceback" not in failed.stderr
        code, st, text, err = d.status()
        assert st["read_only"] == "its disk is full" and st["dirty"] is True
        # The old code: exit 1 and nothing on stderr. Now the full disk is
        # named there, one line, and the command fails for a health check.
        assert code == 2 and st["disk_full"] is True, (code, st)
        assert (
            err.strip()
            == f"memext: error: a: the disk holding {d.db} is full: syncs fail until there is room (searches answer from the index as it is)"
        ), err
        assert "disk is full" in text and "changed since the index was built" in text
        assert d.no_temp_files()
    finally:
        d.close()


def test_a_disk_filling_mid_sync_is_reported_as_full(workspace, tmp_path):
    """The disk fills while a group of files is written: SQLite rolls the
    transaction back by itself, and the error says the disk is full (the
    old code: "cannot rollback - no transaction is active", its own
    ROLLBACK's error). The index stays searchable, the same connection
    can sync again, and with room again the sync finishes."""
    disk = tmp_path / "disk"
    assert mount_tmpfs(disk, "300k"), f"cannot mount a tmpfs at {disk}: this test needs root (mount -t tmpfs)"
    try:
        agent = make_agent(workspace, db_path=disk / "a.sqlite")
        with MemoryIndex(agent, provider=None) as idx:
            idx.sync()
            lots_of_new_memory(workspace)
            for _ in range(2):  # the second: the connection was left out of any transaction
                try:
                    idx.sync()
                except DiskFull as exc:
                    message = str(exc)
                else:
                    raise AssertionError("a sync of 6 MB of notes fit on a 300 KB disk")
                assert "is full" in message and str(disk / "a.sqlite") in message, message
                assert "no transaction" not in message and "within a transaction" not in message, message
            assert [r.path for r in idx.search("Anna")][0] == "MEMORY.md"
            assert "is full" in (idx.status().last_error or "")
            subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
            idx.sync()
            assert idx.search("item7x3").results and idx.status().last_error is None
    finally:
        unmount(disk)
