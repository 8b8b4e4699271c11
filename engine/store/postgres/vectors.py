"""The vector side of a PostgreSQL index: pgvector, exact or HNSW by size.

``vectors(rowid, source, embedding vector(dims))`` is created once the
vector size is known. Up to :data:`HNSW_ABOVE` vectors a search is an exact
scan (``ORDER BY embedding <=> q``: the same neighbours as SQLite's exact
KNN; equal distances put the newer chunk first, as vec0 does); above it the writer builds an HNSW index (``vector_cosine_ops``) and
searches use it, trading a little recall for speed (see bench/pg_bench.py
for the figures). The choice is recorded in ``meta`` (``vector_index``) and
shown in status. A search filtered by source or path over an HNSW index
asks for more neighbours and falls back to an exact scan when the filter
leaves too few.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Collection, Iterable, Sequence

if TYPE_CHECKING:  # numpy loads on first use
    import numpy as np

from .connection import PgConnection

#: Above this many vectors the writer builds an HNSW index.
HNSW_ABOVE = 20_000
#: HNSW build parameters (pgvector's defaults) and the search breadth.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
MIN_EF_SEARCH = 64
#: maintenance_work_mem for the HNSW build, when the server's is smaller.
BUILD_WORK_MEM = "512MB"
#: A filtered HNSW search asks for this many times ``k`` neighbours.
FILTER_OVERFETCH = 4
#: The rowid index (made later in a shadow being filled: PgConnection.build_indexes).
ROWID_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS vectors_pkey ON {s}.vectors(rowid)"


class PgVectors:
    """One agent's vectors in pgvector."""

    def __init__(self, db: PgConnection):
        self.db = db
        #: hnsw.ef_search as last set, and on which connection (a new one starts at the default).
        self._ef: tuple[Any, int] = (None, 0)

    @property
    def dims(self) -> int | None:
        raw = self.db.get_meta("dims")
        return int(raw) if raw else None

    @property
    def index_kind(self) -> str:
        """ "hnsw" or "exact": how searches run."""
        return self.db.get_meta("vector_index") or "exact"

    # -- writes (inside the caller's transaction) ---------------------------------------

    def ensure_table(self, dims: int) -> None:
        current = self.dims
        if current == dims:
            return
        if current is not None:
            raise ValueError(f"index holds {current}-dim vectors, got {dims}; the index must be rebuilt")
        sql = self.db.sql
        self.db.conn.execute(
            self.db.q("CREATE TABLE {s}.vectors (rowid bigint NOT NULL, source text NOT NULL, embedding vector({d}) NOT NULL)").format(
                d=sql.Literal(int(dims))
            )
        )
        if not self.db.defer_indexes:
            self.db.conn.execute(self.db.q(ROWID_INDEX))
        self.db.set_meta("dims", str(dims))
        self.db.set_meta("vector_store", "pgvector")
        self.db.set_meta("vector_index", "exact")

    def insert(self, rows: Sequence[tuple[int, np.ndarray, str]]) -> None:
        """Vectors of new chunks: ``(rowid, vector, source)``."""
        if not rows:
            return
        with self.db.conn.cursor() as cur:
            cur.executemany(self.db.q("INSERT INTO {s}.vectors(rowid, embedding, source) VALUES (%s, %s, %s)"), rows)

    def build_index_if_large(self) -> bool:
        """Build the HNSW index once the index holds more than
        :data:`HNSW_ABOVE` vectors (the writer calls it after writing);
        True if it did."""
        if self.dims is None or self.index_kind == "hnsw":
            return False
        count = self.db.run(lambda conn: conn.execute(self.db.q("SELECT count(*) FROM {s}.vectors")).fetchone()[0])
        if count <= HNSW_ABOVE:
            return False
        started = time.monotonic()
        with self.db.transaction():
            # pgvector builds far faster while the graph fits in
            # maintenance_work_mem (64 MB by default; 100k 384-dim vectors
            # need about 200 MB): raised for this build only, never lowered.
            self.db.raise_work_mem(BUILD_WORK_MEM)
            self.db.conn.execute(
                self.db.q(
                    "CREATE INDEX IF NOT EXISTS vectors_hnsw ON {s}.vectors USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = {m}, ef_construction = {ef})"
                ).format(m=self.db.sql.Literal(HNSW_M), ef=self.db.sql.Literal(HNSW_EF_CONSTRUCTION))
            )
            self.db.set_meta("vector_index", "hnsw")
            self.db.set_meta("vector_index_build_s", f"{time.monotonic() - started:.1f}")
        return True

    # -- search --------------------------------------------------------------------------

    def search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, cosine similarity)``."""
        import numpy as np

        if self.dims is None or k <= 0 or (paths is not None and not paths):
            return []
        q = np.asarray(query, dtype=np.float32)
        if len(q) != self.dims:
            return []
        filtered = sources is not None or paths is not None
        if self.index_kind == "hnsw" and paths is None:
            hits = self._hnsw(q, k, sources)
            if not filtered or len(hits) >= k:
                return hits
        return self._exact(q, k, sources, paths)

    def _filters(self, sources: Sequence[str] | None, paths: Collection[str] | None) -> tuple[Any, list[Any]]:
        sql = self.db.sql
        where: list[Any] = []
        params: list[Any] = []
        if sources is not None:
            where.append(sql.SQL("v.source = ANY(%s)"))
            params.append(list(sources))
        if paths is not None:
            where.append(self.db.q("v.rowid IN (SELECT rowid FROM {s}.chunks WHERE path = ANY(%s))"))
            params.append(list(paths))
        if not where:
            return sql.SQL(""), params
        return sql.SQL("WHERE ") + sql.SQL(" AND ").join(where), params

    def _exact(self, q: np.ndarray, k: int, sources: Sequence[str] | None, paths: Collection[str] | None) -> list[tuple[int, float]]:
        where, params = self._filters(sources, paths)
        # The distance is computed once a row (named in ORDER BY, not written
        # twice: PostgreSQL would compute both), the similarity from it here.
        query = self.db.q("SELECT v.rowid, v.embedding <=> %s AS d FROM {s}.vectors v {where} ORDER BY d, v.rowid DESC LIMIT {k}").format(
            where=where, k=self.db.sql.Literal(int(k))
        )

        def run(conn: Any) -> list[tuple[int, float]]:
            if self.index_kind == "exact":  # no index to avoid: one round trip
                return conn.execute(query, [q, *params]).fetchall()
            with conn.transaction():
                # Exact even where an HNSW index exists (filtered searches).
                conn.execute("SET LOCAL enable_indexscan = off")
                return conn.execute(query, [q, *params]).fetchall()

        return [(int(r), 1.0 - float(d)) for r, d in self.db.run(run)]

    def _hnsw(self, q: np.ndarray, k: int, sources: Sequence[str] | None) -> list[tuple[int, float]]:
        want = k * FILTER_OVERFETCH if sources is not None else k
        ef = min(1000, max(MIN_EF_SEARCH, 2 * want))
        sql = self.db.sql
        where = sql.SQL("")
        params: list[Any] = [q, q]
        if sources is not None:
            where = sql.SQL("WHERE source = ANY(%s)")
            params.append(list(sources))
        query = self.db.q(
            "SELECT rowid, sim FROM (SELECT rowid, source, 1 - (embedding <=> %s) AS sim FROM {s}.vectors "
            "ORDER BY embedding <=> %s LIMIT {want}) AS near {where} ORDER BY sim DESC, rowid DESC LIMIT {k}"
        ).format(want=sql.Literal(int(want)), where=where, k=sql.Literal(int(k)))

        def run(conn: Any) -> list[tuple[int, float]]:
            # A session setting, sent only when it changes (most searches
            # ask for the same pool): a search stays one round trip.
            if self._ef[0] is not conn or self._ef[1] != ef:
                conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(ef)))
                self._ef = (conn, ef)
            return conn.execute(query, params).fetchall()

        return [(int(r), float(s)) for r, s in self.db.run(run)]

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]:
        ids = list(rowids)
        if not ids or self.dims is None:
            return {}
        rows = self.db.run(
            lambda conn: conn.execute(
                self.db.q("SELECT rowid, embedding FROM {s}.vectors WHERE rowid = ANY(%s)"), (ids,), binary=True
            ).fetchall()
        )
        return {int(r): v.to_numpy() for r, v in rows}
