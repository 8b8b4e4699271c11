"""The entries of the indexed files in PostgreSQL (``{schema}.entries``):
their lines, the stems of their words and their vectors as float16
``bytea`` (DESIGN.md §4, §7). A search reads the entries of the hits it
judges in one statement; a search ranks their vectors in memory
(:mod:`..entry_vectors`), so they need no pgvector index. A schema made before entries were kept gets the table at
the first open that may write it (empty: the fingerprint changed too, so
the next sync rebuilds and fills it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection, Sequence

from .. import base
from ..entry_vectors import CHUNKS_OF_FILES_SQL, ENTRIES_OF_CHUNKS_SQL

if TYPE_CHECKING:
    import numpy as np

#: As the SQLite store's: per span, the entries from the one holding its
#: first line to its last line (the caller keeps what overlaps).
_WITHIN = (
    "SELECT e.path, e.start_line, e.end_line, e.stems, e.vector FROM unnest(%s::text[], %s::int[], %s::int[]) AS w(p, s, t) "
    "CROSS JOIN LATERAL (SELECT x.path, x.start_line, x.end_line, x.stems, x.vector FROM {s}.entries AS x "
    "WHERE x.path = w.p AND x.start_line BETWEEN coalesce((SELECT max(y.start_line) FROM {s}.entries AS y "
    "WHERE y.path = w.p AND y.start_line <= w.s), w.s) AND w.t) AS e"
)


class PgEntries:
    """The ``entries`` table of one agent's schema."""

    def __init__(self, db: Any):  # a PgConnection (whose schema names this table)
        self._db = db
        self._present: bool | None = None

    def present(self) -> bool:
        """Whether the schema has the table (remembered once true)."""
        if not self._present:
            self._present = bool(
                self._db.run(
                    lambda conn: conn.execute(
                        "SELECT to_regclass(%s) IS NOT NULL", (self._db.sql.Identifier(self._db.schema, "entries").as_string(conn),)
                    ).fetchone()[0]
                )
            )
        return self._present

    def insert(self, conn: Any, path: str, source: str, entries: Sequence[base.NewEntry]) -> None:
        """Write a file's entries (inside the caller's transaction)."""
        if not entries:
            return
        conn.execute(
            self._db.q(
                "INSERT INTO {s}.entries(path, source, start_line, end_line, hash, stems, vector) "
                "SELECT %s, %s, sl, el, h, st, v FROM unnest(%s::int[], %s::int[], %s::text[], %s::text[], %s::bytea[]) "
                "AS u(sl, el, h, st, v)"
            ),
            (
                path,
                source,
                [e.start_line for e in entries],
                [e.end_line for e in entries],
                [e.hash for e in entries],
                [e.stems for e in entries],
                [base.entry_blob(e.vector) for e in entries],
            ),
        )

    def within(self, spans: Sequence[tuple[str, int, int]]) -> list[base.EntryRow]:
        if not spans or not self.present():
            return []
        query = self._db.q(_WITHIN)
        params = ([s[0] for s in spans], [s[1] for s in spans], [s[2] for s in spans])
        rows = self._db.run(lambda conn: conn.execute(query, params).fetchall())
        return base.entry_rows((p, a, b, st, bytes(v) if v is not None else None) for p, a, b, st, v in rows)

    def vector_sample(self, limit: int) -> list[np.ndarray]:
        if not self.present():
            return []
        query = self._db.q(
            "SELECT vector FROM (SELECT vector, row_number() OVER (ORDER BY path, start_line) AS n, count(*) OVER () AS total "
            "FROM {s}.entries WHERE vector IS NOT NULL) AS r WHERE (n - 1) %% greatest(1, total / %s) = 0 ORDER BY n LIMIT %s"
        )
        rows = self._db.run(lambda conn: conn.execute(query, (limit, limit)).fetchall())
        return [v for v in (base.entry_vector(bytes(r[0])) for r in rows) if v is not None]

    def vectors_of_chunks(self, chunks: list[int], known: Collection[str]) -> tuple[list[Any], list[Any]]:
        """The entry vectors overlapping ``chunks`` and the chunks of their
        files but those ``known``, for :class:`~..entry_vectors.EntryVectors`."""
        entries = self._db.q(ENTRIES_OF_CHUNKS_SQL.format(entries="{s}.entries", chunks="{s}.chunks", chunks_given="c.rowid = ANY(%s)"))
        of_files = self._db.q(CHUNKS_OF_FILES_SQL.format(chunks="{s}.chunks", paths_given="path = ANY(%s)"))

        def read(conn: Any) -> tuple[list[Any], list[Any]]:
            found = conn.execute(entries, (chunks,)).fetchall()
            paths = sorted(p for p in {row[0] for row in found} if p not in known)
            return found, conn.execute(of_files, (paths,)).fetchall() if paths else []

        return self._db.run(read)
