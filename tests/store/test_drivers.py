"""The driver table (engine/store/drivers.py): config accepts exactly its
names, and opening a store, showing where it is, its writer lock and the
fingerprint's local paths all go through an agent's row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from memext.engine.config import AgentConfig, parse_config
from memext.engine.errors import ConfigError, LockTimeout
from memext.engine.indexing.fingerprint import fingerprint
from memext.engine.store.drivers import DRIVERS, driver_of, open_store, store_location, writer_lock, writer_lock_held
from memext.engine.store.postgres.lock import AdvisoryLock
from memext.engine.store.sqlite.lock import WriterLock
from memext.engine.store.sqlite.store import Store

URL = "postgresql://memext:s3cret-pw@db.example.org:5433/memext?sslmode=require&password=s3cret-pw"


def agent_of(tmp_path: Path, store: dict, **settings) -> AgentConfig:
    """An agent parsed by the real config loader with these ``store`` (and
    other ``memory_search``) keys."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    raw = {"agents": [{"id": "alpha", "workspace": str(workspace), "memory_search": {"store": store, **settings}}]}
    return parse_config(raw, path=tmp_path / "config.toml").agents[0]


def test_config_accepts_exactly_the_drivers_of_the_table(tmp_path):
    assert list(DRIVERS) == ["sqlite", "postgres"]
    for name in DRIVERS:
        agent = agent_of(tmp_path, {"driver": name, "url": URL if name == "postgres" else ""})
        assert driver_of(agent).name == name
    with pytest.raises(ConfigError) as err:
        agent_of(tmp_path, {"driver": "mysql"})
    assert err.value.key == "agents[alpha].memory_search.store.driver"
    assert 'must be one of "sqlite", "postgres", got "mysql"' in str(err.value)


def test_each_row_checks_its_own_settings(tmp_path):
    with pytest.raises(ConfigError, match="needs store.url") as err:
        agent_of(tmp_path, {"driver": "postgres"})
    assert err.value.key == "agents[alpha].memory_search.store.url"
    with pytest.raises(ConfigError, match='"numpy" is a SQLite backend') as err:
        agent_of(tmp_path, {"driver": "postgres", "url": URL, "vector": {"backend": "numpy"}})
    assert err.value.key == "agents[alpha].memory_search.store.vector.backend"
    # The same settings serve a file: the SQLite row asks nothing more.
    assert agent_of(tmp_path, {"vector": {"backend": "numpy"}}).settings.store.vector.backend == "numpy"


def test_a_sqlite_agent_gets_the_file_store_and_the_file_lock(tmp_path):
    db = tmp_path / "idx.sqlite"
    agent = agent_of(tmp_path, {"path": str(db)})
    assert driver_of(agent).local
    store = open_store(agent, db)
    try:
        assert isinstance(store, Store) and store.path == db
    finally:
        store.close()
    assert store_location(agent) == str(db)
    lock = writer_lock(agent, db, timeout=0)
    assert isinstance(lock, WriterLock) and lock.path == Path(f"{db}.lock")
    assert not writer_lock_held(agent, db)
    with lock:
        assert writer_lock_held(agent, db)
        with pytest.raises(LockTimeout):
            writer_lock(agent, db, timeout=0).acquire()
    assert not writer_lock_held(agent, db)


def test_the_postgres_row_shows_the_server_without_its_password(tmp_path):
    agent = agent_of(tmp_path, {"driver": "postgres", "url": URL})
    assert not driver_of(agent).local
    shown = store_location(agent)
    assert shown == "postgresql://memext@db.example.org:5433/memext?sslmode=require (schema memext_alpha)"
    assert "s3cret" not in shown
    lock = writer_lock(agent, tmp_path / "unused.sqlite", timeout=0)  # not acquired: no server needed
    assert isinstance(lock, AdvisoryLock) and lock.url == URL and lock.agent_id == "alpha" and not lock.is_locked


def test_only_a_local_index_keeps_this_machines_paths_in_its_fingerprint(tmp_path):
    sessions = {"sources": ["memory", "sessions"], "experimental": {"session_memory": True}}
    local = agent_of(tmp_path, {}, **sessions)
    shared = agent_of(tmp_path, {"driver": "postgres", "url": URL}, **sessions)
    mine, theirs = fingerprint(local, None, ""), fingerprint(shared, None, "")
    assert mine["workspace"] == str(local.workspace) and mine["sessions_dir"] == str(local.sessions_path)
    assert theirs["workspace"] == "" and theirs["sessions_dir"] == ""


def test_reading_a_sqlite_config_loads_no_store(tmp_path):
    """Config reads the table's names and the SQLite row's checks: no store
    is imported, and the PostgreSQL half (psycopg with it) never is for a
    SQLite agent."""
    code = (
        "import sys\n"
        "from memext.engine.config import parse_config\n"
        f"parse_config({{'agents': [{{'id': 'a', 'workspace': {str(tmp_path)!r}}}]}})\n"
        "print(*sorted(m for m in sys.modules if m.startswith(('memext.engine.store', 'psycopg'))))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    loaded = set(r.stdout.split())
    assert "memext.engine.store.drivers" in loaded and "memext.engine.store.sqlite.driver" in loaded
    heavy = {"memext.engine.store.base", "memext.engine.store.sqlite.store", "memext.engine.store.postgres", "psycopg"}
    assert sorted(loaded & heavy) == []
