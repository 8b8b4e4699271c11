"""Vector helpers and the in-memory matrix used for fast exact KNN.

sqlite-vec's vec0 KNN is exact but, as shipped on PyPI (0.1.9, no SIMD),
scans about 0.7 million 384-dim vectors per second on a 2-core machine: fine
for a personal index, 140 ms at 100k chunks. For large indexes the engine
keeps a float32 matrix in memory and does the same exact KNN with one BLAS
matrix-vector product (about 12 ms at 100k chunks, 1.5 MB per 1,000 chunks
of 384 dims). The matrix is refreshed incrementally: chunk rowids only grow
(AUTOINCREMENT), so new rows are those above the last rowid seen.
"""

from __future__ import annotations

import functools
import os
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np


def to_blob(vector: Sequence[float] | np.ndarray) -> bytes:
    """float32 little-endian bytes, the format vec0 and our tables store."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")


@functools.lru_cache(maxsize=1)
def float16_table() -> np.ndarray:
    """Every float16 value as float32, by its bits: ``float16_table().take(a.view(np.uint16))``
    widens ``a`` faster than numpy's cast, which has no SIMD path here."""
    import numpy as np

    return np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)


def normalize(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """L2-normalised float32 copy (a zero vector stays zero)."""
    import numpy as np

    v = np.asarray(vector, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v.copy()


def l2_to_similarity(distance: float) -> float:
    """Cosine similarity from the L2 distance of two unit vectors."""
    return 1.0 - (distance * distance) / 2.0


#: Below this many rows a search's matrix-vector product runs on one BLAS
#: thread; from it up, on every core (BLAS's own default). Measured with
#: bench/blas_threads.py on 2 cores (docs/benchmarks.md): up to 50,000 rows
#: one thread is as fast on a quiet machine and up to 1.7x faster on a busy
#: one (waking the other thread costs more than it saves); from 100,000
#: rows the second thread wins 1.2x on a busy machine. Above the sidecar's
#: quantised threshold the product is a rescored pool of a few thousand
#: rows, so one thread again.
BLAS_ONE_THREAD_BELOW = 100_000


def blas_threads_for(rows: int) -> int:
    """How many BLAS threads a search's product over ``rows`` vectors uses."""
    return 1 if rows < BLAS_ONE_THREAD_BELOW else _cores()


@functools.lru_cache(maxsize=1)
def _cores() -> int:
    # os.cpu_count() reads /sys on Linux (about 30 us, twice a search); the
    # count BLAS started its threads for does not change either.
    return os.cpu_count() or 1


class _BlasLimit:
    """One BLAS thread for the searches running now, and the user's own
    setting back once the last of them is done.

    The thread count of OpenBLAS is process-wide, so searches inside one
    another (a search's own helpers) share one limit (counted) rather than
    each restoring what another set.
    ``threadpoolctl`` is imported and its library scan (about 10 ms) made on
    the first search that needs the limit: keyword-only work never pays it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._blas: Any = None  # threadpoolctl's controller of the BLAS libraries, or False: none found
        self._saved: Any = None

    def _libraries(self) -> Any:
        if self._blas is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self._blas = False
            else:
                found = ThreadpoolController().select(user_api="blas")
                self._blas = found if found.lib_controllers else False
        return self._blas

    def enter(self) -> None:
        with self._lock:
            self._active += 1
            if self._active == 1:
                blas = self._libraries()
                if blas:
                    self._saved = [(lib, lib.num_threads) for lib in blas.lib_controllers]
                    for lib, _ in self._saved:
                        lib.set_num_threads(1)

    def exit(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0 and self._saved:
                for lib, threads in self._saved:
                    lib.set_num_threads(threads)
                self._saved = None


_BLAS_LIMIT = _BlasLimit()


@contextmanager
def search_blas_threads(rows: int) -> Iterator[None]:
    """Run a search over ``rows`` vectors with the BLAS threads
    :func:`blas_threads_for` picks; other numpy work keeps its own setting
    (only while a search runs does numpy code in another thread of the same
    process share the limit).

    Only on the main thread (a one-shot search, a notebook): once the main
    thread has set OpenBLAS's thread count, OpenBLAS ignores the calls of
    other threads, so a search on one of them could lower the count and
    fail to put it back."""
    if blas_threads_for(rows) > 1 or _cores() == 1 or threading.current_thread() is not threading.main_thread():
        yield
        return
    _BLAS_LIMIT.enter()
    try:
        yield
    finally:
        _BLAS_LIMIT.exit()


class MatrixIndex:
    """Exact cosine KNN over an in-memory matrix of unit vectors.

    ``load_rows(after_rowid)`` yields ``(rowid, blob, source)`` for rows
    above a rowid; ``live_rowids()`` returns every current rowid. Both come from the
    store, so this class holds no SQL.
    """

    def __init__(self, dims: int):
        import numpy as np

        self.dims = dims
        self._rowids = np.zeros(0, dtype=np.int64)
        self._sources = np.zeros(0, dtype="<U16")
        self._matrix = np.zeros((0, dims), dtype=np.float32)
        self._max_rowid = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rowids)

    @property
    def nbytes(self) -> int:
        return self._matrix.nbytes + self._rowids.nbytes

    def refresh(
        self,
        load_rows: Callable[[int], Iterable[tuple[int, bytes, str]]],
        live_rowids: Callable[[], np.ndarray],
    ) -> None:
        """Bring the matrix up to date with the store."""
        import numpy as np

        new = list(load_rows(self._max_rowid))
        live = live_rowids()
        with self._lock:
            rowids, sources, matrix = self._rowids, self._sources, self._matrix
            if len(rowids) and len(live) != len(rowids) + len(new):
                keep = np.isin(rowids, live, assume_unique=True)
                rowids, sources, matrix = rowids[keep], sources[keep], matrix[keep]
            if new:
                add_ids = np.fromiter((r for r, _, _ in new), dtype=np.int64, count=len(new))
                add = np.frombuffer(b"".join(b for _, b, _ in new), dtype="<f4").reshape(len(new), self.dims)
                rowids = np.concatenate([rowids, add_ids])
                sources = np.concatenate([sources, np.array([s for _, _, s in new], dtype="<U16")])
                matrix = np.concatenate([matrix, add]) if len(matrix) else add.copy()
                self._max_rowid = max(self._max_rowid, int(add_ids.max()))
            self._rowids, self._sources, self._matrix = rowids, sources, matrix

    def vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        """The rows held for these rowids. Rows arrive in ascending rowid
        order, so a binary search finds them; a rowid not found (or out of
        order) is simply left out, and the caller reads it elsewhere."""
        import numpy as np

        with self._lock:
            held, matrix = self._rowids, self._matrix
        if not len(held):
            return {}
        want = np.asarray(list(rowids), dtype=np.int64)
        pos = np.minimum(np.searchsorted(held, want), len(held) - 1)
        found = held[pos] == want
        return {int(r): matrix[i] for r, i, ok in zip(want, pos, found) if ok}

    def search(self, query: np.ndarray, k: int, sources: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """Top ``k`` (rowid, cosine similarity), best first, optionally only
        rows of the given sources."""
        import numpy as np

        with self._lock:
            rowids, row_sources, matrix = self._rowids, self._sources, self._matrix
        if not len(rowids) or k <= 0:
            return []
        sims = matrix @ np.asarray(query, dtype=np.float32)
        if sources is not None:
            sims = np.where(np.isin(row_sources, list(sources)), sims, -np.inf)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(int(rowids[i]), float(sims[i])) for i in top if np.isfinite(sims[i])]
