"""Damaged indexes are found, moved aside and rebuilt, never a crash
(engine/store/sqlite/repair.py, DESIGN.md §4): bad bookkeeping in
``meta``, pages SQLite cannot read, damage that only a check sees (after a
writer died holding the lock, or in ``memext index``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import TESTS, make_agent
from fault_helpers import break_page, integrity, set_meta

from memext.engine import MemoryIndex
from memext.engine.store.sqlite import db
from memext.engine.store.sqlite.lock import WriterLock


def built_index(workspace: Path, tmp_path: Path, provider=None) -> Path:
    path = tmp_path / "idx.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=path), provider=provider) as idx:
        idx.sync()
    return path


def aside(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm")))


@pytest.mark.parametrize(
    "key,value",
    [
        ("schema_version", "one"),
        ("last_sync", "{not json"),
        ("fingerprint", "[1, 2]"),
        ("skipped", '{"a": 1}'),
        ("last_sync", '{"at": "yesterday"}'),
    ],
)
def test_damaged_bookkeeping_is_set_aside_and_rebuilt(workspace, tmp_path, key, value):
    path = built_index(workspace, tmp_path)
    set_meta(path, key, value)
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        idx.needs_sync()  # what a search asks first; the old code: ValueError / JSONDecodeError
        st = idx.status()
        assert "damaged" in (st.last_error or "") and "moved aside" in st.last_error and st.last_error.count(str(path)) == 1
        assert aside(tmp_path) and st.total_files == 0
        idx.sync()
        assert [r.path for r in idx.search("Anna")][0] == "MEMORY.md"
        assert idx.status().last_error is None
    assert integrity(path) == "ok"


def test_the_cli_recovers_from_bad_meta_without_a_traceback(workspace, tmp_path):
    path = built_index(workspace, tmp_path)
    set_meta(path, "schema_version", "x1")
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(path))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}

    def memext(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)

    found = memext("search", "Anna")
    assert found.returncode == 0 and "MEMORY.md" in found.stdout, found.stderr
    assert "moved aside" in found.stderr and "Traceback" not in found.stderr
    assert memext("index").returncode == 0
    assert memext("status").returncode == 0
    assert len(aside(tmp_path)) == 1


def test_a_page_that_cannot_be_read_during_a_search_is_set_aside(workspace, tmp_path, hashing_provider):
    path = built_index(workspace, tmp_path, hashing_provider)
    agent = make_agent(workspace, db_path=path)
    with MemoryIndex(agent, provider=hashing_provider) as idx:
        break_page(path, "chunks")
        resp = idx.search("Anna billing")  # the old code raised "database disk image is malformed"
        assert resp.notice and "moved aside" in resp.notice and not resp.results
        idx.sync()
        assert idx.search("Anna billing").results[0].path == "MEMORY.md"
    assert aside(tmp_path) and integrity(path) == "ok"


def test_an_index_damaged_again_and_again_keeps_three_copies(workspace, tmp_path, hashing_provider):
    path = built_index(workspace, tmp_path, hashing_provider)
    agent = make_agent(workspace, db_path=path)
    for _ in range(5):
        break_page(path, "chunks")
        with MemoryIndex(agent, provider=hashing_provider) as idx:
            assert "moved aside" in (idx.search("Anna billing").notice or "")
            idx.sync()
            assert idx.search("Anna billing").results[0].path == "MEMORY.md"
    assert len(aside(tmp_path)) == 3 and integrity(path) == "ok"


def test_a_reader_is_told_while_another_process_rebuilds_a_repaired_index(workspace, tmp_path, hashing_provider):
    """Another process (the tray, say) repairs the index and fills it again:
    a long-lived reader (an MCP server) gets no results meanwhile, and each
    such answer says why instead of passing for "nothing matches"."""
    path = built_index(workspace, tmp_path, hashing_provider)
    agent = make_agent(workspace, db_path=path)
    with MemoryIndex(agent, provider=hashing_provider) as reader:
        assert reader.search("Anna billing").notice is None
        code = textwrap.dedent(
            f"""
            import sys
            from pathlib import Path
            sys.path.insert(0, {str(TESTS)!r})
            from conftest import make_agent
            from fault_helpers import break_page
            from memext.engine import MemoryIndex
            from memext.engine.store.drivers import writer_lock
            path = Path({str(path)!r})
            agent = make_agent(Path({str(workspace)!r}), db_path=path)
            break_page(path, "chunks")
            with MemoryIndex(agent) as idx:
                idx.search("Anna")  # finds the damage: moved aside, an empty index in its place
            with writer_lock(agent, path):
                print("building", flush=True)  # as a sync holds the lock while it fills the index
                sys.stdin.readline()
            """
        )
        repairer = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert repairer.stdout.readline().strip() == "building"
            during = reader.search("Anna billing")
            assert not during.results and "being built" in (during.notice or "")
        finally:
            repairer.communicate("\n", timeout=60)
        assert repairer.returncode == 0
        empty = reader.search("Anna billing")
        assert not empty.results and "the index is empty" in (empty.notice or "")
        reader.sync()
        after = reader.search("Anna billing")
        assert after.results[0].path == "MEMORY.md" and after.notice is None
    assert aside(tmp_path)


def test_a_search_of_an_index_no_sync_finished_says_so(workspace, tmp_path):
    # A first sync that stopped after some groups: rows, but no last_sync.
    path = built_index(workspace, tmp_path)
    conn, _ = db.connect(path, load_vec=False)
    conn.execute("DELETE FROM meta WHERE key = 'last_sync'")
    conn.close()
    with MemoryIndex(make_agent(workspace, db_path=path)) as idx:
        resp = idx.search("Anna billing")
        assert resp.results and "not complete" in (resp.notice or "")
        idx.sync()
        assert "not complete" not in (idx.search("Anna billing").notice or "")


def test_memext_index_checks_the_whole_file(workspace, tmp_path, hashing_provider):
    """Damage in a part no search or sync reads (the cache's LRU index): only
    integrity_check sees it; MemoryIndex.verify (memext index) does."""
    path = built_index(workspace, tmp_path, hashing_provider)
    break_page(path, "embedding_cache_used")
    with MemoryIndex(make_agent(workspace, db_path=path), provider=hashing_provider) as idx:
        assert idx.search("Anna billing").results  # unnoticed by the usual work
        done = idx.verify()
        assert done and "moved aside" in done
        idx.sync()
        assert idx.verify() is None
    assert integrity(path) == "ok" and len(aside(tmp_path)) == 1


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from memext.engine.store.sqlite.lock import WriterLock
    WriterLock(Path(sys.argv[1]), timeout=10).acquire()
    print("held", flush=True)
    time.sleep(60)
    """
)


def kill_a_writer_holding_the_lock(path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)


def test_an_index_opened_after_a_writer_died_is_checked(workspace, tmp_path):
    path = built_index(workspace, tmp_path)
    kill_a_writer_holding_the_lock(path)
    owner_note = Path(str(path) + ".lock.owner")
    assert owner_note.exists()
    break_page(path, "chunks_path")  # an index no open reads: only a check finds it
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        st = idx.status()
        assert "uncleanly" in (st.last_error or "") and aside(tmp_path)
        idx.sync()
        assert idx.search("Anna").results
    assert not owner_note.exists() and integrity(path) == "ok"


def test_a_clean_check_after_a_dead_writer_keeps_the_index(workspace, tmp_path):
    path = built_index(workspace, tmp_path)
    kill_a_writer_holding_the_lock(path)
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        assert idx.status().last_error is None and idx.search("Anna").results
    assert not aside(tmp_path) and not Path(str(path) + ".lock.owner").exists()


def test_a_sync_after_a_writer_died_checks_first(workspace, tmp_path):
    path = built_index(workspace, tmp_path)
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        kill_a_writer_holding_the_lock(path)
        break_page(path, "chunks_path")
        idx.sync()
        assert aside(tmp_path) and idx.search("Anna").results
    assert integrity(path) == "ok"


def test_the_writer_lock_tells_a_dead_holder(tmp_path):
    path = tmp_path / "idx.sqlite"
    with WriterLock(path, timeout=5) as lock:
        assert not lock.previous_holder_died
    kill_a_writer_holding_the_lock(path)
    with WriterLock(path, timeout=5) as lock:
        assert lock.previous_holder_died
    with WriterLock(path, timeout=5) as lock:
        assert not lock.previous_holder_died


def drop(path: Path, statement: str) -> None:
    """Drop part of memext's schema, as damage or another tool could."""
    conn, _ = db.connect(path)  # sqlite-vec loaded: dropping a vec0 table needs its module
    try:
        conn.execute(statement)
    finally:
        conn.close()


@pytest.mark.parametrize("table", ["chunks", "files"])
def test_memext_index_rebuilds_an_index_missing_a_table(workspace, tmp_path, table):
    """quick_check passes on an index whose table was dropped, and every
    command failed with "no such table" (a traceback); it is damage: moved
    aside once, rebuilt by `memext index`."""
    path = built_index(workspace, tmp_path)
    drop(path, f"DROP TABLE {table}")
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(path))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}

    def memext(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)

    built = memext("index")
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    assert built.stderr.count("moved aside") == 1 and f"missing table {table}" in built.stderr, built.stderr
    assert "indexed 3 of 3 files" in built.stdout, built.stdout
    found = memext("search", "Anna")
    assert found.returncode == 0 and "MEMORY.md" in found.stdout and "moved aside" not in found.stderr, found.stderr
    assert memext("status").returncode == 0
    assert len(aside(tmp_path)) == 1 and integrity(path) == "ok"


@pytest.mark.parametrize(
    "statement,searched",
    [
        ("DROP TABLE chunks", True),
        ("DROP TABLE chunks_fts", True),
        # A search may not read these (vectors from the sidecar, a column
        # only writes use): then the sync's own open finds the damage.
        ("DROP TABLE chunks_vec", False),
        ("ALTER TABLE chunks DROP COLUMN model", False),
    ],
    ids=["chunks", "fts", "vectors", "column"],
)
def test_a_table_dropped_under_an_open_index_is_found_at_the_next_use(workspace, tmp_path, hashing_provider, statement, searched):
    path = built_index(workspace, tmp_path, hashing_provider)
    with MemoryIndex(make_agent(workspace, db_path=path), provider=hashing_provider) as idx:
        assert idx.search("Anna billing").results
        drop(path, statement)
        resp = idx.search("Anna billing")  # the old code: "no such table" from every read and write
        if searched:
            assert resp.notice and "damaged schema" in resp.notice and "moved aside" in resp.notice, resp.notice
        idx.sync()
        assert idx.search("Anna billing").results[0].path == "MEMORY.md"
        assert idx.status().last_error is None
    assert len(aside(tmp_path)) == 1 and integrity(path) == "ok"
