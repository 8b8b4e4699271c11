"""What judging entries costs a sync and an index, with the local model.

    python bench/entry_cost.py [--base REV] [--conversations 2] [--model PATH] [--base-model PATH] [--out bench/out/entry_cost]

Indexes LoCoMo dev conversations (protocol §1 workspaces) from scratch,
fresh index files so nothing comes from the embedding cache, with the
local MiniLM model, by this checkout's engine (which embeds and keeps
every entry besides the chunks) and by ``--base``'s (bench/engine_ab.py
extracts it), alternating conversation by conversation so load from other
processes falls on both. Prints chunks per second of sync and the size
of each index (the SQLite file, its WAL and the vector sidecar).

``--base-model`` gives the "before" side another model file: the f16 GGUF
run by llama.cpp before entries, say, against this checkout with the ONNX
build of the same model (``memext model install minilm``), which is what
a user's first index costs then and now.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_ab  # noqa: E402
from locomo import DEFAULT_DATA, DEFAULT_MODEL, build_layout, write_workspace  # noqa: E402

import memext.engine as new_engine  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "entry_cost"


def agent(pkg, ws: Path, db: Path, model: Path, cache: Path):
    raw = {
        "agents": [
            {
                "id": "cost",
                "workspace": str(ws),
                "memory_search": {
                    "provider": "local",
                    "local": {"model_path": str(model), "model_cache_dir": str(cache)},
                    "store": {"path": str(db)},
                    "sync": {"on_search": False, "watch": False},
                },
            }
        ]
    }
    return pkg.config.parse_config(raw).agents[0]


def index_size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file() and not p.name.endswith((".lock", ".uses")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD", help="git revision whose engine is the 'before'")
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--base-model", type=Path, default=None, help="the 'before' side's model (default: --model)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args()
    samples = json.loads(a.data.read_text(encoding="utf-8"))[: a.conversations]
    out = a.out.resolve()
    figures: dict[str, dict[str, float]] = {"before": {"s": 0.0, "chunks": 0, "bytes": 0}, "after": {"s": 0.0, "chunks": 0, "bytes": 0}}
    with tempfile.TemporaryDirectory() as tmp:
        engines = {"before": engine_ab.extract_base(a.base, Path(tmp)), "after": new_engine}
        for n, sample in enumerate(samples):
            ws = out / "ws" / sample["sample_id"]
            write_workspace(build_layout(sample["conversation"]), ws)
            for side in ("before", "after") if n % 2 == 0 else ("after", "before"):
                pkg = engines[side]
                folder = out / side
                shutil.rmtree(folder / sample["sample_id"], ignore_errors=True)
                db = folder / sample["sample_id"] / "index.sqlite"
                db.parent.mkdir(parents=True, exist_ok=True)
                model = a.base_model if side == "before" and a.base_model else a.model
                with pkg.MemoryIndex(agent(pkg, ws, db, model, out / "model-cache")) as idx:
                    t = time.perf_counter()
                    report = idx.sync(reason="manual")
                    figures[side]["s"] += time.perf_counter() - t
                    figures[side]["chunks"] += report.chunks_written
                figures[side]["bytes"] += index_size(db)
                print(f"{sample['sample_id']} [{side}]: {report.chunks_written} chunks, {report.texts_embedded} texts embedded", flush=True)
    print(f"before: engine/ at {a.base} with {(a.base_model or a.model).name}; after: this checkout with {a.model.name}")
    for side, f in figures.items():
        print(
            f"sync [{side}]: {f['chunks']} chunks in {f['s']:.1f} s, {f['chunks'] / f['s']:.2f} chunks/s; index {f['bytes'] / 1e6:.1f} MB"
        )
    print(
        f"after/before: sync time {figures['after']['s'] / figures['before']['s']:.2f}x, index size {figures['after']['bytes'] / figures['before']['bytes']:.2f}x"
    )


if __name__ == "__main__":
    main()
