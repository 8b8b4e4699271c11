"""Late-chunked entry vectors: each entry pooled from its chunk's own model pass.

    python bench/late_chunking.py --locomo-out DIR --trust-out DIR [--write] [--verify] [--special]

A first index embeds every chunk and, separately, every entry (a list item,
a paragraph, a turn); the entries cost about as many tokens again as the
chunks. Late chunking would give each entry a vector without a pass of its
own: the mean of its tokens' last hidden states in the pass of the chunk
that holds it most centrally (the holder of engine/store/entry_vectors.py),
L2-normalised. This script measures what that does to search quality
without changing the engine: it rewrites the entry vectors of existing
benchmark indexes (copies of ``bench/locomo.py``'s and ``bench/trust/
run.py``'s ``--out`` folders; never the originals you want to keep), after
which the benchmarks, and ``bench/trust/fit.py`` for a refit, run on them
as usual.

What it rewrites, per index, for Markdown files only (session transcripts
keep their own vectors): the ``entries`` row's float16 vector, and the
``embedding_cache`` row of the entry's text hash (float32), because a sync
that rebuilds (a changed fingerprint, such as the copied folder's new
workspace path) fills vectors from that cache by text hash. A text hash
that two entries share gets one of their late vectors in the cache, and a
hash a chunk shares keeps its cache row (the chunk's vector). Since a
rebuild would then give duplicates one vector, ``--write`` also records
the copy's own workspace path in the index's fingerprint, so the
benchmark's sync finds the index current and keeps every entry's own
vector; ``--verify`` (after a benchmark run) says how many entries still
carry their late vector.

An entry no chunk holds whole (one longer than a chunk) keeps its
standalone vector. The token states come from the ONNX model memext
installs (``--onnx``, default ``~/.cache/memext/models/all-minilm-l6-v2.onnx``)
with the pooling's input added as a graph output; the script also reports
the cosine of that model's pooled chunk vectors to the stored ones (the
indexes were built with the GGUF model: a check that both are the same
model on the same text). ``--special`` pools the chunk's [CLS] and [SEP]
states with the entry's tokens (default: the entry's tokens only).

Prints, per index, the entries rewritten and kept, and over all of them the
cosine of the late vectors to the standalone ones.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memext.engine.memory.index_entries import markdown_entries
from memext.engine.store.sqlite.db import binding

DEFAULT_ONNX = Path(os.path.expanduser("~/.cache/memext/models/all-minilm-l6-v2.onnx"))
DIMS = 384


class TokenStates:
    """The ONNX model with its token states exposed: one pass per chunk."""

    def __init__(self, model: Path):
        import onnx
        import onnxruntime as ort
        from tokenizers import Tokenizer

        graph = onnx.load(str(model))
        # The pooling: ReduceSum over (token states * mask); its Mul's first input are the states.
        reduce_sum = next(n for n in graph.graph.node if n.op_type == "ReduceSum")
        mul = next(n for n in graph.graph.node if reduce_sum.input[0] in n.output)
        self.states_name = mul.input[0]
        graph.graph.output.append(onnx.helper.make_tensor_value_info(self.states_name, onnx.TensorProto.FLOAT, None))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(graph.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        meta = self.session.get_modelmeta().custom_metadata_map
        self.tokenizer = Tokenizer.from_str(meta["memext.tokenizer"])
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(512)
        self.inputs = {i.name for i in self.session.get_inputs()}

    def run(self, text: str) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], list[int]]:
        """The pooled vector, the token states, each token's character span, its special flag."""
        enc = self.tokenizer.encode(text)
        ids = np.array([enc.ids], np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        pooled, states = self.session.run(["embeddings", self.states_name], feed)
        return pooled[0], states[0], list(enc.offsets), list(enc.special_tokens_mask)


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@dataclass
class Tally:
    rewritten: int = 0
    no_holder: int = 0
    cache_rows: int = 0
    cache_shared_with_chunk: int = 0
    duplicate_hashes: int = 0
    cos_standalone: list[float] = field(default_factory=list)
    cos_chunk_check: list[float] = field(default_factory=list)
    verified: int = 0
    verify_total: int = 0


def indexes(locomo_out: Path | None, trust_out: Path | None) -> list[tuple[Path, Path]]:
    """(index file, workspace) of every benchmark index in the two folders."""
    found = []
    if locomo_out:
        found += [(db, locomo_out / db.stem) for db in sorted(locomo_out.glob("*.sqlite"))]
    if trust_out:
        found += [(d / "index.sqlite", d / "workspace") for d in sorted(trust_out.iterdir()) if (d / "index.sqlite").exists()]
    return found


def late_vectors(conn, workspace: Path, model: TokenStates, special: bool, tally: Tally) -> dict[tuple[str, int, int], np.ndarray]:
    """Each Markdown entry's late vector, by (path, start, end)."""
    chunks: dict[str, list[tuple[int, int, str, str]]] = {}
    for path, start, end, text, h in conn.execute(
        "SELECT path, start_line, end_line, text, hash FROM chunks WHERE source = 'memory' ORDER BY rowid"
    ):
        chunks.setdefault(path, []).append((start, end, text, h))
    cache = {h: blob for h, blob in conn.execute("SELECT hash, embedding FROM embedding_cache")}
    out = {}
    for path, held in chunks.items():
        if not path.endswith(".md"):
            continue
        text = (workspace / path).read_text(encoding="utf-8")
        passes: dict[tuple[int, int], tuple] = {}
        for es, ee, _etext in markdown_entries(text):
            holders = [c for c in held if c[0] <= es and c[1] >= ee]
            if not holders:
                tally.no_holder += 1
                continue
            # most central: the chunk's middle nearest the entry's (engine/store/entry_vectors.py)
            s, e, ctext, chash = min(holders, key=lambda c: abs((c[0] + c[1]) - (es + ee)))
            if (s, e) not in passes:
                passes[(s, e)] = model.run(ctext)
                if chash in cache:
                    stored = np.frombuffer(cache[chash], "<f4")
                    tally.cos_chunk_check.append(float(unit(stored) @ unit(passes[(s, e)][0])))
            _pooled, states, offsets, specials = passes[(s, e)]
            lines = ctext.split("\n")
            first = sum(len(x) + 1 for x in lines[: es - s])
            last = first + sum(len(x) + 1 for x in lines[es - s : ee - s + 1]) - 1
            idx = [i for i, (a, b) in enumerate(offsets) if b > a and a >= first and b <= last and not specials[i]]
            if not idx:
                tally.no_holder += 1
                continue
            if special:
                idx += [i for i, sp in enumerate(specials) if sp]
            out[(path, es, ee)] = unit(states[idx].mean(0))
    return out


def rewrite(db: Path, workspace: Path, model: TokenStates, special: bool, write: bool, verify: bool, tally: Tally) -> str:
    conn = binding().module.connect(str(db))  # the engine's binding; no extension needed
    try:
        vectors = late_vectors(conn, workspace, model, special, tally)
        rows = conn.execute("SELECT rowid, path, start_line, end_line, hash, vector FROM entries WHERE source = 'memory'").fetchall()
        chunk_hashes = {h for (h,) in conn.execute("SELECT hash FROM chunks")}
        entry_updates, cache_updates, seen = [], {}, set()
        ok = total = 0
        for rowid, path, start, end, h, blob in rows:
            v = vectors.get((path, start, end))
            if v is None or blob is None:
                continue
            old = np.frombuffer(blob, np.float16).astype(np.float32)
            if verify:
                total += 1
                ok += float(unit(old) @ v) > 0.999
                continue
            tally.cos_standalone.append(float(unit(old) @ v))
            entry_updates.append((v.astype(np.float16).tobytes(), rowid))
            if h in seen:
                tally.duplicate_hashes += 1
            seen.add(h)
            if h in chunk_hashes:
                tally.cache_shared_with_chunk += 1
            else:
                cache_updates[h] = v.astype("<f4").tobytes()
        if verify:
            tally.verified += ok
            tally.verify_total += total
            return f"{db.parent.name}/{db.name}: {ok}/{total} entries carry their late vector"
        tally.rewritten += len(entry_updates)
        if write:
            with conn:
                conn.executemany("UPDATE entries SET vector = ? WHERE rowid = ?", entry_updates)
                before = conn.total_changes
                conn.executemany("UPDATE embedding_cache SET embedding = ? WHERE hash = ?", [(b, h) for h, b in cache_updates.items()])
                tally.cache_rows += conn.total_changes - before
                fp = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0])
                fp["workspace"] = str(workspace.resolve())
                conn.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (json.dumps(fp, sort_keys=True),))
        return f"{db.parent.name}/{db.name}: {len(entry_updates)} entries late, {len(cache_updates)} cache rows"
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo-out", type=Path, help="a copy of bench/locomo.py's --out")
    ap.add_argument("--trust-out", type=Path, help="a copy of bench/trust/run.py's --out")
    ap.add_argument("--onnx", type=Path, default=DEFAULT_ONNX, help="the ONNX model memext installs")
    ap.add_argument("--write", action="store_true", help="rewrite the indexes (default: only measure)")
    ap.add_argument("--verify", action="store_true", help="count the entries that still carry their late vector")
    ap.add_argument("--special", action="store_true", help="pool the chunk's [CLS] and [SEP] states too")
    args = ap.parse_args(argv)
    if not (args.locomo_out or args.trust_out):
        ap.error("name --locomo-out, --trust-out or both")
    model = TokenStates(args.onnx)
    tally = Tally()
    for db, ws in indexes(args.locomo_out, args.trust_out):
        print(rewrite(db, ws, model, args.special, args.write, args.verify, tally), flush=True)
    if args.verify:
        print(f"late vectors kept: {tally.verified}/{tally.verify_total}")
        return 0 if tally.verified == tally.verify_total else 1
    a, c = np.array(tally.cos_standalone), np.array(tally.cos_chunk_check)
    print(
        f"entries late {tally.rewritten}, kept standalone (no chunk holds them whole) {tally.no_holder}, "
        f"cache rows rewritten {tally.cache_rows}, text shared by entries {tally.duplicate_hashes}, with a chunk {tally.cache_shared_with_chunk}"
    )
    print(f"cosine late to standalone: mean {a.mean():.3f} p10 {np.percentile(a, 10):.3f} p50 {np.median(a):.3f} min {a.min():.3f}")
    print(f"check, ONNX pooled chunk to stored chunk vector: mean {c.mean():.4f} min {c.min():.4f} ({len(c)} chunks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
