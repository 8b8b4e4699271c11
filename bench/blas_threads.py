"""How many BLAS threads the vector side of a search should use, by index size.

    python bench/blas_threads.py [--out bench/out] [--sizes 2000,20000,200000,1000000] [--queries 200] [--rounds 5]

numpy's BLAS (OpenBLAS in the wheels) runs a matrix-vector product on every
core by default. A search's product is short, so on a busy machine waking
the other threads costs more than they save. For each size (synthetic
384-dim vectors written with the engine's sidecar writer, as
``bench/million.py`` builds them; reused across runs) this prints, as p50
per query:

- the vector side of a search as every process gets it
  (``MappedVectors.search`` on the memory-mapped sidecar, the ``k`` a
  6-result search asks for) with 1 BLAS thread and with N (every core);
- its floor in the same run: exact KNN, one BLAS product over the matrix
  held in memory plus the top k, with 1 and with N threads;
- what the engine's policy picks for that size
  (:func:`memext.engine.vector_math.blas_threads_for`).

Each size is measured idle and then loaded: two busy-loop processes (one per
core on a 2-core machine; they stop by themselves after ``--load-s``
seconds) started by this script. Within each phase the four configurations
run interleaved in ``--rounds`` blocks of queries, so that any other load on
the machine hits all alike; "idle" means no load of this script's own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
from threadpoolctl import ThreadpoolController

sys.path.insert(0, str(Path(__file__).resolve().parent))
from million import DIMS, build, queries  # noqa: E402

from memext.engine.store.sqlite.mapped import MappedVectors  # noqa: E402
from memext.engine.store.sqlite.sidecar import VectorFile  # noqa: E402
from memext.engine.vector_math import blas_threads_for  # noqa: E402

#: What a 6-result hybrid search asks of the vector side.
K = 24
BUSY_LOOP = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def busy_processes(count: int, seconds: float) -> list[subprocess.Popen]:
    """``count`` processes that each keep a core busy for ``seconds`` at most."""
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds)]) for _ in range(count)]


def measure(configs: dict[str, Callable[[np.ndarray], object]], qs: np.ndarray, rounds: int) -> dict[str, float]:
    """p50 ms of each configuration, interleaved in blocks of queries.

    Not query by query: after an N-thread product OpenBLAS's workers spin
    for a while, and on a 2-core machine that spinning would be charged to
    the next configuration's query. The first two queries of each block are
    not timed."""
    times: dict[str, list[float]] = {name: [] for name in configs}
    for block in np.array_split(qs, rounds):
        for name, fn in configs.items():
            for i, q in enumerate(block):
                t = time.perf_counter()
                fn(q)
                if i >= 2:
                    times[name].append((time.perf_counter() - t) * 1000)
    return {name: round(statistics.median(t), 3) for name, t in times.items()}


def bench_size(out: Path, rows: int, n_queries: int, rounds: int, load_s: float, cores: int) -> dict:
    path = out / f"million-{rows}.vectors"
    if not path.exists():
        t = time.perf_counter()
        build(path, rows)
        print(f"wrote {rows} vectors in {time.perf_counter() - t:.0f} s", flush=True)
    mapped = MappedVectors("bench", VectorFile(path, "bench"), DIMS)
    mapped.update([], [])
    qs = queries(mapped.base.matrix, n_queries)
    floor_matrix = np.fromfile(path, dtype="<f4", count=rows * DIMS).reshape(rows, DIMS)
    blas = ThreadpoolController().select(user_api="blas")

    def floor(q: np.ndarray) -> object:
        sims = floor_matrix @ q
        top = np.argpartition(-sims, K - 1)[:K]
        return top[np.argsort(-sims[top])]

    def threads(n: int, fn: Callable[[np.ndarray], object]) -> Callable[[np.ndarray], object]:
        def run(q: np.ndarray) -> object:
            with blas.limit(limits=n):
                return fn(q)

        return run

    def side(q: np.ndarray) -> object:
        return mapped.search(q, K)

    configs = {
        "search_1": threads(1, side),
        "floor_1": threads(1, floor),
        f"search_{cores}": threads(cores, side),
        f"floor_{cores}": threads(cores, floor),
    }
    # The engine limits by the rows the product multiplies: above the
    # quantised threshold that is the rescored pool, not every row.
    result: dict = {"rows": rows, "method": mapped.method, "policy_threads": blas_threads_for(mapped.dense_rows)}
    result["idle"] = measure(configs, qs, rounds)
    busy = busy_processes(cores, load_s)
    try:
        result["loaded"] = measure(configs, qs, rounds)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    mapped.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--sizes", default="2000,20000,200000,1000000", help="index sizes in chunks")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5, help="blocks each configuration's queries are split into")
    ap.add_argument("--load-s", type=float, default=300.0, help="longest a busy-loop process runs")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    figures = {}
    for rows in [int(s) for s in a.sizes.split(",")]:
        r = bench_size(a.out, rows, a.queries, a.rounds, a.load_s, cores)
        figures[f"rows_{rows}"] = r
        for phase in ("idle", "loaded"):
            p = r[phase]
            print(
                f"{rows} chunks ({r['method']}), {phase}: search p50 1 thread {p['search_1']} ms (floor {p['floor_1']} ms), "
                f"{cores} threads {p[f'search_{cores}']} ms (floor {p[f'floor_{cores}']} ms); policy: {r['policy_threads']} thread(s)",
                flush=True,
            )
    (a.out / "blas_threads.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
