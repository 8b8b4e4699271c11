"""The vector side of an index: ``chunks_vec``, the sidecar and the in-memory matrix.

``chunks_vec`` is a sqlite-vec ``vec0`` table when the extension loads, else
a plain table of float32 blobs (``vector_store = "blob"``); it is where
vectors are written. With ``store.vector.backend = "auto"`` searches read
the memory-mapped sidecar (:mod:`.sidecar`) that each sync brings up to
date, so every process searches at matrix speed from its first query;
rows written since the sidecar (the *delta*) are read from SQLite once per
data version, and rows deleted since are listed in ``vectors_gone``. When
no valid sidecar exists (an index from before it, or one whose sync
crashed before recording it) searches use vec0 KNN for small indexes and
an in-memory :class:`~memext.engine.vector_math.MatrixIndex` for large ones,
loaded in the background while vec0 answers. ``numpy`` and ``vec0`` force
those two.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Iterator, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from ...vector_math import MatrixIndex, l2_to_similarity, search_blas_threads, to_blob
from ..base import CorruptIndex
from .chunks import IN_JSON, chunk_filter, json_array
from .connection import Connection
from .mapped import MappedVectors, compact_sidecar, read_mapped, remove_sidecars

#: With ``store.vector.backend = "auto"``, indexes above this many chunks
#: search an in-memory matrix (see engine.vectors for the measurements).
VECTOR_AUTO_NUMPY_ABOVE = 20_000


class VectorTable:
    """``chunks_vec`` plus the matrix that serves large indexes.

    ``chunk_count`` tells ``auto`` how large the index is.
    """

    def __init__(self, db: Connection, chunk_count: Callable[[], int]):
        self.db = db
        self._chunk_count = chunk_count
        self._matrix: MatrixIndex | None = None
        self._matrix_key: Any = None
        self._matrix_loading = False
        self._mapped: MappedVectors | None = None
        self._mapped_key: Any = None

    def reset(self) -> None:
        """Forget the matrix and the sidecar (the connection was reopened on other data)."""
        with self.db.lock:
            self._matrix = None
            self._matrix_key = None
            if self._mapped is not None:
                self._mapped.close()
            self._mapped = None
            self._mapped_key = None

    @property
    def matrix_loaded(self) -> bool:
        """True once the in-memory matrix is loaded."""
        return self._matrix is not None

    # -- what is stored -----------------------------------------------------------------

    @property
    def dims(self) -> int | None:
        raw = self.db.get_meta("dims")
        return int(raw) if raw else None

    @property
    def vector_store(self) -> str:
        """ "vec0" when sqlite-vec is loaded, else "blob" (numpy scan)."""
        return "vec0" if self.db.caps.vec_version else "blob"

    def ensure_table(self, dims: int) -> None:
        """Create ``chunks_vec`` for vectors of ``dims`` (inside a transaction)."""
        current = self.dims
        if current == dims:
            return
        if current is not None:
            raise ValueError(f"index holds {current}-dim vectors, got {dims}; the index must be rebuilt")
        if self.vector_store == "vec0":
            # L2 on unit vectors orders like cosine and is the faster vec0 path.
            self.db.conn.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dims}], source text)")
        else:
            self.db.conn.execute("CREATE TABLE chunks_vec (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL, source TEXT NOT NULL)")
        self.db.set_meta("dims", str(dims))
        self.db.set_meta("vector_store", self.vector_store)

    def insert(self, rowid: int, vector: np.ndarray, source: str) -> None:
        """Store a chunk's vector (inside a transaction, after :meth:`ensure_table`)."""
        self.db.conn.execute("INSERT INTO chunks_vec(rowid, embedding, source) VALUES (?, ?, ?)", (rowid, to_blob(vector), source))

    def delete(self, rowids: Sequence[int]) -> None:
        """Drop the vectors of some chunks (inside a transaction); with a
        sidecar, list them as gone so readers mask them until the next
        compaction."""
        if not rowids or self.dims is None:
            return
        for rowid in rowids:
            self.db.conn.execute("DELETE FROM chunks_vec WHERE rowid = ?", (rowid,))
        if self.db.get_meta("vector_sidecar"):
            self.db.conn.executemany("INSERT OR IGNORE INTO vectors_gone(rowid) VALUES (?)", [(r,) for r in rowids])

    # -- the sidecar ---------------------------------------------------------------------

    def finish_writes(self) -> None:
        """Bring the sidecar up to date after a sync (the caller holds the
        writer lock): rewritten when there is none or the rows written or
        deleted since it are many, else left for readers to patch."""
        with self.db.lock:
            if self.dims is None or self.db.options.vector_backend != "auto":
                return
            if self._mapped is not None:
                self._mapped.close()  # the file may be replaced: never keep a stale view
            self._mapped, self._mapped_key = None, None
            compact_sidecar(self.db, self.dims)

    def discard_files(self) -> None:
        """Delete this index's sidecar files (a discarded rebuild shadow)."""
        self.reset()
        remove_sidecars(self.db.path, keep=None)

    def _mapped_ready(self) -> MappedVectors | None:
        """The sidecar and its delta as of the current data, or None."""
        if self.db.options.vector_backend != "auto":
            return None
        with self.db.lock:
            key = self.db.data_key()
            if self._mapped_key == key:
                return self._mapped
            self._mapped = read_mapped(self.db, self._mapped, self.dims or 0)
            self._mapped_key = key
            return self._mapped

    # -- search ------------------------------------------------------------------------

    def search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[tuple[int, float]]:
        """Top-k ``(rowid, cosine similarity)``.

        vec0 KNN for small indexes; an in-memory matrix for large ones or
        when sqlite-vec is unavailable. ``paths`` keeps only chunks of those
        files (see :meth:`_search_among`).
        """
        if self.dims is None or k <= 0:
            return []
        # BLAS threads by the rows of the product (bench/blas_threads.py), for this call only.
        mapped = self._mapped_ready()
        with search_blas_threads(mapped.dense_rows if mapped is not None else self._chunk_count()):
            return self._search(query, k, sources, paths)

    def _search(self, query: np.ndarray, k: int, sources: Sequence[str] | None, paths: Collection[str] | None) -> list[tuple[int, float]]:
        if paths is not None:
            return self._search_among(query, k, sources, paths)
        mapped = self._mapped_ready()
        if mapped is not None:
            return mapped.search(query, k, sources)
        if self._use_matrix():
            matrix = self._matrix_ready()
            if matrix is not None:
                return matrix.search(query, k, sources)
        if self.db.get_meta("vector_store") != "vec0":
            return []
        sql = "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?"
        params: list[Any] = [to_blob(query), k]
        if sources is not None and len(sources) == 1:
            sql += " AND source = ?"
            params.append(sources[0])
        with self.db.lock:
            rows = self.db.conn.execute(sql, params).fetchall()
        if any(dist is None for _, dist in rows):  # NaN bytes in a stored vector: damage (DESIGN.md §4)
            raise CorruptIndex(f"{self.db.path} holds a damaged vector (vec0 found no distance to it)")
        out = [(rowid, l2_to_similarity(dist)) for rowid, dist in rows]
        if sources is not None and len(sources) > 1:
            allowed = set(sources)
            keep = self._sources_of([r for r, _ in out])
            out = [(r, s) for r, s in out if keep.get(r) in allowed]
        return out

    def _search_among(self, query: np.ndarray, k: int, sources: Sequence[str] | None, paths: Collection[str]) -> list[tuple[int, float]]:
        """Exact top-k among the chunks of some files (and sources): the
        rows of those rowids in the sidecar or matrix serving searches, else
        vec0 KNN restricted to those rowids. The filter comes before the top
        k, so k chunks of those files come back even when better chunks of
        other files abound."""
        import numpy as np

        if not paths:
            return []
        where, params = chunk_filter("chunks", sources, paths)
        with self.db.lock:
            ids = [r for (r,) in self.db.conn.execute(f"SELECT rowid FROM chunks WHERE {where}", params)]
        if not ids:
            return []
        held_by = self._mapped_ready() or (self._matrix_ready() if self._use_matrix() else None)
        if held_by is not None:
            held = held_by.vectors(ids)
            if not held:
                return []
            rowids = list(held)
            sims = np.stack([held[r] for r in rowids]) @ np.asarray(query, dtype=np.float32)
            top = np.argsort(-sims, kind="stable")[:k]
            return [(rowids[i], float(sims[i])) for i in top]
        if self.db.get_meta("vector_store") != "vec0":
            return []
        sql = "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? AND rowid IN (SELECT value FROM json_each(?))"
        with self.db.lock:
            rows = self.db.conn.execute(sql, [to_blob(query), k, json.dumps(ids)]).fetchall()
        if any(dist is None for _, dist in rows):  # NaN bytes in a stored vector: damage, as in search()
            raise CorruptIndex(f"{self.db.path} holds a damaged vector (vec0 found no distance to it)")
        return [(rowid, l2_to_similarity(dist)) for rowid, dist in rows]

    def _sources_of(self, rowids: Sequence[int]) -> dict[int, str]:
        if not rowids:
            return {}
        with self.db.lock:
            # chunks, not chunks_vec: a vec0 point lookup is slow.
            return dict(self.db.conn.execute(f"SELECT rowid, source FROM chunks WHERE rowid {IN_JSON}", (json_array(rowids),)))

    def backend_in_use(self) -> str:
        """ "mmap", "mmap+bits" (quantised, rescored), "vec0", "numpy" or
        "none", as the next search would use it."""
        if self.dims is None:
            return "none"
        mapped = self._mapped_ready()
        if mapped is not None:
            return mapped.method
        if not self._use_matrix():
            return "vec0"
        if self._matrix is None and not self._matrix_forced() and not self.db.options.background_matrix:
            return "vec0"  # a one-shot process never loads the matrix
        return "numpy"

    def chunk_vectors(self, rowids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored vectors of some chunks (for MMR and hybrid scoring).

        From the in-memory matrix when it is loaded, else from the embedding
        cache (the same vectors, by text hash: about 0.02 ms a chunk), else
        from ``chunks_vec``, where a vec0 point lookup costs about 0.3 ms.
        """
        import numpy as np

        ids = list(rowids)
        dims = self.dims
        if not ids or dims is None:
            return {}
        out: dict[int, np.ndarray] = {}
        mapped = self._mapped_ready()
        if mapped is not None:
            out.update(mapped.vectors(ids))
        matrix = self._matrix
        if matrix is not None:
            out.update(matrix.vectors([r for r in ids if r not in out]))
        missing = [r for r in ids if r not in out]
        fp = (self.db.get_meta_json("fingerprint") or {}) if missing else {}
        if missing and fp.get("provider", "none") != "none":
            with self.db.lock:
                rows = self.db.conn.execute(
                    "SELECT c.rowid, e.embedding FROM chunks c JOIN embedding_cache e ON e.provider = ? AND e.model = ? "
                    f"AND e.endpoint_key = ? AND e.hash = c.hash WHERE c.rowid {IN_JSON}",
                    [fp["provider"], fp.get("model", ""), fp.get("endpoint", ""), json_array(missing)],
                ).fetchall()
            out.update((r, np.frombuffer(b, dtype="<f4")) for r, b in rows if len(b) == 4 * dims)
            missing = [r for r in missing if r not in out]
        if missing:
            marks = ",".join("?" * len(missing))
            with self.db.lock:
                rows = self.db.conn.execute(f"SELECT rowid, embedding FROM chunks_vec WHERE rowid IN ({marks})", missing).fetchall()
            out.update((r, np.frombuffer(b, dtype="<f4")) for r, b in rows)
        return out

    # -- the in-memory matrix ------------------------------------------------------------

    def _use_matrix(self) -> bool:
        if self.db.get_meta("vector_store") == "blob":
            return True
        backend = self.db.options.vector_backend
        if backend == "numpy":
            return True
        if backend == "vec0":
            return False
        return self._chunk_count() > VECTOR_AUTO_NUMPY_ABOVE

    def _matrix_forced(self) -> bool:
        """The matrix is the only way (no vec0) or the one configured."""
        return self.db.get_meta("vector_store") == "blob" or self.db.options.vector_backend == "numpy"

    def _matrix_ready(self) -> MatrixIndex | None:
        """The up-to-date matrix, or None while it loads in the background
        (the caller then uses vec0, so the first search never waits)."""
        with self.db.lock:
            if self._matrix is None:
                if self._matrix_forced():
                    self._matrix = self._load(self.db.conn, self.dims or 0)
                elif not self._matrix_loading and self.db.options.background_matrix:
                    self._matrix_loading = True
                    threading.Thread(
                        target=self._load_in_background, args=(self.db.epoch, self.dims or 0), name="memext-matrix", daemon=True
                    ).start()
                    return None
                else:
                    return None
            matrix = self._matrix
            key = self.db.data_key()
            stale = key != self._matrix_key
            self._matrix_key = key
        if matrix is not None and stale:
            matrix.refresh(self._rows_after, self._live_rowids)
        return matrix

    def _load(self, conn: Any, dims: int) -> MatrixIndex:
        lock = self.db.lock if conn is self.db.conn else threading.RLock()
        matrix = MatrixIndex(dims)
        matrix.refresh(lambda after: _rows_after(conn, lock, after), lambda: _live_rowids(conn, lock))
        return matrix

    def _load_in_background(self, epoch: int, dims: int) -> None:
        try:
            # Its own connection: the main one stays free for searches.
            conn, _ = self.db.connect()
            try:
                matrix = self._load(conn, dims)
            finally:
                conn.close()
            with self.db.lock:
                if self.db.epoch == epoch:  # else the index was swapped meanwhile: a stale load
                    self._matrix = matrix
        except Exception:
            pass  # vec0 keeps serving; the next search tries again
        finally:
            self._matrix_loading = False

    def _rows_after(self, rowid: int) -> Iterator[tuple[int, bytes, str]]:
        return _rows_after(self.db.conn, self.db.lock, rowid)

    def _live_rowids(self) -> np.ndarray:
        return _live_rowids(self.db.conn, self.db.lock)


def _rows_after(conn: Any, lock: Any, rowid: int) -> Iterator[tuple[int, bytes, str]]:
    with lock:
        rows = conn.execute("SELECT rowid, embedding, source FROM chunks_vec WHERE rowid > ?", (rowid,)).fetchall()
    return iter(rows)


def _live_rowids(conn: Any, lock: Any) -> np.ndarray:
    import numpy as np

    with lock:
        # chunks, not the vec0 table: same rowids, and a plain table scans faster.
        rows = conn.execute("SELECT rowid FROM chunks").fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
