"""Embedding throughput of the local model against the CPU's peak, and a
faster model against the one it replaces.

    python bench/embed_throughput.py --candidate PATH [--baseline PATH] [--data PATH] [--repeat 2] [--out DIR]

1. The floor of the hardware: the CPU's float32 peak as numpy's BLAS
   reaches it (a 1024 x 1024 matrix product, best of 5) on one thread and
   on two, measured before every pass, so load from other processes shows.
2. First index of the LoCoMo dev split (protocol §1, every conversation
   from scratch, model load not timed; :func:`local_bench.memext_sync`)
   with ``--baseline`` (default: the shared f16 GGUF, run by llama.cpp as
   memext has always run it) and ``--candidate``, alternated conversation
   by conversation and the order swapped each pass, so that a burst of
   load lands on both. Prints chunks/s of each beside the other, their
   ratio per pass, and the achieved GFLOP/s of each (the forward pass of
   the model's shape, counted from its tokens) beside the peak.
3. Short texts, as entry vectors will embed them: single lines of the same
   files, alternated the same way (texts/s).
4. Agreement: the cosine of the candidate's vector to the baseline's for
   every chunk (from the two indexes' embedding caches), every question,
   the short lines and a few texts of other kinds (other languages, code,
   numbers, empty); mean and minimum per kind.

``uptime`` is printed before and after: the machine is shared. Writes the
figures as JSON to ``<out>/embed_throughput.json``. Needs the real LoCoMo
data (``--data``) and, for an ONNX candidate, the ``onnx`` extra.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_bench import build_workspaces, memext_sync  # noqa: E402
from locomo import DEFAULT_DATA, DEFAULT_MODEL, agent_config  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.store import CacheKey, Store, StoreOptions  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "throughput"
#: all-MiniLM-L6-v2's shape: layers, hidden size, feed-forward size.
MINILM_SHAPE = (6, 384, 1536)
OTHER_TEXTS = [
    "Ich habe im März mit dem Deutschkurs an der Volkshochschule angefangen.",
    "A professora de alemão chama-se Ana e as aulas são às terças.",
    "東京で会議は午後三時に始まります。",
    "def embed(texts: list[str]) -> np.ndarray:  # returns unit vectors",
    "Invoice 2024-117: 1,299.00 EUR due 2024-03-31, IBAN DE89 3704 0044 0532 0130 00",
    "ok",
    " ",
    "!!! ??? ... ---",
    "the " * 400,
]


def flops_per_text(tokens: int, shape: tuple[int, int, int] = MINILM_SHAPE) -> float:
    """Floating-point operations of one forward pass over ``tokens`` tokens:
    the four attention projections and the two feed-forward matrices per
    layer (2 * tokens * weights), plus the attention scores and their
    weighted sum (4 * tokens^2 * hidden). Layer norms, softmax and GELU are
    left out (well under 1 %)."""
    layers, hidden, ff = shape
    return layers * (2 * tokens * (4 * hidden * hidden + 2 * hidden * ff) + 4 * tokens * tokens * hidden)


def peak_gflops(threads: int, n: int = 1024, reps: int = 5) -> float:
    """The CPU's float32 peak as BLAS reaches it on ``threads`` threads."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    best = float("inf")
    with threadpool_limits(threads):
        a @ b
        for _ in range(reps):
            t0 = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def index_vectors(db: Path, agent) -> dict[str, np.ndarray]:
    """Every chunk's vector in an index, by text hash (from its embedding cache)."""
    with MemoryIndex(agent) as idx:
        p = idx.provider_choice.provider
        assert p is not None
        key = CacheKey(p.id, p.model, p.endpoint_key)
        opts = StoreOptions.from_settings(idx.agent.settings.store.vector)
    with Store(db, opts) as store:
        hashes = [h for (h,) in store.conn.execute("SELECT DISTINCT hash FROM chunks")]
        return store.cache_get(key, hashes, touch=False)


def tokens_of(texts: list[str], model: Path) -> list[int]:
    """Token counts as the model's tokenizer makes them (cut at 512)."""
    from memext.engine.providers.local.runtime import load_engine

    engine = load_engine(model, 512, 1)
    if hasattr(engine, "tokenizer"):
        return [len(e.ids) for e in engine.tokenizer.encode_batch(texts)]
    llama = engine.llama  # type: ignore[attr-defined]
    return [min(512, len(llama.tokenize(t.encode("utf-8"), add_bos=True))) for t in texts]


def provider_for(model: Path, ws: Path, out: Path, tag: str):
    idx = MemoryIndex(agent_config(ws, out / f"short-{tag}.sqlite", model, out / "model-cache"))
    provider = idx.provider_choice.provider
    assert provider is not None
    provider.embed_query("load the model before the clock starts")
    return idx, provider


def cosines(a: list, b: list) -> dict:
    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    c = (x * y).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))
    return {"n": len(c), "mean": round(float(c.mean()), 6), "min": round(float(c.min()), 6)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--baseline", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--candidate", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--repeat", type=int, default=2, help="passes over every conversation, each model once per pass")
    ap.add_argument("--short", type=int, default=400, help="single lines embedded as short texts")
    ap.add_argument("--only", default="", help="comma-separated sample ids (default: all)")
    args = ap.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.only:
        data = [s for s in data if s["sample_id"] in set(args.only.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    workspaces = build_workspaces(data, args.out)
    models = {"baseline": args.baseline, "candidate": args.candidate}
    print(f"baseline  {args.baseline}\ncandidate {args.candidate}")
    print(f"load before: {uptime()}")

    passes = []
    chunk_texts: dict[str, str] = {}
    for i in range(args.repeat):
        peaks = {"1 thread": peak_gflops(1), "2 threads": peak_gflops(2)}
        seconds = {"baseline": 0.0, "candidate": 0.0}
        chunks = {"baseline": 0, "candidate": 0}
        for j, (sid, ws, _) in enumerate(workspaces):
            order = ["baseline", "candidate"] if (i + j) % 2 == 0 else ["candidate", "baseline"]
            for tag in order:
                m = memext_sync(f"{sid}-{tag}", ws, args.out, models[tag])
                m.pop("llama")
                for t in m.pop("chunk_texts"):
                    chunk_texts.setdefault(t, t)
                seconds[tag] += m["seconds"]
                chunks[tag] += m["texts"]
        passes.append({"peak_gflops": peaks, "seconds": seconds, "chunks": chunks})
        rate = {k: chunks[k] / seconds[k] for k in seconds}
        print(
            f"pass {i + 1}: peak {peaks['1 thread']:.1f} GFLOP/s on 1 thread, {peaks['2 threads']:.1f} on 2; "
            f"baseline {rate['baseline']:.2f} chunks/s, candidate {rate['candidate']:.2f} chunks/s, "
            f"ratio {rate['candidate'] / rate['baseline']:.2f}x",
            flush=True,
        )

    texts = list(chunk_texts)
    flops = sum(flops_per_text(n) for n in tokens_of(texts, args.candidate))
    n_chunks = passes[0]["chunks"]["baseline"]

    # Short texts: single lines of the same files, as entry vectors embed them.
    lines = sorted({ln for t in texts for ln in t.splitlines() if len(ln.split()) >= 3})
    random.Random(0).shuffle(lines)
    short = lines[: args.short]
    short_rates: dict[str, list[float]] = {"baseline": [], "candidate": []}
    short_vectors: dict[str, list] = {}
    for i in range(args.repeat):
        for tag in ["baseline", "candidate"] if i % 2 == 0 else ["candidate", "baseline"]:
            idx, provider = provider_for(models[tag], workspaces[0][1], args.out, tag)
            with idx:
                t0 = time.perf_counter()
                short_vectors[tag] = provider.embed_batch(short)
                short_rates[tag].append(len(short) / (time.perf_counter() - t0))

    # Agreement with the baseline.
    ws = workspaces[0][1]
    agreement = {}
    vb: dict[str, np.ndarray] = {}
    vc: dict[str, np.ndarray] = {}
    for sid, w, _ in workspaces:
        for tag, into in (("baseline", vb), ("candidate", vc)):
            db = args.out / f"{sid}-{tag}-bench.sqlite"
            into.update(index_vectors(db, agent_config(w, db, models[tag], args.out / "model-cache")))
    both = sorted(set(vb) & set(vc))
    agreement["chunks"] = cosines([vb[h] for h in both], [vc[h] for h in both])
    questions = [q.query for _, _, qs in workspaces for q in qs]
    q_vectors = {}
    for tag in ("baseline", "candidate"):
        idx, provider = provider_for(models[tag], ws, args.out, tag)
        with idx:
            q_vectors[tag] = (provider.embed_batch(questions), provider.embed_batch(OTHER_TEXTS))
    agreement["questions"] = cosines(q_vectors["baseline"][0], q_vectors["candidate"][0])
    agreement["short lines"] = cosines(short_vectors["baseline"], short_vectors["candidate"])
    agreement["other kinds"] = cosines(q_vectors["baseline"][1], q_vectors["candidate"][1])

    rates = {k: [p["chunks"][k] / p["seconds"][k] for p in passes] for k in models}
    ratios = [c / b for b, c in zip(rates["baseline"], rates["candidate"], strict=True)]
    best = {k: min(p["seconds"][k] for p in passes) for k in models}
    figures = {
        "baseline": str(args.baseline),
        "candidate": str(args.candidate),
        "chunks": n_chunks,
        "gflop_per_chunk": round(flops / len(texts) / 1e9, 2),
        "passes": passes,
        "chunks_per_s": {k: [round(r, 2) for r in v] for k, v in rates.items()},
        "ratio_per_pass": [round(r, 2) for r in ratios],
        "achieved_gflops_best": {k: round(flops / best[k] / 1e9, 1) for k in models},
        "short_texts_per_s": {k: [round(r, 1) for r in v] for k, v in short_rates.items()},
        "agreement_with_baseline": agreement,
        "load_after": uptime(),
    }
    (args.out / "embed_throughput.json").write_text(json.dumps(figures, indent=1))
    peak1 = max(p["peak_gflops"]["1 thread"] for p in passes)
    print(f"first index of {n_chunks} chunks ({len(workspaces)} conversations), {figures['gflop_per_chunk']} GFLOP per chunk:")
    for k in models:
        print(
            f"  {k:9} {', '.join(f'{r:.2f}' for r in rates[k])} chunks/s by pass; "
            f"best pass {flops / best[k] / 1e9:.1f} GFLOP/s ({flops / best[k] / 1e9 / peak1:.0%} of the best 1-thread peak, {peak1:.1f})"
        )
    print(f"  candidate / baseline: {', '.join(f'{r:.2f}x' for r in ratios)} (median {statistics.median(ratios):.2f}x)")
    print(f"short texts ({len(short)} lines): " + ", ".join(f"{k} {statistics.median(v):.1f}/s" for k, v in short_rates.items()))
    print("cosine of the candidate's vectors to the baseline's:")
    for kind, c in agreement.items():
        print(f"  {kind:12} n={c['n']:4}  mean {c['mean']:.6f}  min {c['min']:.6f}")
    print(f"load after: {figures['load_after']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
