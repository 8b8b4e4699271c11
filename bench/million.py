"""The vector side at a million chunks: the sidecar's quantised search next
to exact numpy KNN, recall@10 against exact search, memory.

    python bench/million.py [--out bench/out] [--rows 1000000] [--queries 200]

Vectors are synthetic (no model could embed a million chunks here): 384-dim
unit vectors in a hierarchy of 1,000 topics and 20,000 subtopics plus
per-chunk noise, so a chunk's nearest neighbours stand out as those of real
embeddings do; each query is a stored chunk's vector with noise added (a
paraphrase), giving top-1 cosines near 0.7 and top-10 near 0.4. They are
written once with the engine's own sidecar writer (bounded memory) and
reused across runs.

Printed, interleaved query by query in the same process:
- floor: exact KNN, one BLAS product over the float32 matrix held in
  memory (``np.fromfile``), as a long-lived process with the whole matrix
  resident would do;
- sidecar: ``MappedVectors.search`` on the memory-mapped file, as every
  process gets it (Hamming ranking of bit codes, then exact rescoring of a
  candidate pool), with its recall@10 against the floor's answers;
- the resident memory the sidecar's searches touched (RSS growth of a
  fresh process that only maps and searches the file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from memext.engine.store.sqlite.mapped import MappedVectors
from memext.engine.store.sqlite.sidecar import VectorFile, write_sidecar

DIMS = 384


def norm(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)


def model(seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((1000, DIMS)).astype(np.float32)
    subtopics = rng.standard_normal((20_000, DIMS)).astype(np.float32)
    parent = rng.integers(0, 1000, 20_000)
    return topics, subtopics, parent


def block(start: int, n: int) -> np.ndarray:
    topics, subtopics, parent = MODEL
    rng = np.random.default_rng(1_000_003 + start)
    sub = rng.integers(0, len(subtopics), n)
    return norm(topics[parent[sub]] + 0.8 * subtopics[sub] + 1.1 * rng.standard_normal((n, DIMS)).astype(np.float32))


def build(path: Path, rows: int) -> None:
    def blocks():
        for start in range(0, rows, 65_536):
            n = min(65_536, rows - start)
            yield np.arange(start + 1, start + n + 1), block(start, n), ["memory"] * n

    write_sidecar(path, "bench", DIMS, blocks())


def queries(stored: np.ndarray, n: int) -> np.ndarray:
    """Stored vectors with noise added: paraphrases of stored chunks."""
    rng = np.random.default_rng(7)
    base = stored[np.sort(rng.integers(0, len(stored), n))]
    return norm(base + 0.05 * rng.standard_normal((n, DIMS)).astype(np.float32))


def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory in MB: ``VmRSS`` in all, ``RssAnon`` the process's own
    memory, ``RssFile`` pages of mapped files (the sidecar: page cache the
    kernel can drop under pressure without writing anything)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_rss(path: Path, qfile: Path, k: int) -> dict:
    """Resident memory of a fresh process that maps the file and searches."""
    code = (
        "import json, sys, numpy as np\n"
        "sys.path.insert(0, %r)\n"
        "from million import rss_mb\n"
        "from memext.engine.store.sqlite.mapped import MappedVectors\n"
        "from memext.engine.store.sqlite.sidecar import VectorFile\n"
        "before = rss_mb()\n"
        "m = MappedVectors('bench', VectorFile(%r, 'bench'), %d); m.update([], [])\n"
        "for q in np.load(%r): m.search(q, %d)\n"
        "print(json.dumps({'before_mb': before, 'after_mb': rss_mb(), 'anon_mb': rss_mb('RssAnon'), 'file_mb': rss_mb('RssFile')}))\n"
    ) % (str(Path(__file__).parent), str(path), DIMS, str(qfile), k)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("-k", type=int, default=24, help="results asked of the vector side (the engine's pool for 6 results)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / f"million-{a.rows}.vectors"
    if not path.exists():
        t = time.perf_counter()
        build(path, a.rows)
        print(f"wrote {a.rows} vectors in {time.perf_counter() - t:.0f} s ({path.stat().st_size / 1e9:.2f} GB)", flush=True)
    t = time.perf_counter()
    mapped = MappedVectors("bench", VectorFile(path, "bench"), DIMS)
    mapped.update([], [])
    open_ms = (time.perf_counter() - t) * 1000
    qs = queries(mapped.base.matrix, a.queries)
    qfile = a.out / "million-queries.npy"
    np.save(qfile, qs)
    floor_matrix = np.fromfile(path, dtype="<f4", count=a.rows * DIMS).reshape(a.rows, DIMS)
    for q in qs[:3]:  # warm-up: page cache, BLAS threads
        mapped.search(q, a.k)
        floor_matrix @ q
    floor_ms, side_ms, recalls = [], [], []
    for q in qs:
        t = time.perf_counter()
        sims = floor_matrix @ q
        top = np.argpartition(-sims, a.k - 1)[: a.k]
        exact = top[np.argsort(-sims[top])] + 1
        floor_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        got = mapped.search(q, a.k)
        side_ms.append((time.perf_counter() - t) * 1000)
        recalls.append(len({r for r, _ in got[:10]} & set(exact[:10].tolist())) / 10)
    del floor_matrix
    sims_all = []
    for q in qs[:20]:
        got = mapped.search(q, 10)
        sims_all.append((got[0][1], got[-1][1]))
    rss = child_rss(path, qfile, a.k)
    figures = {
        "rows": a.rows,
        "method": mapped.method,
        "open_ms": round(open_ms, 2),
        "floor_p50_ms": round(statistics.median(floor_ms), 2),
        "sidecar_p50_ms": round(statistics.median(side_ms), 2),
        "sidecar_p95_ms": round(float(np.percentile(side_ms, 95)), 2),
        "ratio_p50": round(statistics.median(side_ms) / statistics.median(floor_ms), 2),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "recall_at_10_min": round(float(np.min(recalls)), 2),
        "top1_cos": round(float(np.mean([s[0] for s in sims_all])), 3),
        "top10_cos": round(float(np.mean([s[1] for s in sims_all])), 3),
        "matrix_mb": round(a.rows * DIMS * 4 / 1e6),
        "search_process_rss_mb": round(rss["after_mb"]),
        "search_process_rss_before_mb": round(rss["before_mb"]),
        "search_process_rss_anon_mb": round(rss["anon_mb"]),
        "search_process_rss_file_mb": round(rss["file_mb"]),
    }
    print(
        f"{a.rows} vectors x {DIMS}: sidecar ({figures['method']}) p50 {figures['sidecar_p50_ms']} ms, "
        f"p95 {figures['sidecar_p95_ms']} ms; floor (exact numpy KNN, matrix in memory) p50 {figures['floor_p50_ms']} ms "
        f"= {figures['ratio_p50']}x; recall@10 {figures['recall_at_10']} (min {figures['recall_at_10_min']}); "
        f"opened in {figures['open_ms']} ms; RSS of a searching process {figures['search_process_rss_mb']} MB "
        f"(its own memory {figures['search_process_rss_anon_mb']} MB, mapped file pages {figures['search_process_rss_file_mb']} MB; "
        f"matrix {figures['matrix_mb']} MB)",
        flush=True,
    )
    (a.out / "million.json").write_text(json.dumps(figures, indent=2))


MODEL = model()

if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
