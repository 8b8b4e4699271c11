"""Engine benchmarks: sync, hybrid search latency next to its floor, index size.

    python bench/engine_bench.py [--out bench/out] [--sizes 1000,10000,100000]

Prints:
- no-op sync time for 10,000 files (the second sync: stat only, nothing read);
- the first keyword-only sync of those files next to a single-transaction
  floor (read, hash, chunk and FTS-insert every file in one transaction on
  a fresh file), interleaved run by run;
- hybrid search latency p50/p95 at each index size in chunks, with 384-dim
  vectors and the query vector given (the embedder is not timed) for
  ``auto`` (what a user gets: the memory-mapped sidecar), interleaved query
  by query with the floor (numpy KNN over the matrix in memory + an FTS5 OR
  query over the kept terms + reading the 6 best texts; ``--floor-blas
  policy`` runs its product under the engine's BLAS thread policy instead
  of BLAS's default threads, whose spinning worker would otherwise slow
  the engine's next query), and for vec0 KNN and the in-memory numpy matrix;
  after 5 queries run untimed (``--warm-up 200``: all of them, so the
  timed ones meet no chunk whose entry vectors are still unread);
- index size per 1,000 chunks.

Targets (2-core machine): no-op sync of 10,000 files under 1 s; hybrid
search p50 under 20 ms at 100k chunks. Workspaces and indexes are kept in
``--out`` and reused across runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_workspace import generate, zipf_words  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.config import parse_config  # noqa: E402
from memext.engine.memory.chunking import chunk_markdown, text_hash  # noqa: E402
from memext.engine.memory.discovery import read_text  # noqa: E402
from memext.engine.providers.base import EmbeddingProvider  # noqa: E402
from memext.engine.search.pipeline import keyword_terms, pool_size  # noqa: E402
from memext.engine.store.sqlite.store import Store  # noqa: E402
from memext.engine.text import fts_document, fts_match_expression, query_terms  # noqa: E402
from memext.engine.vector_math import search_blas_threads  # noqa: E402

try:
    from memext.engine.store.sqlite import db as engine_db
except ImportError:  # a revision from before store/sqlite/db.py (compared with this one)
    from memext.engine import db as engine_db  # type: ignore[attr-defined, no-redef]
try:
    from memext.engine.settings import ChunkingSettings
except ImportError:  # a revision from before engine/settings.py
    from memext.engine.config import ChunkingSettings  # type: ignore[attr-defined, no-redef]

DIMS = 384


class GivenVectors(EmbeddingProvider):
    """BENCHMARK DOUBLE: random unit vectors seeded by the text.

    Search cost does not depend on what the vectors mean, and the benchmark asks
    for latency with the query vector given, so no model runs here.
    """

    id = "bench"
    model = "random-384"
    endpoint_key = "bench://"
    batch_group_size = 4096

    def __init__(self) -> None:
        self._queries: dict[str, list[float]] = {}

    @property
    def dims(self) -> int:
        return DIMS

    def _vec(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    def embed_query(self, text: str) -> list[float]:
        # Remembered: the query vector is given, its making is not timed.
        if text not in self._queries:
            self._queries[text] = self._vec(text)
        return self._queries[text]

    def embed_batch(self, texts: Sequence[str], progress=None) -> list[list[float]]:
        return [self._vec(t) for t in texts]


def agent_for(ws: Path, db: Path, backend: str = "auto", provider: str = "auto"):
    raw = {
        "agents": [
            {
                "id": "bench",
                "workspace": str(ws),
                "memory_search": {
                    "provider": provider,
                    "store": {"path": str(db), "vector": {"backend": backend}},
                    "sync": {"on_search": False},
                },
            }
        ]
    }
    return parse_config(raw).agents[0]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def bench_noop_sync(out: Path) -> dict:
    ws = out / "ws-10000-files"
    if not (ws / "memory").is_dir():
        print("generating 10,000 files...", flush=True)
        generate(ws, 10_000, lines=8)
    db = out / "noop.sqlite"
    with MemoryIndex(agent_for(ws, db, provider="none"), provider=None) as idx:
        t = time.perf_counter()
        first = idx.sync()
        first_s = time.perf_counter() - t
        times = []
        for _ in range(5):
            t = time.perf_counter()
            r = idx.sync()
            times.append(time.perf_counter() - t)
            assert r.files_indexed == 0 and r.files_unchanged == 10_001
    return {
        "files": first.files_seen,
        "first_sync_s": round(first_s, 2),
        "noop_sync_s_median": round(statistics.median(times), 3),
        "noop_sync_s_min": round(min(times), 3),
    }


def floor_sync(ws: Path, db: Path) -> float:
    """Read, hash, chunk (at the engine's default chunk size) and FTS-insert
    every file in one transaction."""
    chunking = ChunkingSettings()
    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    Store(db).close()  # the engine's schema
    conn, _ = engine_db.connect(db)
    t = time.perf_counter()
    files = sorted(p for p in ws.rglob("*.md"))
    conn.execute("BEGIN IMMEDIATE")
    for n, path in enumerate(files):
        text, _ = read_text(path)
        text_hash(text)
        for c in chunk_markdown(text, chunking.tokens, chunking.overlap):
            cur = conn.execute(
                "INSERT INTO chunks(id, path, source, start_line, end_line, hash, model, text, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (f"{n}-{c.start_line}", str(path), "memory", c.start_line, c.end_line, c.hash, "", c.text, 0.0),
            )
            conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, fts_document(c.text)))
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - t
    conn.close()
    return elapsed


def bench_first_sync(out: Path, runs: int = 5) -> dict:
    """First keyword-only sync of 10,001 files next to the single-transaction floor, interleaved."""
    ws = out / "ws-10000-files"
    if not (ws / "memory").is_dir():
        generate(ws, 10_000, lines=8)
    floor, sync = [], []
    for _ in range(runs):
        floor.append(floor_sync(ws, out / "floor-sync.sqlite"))
        db = out / "first-sync.sqlite"
        for p in db.parent.glob(db.name + "*"):
            p.unlink()
        with MemoryIndex(agent_for(ws, db, provider="none"), provider=None) as idx:
            t = time.perf_counter()
            idx.sync()
            sync.append(time.perf_counter() - t)
    f, m = statistics.median(floor), statistics.median(sync)
    # Each run's ratio to the floor run just before it: the machine's speed
    # drifts between runs more than between the two halves of one.
    ratios = sorted(s / fl for s, fl in zip(sync, floor))
    return {
        "sync_s": round(m, 2),
        "floor_s": round(f, 2),
        "ratio": round(statistics.median(ratios), 2),
        "ratio_of_mins": round(min(sync) / min(floor), 2),
        "runs": runs,
    }


def build_index(out: Path, chunks: int) -> tuple[Path, Path, list[str]]:
    # ~10 chunks per file of 130 lines at 400/80
    files = max(1, chunks // 10)
    ws = out / f"ws-{chunks}-chunks"
    db = out / f"search-{chunks}.sqlite"
    vocab = None
    if not (ws / "memory").is_dir():
        print(f"generating {files} files for ~{chunks} chunks...", flush=True)
        vocab = generate(ws, files, lines=130)
    else:
        import random

        from gen_workspace import vocabulary

        vocab = vocabulary(20_000, random.Random(1))
    with MemoryIndex(agent_for(ws, db), provider=GivenVectors()) as idx:
        t = time.perf_counter()
        r = idx.sync()
        if r.files_indexed:
            print(f"  indexed {r.chunks_written} chunks in {time.perf_counter() - t:.0f} s", flush=True)
    return ws, db, vocab


def kept_terms(conn, query: str, chunks: int) -> list[str]:
    """The terms of ``query`` a search of an index of ``chunks`` chunks on
    ``conn`` sends to FTS5: those in at most half of the chunks."""
    terms = query_terms(query)
    counts = {
        t: conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", ('"' + t.replace('"', '""') + '"',)).fetchone()[0]
        for t in terms
    }
    return keyword_terms(terms, counts, chunks)


class Floor:
    """numpy KNN + an FTS5 OR query over the kept terms + reading the 6 best texts."""

    def __init__(self, db: Path):
        self.conn, _ = engine_db.connect(db)
        rows = self.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
        self.ids = np.array([r for r, _ in rows], dtype=np.int64)
        self.matrix = np.frombuffer(b"".join(b for _, b in rows), dtype="<f4").reshape(len(rows), DIMS).copy()

    def kept_terms(self, query: str) -> list[str]:
        """The terms the engine sends to FTS5 (worked out before timing)."""
        return kept_terms(self.conn, query, len(self.ids))

    def search(self, qvec: np.ndarray, match: str | None, pool: int, policy: bool = False) -> list[str]:
        """The floor's answer; ``policy``: its product under the engine's
        BLAS thread policy (:func:`search_blas_threads`), else on BLAS's
        default threads."""
        if policy:
            with search_blas_threads(len(self.ids)):
                sims = self.matrix @ qvec
        else:
            sims = self.matrix @ qvec
        top = np.argpartition(-sims, pool - 1)[:pool]
        top = top[np.argsort(-sims[top])]
        hits = [int(self.ids[i]) for i in top[:6]]
        if match:
            rows = self.conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?", (match, pool)
            ).fetchall()
            hits = [r for (r,) in rows[:3]] + hits[:3]
        marks = ",".join("?" * len(hits))
        return [t for (t,) in self.conn.execute(f"SELECT text FROM chunks WHERE rowid IN ({marks})", hits)]


def bench_search(out: Path, chunks: int, queries: int = 200, floor_policy: bool = False, warm_up: int = 5) -> dict:
    ws, db, vocab = build_index(out, chunks)
    import random

    rng = random.Random(7)
    qs = [" ".join(zipf_words(vocab, rng.randint(2, 6), rng)) for _ in range(queries)]
    provider = GivenVectors()
    qvecs = [np.asarray(provider.embed_query(q), dtype=np.float32) for q in qs]
    result: dict = {}
    # auto (the sidecar, as every process gets it) interleaved with the floor
    with MemoryIndex(agent_for(ws, db), provider=provider) as idx:
        n = idx.status(check_files=False).total_chunks
        result["chunks"] = n
        result["auto_uses"] = idx.status(check_files=False).vector.backend
        floor = Floor(db)
        pool = pool_size(6, idx.agent.settings.query.hybrid.candidate_multiplier)
        matches = [fts_match_expression(floor.kept_terms(q)) for q in qs]
        for q, v, m in list(zip(qs, qvecs, matches))[:warm_up]:  # warm-up
            idx.search(q)
            floor.search(v, m, pool, floor_policy)
        auto_ms, floor_ms, ratios = [], [], []
        for q, v, m in zip(qs, qvecs, matches):
            t = time.perf_counter()
            floor.search(v, m, pool, floor_policy)
            f = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            resp = idx.search(q)
            a = (time.perf_counter() - t) * 1000
            assert resp.mode == "hybrid"
            auto_ms.append(a)
            floor_ms.append(f)
            ratios.append(a / f)
        result["auto"] = {"p50_ms": round(pct(auto_ms, 50), 2), "p95_ms": round(pct(auto_ms, 95), 2)}
        result["floor"] = {"p50_ms": round(pct(floor_ms, 50), 2), "p95_ms": round(pct(floor_ms, 95), 2)}
        result["auto_over_floor"] = round(statistics.median(ratios), 2)
        floor.conn.close()
    for backend in ("vec0", "numpy"):
        with MemoryIndex(agent_for(ws, db, backend=backend), provider=GivenVectors()) as idx:
            for q in qs[:5]:  # warm-up (loads the numpy matrix)
                idx.search(q)
            times = []
            for q in qs:
                t = time.perf_counter()
                resp = idx.search(q)
                times.append((time.perf_counter() - t) * 1000)
                assert resp.mode == "hybrid"
            result[backend] = {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2)}
    size = db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-wal"))
    result["index_mb"] = round(size / 1e6, 1)
    result["mb_per_1000_chunks"] = round(size / 1e6 / result["chunks"] * 1000, 2)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--sizes", default="1000,10000,100000", help="index sizes in chunks")
    ap.add_argument("--skip-noop", action="store_true")
    ap.add_argument("--skip-first-sync", action="store_true")
    ap.add_argument(
        "--floor-blas",
        choices=("default", "policy"),
        default="default",
        help="the floor's product on BLAS's default threads, or under the engine's thread policy (below 100k rows: "
        "1 thread, so no OpenBLAS worker of the floor's is still spinning when the engine's query runs)",
    )
    ap.add_argument(
        "--warm-up",
        type=int,
        default=5,
        help="queries run before the timed ones (200: every one, so the entry vectors of the chunks they meet are read first, "
        "as in a process that has searched a while)",
    )
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    figures: dict = {}
    if not a.skip_noop:
        figures["noop_sync"] = bench_noop_sync(a.out)
        n = figures["noop_sync"]
        print(
            f"no-op sync, {n['files']} files: median {n['noop_sync_s_median']} s (min {n['noop_sync_s_min']} s; first full sync {n['first_sync_s']} s)",
            flush=True,
        )
    if not a.skip_first_sync:
        figures["first_sync"] = f = bench_first_sync(a.out)
        print(
            f"first keyword-only sync, 10,001 files: median {f['sync_s']} s; single-transaction floor {f['floor_s']} s; "
            f"{f['ratio']}x (median of {f['runs']} runs' ratios; fastest over fastest {f['ratio_of_mins']}x)",
            flush=True,
        )
    for size in [int(s) for s in a.sizes.split(",")]:
        r = bench_search(a.out, size, floor_policy=a.floor_blas == "policy", warm_up=a.warm_up)
        figures[f"search_{size}"] = r
        print(
            f"hybrid search, {r['chunks']} chunks x {DIMS} dims: auto ({r['auto_uses']}) p50 {r['auto']['p50_ms']} ms / "
            f"p95 {r['auto']['p95_ms']} ms; floor p50 {r['floor']['p50_ms']} ms; auto/floor {r['auto_over_floor']}x (median per query); "
            f"vec0 p50 {r['vec0']['p50_ms']} ms / p95 {r['vec0']['p95_ms']} ms; "
            f"numpy p50 {r['numpy']['p50_ms']} ms / p95 {r['numpy']['p95_ms']} ms; "
            f"index {r['index_mb']} MB = {r['mb_per_1000_chunks']} MB per 1,000 chunks",
            flush=True,
        )
    (a.out / "engine_bench.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
