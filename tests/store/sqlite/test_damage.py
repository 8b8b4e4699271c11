"""SQLite's check of an index file, and the errors that mean damage
(engine/store/sqlite/damage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memext.engine.store.sqlite import damage, db

pytestmark = pytest.mark.sqlite_only


def _table(path: Path) -> None:
    conn, _ = db.connect(path, load_vec=False)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.execute("INSERT INTO notes VALUES ('Anna leads billing.')")
    conn.commit()
    conn.close()


def test_a_sound_file_passes(tmp_path):
    _table(tmp_path / "index.sqlite")
    assert damage.quick_check(tmp_path / "index.sqlite") is None
    assert damage.quick_check(tmp_path / "index.sqlite", thorough=True) is None


class _CheckMeetsAHugeValue:
    """A connection whose check reads a value SQLite will not hold, as it
    does in a record whose damaged header claims gigabytes. Random bytes
    over a real index cause this only by chance (one in some hundreds of
    scribbles), so the check's statement is swapped for one that makes
    real SQLite raise the same error (SQLITE_TOOBIG)."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, sql: str):
        assert sql.startswith("PRAGMA quick_check") or sql.startswith("PRAGMA integrity_check")
        return self.conn.execute("SELECT zeroblob(2000000000)")

    def close(self) -> None:
        self.conn.close()


def test_a_check_stopped_by_a_value_too_big_for_sqlite_finds_damage(tmp_path, monkeypatch):
    _table(tmp_path / "index.sqlite")
    real = db.connect
    monkeypatch.setattr(damage.db, "connect", lambda *a, **k: (_CheckMeetsAHugeValue(real(*a, **k)[0]), None))
    found = damage.quick_check(tmp_path / "index.sqlite")
    assert found is not None and "too big" in found


def test_a_locked_file_is_not_called_damaged():
    assert not damage.may_be_damage(db.binding().module.OperationalError("database is locked"))
