"""Engine benchmarks: no-op sync, hybrid search latency, index size.

    python bench/engine_bench.py [--out bench/out] [--sizes 10000,100000]

Prints:
- no-op sync time for 10,000 files (the second sync: stat only, nothing read);
- hybrid search latency p50/p95 at each index size in chunks, with 384-dim
  vectors and the query vector given (the embedder is not timed), for vec0
  KNN and for the in-memory numpy matrix, plus what ``auto`` uses;
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
from memext.engine.providers.base import EmbeddingProvider  # noqa: E402

DIMS = 384


class GivenVectors(EmbeddingProvider):
    """BENCHMARK DOUBLE: random unit vectors seeded by the text.

    Search cost does not depend on what the vectors mean, and the issue asks
    for latency with the query vector given, so no model runs here.
    """

    id = "bench"
    model = "random-384"
    endpoint_key = "bench://"
    batch_group_size = 4096

    @property
    def dims(self) -> int:
        return DIMS

    def _vec(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)

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
    return {"files": first.files_seen, "first_sync_s": round(first_s, 2), "noop_sync_s_median": round(statistics.median(times), 3), "noop_sync_s_min": round(min(times), 3)}


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


def bench_search(out: Path, chunks: int, queries: int = 200) -> dict:
    ws, db, vocab = build_index(out, chunks)
    import random

    rng = random.Random(7)
    qs = [" ".join(zipf_words(vocab, rng.randint(2, 6), rng)) for _ in range(queries)]
    result: dict = {}
    for backend in ("vec0", "numpy"):
        with MemoryIndex(agent_for(ws, db, backend=backend), provider=GivenVectors()) as idx:
            n = idx.status().total_chunks
            result["chunks"] = n
            for q in qs[:5]:  # warm-up (loads the numpy matrix)
                idx.search(q)
            times = []
            for q in qs:
                t = time.perf_counter()
                resp = idx.search(q)
                times.append((time.perf_counter() - t) * 1000)
                assert resp.mode == "hybrid"
            result[backend] = {"p50_ms": round(pct(times, 50), 2), "p95_ms": round(pct(times, 95), 2)}
    with MemoryIndex(agent_for(ws, db), provider=GivenVectors()) as idx:
        result["auto_uses"] = idx.status(check_files=False).vector.backend
    size = db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-wal"))
    result["index_mb"] = round(size / 1e6, 1)
    result["mb_per_1000_chunks"] = round(size / 1e6 / result["chunks"] * 1000, 2)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--sizes", default="10000,100000", help="index sizes in chunks")
    ap.add_argument("--skip-noop", action="store_true")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    figures: dict = {}
    if not a.skip_noop:
        figures["noop_sync"] = bench_noop_sync(a.out)
        n = figures["noop_sync"]
        print(f"no-op sync, {n['files']} files: median {n['noop_sync_s_median']} s (min {n['noop_sync_s_min']} s; first full sync {n['first_sync_s']} s)", flush=True)
    for size in [int(s) for s in a.sizes.split(",")]:
        r = bench_search(a.out, size)
        figures[f"search_{size}"] = r
        print(
            f"hybrid search, {r['chunks']} chunks x {DIMS} dims: "
            f"vec0 p50 {r['vec0']['p50_ms']} ms / p95 {r['vec0']['p95_ms']} ms; "
            f"numpy p50 {r['numpy']['p50_ms']} ms / p95 {r['numpy']['p95_ms']} ms; auto uses {r['auto_uses']}; "
            f"index {r['index_mb']} MB = {r['mb_per_1000_chunks']} MB per 1,000 chunks",
            flush=True,
        )
    (a.out / "engine_bench.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
