"""The memory-mapped vector sidecar: exact results, the quantised path with
rescoring, patching between compactions, and crash safety."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from memext.engine.store import NewChunk, StoreOptions
from memext.engine.store.sqlite import mapped as store_mapped
from memext.engine.store.sqlite.sidecar import VectorFile, sidecar_files, sidecar_path, write_sidecar
from memext.engine.store.sqlite.store import Store
from memext.engine.vector_math import normalize

DIMS = 384


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors in clusters of ten, as embeddings of related notes are."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n // 10 + 1, DIMS))
    rows = centers[np.arange(n) // 10] + 0.35 * rng.standard_normal((n, DIMS))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def fill(store: Store, vectors: np.ndarray, prefix: str = "f", source: str = "memory") -> None:
    for i, v in enumerate(vectors):
        store.replace_file(
            f"memory/{prefix}{i}.md",
            source,
            f"h{prefix}{i}",
            1,
            1,
            [NewChunk(f"{prefix}{i}", 1, 1, f"t{prefix}{i}", f"text {prefix}{i}", v)],
            "m",
        )


def exact(store: Store, query: np.ndarray, k: int) -> list[int]:
    """Ground truth: every stored vector read back from SQLite, ranked by numpy."""
    rows = store.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
    ids = np.array([r for r, _ in rows])
    sims = np.stack([np.frombuffer(b, dtype="<f4") for _, b in rows]) @ query
    return [int(i) for i in ids[np.argsort(-sims, kind="stable")[:k]]]


def query_near(vectors: np.ndarray, i: int, seed: int = 1) -> np.ndarray:
    return normalize(vectors[i] + 0.5 / np.sqrt(DIMS) * np.random.default_rng(seed).standard_normal(DIMS))


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "a.sqlite")
    yield s
    s.close()


def test_searches_read_the_sidecar_and_match_exact_search(store):
    vectors = clustered(300)
    fill(store, vectors)
    assert store.vector_backend_in_use() == "vec0"  # nothing written yet
    store.finish_writes()
    (file,) = sidecar_files(store.path)
    assert store.vector_backend_in_use() == "mmap"
    for i in (0, 57, 299):
        q = query_near(vectors, i)
        got = store.vector_search(q, 10)
        assert [r for r, _ in got] == exact(store, q, 10)
        assert got[0][1] == pytest.approx(float(vectors[got[0][0] - 1] @ q), abs=1e-6)
    # The vectors hybrid scoring reads come from the sidecar too.
    assert np.array_equal(store.chunk_vectors([5])[5], vectors[4])
    # Another process's store maps the same file: nothing to load.
    with Store(store.path, StoreOptions(background_matrix=False)) as other:
        q = query_near(vectors, 120)
        assert [r for r, _ in other.vector_search(q, 10)] == exact(store, q, 10)
        assert other.vector_backend_in_use() == "mmap" and not other.matrix_loaded
    assert file.stat().st_size > 300 * DIMS * 4


def test_the_quantised_path_finds_the_exact_top_results_in_exact_order(store, monkeypatch):
    monkeypatch.setattr(store_mapped, "QUANTISED_ABOVE", 0)
    monkeypatch.setattr(store_mapped, "MIN_POOL", 200)
    vectors = clustered(2000)
    fill(store, vectors)
    store.finish_writes()
    assert store.vector_backend_in_use() == "mmap+bits"
    (path,) = sidecar_files(store.path)
    token = path.name.rsplit("-", 1)[1]
    file = VectorFile(path, token)
    reordered = 0
    for i in range(0, 2000, 97):
        q = query_near(vectors, i, seed=i)
        got = store.vector_search(q, 10)
        assert [r for r, _ in got] == exact(store, q, 10)
        sims = [s for _, s in got]
        assert sims == sorted(sims, reverse=True)
        # The pool is ranked by Hamming distance, an order rescoring must undo.
        pool = file.candidates(q, 200, None)
        assert len(pool) < 2000 / 4
        by_bits = pool[np.argsort([_hamming(file, q, p) for p in pool], kind="stable")][:10]
        reordered += [int(file.rowids[p]) for p in by_bits] != [r for r, _ in got]
    assert reordered > 0
    file.close()


def _hamming(file: VectorFile, q: np.ndarray, pos: int) -> int:
    from memext.engine.store.sqlite.sidecar import bit_codes

    return int(np.bitwise_count(file.codes[pos] ^ bit_codes(q, file.mean, file.words)[0]).sum())


def test_changes_after_the_sidecar_are_patched_in_without_a_rewrite(store):
    vectors = clustered(300)
    fill(store, vectors)
    store.finish_writes()
    (first,) = sidecar_files(store.path)
    # A changed note (new vector, new rowid) and a deleted one.
    moved = query_near(vectors, 3, seed=9)
    store.replace_file("memory/f10.md", "memory", "new", 2, 2, [NewChunk("f10b", 1, 1, "tn", "text", moved)], "m")
    store.delete_file("memory/f20.md")
    store.finish_writes()  # 2 rows changed: below the slack, no rewrite
    assert sidecar_files(store.path) == [first]
    for q in (moved, query_near(vectors, 20), query_near(vectors, 10)):
        got = [r for r, _ in store.vector_search(q, 10)]
        assert got == exact(store, q, 10)
        assert 11 not in got and 21 not in got  # the old rows of f10 and f20
    assert store.vector_search(moved, 1)[0][0] == 301


def test_many_changes_rewrite_the_sidecar(store, monkeypatch):
    monkeypatch.setattr(store_mapped, "COMPACT_SLACK", 0)
    vectors = clustered(100)
    fill(store, vectors)
    store.finish_writes()
    (first,) = sidecar_files(store.path)
    for i in range(10):
        store.delete_file(f"memory/f{i}.md")
    store.finish_writes()
    (second,) = sidecar_files(store.path)
    assert second != first
    assert store.conn.execute("SELECT count(*) FROM vectors_gone").fetchone()[0] == 0
    q = query_near(vectors, 5)
    assert [r for r, _ in store.vector_search(q, 10)] == exact(store, q, 10)


def test_a_sidecar_from_a_crashed_sync_is_never_used(store):
    vectors = clustered(200)
    fill(store, vectors)
    store.finish_writes()
    q = query_near(vectors, 42)
    want = exact(store, q, 10)
    # A sync that died after its file got its final name, before meta named
    # it: the file holds other vectors, and must be ignored.
    write_sidecar(sidecar_path(store.path, "f" * 32), "f" * 32, DIMS, [(np.arange(1, 201), -vectors, ["memory"] * 200)])
    assert [r for r, _ in store.vector_search(q, 10)] == want
    # The file meta names, truncated (a disk that lost its tail): not used either.
    info = json.loads(store.get_meta("vector_sidecar"))
    named = sidecar_path(store.path, info["token"])
    with Store(store.path) as other:
        data = named.read_bytes()
        named.write_bytes(data[: len(data) // 2])
        assert other.vector_backend_in_use() == "vec0"
        assert [r for r, _ in other.vector_search(q, 10)] == want
    named.write_bytes(data)
    # The next sync's compaction removes the stray file.
    store.finish_writes()
    assert len(sidecar_files(store.path)) == 1


def test_a_sync_killed_while_writing_the_sidecar_leaves_the_old_one_in_force(tmp_path):
    path = tmp_path / "a.sqlite"
    vectors = clustered(200)
    with Store(path) as store:
        fill(store, vectors)
        store.finish_writes()
        before = store.get_meta("vector_sidecar")
        fill(store, clustered(3000, seed=5), prefix="g")  # enough to need a rewrite
    # A real process, killed (os._exit, no clean-up) in the middle of writing.
    child = textwrap.dedent(
        f"""
        import os
        from memext.engine.store.sqlite.store import Store
        from memext.engine.store.sqlite import sidecar
        real = sidecar.iter_blocks
        def dying(rows, dims, block=sidecar.BLOCK_ROWS):
            for n, b in enumerate(real(rows, dims, 512)):
                if n == 2:
                    os._exit(9)
                yield b
        import memext.engine.store.sqlite.mapped as mapped
        mapped.iter_blocks = dying
        Store({str(path)!r}).finish_writes()
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.returncode == 9, done.stderr
    assert any(p.name.endswith(".tmp") for p in sidecar_files(path))  # the half-written file
    with Store(path) as store:
        assert store.get_meta("vector_sidecar") == before
        q = query_near(vectors, 7)
        assert [r for r, _ in store.vector_search(q, 10)] == exact(store, q, 10)
        store.finish_writes()
        (only,) = sidecar_files(path)
        assert not only.name.endswith(".tmp") and store.get_meta("vector_sidecar") != before
        assert [r for r, _ in store.vector_search(q, 10)] == exact(store, q, 10)


def test_sources_filter_the_sidecar(store):
    vectors = clustered(100)
    fill(store, vectors[:50])
    fill(store, vectors[50:], prefix="s", source="sessions")
    store.finish_writes()
    q = query_near(vectors, 55)
    got = store.vector_search(q, 5, sources=["memory"])
    assert got and all(r <= 50 for r, _ in got)
    assert store.vector_search(q, 1, sources=["sessions"])[0][0] == 56


def test_a_rebuild_brings_its_sidecar_along(store):
    fill(store, clustered(50))
    store.finish_writes()
    shadow = store.open_shadow()
    try:
        other = clustered(50, seed=3)
        fill(shadow, other, prefix="g")
        shadow.finish_writes()
        shadow.copy_into(store)
    finally:
        shadow.discard()
    assert len(sidecar_files(store.path)) == 1
    assert not list(store.path.parent.glob("*.rebuild-*"))
    assert store.vector_backend_in_use() == "mmap"
    rowid, sim = store.vector_search(other[7], 1)[0]
    assert rowid == 8 and sim > 0.999 and store.chunks([8])[8].path == "memory/g7.md"


def test_a_paths_filter_is_exact_while_the_sidecar_serves(store):
    vectors = clustered(300)
    fill(store, vectors)
    store.finish_writes()
    assert store.vector_backend_in_use() == "mmap"
    kept = [f"memory/f{i}.md" for i in range(100, 160)]
    q = query_near(vectors, 5)  # nearest to f5, which the filter leaves out
    got = store.vector_search(q, 8, paths=kept)
    truth = sorted(range(100, 160), key=lambda i: -float(vectors[i] @ q))[:8]
    assert [r for r, _ in got] == [i + 1 for i in truth]  # rowid = index + 1
    assert np.allclose([s for _, s in got], [float(vectors[i] @ q) for i in truth], atol=1e-5)


def test_the_sidecar_is_private_whatever_the_umask(tmp_path):
    """It holds every note's vector, as the index holds the text: 0600 like
    the index (the old code: 0644 under umask 022)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        with Store(tmp_path / "a.sqlite") as s:
            fill(s, clustered(300))
            s.finish_writes()
            files = sidecar_files(s.path)
            assert files and s.vector_backend_in_use() == "mmap"
            assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}
            assert stat.S_IMODE(s.path.stat().st_mode) == 0o600
    finally:
        os.umask(old)
