"""The quantised vector path on real embeddings: recall against exact search.

    python bench/real_recall.py --model all-minilm-l6-v2-f16.gguf [--out bench/out] [--queries 200]

``bench/million.py`` measures the sidecar at a million rows with synthetic
vectors (no model could embed a million chunks on the development
machine). This benchmark checks the same path, bit codes ranked by Hamming
distance and a candidate pool rescored exactly, on vectors a real model
made from real text: every distinct line of prose in the comments and
docstrings of this Python's standard library (about 60,000 lines, 40-300
characters), embedded with the local GGUF model and kept in ``--out`` (the first run
embeds them: about 15 minutes on 2 cores).
Queries are lines held out of that set (``--queries`` of them), whole and
cut to their first five words (short queries are what people type).

What matters for recall is how deep a query's true neighbours sit in the
Hamming order, a share of the rows; the engine's pool is
``max(MIN_POOL, POOL_PER_RESULT * k)`` rows of an index above
``QUANTISED_ABOVE`` rows, so its share is largest just above that size
(4,000 of 250,000: 1.6 %) and smallest at a million (0.4 %). Here the pool
is taken as those shares of this smaller set (and a few others around
them), which is harsher than the real sizes: in a bigger set the true
neighbours are nearer the query, so they sit earlier in the Hamming order.

Printed: recall@10 and recall@24 (a search of 6 results draws a vector pool
of 24) of the sidecar's answer against exact KNN, mean and worst query,
for each pool share; then, for the share at a million rows, recall@10 of
the whole-line queries on random subsets of an eighth, a quarter and a half
of the rows, which shows how recall moves with the size of the set at one
share.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from memext.engine.providers.local.model import LocalProvider
from memext.engine.store.sqlite.sidecar import MIN_POOL, QUANTISED_ABOVE, VectorFile, sidecar_path, write_sidecar

_WORD = re.compile(r"[A-Za-z]{2,}")


def prose_lines() -> list[str]:
    """Distinct lines of prose from the standard library's sources (comments
    and docstrings, mostly), sorted: the same on every run of one Python."""
    root = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    seen: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if "test" in path.parts or "tests" in path.parts or "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            s = line.strip().lstrip("#").strip()
            if not 40 <= len(s) <= 300:
                continue
            words = _WORD.findall(s)
            if len(words) >= 7 and sum(map(len, words)) >= 0.6 * len(s):
                seen.add(s)
    return sorted(seen)


def embedded(out: Path, model: Path, texts: list[str]) -> np.ndarray:
    """Unit vectors of ``texts`` by ``model``, kept in ``out`` across runs."""
    key = hashlib.sha256((model.name + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    cached = out / f"real-recall-{key}.npy"
    if cached.exists():
        return np.load(cached)
    provider = LocalProvider(model, threads=0)
    t = time.perf_counter()
    rows: list[list[float]] = []
    for start in range(0, len(texts), 512):
        rows += provider.embed_batch(texts[start : start + 512])
        done = start + 512
        if done % 8192 < 512:
            print(f"  embedded {min(done, len(texts))}/{len(texts)} ({time.perf_counter() - t:.0f} s)", flush=True)
    provider.close()
    vecs = np.asarray(rows, dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    out.mkdir(parents=True, exist_ok=True)
    np.save(cached, vecs)
    return vecs


@contextmanager
def sidecar_of(path: Path, rows: np.ndarray) -> Iterator[VectorFile]:
    """``rows`` written with the engine's sidecar writer and opened; removed after."""
    write_sidecar(path, "bench", rows.shape[1], [(np.arange(1, len(rows) + 1), rows, ["memory"] * len(rows))])
    vf = VectorFile(path, "bench")
    try:
        yield vf
    finally:
        vf.close()
        path.unlink()


def search_recall(vf: VectorFile, base: np.ndarray, queries: np.ndarray, pool: int, k: int = 24) -> tuple[list[float], list[float]]:
    """recall@10 and recall@k of each query: the pool of bit-code
    candidates rescored exactly, against exact KNN over ``base``."""
    r10, rk = [], []
    for q in queries:
        exact = np.argsort(-(base @ q), kind="stable")[:k]
        pos = vf.candidates(q, pool, None)
        got = pos[np.argsort(-(base[pos] @ q), kind="stable")[:k]]
        r10.append(recall(got[:10], exact[:10]))
        rk.append(recall(got, exact))
    return r10, rk


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return len(set(found.tolist()) & set(exact.tolist())) / len(exact)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="a GGUF embedding model")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()

    lines = prose_lines()
    step = len(lines) // args.queries
    held = set(range(step // 2, len(lines), step)[: args.queries])
    corpus = [t for i, t in enumerate(lines) if i not in held]
    whole = [lines[i] for i in sorted(held)]
    short = [" ".join(t.split()[:5]) for t in whole]
    print(f"{len(corpus)} lines of prose, {len(whole)} held-out queries (whole and first five words)", flush=True)
    vecs = embedded(args.out, args.model, corpus + whole + short)
    base, queries = vecs[: len(corpus)], {"whole": vecs[len(corpus) : len(corpus) + len(whole)], "short": vecs[len(corpus) + len(whole) :]}

    path = sidecar_path(args.out / "real-recall.sqlite", "bench")
    engine_shares = {"at 250k rows (engine)": MIN_POOL / QUANTISED_ABOVE, "at 1M rows (engine)": MIN_POOL / 1_000_000}
    shares = {**engine_shares, "0.2 %": 0.002, "0.1 %": 0.001}
    result: dict = {"rows": len(base), "dims": base.shape[1], "queries": len(whole), "pools": {}}
    with sidecar_of(path, base) as vf:
        for label, share in shares.items():
            pool = max(24, round(share * len(base)))
            entry: dict = {"share": round(share, 4), "pool": pool}
            for kind, qs in queries.items():
                r10, r24 = search_recall(vf, base, qs, pool)
                entry[kind] = {
                    "recall@10": round(statistics.mean(r10), 4),
                    "min@10": round(min(r10), 2),
                    "recall@24": round(statistics.mean(r24), 4),
                    "min@24": round(min(r24), 2),
                }
            result["pools"][label] = entry
            print(
                f"{label:24s} pool {pool:5d} ({share:.2%})  "
                + "  ".join(
                    f"{k}: r@10 {entry[k]['recall@10']:.3f} (min {entry[k]['min@10']:.1f}) r@24 {entry[k]['recall@24']:.3f}"
                    for k in queries
                ),
                flush=True,
            )
    share = engine_shares["at 1M rows (engine)"]
    rng = np.random.default_rng(0)
    result["subsets"] = {}
    for part in (8, 4, 2):
        sub = base[np.sort(rng.choice(len(base), len(base) // part, replace=False))]
        pool = max(24, round(share * len(sub)))
        with sidecar_of(path, sub) as vf:
            r10, _ = search_recall(vf, sub, queries["whole"], pool)
        result["subsets"][len(sub)] = {"pool": pool, "recall@10": round(statistics.mean(r10), 4)}
        print(f"{len(sub):6d} rows, pool {pool:4d} ({share:.2%}): whole r@10 {statistics.mean(r10):.3f}", flush=True)
    (args.out / "real_recall.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
