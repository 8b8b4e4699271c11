"""MemoryIndex: the Python API the notebook and the tray use."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import HashingProvider, make_agent

from memext.engine import MemoryIndex, ProviderStatus, SkippedFile, open_index
from memext.engine.errors import ConfigError, SearchDisabled, UnknownAgentError, WorkspaceMissing
from memext.engine.store.drivers import writer_lock


@pytest.mark.sqlite_only
def test_garbage_in_place_of_the_index_is_moved_aside_and_rebuilt(workspace, tmp_path):
    db = tmp_path / "idx.sqlite"
    garbage = b"\x00garbage, not sqlite\x00" * 500
    db.write_bytes(garbage)
    (tmp_path / "idx.sqlite-wal").write_bytes(b"more garbage")
    with MemoryIndex(make_agent(workspace, db_path=db), provider=None) as idx:
        error = idx.status().last_error
        assert "rebuilt from the memory files" in error and "moved aside to idx.sqlite.corrupt-" in error
        assert idx.search("a828e60").results == []  # search never syncs: the index is empty
        idx.sync()
        hits = idx.search("a828e60")
        assert hits[0].path == "memory/2026-01-05.md"
        assert idx.status().total_files == 3
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"
    [aside] = [p for p in tmp_path.glob("idx.sqlite.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == garbage  # nothing is deleted: it may be someone's file
    assert Path(f"{aside}-wal").read_bytes() == b"more garbage"
    assert aside.name in error


@pytest.mark.parametrize("where", ["MEMORY.md", "memory/index.sqlite", "notes/x.sqlite", "memory/new.md"])
def test_an_index_path_among_the_memory_files_is_refused(workspace, tmp_path, where):
    (workspace / "notes").mkdir()
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    agent = make_agent(workspace, db_path=workspace / where, extra_paths=["notes"])
    with pytest.raises(ConfigError) as err:
        MemoryIndex(agent, provider=None)
    assert "memory_search.store.path" in str(err.value) and str(workspace / where) in str(err.value)
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before  # nothing made, moved or lost


def test_open_index_names_the_config_file_when_refusing_the_index_path(tmp_path, workspace):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n'
        f'[agents.memory_search.store]\npath = "{workspace / "MEMORY.md"}"\n'
    )
    text = (workspace / "MEMORY.md").read_text()
    with pytest.raises(ConfigError, match="store.path") as err:
        open_index(config_path=cfg)
    assert str(cfg) in str(err.value) and "Markdown" in str(err.value)
    assert (workspace / "MEMORY.md").read_text() == text


def test_deleting_the_index_loses_nothing(workspace, tmp_path, hashing_provider):
    db = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=db)
    with MemoryIndex(agent, provider=hashing_provider) as idx:
        idx.sync()
        before = [h.citation for h in idx.search("Anna", min_score=0)]
    for p in tmp_path.glob("idx.sqlite*"):
        p.unlink()
    with MemoryIndex(agent, provider=hashing_provider) as idx:
        idx.sync()
        assert [h.citation for h in idx.search("Anna", min_score=0)] == before


def test_status_fields(workspace, tmp_path, hashing_provider, store_backend):
    (workspace / "memory" / "big.md").write_text("x" * 5000)
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", max_file_bytes=4096)
    with MemoryIndex(agent, provider=hashing_provider) as idx:
        st = idx.status()
        assert st.dirty and st.last_sync is None
        idx.sync()
        typed = idx.status()
        st = typed.to_dict()
    assert typed.provider == ProviderStatus("auto", "hashing", "hash-v1", embedded="on this machine") and typed.fallback is None
    assert typed.last_sync.files_indexed == 3 and not typed.last_sync.rebuilt and typed.batch is None
    assert typed.skipped == [SkippedFile("memory/big.md", "larger than the 4 KB limit (4.9 KB; max_file_bytes)")]
    assert typed.storage.backend == store_backend and typed.cache.enabled
    assert json.loads(json.dumps(st)) == st  # plain JSON
    assert st["agent"] == "test" and st["workspace"] == str(workspace.resolve())
    assert st["files"] == {"memory": 3} and st["chunks"] == {"memory": 3}
    assert not st["dirty"] and st["last_sync"]["duration_s"] >= 0
    assert st["provider"] == {
        "requested": "auto",
        "in_force": "hashing",
        "model": "hash-v1",
        "reason": None,
        "failed": None,
        "cause": None,
        "advice": None,
        "embedded": "on this machine",
    }
    assert st["vector"]["available"] and st["vector"]["dims"] == 64
    assert st["fts"]["available"] and st["cache"]["entries"] == 3 + 7  # the chunks and their entries
    if store_backend == "sqlite":
        assert typed.vector.store == "vec0" and st["vector"]["backend"] == "mmap"
        assert st["storage"]["binding"] in ("sqlite3", "sqlean", "pysqlite3") and st["storage"]["version"]
    else:  # the server, its version and pgvector's; the URL never holds a password
        assert typed.vector.store == "pgvector" and st["vector"]["backend"] == "exact"
        assert st["vector"]["extension"].count(".") == 2 and st["storage"]["version"].startswith("PostgreSQL ")
        assert st["storage"]["binding"].startswith("psycopg 3.") and st["storage"]["schema"] == "memext_test"
        assert st["storage"]["server"].startswith("postgresql://postgres@127.0.0.1:") and st["db_path"].endswith("(schema memext_test)")
    assert st["skipped"] == [{"path": "memory/big.md", "reason": "larger than the 4 KB limit (4.9 KB; max_file_bytes)"}]
    assert st["mode"] == "hybrid" and st["last_error"] is None


def test_search_never_syncs_and_the_index_starts_no_threads(workspace, tmp_path):
    """Keeping the index fresh is the caller's (or a FreshnessKeeper's) job."""
    before = threading.active_count()
    with MemoryIndex(make_agent(workspace, db_path=tmp_path / "idx.sqlite"), provider=None) as idx:
        idx.sync()
        (workspace / "memory" / "2026-01-09.md").write_text("- lunch with the pelican society\n")
        assert idx.search("pelican").results == []
        assert idx.needs_sync() and idx.status().dirty and not idx.syncing
        assert threading.active_count() == before
        idx.sync()
        assert idx.search("pelican")[0].path == "memory/2026-01-09.md"


def test_close_is_idempotent_and_cancels_a_sync_in_another_thread(workspace, tmp_path):
    idx = MemoryIndex(make_agent(workspace, db_path=tmp_path / "idx.sqlite"), provider=None)
    for i in range(300):
        (workspace / "memory" / f"bulk-{i:03}.md").write_text(f"# bulk {i}\n- line about item {i}\n" * 20)
    errors: list[BaseException] = []

    def run():
        try:
            idx.sync()
        except BaseException as exc:  # SyncCancelled, or done before close
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    while not idx.syncing and t.is_alive():
        time.sleep(0.001)
    idx.close()
    t.join(10)
    assert not t.is_alive()
    idx.close()
    assert all(type(e).__name__ == "SyncCancelled" for e in errors)


def test_open_index_uses_the_config(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    with open_index() as idx:
        assert idx.agent.id == "w"
        assert idx.search("Anna").mode == "keyword"
    with pytest.raises(UnknownAgentError):
        open_index("nobody")


def test_dirty_means_the_files_differ_from_the_index(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite")
    with MemoryIndex(agent, provider=None) as idx:
        assert idx.dirty  # nothing indexed yet
        idx.sync()
        assert not idx.dirty
    with MemoryIndex(agent, provider=None) as fresh:  # as a new process would
        assert not fresh.dirty and not fresh.status().dirty and not fresh.needs_sync()
        note = workspace / "memory" / "2026-01-05.md"
        # Touched (an older mtime: one in the future could not vouch for the text, engine/indexing/changes.py).
        os.utime(note, ns=(time.time_ns(), time.time_ns() - 5_000_000_000))
        assert fresh.dirty and fresh.status().dirty
        fresh.sync()
        assert not fresh.dirty
        (workspace / "memory" / "2026-01-09.md").write_text("- a new note\n")
        assert fresh.status().dirty and fresh.needs_sync()
        fresh.sync()
        (workspace / "memory" / "2026-01-09.md").unlink()
        assert fresh.dirty


def test_an_index_built_for_another_model_says_how_it_gets_rebuilt(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", sync={"on_search": False})
    with MemoryIndex(agent, provider=HashingProvider(model="hash-v1")) as idx:
        idx.sync()
        assert idx.status().mode == "hybrid"
    with MemoryIndex(agent, provider=HashingProvider(model="hash-v2")) as idx:
        resp = idx.search("Anna")
        assert resp.mode == "keyword" and resp[0].path
        assert "built for hashing/hash-v1, not hashing/hash-v2" in resp.notice and "memext index" in resp.notice
        assert "being rebuilt" not in resp.notice
        st = idx.status()
        assert st.mode == "keyword-only" and "hash-v1" in st.keyword_only_reason
        assert st.to_dict()["mode"] == "keyword-only" and not st.dirty and idx.needs_sync()
        with writer_lock(idx.agent, idx.db_path, timeout=1):  # a sync in progress (here or in another process)
            assert "being rebuilt for hashing/hash-v2" in idx.search("Anna").notice
            assert idx.status().syncing
        idx.sync()
        resp = idx.search("Anna")
        assert resp.mode == "hybrid" and resp.notice is None and idx.status().mode == "hybrid"


def test_a_missing_workspace_is_an_error_and_keeps_the_index(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite")
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        workspace.rename(tmp_path / "moved")
        with pytest.raises(WorkspaceMissing, match=f"workspace {workspace} .*does not exist"):
            idx.sync()
        st = idx.status()
        assert "does not exist" in st.last_error and st.total_files == 3  # not emptied
    with MemoryIndex(agent, provider=None) as fresh:
        assert "does not exist" in fresh.status().last_error


def test_search_is_refused_for_a_disabled_agent(workspace, tmp_path):
    agent = make_agent(workspace, db_path=tmp_path / "i.sqlite", enabled=False)
    with MemoryIndex(agent, provider=None, config_file=tmp_path / "config.toml") as idx:
        idx.sync()  # an explicit sync still works; only search is off
        with pytest.raises(SearchDisabled, match=r"turned off for agent 'test' \(memory_search.enabled = false in .*config.toml\)"):
            idx.search("Anna")
        assert idx.status().to_dict()["enabled"] is False


def test_status_can_skip_the_file_scan(workspace, tmp_path):
    with MemoryIndex(make_agent(workspace, db_path=tmp_path / "i.sqlite"), provider=None) as idx:
        idx.sync()
        (workspace / "memory" / "2026-09-09.md").write_text("- new\n", encoding="utf-8")
        assert idx.status().dirty is True
        quick = idx.status(check_files=False)
        assert quick.dirty is None and quick.total_files == 3


def test_files_with_invalid_utf8_stay_listed_in_status(workspace, tmp_path):
    """Listed at every status, not only after the sync that read them (the
    old code listed them once, then the next sync forgot them)."""
    bad = workspace / "memory" / "2026-01-10.md"
    bad.write_bytes(b"- caf\xe9 with Anna\n- ok line\n")
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite")
    reason = "invalid UTF-8 bytes replaced with U+FFFD (indexed)"
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        assert SkippedFile("memory/2026-01-10.md", reason) in idx.status().skipped
        (workspace / "memory" / "2026-01-11.md").write_text("- another day\n")
        idx.sync()  # reads only the new file
        assert idx.status().skipped == [SkippedFile("memory/2026-01-10.md", reason)]
    with MemoryIndex(agent, provider=None) as fresh:  # another process
        assert fresh.status().skipped == [SkippedFile("memory/2026-01-10.md", reason)]
        assert fresh.search("Anna").results
        bad.write_text("- café with Anna\n")
        fresh.sync()
        assert fresh.status().skipped == []
