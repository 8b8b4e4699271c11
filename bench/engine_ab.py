"""A/B benchmark: this checkout's engine against an older revision's, in one process.

    python bench/engine_ab.py [--base 79b1246] [--out bench/out] [--sizes 10000,100000]

The machine is shared and noisy, so absolute figures from two runs cannot
be compared. Here both engines run in the same process on the same index
files, interleaved call by call (alternating which goes first), so load
from other processes hits both alike; the figure to read is the median of
the per-call ratios ``after / before`` (below 1: this checkout is faster).

``--base`` is any git revision; its ``engine/`` folder is extracted with
``git archive`` into a temporary package ``base_engine``. The workspaces
and indexes are those of ``bench/engine_bench.py`` (run it once first).
Prints the no-op sync of 10,001 files and hybrid search at each size, for
vec0 and the numpy matrix, and how many queries returned the same
citations from both engines.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import io
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from gen_workspace import vocabulary, zipf_words  # noqa: E402

import memext.engine as new_engine  # noqa: E402

DIMS = 384
#: The last commit before the architecture work (one namespace, keeper, store seam).
DEFAULT_BASE = "79b1246"


def extract_base(rev: str, into: Path) -> ModuleType:
    """``engine/`` at ``rev`` as the importable package ``base_engine``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "engine"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    (into / "engine").rename(into / "base_engine")
    init = into / "base_engine" / "__init__.py"
    # Newer revisions refuse to load as anything but memext.engine.
    init.write_text(init.read_text().replace('if __name__ != "memext.engine":', "if False:"))
    sys.path.insert(0, str(into))
    for name in ("base_engine", "base_engine.config", "base_engine.providers.base"):
        importlib.import_module(name)
    return sys.modules["base_engine"]


def given_vectors(base: type) -> Any:
    """A provider whose vectors are a hash of the text (the embedder is not timed)."""

    class GivenVectors(base):  # type: ignore[misc, valid-type]
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

        def embed_batch(self, texts, progress=None) -> list[list[float]]:
            return [self._vec(t) for t in texts]

    return GivenVectors()


def agent(pkg: ModuleType, ws: Path, db: Path, backend: str = "auto", provider: str = "auto") -> Any:
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
    return pkg.config.parse_config(raw).agents[0]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def ratio(times: dict[str, list[float]]) -> float:
    return statistics.median(a / b for a, b in zip(times["after"], times["before"]))


def noop(engines: dict[str, ModuleType], out: Path, runs: int = 8) -> None:
    ws, db = out / "ws-10000-files", out / "noop.sqlite"
    idx = {k: pkg.MemoryIndex(agent(pkg, ws, db, provider="none"), provider=None) for k, pkg in engines.items()}
    for i in idx.values():
        i.sync()
    times: dict[str, list[float]] = {k: [] for k in idx}
    for n in range(runs):
        for k in list(idx) if n % 2 == 0 else list(reversed(idx)):
            t = time.perf_counter()
            idx[k].sync()
            times[k].append(time.perf_counter() - t)
    for i in idx.values():
        i.close()
    for k, v in times.items():
        print(f"no-op sync, 10,001 files [{k}]: median {statistics.median(v):.3f} s, min {min(v):.3f} s", flush=True)
    print(f"  median per-run after/before: {ratio(times):.3f}", flush=True)


def search(engines: dict[str, ModuleType], out: Path, size: int, queries: int = 200, backends: tuple[str, ...] = ("vec0", "numpy")) -> None:
    ws, db = out / f"ws-{size}-chunks", out / f"search-{size}.sqlite"
    rng = random.Random(7)
    vocab = vocabulary(20_000, random.Random(1))
    qs = [" ".join(zipf_words(vocab, rng.randint(2, 6), rng)) for _ in range(queries)]
    bases = {"before": engines["before"].providers.base.EmbeddingProvider, "after": new_engine.EmbeddingProvider}
    for backend in backends:
        idx = {k: pkg.MemoryIndex(agent(pkg, ws, db, backend=backend), provider=given_vectors(bases[k])) for k, pkg in engines.items()}
        for q in qs[:5]:  # warm both (the numpy side loads its matrix)
            for i in idx.values():
                i.search(q)
        times: dict[str, list[float]] = {k: [] for k in idx}
        same = 0
        for n, q in enumerate(qs):
            got = {}
            for k in list(idx) if n % 2 == 0 else list(reversed(idx)):
                t = time.perf_counter()
                resp = idx[k].search(q)
                times[k].append((time.perf_counter() - t) * 1000)
                got[k] = [h.citation for h in resp]
            same += got["before"] == got["after"]
        chunks = idx["after"].status(check_files=False).total_chunks
        for i in idx.values():
            i.close()
        for k, v in times.items():
            print(f"hybrid search, {chunks} chunks, {backend} [{k}]: p50 {pct(v, 50):.2f} ms, p95 {pct(v, 95):.2f} ms", flush=True)
        print(f"  median per-query after/before: {ratio(times):.3f}; same citations for {same}/{queries} queries", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=DEFAULT_BASE, help="git revision to compare against")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="engine_bench.py's workspaces and indexes")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--skip-noop", action="store_true")
    ap.add_argument(
        "--backends", default="vec0,numpy", help="store.vector.backend values to compare (auto: the sidecar where there is one)"
    )
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    if not a.skip_noop and not (a.out / "ws-10000-files").is_dir():
        sys.exit(f"no workspaces in {a.out}: run bench/engine_bench.py first")
    with tempfile.TemporaryDirectory() as tmp:
        engines = {"before": extract_base(a.base, Path(tmp)), "after": new_engine}
        print(f"before: engine/ at {a.base}; after: this checkout", flush=True)
        if not a.skip_noop:
            noop(engines, a.out)
        for size in (int(s) for s in a.sizes.split(",")):
            search(engines, a.out, size, a.queries, tuple(a.backends.split(",")))


if __name__ == "__main__":
    main()
