"""The change detector and racy timestamps (engine/indexing/changes.py, DESIGN.md §5).

A same-size edit made in the same clock tick as the read that indexed a
file (``- [ ] ship`` -> ``- [x] ship``, on a file system with 1 s
timestamps) must still be indexed by a later sync, and every face (the
CLI, the notebook session, the tray's keeper) must get there by itself.
The races are made deterministic with controlled mtimes (``os.utime``): a
whole-second mtime a little ahead of the clock is what a 1 s file system
gives an edit made in the tick of the sync.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import make_agent
from memext_helpers import write_config
from tray_helpers import wait_for

from memext.engine import FreshnessKeeper, MemoryIndex
from memext.engine.indexing.changes import (
    COARSE_WINDOW_NS,
    FINE_WINDOW_NS,
    UNVERIFIED_MTIME_NS,
    files_changed,
    racy_window_ns,
    recorded_mtime,
)
from memext.engine.memory.discovery import FileRead
from memext.engine.store import open_store

TODO = "# Tasks\n- [ ] ship the release\n"
DONE = "# Tasks\n- [x] ship the release\n"


def coarse_tick(ahead_s: int = 1) -> int:
    """A whole-second mtime ``ahead_s`` seconds after the current second, as
    a 1 s file system stamps an edit made in the tick of the next read."""
    return (int(time.time()) + ahead_s) * 1_000_000_000


def write_at(path: Path, text: str, mtime_ns: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def tasks_text(idx: MemoryIndex) -> str:
    return " ".join(r.snippet for r in idx.search("ship release", min_score=0).results)


def stored_mtime(index: MemoryIndex, path: str) -> int:
    """The mtime the index recorded for ``path``, read on a store of its own."""
    with open_store(index.agent, index.db_path) as store:
        return store.file_rows()[path].mtime_ns


def test_recorded_mtime_holds_back_an_mtime_too_close_to_its_read():
    now = time.time_ns()
    old_fine = now - 10 * FINE_WINDOW_NS + 123
    assert recorded_mtime(FileRead("x", False, old_fine, 1, now, True)) == old_fine
    assert recorded_mtime(FileRead("x", False, now - 1_000, 1, now, True)) == UNVERIFIED_MTIME_NS
    whole = (now // 1_000_000_000 - 1) * 1_000_000_000  # 1 s file system, edited last second
    assert racy_window_ns(whole) == COARSE_WINDOW_NS
    assert recorded_mtime(FileRead("x", False, whole, 1, now, True)) == UNVERIFIED_MTIME_NS
    assert recorded_mtime(FileRead("x", False, whole - 5 * COARSE_WINDOW_NS, 1, now, True)) == whole - 5 * COARSE_WINDOW_NS
    assert recorded_mtime(FileRead("x", False, old_fine, 1, now, False)) == UNVERIFIED_MTIME_NS  # torn read


def test_a_same_size_edit_in_the_tick_of_the_sync_is_indexed_by_the_next_sync(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    tasks = ws / "MEMORY.md"
    db = tmp_path / "idx.sqlite"
    tick = coarse_tick(2)
    write_at(tasks, TODO, tick)
    with MemoryIndex(make_agent(ws, db_path=db), provider=None) as idx:
        first = idx.sync()
        assert first.files_unverified == 1 and first.recheck_after_s is not None and first.recheck_after_s > 0
        assert stored_mtime(idx, "MEMORY.md") == UNVERIFIED_MTIME_NS
        assert idx.status().dirty is True  # cannot vouch for it yet: never "fresh"

        write_at(tasks, DONE, tick)  # same size, same mtime: invisible to a stat
        idx.sync()
        assert "[x] ship" in tasks_text(idx)  # the old code kept "[ ] ship" for good

        # Once the mtime is safely older than a read, the file is verified
        # and the fast path trusts it again.
        settled = (int(time.time()) - 10) * 1_000_000_000
        os.utime(tasks, ns=(settled, settled))
        again = idx.sync()
        assert again.files_unverified == 0 and again.recheck_after_s is None
        assert stored_mtime(idx, "MEMORY.md") == settled
        assert idx.status().dirty is False and not idx.needs_sync()
        assert idx.sync().files_unchanged == 1


def test_a_sync_rechecks_fine_timestamps_itself(tmp_path):
    """With nanosecond mtimes the window is milliseconds: a sync right after
    an edit waits it out and reads the file again, so it ends verified."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(TODO, encoding="utf-8")
    mtime = os.stat(ws / "MEMORY.md").st_mtime_ns
    if mtime % 1_000_000_000 == 0:  # whole seconds: nudge it to look like a fine stamp of now
        mtime = time.time_ns() | 1
        os.utime(ws / "MEMORY.md", ns=(mtime, mtime))
    with MemoryIndex(make_agent(ws, db_path=tmp_path / "idx.sqlite"), provider=None) as idx:
        report = idx.sync()
        assert report.files_indexed == 1 and report.files_unverified == 0
        assert stored_mtime(idx, "MEMORY.md") == mtime
        assert idx.status().dirty is False


def test_files_changed_counts_an_unverified_file_as_changed(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    write_at(ws / "MEMORY.md", TODO, coarse_tick(3))
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite")
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
    with open_store(agent, tmp_path / "idx.sqlite") as store:
        assert files_changed(agent, store)


def test_the_keeper_comes_back_for_an_unverified_file_without_any_event(tmp_path):
    """The tray's and the notebook's keeper: no watcher, no request, yet the
    edit made in the tick of the startup sync is indexed (a recheck timer)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    tasks = ws / "MEMORY.md"
    tick = coarse_tick(1)
    write_at(tasks, TODO, tick)
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite", provider="none", sync={"watch": False})
    with FreshnessKeeper(agent) as keeper:
        assert keeper.wait_fresh(30)
        write_at(tasks, DONE, tick)
        wait_for(lambda: "[x] ship" in tasks_text(keeper.index), timeout=20, what="the recheck sync")
        wait_for(lambda: not keeper.busy() and not keeper.index.needs_sync(), timeout=20, what="the file to be verified")


def test_the_notebook_session_converges(tmp_path):
    from memext.session import Session

    ws = tmp_path / "ws"
    ws.mkdir()
    tasks = ws / "MEMORY.md"
    tick = coarse_tick(1)
    write_at(tasks, TODO, tick)
    cfg = write_config(tmp_path / "cfg", {"nb": ws})
    session = Session(cfg)
    try:
        keeper = session.keeper("nb", warm_up=True)
        assert keeper.wait_fresh(30)
        write_at(tasks, DONE, tick)
        wait_for(lambda: "[x] ship" in tasks_text(session.index("nb")), timeout=20, what="the notebook's recheck")
    finally:
        session.close()


def test_the_cli_converges(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    tasks = ws / "MEMORY.md"
    tick = coarse_tick(3)
    write_at(tasks, TODO, tick)
    cfg = write_config(tmp_path / "cfg", {"cli": ws})
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}

    def memext(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)

    assert memext("index").returncode == 0
    status = json.loads(memext("status", "--json").stdout)[0]
    assert status["dirty"] is True  # unverified: status does not claim fresh
    write_at(tasks, DONE, tick)
    found = memext("search", "ship release", "--json")
    assert found.returncode == 0, found.stderr
    assert "[x] ship" in json.dumps(json.loads(found.stdout)["results"])


def test_a_second_name_of_a_file_is_a_change_only_when_a_sync_would_index_it(workspace, tmp_path):
    """A sync indexes the first name of a file in sorted order; the change
    check takes folders in the file system's order, so it must still agree
    with the sync on which name counts, whichever order the disk gives."""
    mem = workspace / "memory"
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", provider="none")
    with MemoryIndex(agent) as idx:
        idx.sync()
        assert not idx.needs_sync()
        for i in range(20):  # names sorting after the indexed one, listed in whatever order the folder has
            os.link(mem / "2026-01-05.md", mem / f"later-{i:02}.md")
        assert not idx.needs_sync()
        assert idx.sync().files_indexed == 0
        os.link(mem / "2026-01-05.md", mem / "0-first.md")  # sorts first: a sync indexes this name instead
        assert idx.needs_sync()
        report = idx.sync()
        assert (report.files_indexed, report.files_deleted) == (1, 1)
        assert not idx.needs_sync()
        (mem / "0-first.md").unlink()
        assert idx.needs_sync()
        idx.sync()
        assert not idx.needs_sync()


def test_the_change_check_agrees_with_a_sync_on_every_kind_of_file(workspace, tmp_path):
    """The check counts matching files instead of listing them: it must
    see exactly what a sync would index (files a sync skips are no change)."""
    mem = workspace / "memory"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "extra.md").write_text("- an extra note\n", encoding="utf-8")
    (mem / "sub").mkdir()
    (mem / "sub" / "deep.md").write_text("- deep in a folder\n", encoding="utf-8")
    os.link(mem / "2026-01-05.md", mem / "hardlink.md")  # one file, two names: indexed once
    (mem / "alias.md").symlink_to(mem / "2026-01-06.md")
    (mem / "big.md").write_text("x" * 5000, encoding="utf-8")  # over max_file_bytes
    (mem / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")  # binary
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", provider="none", extra_paths=[str(notes)], max_file_bytes=4000)
    with MemoryIndex(agent) as idx:
        report = idx.sync()
        assert report.files_indexed == 5 and not idx.needs_sync()

        def changed() -> bool:
            with open_store(agent, idx.db_path) as store:
                return files_changed(agent, store)

        (mem / "other.png.md").write_bytes(b"\x00binary")  # another file a sync skips
        (mem / "huge.md").write_text("y" * 5000, encoding="utf-8")
        os.link(mem / "2026-01-06.md", mem / "sub" / "link.md")  # walked after the name indexed
        (mem / ".hidden.md").write_text("- hidden\n", encoding="utf-8")
        assert not changed()
        (mem / "2026-02-01.md").write_text("- a new day\n", encoding="utf-8")
        assert changed()
        idx.sync()
        assert not changed()
        (notes / "extra.md").unlink()  # removed
        assert changed()
        idx.sync()
        assert not changed()
        (mem / "image.md").write_text("- now it is text\n", encoding="utf-8")  # skipped file turned text
        assert changed()
        idx.sync()
        assert not changed()
        os.utime(mem / "sub" / "deep.md", ns=(1, 1))  # same size, other mtime
        assert changed()
