"""Is an index's schema whole? memext's tables and columns, compared with
what an index file holds.

A table or column dropped (damage, or another tool's hand) passes SQLite's
``quick_check``, yet every read of it fails with "no such table"; the index
is disposable, so such a file is damage like any other (moved aside and
rebuilt, engine/store/sqlite/repair.py). The expected tables and columns are
read from the schema itself, made once in a throwaway in-memory database,
so the check never drifts from the schema.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from . import db

#: Columns an index may lack and still be read: ``files.day`` came later
#: (added at the first writable open of an older index).
_OPTIONAL_COLUMNS = {("files", "day")}


@functools.lru_cache(maxsize=2)
def _expected_columns(schema: str) -> dict[str, frozenset[str]]:
    conn = db.binding().module.connect(":memory:")
    try:
        conn.executescript(schema)
        return _columns(conn, [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")])
    finally:
        conn.close()


def _columns(conn: Any, tables: list[str]) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    marks = ", ".join("?" for _ in tables)
    rows = conn.execute(
        f"SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p WHERE m.type = 'table' AND m.name IN ({marks})",
        tables,
    )
    for table, column in rows:
        found.setdefault(table, set()).add(column)
    return {t: frozenset(c) for t, c in found.items()}


def schema_problem(conn: Any, schema: str, *, fts: bool, vectors: bool) -> str | None:
    """What the tables of ``schema`` (SQL) lack in the database behind
    ``conn``, None when nothing. ``fts``: the keyword table ``chunks_fts``
    is expected too (this SQLite has FTS5); ``vectors``: ``chunks_vec`` is
    (``meta`` records vectors)."""
    expected = _expected_columns(schema)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    found = _columns(conn, sorted(expected.keys() & names))
    wanted = sorted(expected) + (["chunks_fts"] if fts else []) + (["chunks_vec"] if vectors else [])
    tables = [t for t in wanted if t not in names]
    columns = [f"{t}.{c}" for t in sorted(found) for c in sorted(expected[t] - found[t]) if (t, c) not in _OPTIONAL_COLUMNS]
    parts = ([f"missing table {', '.join(tables)}"] if tables else []) + ([f"missing column {', '.join(columns)}"] if columns else [])
    return "; ".join(parts) or None


def schema_damage(path: Path, schema: str) -> str | None:
    """:func:`schema_problem` of the index file at ``path``, through a
    read-only connection of its own (None too when it cannot be read or
    holds no ``meta``: other checks say why)."""
    try:
        conn, caps = db.connect(path, load_vec=False, readonly=True)
    except Exception as exc:
        if not db.is_sqlite_error(exc):
            raise
        return None
    try:
        dims = conn.execute("SELECT 1 FROM meta WHERE key = 'dims'").fetchone()
        return schema_problem(conn, schema, fts=caps.fts5, vectors=dims is not None)
    except Exception as exc:
        if not db.is_sqlite_error(exc) and not isinstance(exc, UnicodeDecodeError):
            raise
        return None
    finally:
        conn.close()
