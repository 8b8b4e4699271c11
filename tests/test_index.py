"""MemoryIndex: the Python API the notebook and the tray use."""

from __future__ import annotations

import time

import pytest

from conftest import make_agent
from engine import MemoryIndex, open_index
from engine.errors import UnknownAgentError


def test_garbage_in_place_of_the_index_is_rebuilt_from_the_files(workspace, tmp_path):
    db = tmp_path / "idx.sqlite"
    db.write_bytes(b"\x00garbage, not sqlite\x00" * 500)
    (tmp_path / "idx.sqlite-wal").write_bytes(b"more garbage")
    with MemoryIndex(make_agent(workspace, db_path=db), provider=None) as idx:
        assert "rebuilt from the memory files" in idx.status().last_error
        hits = idx.search("a828e60")  # the empty index syncs before this first search
        assert hits[0].path == "memory/2026-01-05.md"
        assert idx.status().total_files == 3
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"


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


def test_status_fields(workspace, tmp_path, hashing_provider):
    (workspace / "memory" / "big.md").write_text("x" * 5000)
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", max_file_bytes=4096)
    with MemoryIndex(agent, provider=hashing_provider) as idx:
        st = idx.status()
        assert st.dirty and st.last_sync is None
        idx.sync()
        st = idx.status().to_dict()
    assert st["agent"] == "test" and st["workspace"] == str(workspace.resolve())
    assert st["files"] == {"memory": 3} and st["chunks"] == {"memory": 3}
    assert not st["dirty"] and st["last_sync"]["duration_s"] >= 0
    assert st["provider"] == {"requested": "auto", "in_force": "hashing", "model": "hash-v1", "reason": None}
    assert st["vector"]["available"] and st["vector"]["dims"] == 64 and st["vector"]["backend"] == "vec0"
    assert st["fts"]["available"] and st["cache"]["entries"] == 3
    assert st["sqlite"]["binding"] in ("sqlite3", "sqlean", "pysqlite3") and st["sqlite"]["version"]
    assert st["skipped"] == [{"path": "memory/big.md", "reason": "larger than the 4096 byte cap (5000 bytes)"}]
    assert st["mode"] == "hybrid" and st["last_error"] is None


def test_search_starts_a_background_sync_when_dirty(workspace, tmp_path):
    with MemoryIndex(make_agent(workspace, db_path=tmp_path / "idx.sqlite"), provider=None) as idx:
        idx.sync()
        (workspace / "memory" / "2026-01-09.md").write_text("- lunch with the pelican society\n")
        idx.mark_dirty()
        first = idx.search("pelican")  # does not wait for the sync it starts
        deadline = time.time() + 10
        while idx.syncing or idx.dirty:
            assert time.time() < deadline
            time.sleep(0.05)
        assert idx.search("pelican")[0].path == "memory/2026-01-09.md"
        assert first.results == [] or first[0].path == "memory/2026-01-09.md"


def test_close_is_idempotent_and_stops_background_work(workspace, tmp_path):
    idx = MemoryIndex(make_agent(workspace, db_path=tmp_path / "idx.sqlite"), provider=None)
    idx.sync_in_background()
    idx.close()
    idx.close()
    assert not (idx._bg and idx._bg.is_alive())


def test_open_index_uses_the_config(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    with open_index() as idx:
        assert idx.agent.id == "w"
        assert idx.search("Anna").mode == "keyword"
    with pytest.raises(UnknownAgentError):
        open_index("nobody")
