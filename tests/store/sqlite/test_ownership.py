"""memext never writes to a database it did not create (engine/store/sqlite/ownership.py,
DESIGN.md §4): its index files carry an SQLite application id from their first
write, and a ``store.path`` naming another program's database is refused
with a message naming the file, which stays byte for byte as it was."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TESTS, make_agent

from memext.engine import ForeignDatabase, IndexOpenError, MemextError, MemoryIndex
from memext.engine.store.sqlite import db
from memext.engine.store.sqlite.ownership import APPLICATION_ID, Kind, inspect
from memext.engine.store.sqlite.store import Store


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def other_program_db(path: Path, *, wal: bool = False, app_id: int = 0) -> Path:
    conn = db.binding().module.connect(str(path))
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    if app_id:
        conn.execute(f"PRAGMA application_id = {app_id}")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 99.5)")
    conn.commit()
    conn.close()
    return path


def app_id_of(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[68:72], "big")


@pytest.mark.parametrize("wal", [False, True], ids=["rollback", "wal"])
@pytest.mark.parametrize("app_id", [0, 0x4B455953], ids=["no-app-id", "other-app-id"])
def test_another_programs_database_is_left_byte_identical(workspace, tmp_path, wal, app_id):
    other = other_program_db(tmp_path / "invoices.sqlite", wal=wal, app_id=app_id)
    before = sha(other)
    agent = make_agent(workspace, db_path=other)
    with pytest.raises(ForeignDatabase) as err:
        MemoryIndex(agent, provider=None)
    message = str(err.value)
    assert str(other) in message and "another program" in message and "invoices" in message
    assert isinstance(err.value, IndexOpenError) and isinstance(err.value, MemextError)
    assert sha(other) == before  # the old code switched it to WAL and added its tables
    assert not [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_the_cli_refuses_a_foreign_store_path_naming_it(workspace, tmp_path):
    other = other_program_db(tmp_path / "invoices.sqlite")
    before = sha(other)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(other))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}
    for args in (["index"], ["search", "Anna"], ["status"]):
        out = subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 2, (args, out.stdout, out.stderr)  # status: a health check
        assert str(other) in out.stderr and "another program" in out.stderr and "Traceback" not in out.stderr
    assert sha(other) == before


def test_new_indexes_carry_memexts_application_id(workspace, tmp_path):
    path = tmp_path / "idx.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        idx.sync()
    assert app_id_of(path) == APPLICATION_ID
    assert inspect(path).kind is Kind.MEMEXT


def test_an_index_made_before_application_ids_is_kept_and_stamped(workspace, tmp_path):
    path = tmp_path / "idx.sqlite"
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        idx.sync()
    conn = db.binding().module.connect(str(path))
    conn.execute("PRAGMA application_id = 0")  # as memext wrote them before it set an application id
    conn.commit()
    conn.close()
    assert inspect(path).kind is Kind.UNSTAMPED
    with MemoryIndex(make_agent(workspace, db_path=path), provider=None) as idx:
        assert idx.search("Anna").results  # its content is kept
        assert not idx.status().last_error
    assert app_id_of(path) == APPLICATION_ID


def test_what_inspect_says_about_other_files(tmp_path):
    assert inspect(tmp_path / "missing.sqlite").kind is Kind.NEW
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert inspect(tmp_path / "empty.sqlite").kind is Kind.NEW
    (tmp_path / "notes.txt").write_text("not a database at all, but long enough to hold a header " * 4)
    assert inspect(tmp_path / "notes.txt").kind is Kind.DAMAGED
    (tmp_path / "folder.sqlite").mkdir()
    assert inspect(tmp_path / "folder.sqlite").kind is Kind.NOT_A_FILE
    empty_db = tmp_path / "blank.sqlite"
    conn = db.binding().module.connect(str(empty_db))
    conn.execute("PRAGMA user_version = 3")  # a database with no tables yet, not made by memext
    conn.close()
    found = inspect(empty_db)
    assert found.kind is Kind.FOREIGN and "empty" in found.detail
    before = sha(empty_db)
    with pytest.raises(ForeignDatabase):
        Store(empty_db)
    assert sha(empty_db) == before


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from conftest import make_agent
from memext.engine import MemoryIndex
ws, db = Path(sys.argv[1]), Path(sys.argv[2])
errors = []
with MemoryIndex(make_agent(ws, db_path=db), provider=None) as idx:  # a reader kept open, as the tray keeps one
    for i in range(40):
        (ws / "memory" / f"2026-03-{i:02d}.md").write_text(f"- entry {i} heron{i}\\n")
        try:
            idx.sync()  # opens a writer Store beside the reader
            assert idx.search(f"heron{i}").results
        except Exception as exc:
            errors.append(repr(exc))
print(len(errors), errors[:2])
"""


def test_opening_an_index_never_breaks_another_processes_connections(workspace, tmp_path):
    """Checking a file's owner must not open it outside SQLite: closing that
    descriptor dropped the process's SQLite locks, and another process then
    checkpointed the WAL away under its readers ("database disk image is
    malformed" in the tray while a search ran elsewhere)."""
    db_path = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=db_path)
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
    tests = str(TESTS)
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), str(db_path), tests], stdout=subprocess.PIPE, text=True)
    while child.poll() is None:  # another process opening, searching and closing the index meanwhile
        with MemoryIndex(agent, provider=None) as other:
            other.search("Anna")
    out = child.stdout.read()
    assert child.returncode == 0 and out.startswith("0 "), out


def test_inspecting_an_open_index_keeps_this_processes_locks(tmp_path, workspace):
    """Regression: the header used to be read with a plain open()/close().
    Closing any descriptor of a database file drops every POSIX lock the
    process holds on it, its open SQLite connections' included; another
    process then took itself for the last reader, checkpointed and deleted
    the WAL under them, and the long-lived process (the tray) read "database
    disk image is malformed" from then on."""
    path = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=path)
    script = (
        "import sys\n"
        "from conftest import make_agent\n"
        "from memext.engine import MemoryIndex\n"
        "from pathlib import Path\n"
        "with MemoryIndex(make_agent(Path(sys.argv[1]), db_path=Path(sys.argv[2])), provider=None) as other:\n"
        "    other.search('greenhouse')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        for day in range(10, 16):
            (workspace / "memory" / f"2026-01-{day}.md").write_text(f"# Jan {day}\n- Repainted greenhouse {day}.\n")
            # The sync's writer is a second Store: opening it inspects the file under idx's reader.
            idx.sync()
            done = subprocess.run([sys.executable, "-c", script, str(workspace), str(path)], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            assert len(idx.search("greenhouse", max_results=20)) == day - 9
        assert idx.status().last_error is None


def program_with_a_meta_table(path: Path, version: object, *, memext_tables: bool = False) -> Path:
    """Another program's database that keeps a ``meta`` table with a
    ``schema_version`` row, as many do (with memext's table names too, when
    asked: still no stamp)."""
    conn = db.binding().module.connect(str(path))
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (version,))
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    if memext_tables:
        for table in ("files", "chunks", "embedding_cache"):
            conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, note TEXT)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    "version,memext_tables",
    [(7, False), ("7", False), ("1", False), ("1", True), (1, True)],
    ids=["int-7", "text-7", "version-1", "memext-names", "memext-names-int"],
)
def test_a_meta_table_with_a_schema_version_does_not_make_a_file_memexts(workspace, tmp_path, version, memext_tables):
    """The old code took any `meta` table with a `schema_version` row for an
    index older than the stamp and moved the file aside ("has index schema
    7 ... moved aside"). Only the stamp makes a file memext's to move."""
    other = program_with_a_meta_table(tmp_path / "app.sqlite", version, memext_tables=memext_tables)
    before = sha(other)
    agent = make_agent(workspace, db_path=other)
    with pytest.raises(ForeignDatabase) as err:
        with MemoryIndex(agent, provider=None) as idx:
            idx.sync()
    message = str(err.value)
    assert str(other) in message and "another program" in message and "moved aside" not in message, message
    assert sha(other) == before and app_id_of(other) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("app.sqlite")) == ["app.sqlite"]

    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(other))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg)}
    out = subprocess.run([sys.executable, "-m", "memext", "index"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "another program" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert sha(other) == before and not [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def _empty_database(path: Path, how: str) -> None:
    """An SQLite database holding nothing, as a crash right after it was
    made or a tool that opened it leaves one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = db.binding().module.connect(str(path))
    if how == "wal":
        conn.execute("PRAGMA journal_mode = WAL")  # the header written, no schema
    else:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("DROP TABLE t")
    conn.commit()
    conn.close()
    assert path.stat().st_size > 0


def _cli(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMEXT_CONFIG": str(config)}
    return subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("how", ["wal", "created and dropped"])
def test_an_empty_database_at_memexts_own_path_is_built_there(workspace, tmp_path, how):
    from memext.engine import app_paths

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n')
    own = app_paths().index_dir / "a.sqlite"  # no store.path: memext's own index path
    _empty_database(own, how)
    assert inspect(own).kind is Kind.FOREIGN and inspect(own, own_path=True).kind is Kind.UNFINISHED
    built = _cli(cfg, "index")
    assert built.returncode == 0 and "indexed 3 of 3 files" in built.stdout, built.stderr
    assert app_id_of(own) == APPLICATION_ID
    found = _cli(cfg, "search", "Anna")
    assert found.returncode == 0 and "MEMORY.md" in found.stdout, found.stderr
    assert not [p for p in own.parent.iterdir() if ".corrupt-" in p.name]  # nothing to keep: not set aside


def test_at_a_chosen_path_an_empty_database_stays_refused_naming_the_setting(workspace, tmp_path):
    chosen = tmp_path / "mine.sqlite"
    _empty_database(chosen, "wal")
    before = sha(chosen)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "none"\n[memory_search.store]\npath = {json.dumps(str(chosen))}\n'
        f'[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n'
    )
    refused = _cli(cfg, "index")
    assert refused.returncode == 2 and "another program" in refused.stderr and "point store.path at another file" in refused.stderr
    assert sha(chosen) == before


def test_another_programs_database_at_memexts_own_path_is_refused_without_naming_a_setting(workspace, tmp_path):
    from memext.engine import app_paths

    own = app_paths().index_dir / "a.sqlite"
    own.parent.mkdir(parents=True)
    other_program_db(own)
    before = sha(own)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "a"\nworkspace = {json.dumps(str(workspace))}\n')
    for args in (["index"], ["search", "Anna"], ["status"]):
        refused = _cli(cfg, *args)
        assert refused.returncode == 2, (args, refused.stderr)  # status: a health check
        assert "another program" in refused.stderr and "invoices" in refused.stderr, (args, refused.stderr)
        assert "store.path" not in refused.stderr and "move it out of memext's index folder" in refused.stderr
    assert sha(own) == before
