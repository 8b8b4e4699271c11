"""The vector side of the SQLite store: the background matrix load and what a
swap does to a loaded matrix."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from memext.engine.store import NewChunk, StoreOptions
from memext.engine.store.sqlite import vectors as store_vectors
from memext.engine.store.sqlite.store import Store
from memext.engine.vector_math import normalize

#: vec0 and the in-memory matrix are the SQLite store's (test_store_postgres.py: pgvector).
pytestmark = pytest.mark.sqlite_only


def unit(seed: int, dims: int = 16) -> np.ndarray:
    return normalize(np.random.default_rng(seed).standard_normal(dims))


def fill(store: Store, seeds: range, prefix: str = "f") -> None:
    for i in seeds:
        store.replace_file(
            f"memory/{prefix}{i}.md",
            "memory",
            f"h{i}",
            1,
            1,
            [NewChunk(f"{prefix}{i}", 1, 1, f"t{i}", f"text {prefix}{i}", unit(i))],
            "m",
        )


def wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_auto_loads_the_matrix_in_the_background_while_vec0_answers(tmp_path, monkeypatch):
    # The threshold is a setting of the engine, lowered so 30 chunks count as "large".
    monkeypatch.setattr(store_vectors, "VECTOR_AUTO_NUMPY_ABOVE", 10)
    store = Store(tmp_path / "a.sqlite")
    try:
        fill(store, range(30))
        assert store.vector_backend_in_use() == "numpy" and not store.matrix_loaded
        first = store.vector_search(unit(4), 3)  # answered by vec0 while the matrix loads
        assert first[0][0] == 5 and wait_for(lambda: store.matrix_loaded)
        from_matrix = store.vector_search(unit(4), 3)
        assert [r for r, _ in from_matrix] == [r for r, _ in first]
        assert np.allclose([s for _, s in from_matrix], [s for _, s in first], atol=1e-5)
    finally:
        store.close()


def test_a_one_shot_store_never_starts_the_background_load(tmp_path, monkeypatch):
    # A one-shot process (the CLI) would exit before the load pays off: vec0
    # answers every search and status says so.
    monkeypatch.setattr(store_vectors, "VECTOR_AUTO_NUMPY_ABOVE", 10)
    with Store(tmp_path / "a.sqlite") as writer:
        fill(writer, range(30))
    store = Store(tmp_path / "a.sqlite", StoreOptions(background_matrix=False))
    try:
        assert store.vector_backend_in_use() == "vec0"
        before = {t.name for t in threading.enumerate()}
        assert store.vector_search(unit(4), 3)[0][0] == 5
        time.sleep(0.2)  # a load thread, had one started, would still be reading
        assert "memext-matrix" not in {t.name for t in threading.enumerate()} - before
        assert not store.matrix_loaded and store.vector_backend_in_use() == "vec0"
    finally:
        store.close()


def test_a_swapped_in_index_replaces_a_loaded_matrix(tmp_path):
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="numpy"))
    try:
        fill(store, range(10))
        assert store.vector_search(unit(3), 1)[0][0] == 4 and store.matrix_loaded
        shadow = store.open_shadow()
        try:
            fill(shadow, range(50, 60), prefix="g")  # same rowids 1..10, other vectors
            shadow.copy_into(store)
        finally:
            shadow.discard()
        assert not list(tmp_path.glob("a.sqlite.rebuild-*"))
        rowid, similarity = store.vector_search(unit(53), 1)[0]
        assert rowid == 4 and similarity > 0.999  # the new rowid 4, not the old one's vector
        assert store.chunks([4])[4].path == "memory/g53.md"
    finally:
        store.close()


def blas_threads() -> int:
    from threadpoolctl import threadpool_info

    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


def test_a_small_index_searches_on_one_blas_thread_and_leaves_the_users_setting(tmp_path, monkeypatch):
    """Below BLAS_ONE_THREAD_BELOW rows the product runs on one thread
    (waking the others costs more than they save); the process's own BLAS
    setting is back after every search. Searches on other threads leave
    BLAS as it is (OpenBLAS ignores their calls once the main thread set it)."""
    from threadpoolctl import threadpool_limits

    from memext.engine import vector_math

    seen: list[int] = []
    search = vector_math.MatrixIndex.search

    def observed(self, query, k, sources=None):
        seen.append(blas_threads())
        return search(self, query, k, sources)

    monkeypatch.setattr(vector_math.MatrixIndex, "search", observed)
    store = Store(tmp_path / "a.sqlite", StoreOptions(vector_backend="numpy"))
    try:
        fill(store, range(40))
        with threadpool_limits(limits=2, user_api="blas"):  # the user's own setting
            assert store.vector_search(unit(3), 1)[0][0] == 4
            assert seen == [1] and blas_threads() == 2
            threads = [threading.Thread(target=store.vector_search, args=(unit(i), 3)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert seen[1:] == [2] * 4 and blas_threads() == 2
            monkeypatch.setattr(vector_math, "BLAS_ONE_THREAD_BELOW", 10)  # now a large index: BLAS as set
            store.vector_search(unit(3), 1)
            assert seen[-1] == 2 and blas_threads() == 2
    finally:
        store.close()
