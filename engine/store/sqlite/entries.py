"""The entries of the indexed files (``entries``): their lines, the stems
of their words and their vectors (DESIGN.md §4, §7).

A search reads the entries of the hits it judges, in one statement; the
sync writes a file's entries with its chunks. An index made before the
table existed gets it at its first writable open (empty: the fingerprint
changed too, so the next sync rebuilds and fills it); read-only, it is
searched without entries. Write methods run inside a transaction the
caller opened.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Collection, Protocol, Sequence

from .. import base
from ..entry_vectors import CHUNKS_OF_FILES_SQL, ENTRIES_OF_CHUNKS_SQL
from . import db

if TYPE_CHECKING:
    import numpy as np

TABLE = "entries"
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL, "
    "start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, stems TEXT NOT NULL, vector BLOB)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_path ON {TABLE}(path, start_line)",
)

#: The entries of a file that overlap some lines: a range seek in
#: ``entries_path`` from the start of the entry holding the first line to
#: the last line. That first entry may end above the span: the caller
#: keeps what overlaps. One statement a span, prepared once: cheaper than
#: one statement over all the spans unpacked from JSON.
_WITHIN = (
    f"SELECT path, start_line, end_line, stems, vector FROM {TABLE} WHERE path = ?1 AND start_line BETWEEN "
    f"coalesce((SELECT max(start_line) FROM {TABLE} WHERE path = ?1 AND start_line <= ?2), ?2) AND ?3"
)


class _Index(Protocol):
    conn: Any
    read_only: str | None

    def transaction(self) -> Any: ...


def present(conn: Any) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone() is not None


def ensure(index: _Index) -> bool:
    """Give an index made before entries were kept its (empty) table; True
    when the table is there."""
    if present(index.conn):
        return True
    if index.read_only:
        return False
    try:
        with index.transaction():
            for statement in _SCHEMA:
                index.conn.execute(statement)
    except Exception as exc:
        if not db.is_sqlite_error(exc):
            raise
        return False
    return True


def insert(conn: Any, path: str, source: str, entries: Sequence[base.NewEntry]) -> None:
    """Write a file's entries (its old ones deleted first by :func:`delete`)."""
    if entries:
        conn.executemany(
            f"INSERT INTO {TABLE}(path, source, start_line, end_line, hash, stems, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(path, source, e.start_line, e.end_line, e.hash, e.stems, base.entry_blob(e.vector)) for e in entries],
        )


def delete(conn: Any, path: str) -> None:
    conn.execute(f"DELETE FROM {TABLE} WHERE path = ?", (path,))


def within(conn: Any, spans: Sequence[tuple[str, int, int]]) -> list[base.EntryRow]:
    """The entries of ``spans`` (path, first line, last line) that overlap
    them, each once, in file and line order."""
    rows: list[Any] = []
    for span in spans:
        rows += conn.execute(_WITHIN, span).fetchall()
    return base.entry_rows(rows)


def vector_sample(conn: Any, limit: int) -> list[np.ndarray]:
    """Up to ``limit`` entry vectors spread evenly over the index (in file and line order)."""
    total = conn.execute(f"SELECT count(*) FROM {TABLE} WHERE vector IS NOT NULL").fetchone()[0]
    if not total:
        return []
    step = max(1, total // limit)
    rows = conn.execute(
        f"SELECT vector FROM (SELECT vector, row_number() OVER (ORDER BY path, start_line) AS n FROM {TABLE} WHERE vector IS NOT NULL) "
        "WHERE (n - 1) % ? = 0 LIMIT ?",
        (step, limit),
    ).fetchall()
    return [v for v in (base.entry_vector(r[0]) for r in rows) if v is not None]


#: The chunks whose rowids a JSON array names, and the files a JSON array names.
_CHUNKS_GIVEN = "c.rowid IN (SELECT value FROM json_each(?))"
_PATHS_GIVEN = "path IN (SELECT value FROM json_each(?))"
_ENTRIES_OF_CHUNKS = ENTRIES_OF_CHUNKS_SQL.format(entries=TABLE, chunks="chunks", chunks_given=_CHUNKS_GIVEN)
_CHUNKS_OF_FILES = CHUNKS_OF_FILES_SQL.format(chunks="chunks", paths_given=_PATHS_GIVEN)


def vectors_of_chunks(conn: Any, chunks: list[int], known: Collection[str]) -> tuple[list[Any], list[Any]]:
    """The entry vectors overlapping ``chunks`` and the chunks of their
    files but those ``known``, for :class:`~..entry_vectors.EntryVectors`."""
    entries = conn.execute(_ENTRIES_OF_CHUNKS, (json.dumps(chunks),)).fetchall()
    paths = sorted(p for p in {row[0] for row in entries} if p not in known)
    rows = conn.execute(_CHUNKS_OF_FILES, (json.dumps(paths),)).fetchall() if paths else []
    return entries, rows
