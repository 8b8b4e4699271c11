"""Local-model benchmarks: indexing overhead and query latency.

    python bench/local_bench.py [--data PATH] [--model PATH] [--out bench/out/local] [--repeat 3] [--queries 200]

1. Indexing throughput. The LoCoMo dev workspaces (protocol §1) are indexed
   from scratch by ``MemoryIndex.sync`` with the local GGUF model (fresh index
   files, so nothing comes from the embedding cache), and the very same chunk
   texts are embedded in a bare loop: the provider's own loaded model (a
   ``Llama``, or an ONNX Runtime session for an ``.onnx`` model; the same
   n_ctx, n_batch and threads) called directly with the provider's batch
   size (``EMBED_BATCH``). memext's overhead is
   ``memext time / bare time - 1`` (target: under 10 %). The two alternate
   conversation by conversation, ``--repeat`` times, and the fastest of each
   counts, so a burst of load from other processes does not land on one side
   only. The time memext spends inside the model is also clocked, which
   gives its own overhead independently of such noise.
2. Query latency: ``MemoryIndex.search`` with the default configuration on
   the indexes just built, the local model embedding each LoCoMo question
   (target: p50 under 100 ms).

Prints the figures and writes them as JSON to ``<out>/local_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DEFAULT_DATA, DEFAULT_MODEL, agent_config, build_layout, load_questions, percentile, write_workspace  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.providers.local import model as local  # noqa: E402
from memext.engine.store import StoreOptions  # noqa: E402
from memext.engine.store.sqlite.index_files import remove_index_files  # noqa: E402
from memext.engine.store.sqlite.store import Store  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "local"


def build_workspaces(data: list[dict], out: Path) -> list[tuple[str, Path, list]]:
    made = []
    for sample in data:
        layout = build_layout(sample["conversation"])
        ws = out / "ws" / sample["sample_id"]
        write_workspace(layout, ws)
        made.append((sample["sample_id"], ws, load_questions(sample, layout)))
    return made


class EmbedClock:
    """Times the calls into the provider's model (a thin wrapper around the
    real model's ``embed``), so a sync's time splits into model and the rest."""

    def __init__(self, engine):
        self.llama, self.inner, self.seconds = engine, engine.embed, 0.0

    def __enter__(self):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return self.inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0

        self.llama.embed = timed
        return self

    def __exit__(self, *exc):
        self.llama.embed = self.inner


def memext_sync(sid: str, ws: Path, out: Path, model: Path) -> dict:
    """Index one workspace from scratch (model load excluded from the time)."""
    db = out / f"{sid}-bench.sqlite"
    remove_index_files(db)
    with MemoryIndex(agent_config(ws, db, model, out / "model-cache")) as idx:
        provider = idx.provider_choice.provider
        if provider is None or provider.id != "local":
            raise SystemExit(f"the local model is not in force: {idx.provider_choice.reason}")
        provider.embed_query("load the model before the clock starts")
        loaded = provider._ensure_loaded()
        llama = loaded.engine  # one model per process: the bare loop reuses it
        with EmbedClock(llama) as clock:
            t0 = time.perf_counter()
            report = idx.sync()
            seconds = time.perf_counter() - t0
        if report.cache_hits:
            raise SystemExit(f"{sid}: {report.cache_hits} vectors came from the cache; the pass is not from scratch")
        with Store(db, StoreOptions.from_settings(idx.agent.settings.store.vector)) as store:
            texts = [t for (t,) in store.conn.execute("SELECT text FROM chunks ORDER BY rowid")]
    return {
        "seconds": seconds,
        "model_s": clock.seconds,
        "texts": report.texts_embedded,
        "embed_calls": report.embed_calls,
        "chunk_texts": texts,
        "llama": llama,
        "n_ctx": loaded.n_ctx,
        "threads": provider.threads,
    }


def bare_embed(engine, texts: list[str]) -> float:
    """Embed ``texts`` with the loaded model alone, as the provider batches them."""
    unique = list(dict.fromkeys(texts))  # the engine embeds each distinct text once
    t0 = time.perf_counter()
    for start in range(0, len(unique), local.EMBED_BATCH):
        batch = [t if t.strip() else " " for t in unique[start : start + local.EMBED_BATCH]]
        engine.embed(batch)
    return time.perf_counter() - t0


def query_latency(workspaces, out: Path, model: Path, tag: str, limit: int) -> dict:
    times: list[float] = []
    for sid, ws, questions in workspaces:
        with MemoryIndex(agent_config(ws, out / f"{sid}-{tag}.sqlite", model, out / "model-cache")) as idx:
            idx.search("warm up")
            for q in questions[: max(1, limit // len(workspaces))]:
                t0 = time.perf_counter()
                resp = idx.search(q.query)
                times.append((time.perf_counter() - t0) * 1000)
                if resp.mode != "hybrid":
                    raise SystemExit(f"search degraded to {resp.mode}: {resp.notice}")
    return {
        "queries": len(times),
        "p50_ms": round(percentile(times, 50), 2),
        "p95_ms": round(percentile(times, 95), 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--repeat", type=int, default=3, help="alternating memext/bare passes (fastest of each counts)")
    ap.add_argument("--queries", type=int, default=200, help="questions timed for query latency")
    ap.add_argument("--only", default="", help="comma-separated sample ids (default: all)")
    args = ap.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.only:
        data = [s for s in data if s["sample_id"] in set(args.only.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    workspaces = build_workspaces(data, args.out)

    # Alternate memext and the bare loop conversation by conversation and
    # keep the fastest of each: load from other processes (this machine is
    # shared) then rarely lands on one side only.
    best: dict[str, dict] = {}
    for i in range(args.repeat):
        for sid, ws, _ in workspaces:
            m = memext_sync(sid, ws, args.out, args.model)
            llama = m.pop("llama")
            b = bare_embed(llama, m.pop("chunk_texts"))
            prev = best.setdefault(sid, {"memext_s": m["seconds"], "model_s": m["model_s"], "bare_s": b, **m})
            if m["seconds"] < prev["memext_s"]:
                prev.update(memext_s=m["seconds"], model_s=m["model_s"])
            prev["bare_s"] = min(prev["bare_s"], b)
        print(f"pass {i + 1} done", file=sys.stderr)
    best_m = sum(v["memext_s"] for v in best.values())
    best_model = sum(v["model_s"] for v in best.values())
    best_b = sum(v["bare_s"] for v in best.values())
    n = sum(v["texts"] for v in best.values())
    latency = query_latency(workspaces, args.out, args.model, "bench", args.queries)
    n_ctx, threads = m["n_ctx"], m["threads"]
    figures = {
        "model": args.model.name,
        "n_ctx": n_ctx,
        "threads": threads,
        "embed_batch": local.EMBED_BATCH,
        "repeat": args.repeat,
        "conversations": [s for s, _, _ in workspaces],
        "chunks": n,
        "embed_calls": sum(v["embed_calls"] for v in best.values()),
        "memext_s": round(best_m, 2),
        "memext_in_model_s": round(best_model, 2),
        "bare_s": round(best_b, 2),
        "memext_chunks_per_s": round(n / best_m, 2),
        "bare_chunks_per_s": round(n / best_b, 2),
        "overhead_pct": round((best_m / best_b - 1) * 100, 1),
        "outside_model_pct": round((1 - best_model / best_m) * 100, 1),
        "per_conversation": {
            k: {x: round(v[x], 2) for x in ("memext_s", "model_s", "bare_s")} | {"chunks": v["texts"]} for k, v in best.items()
        },
        "query_latency": latency,
    }
    (args.out / "local_bench.json").write_text(json.dumps(figures, indent=1))
    print(f"model {figures['model']} (n_ctx {n_ctx}, {threads} threads, batches of {local.EMBED_BATCH})")
    print(f"indexing {n} chunks of the LoCoMo dev workspaces ({len(workspaces)} conversations), fastest of {args.repeat} per conversation:")
    print(f"  memext sync      {best_m:7.1f} s  {figures['memext_chunks_per_s']:6.2f} chunks/s")
    print(f"  bare llama-cpp   {best_b:7.1f} s  {figures['bare_chunks_per_s']:6.2f} chunks/s")
    print(f"  memext overhead  {figures['overhead_pct']:6.1f} %   (target: under 10 %)")
    print(
        f"  of memext's sync time, {figures['outside_model_pct']:.1f} % is spent outside the model "
        f"(chunking, hashing, SQLite, vec0, FTS, cache)"
    )
    print(
        f"query latency, MemoryIndex.search with the local model ({latency['queries']} questions): "
        f"p50 {latency['p50_ms']} ms, p95 {latency['p95_ms']} ms   (target: p50 under 100 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
