"""Ranking variants tried for the reading-budget defaults, re-scored at recall@L60 (bench/LOCOMO_RESULTS.md).

    python bench/locomo_variants.py --out bench/out/locomo [--line-vectors]

Reuses an index and the cached query vectors that ``bench/locomo.py --fast
--out DIR`` left in ``DIR``. For every question it fetches the engine's
full ranking once (``run_search``, 200 results, min_score 0, merge_spans
off, time cues read from the end of the last session day), then re-ranks it
in Python for each variant and scores it as the engine would return it:
recall@L60 through the engine's budget (``engine.spans.budget_spans``, 60
lines, 80 results) and turn_recall@6 / lines@6 with hits of a file merged.
``--line-vectors`` also embeds every line alone (cached in ``DIR``; about
two minutes for the dev split here) to try a per-line vector signal. An exploration tool: what wins is built
into the engine and measured by ``bench/locomo.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datetime import datetime  # noqa: E402

from locomo import (  # noqa: E402
    DEFAULT_DATA,
    DEFAULT_MODEL,
    Question,
    agent_config,
    build_layout,
    load_questions,
    score,
    within_budget,
)

from memext.engine.providers.nulls import model_null  # noqa: E402
from memext.engine.search.options import SearchOptions  # noqa: E402
from memext.engine.search.pipeline import run_search  # noqa: E402
from memext.engine.search.results import SearchResult  # noqa: E402
from memext.engine.search.spans import budget_spans  # noqa: E402
from memext.engine.store import StoreOptions  # noqa: E402
from memext.engine.store.sqlite.store import Store  # noqa: E402

#: (path, start, end, score, cosine, bm25 0..1, time factor) per ranked chunk.
Cand = tuple[str, int, int, float, float, float, float]
Rerank = Callable[[dict, list[Cand]], list[Cand]]


def fetch(out: Path, data: list[dict], model: Path, keep: Callable[[SearchResult], object] | None = None) -> list[dict]:
    """Each question's ranking, judged against the model's null as
    ``MemoryIndex.search`` judges it; ``keep`` (when given) is applied to
    every result, and what it returns kept as the item's ``"kept"`` list."""
    vectors = dict(np.load(out / f"query-vectors-{model.stem}.npz"))
    null = model_null(model.name)
    questions = []
    for sample in data:
        sid = sample["sample_id"]
        layout = build_layout(sample["conversation"])
        agent = agent_config(out / sid, out / f"{sid}.sqlite", model, out / "model-cache", {"query": {"merge_spans": False}})
        store = Store(out / f"{sid}.sqlite", StoreOptions.from_settings(agent.settings.store.vector))
        now = datetime.combine(layout.last_day, datetime.max.time()) if layout.last_day else datetime.now()
        for q in load_questions(sample, layout):
            ranked, _ = run_search(
                store,
                q.query,
                vectors[q.query],
                agent.settings.query,
                SearchOptions(max_results=200, min_score=0, snippets=False, now=now, explain=True),
                null=null,
            )
            cands = [
                (
                    r.path,
                    r.start_line,
                    r.end_line,
                    r.score,
                    r.explain["vector"]["similarity"] or 0.0,
                    r.explain["keyword"]["score"] or 0.0,
                    r.explain.get("time_boost", 1.0),
                )
                for r in ranked
            ]
            item = {"sid": sid, "q": q, "cands": cands, "qvec": vectors[q.query]}
            if keep is not None:
                item["kept"] = [keep(r) for r in ranked]
            questions.append(item)
        store.close()
    return questions


def _results(spans) -> list[SearchResult]:
    return [SearchResult(s.path, s.start_line, s.end_line, 0.0, "", "memory") for s in spans]


def measure(questions: list[dict], rerank: Rerank) -> tuple[list[tuple[int, float]], list[tuple[int, float]], list[float]]:
    """Per question: (category, recall@L60), (category, turn_recall@6) and lines@6."""
    at60: list[tuple[int, float]] = []
    at6: list[tuple[int, float]] = []
    lines6: list[float] = []
    for item in questions:
        q: Question = item["q"]
        hits = [(c[0], c[1], c[2]) for c in rerank(item, item["cands"])]
        at60.append((q.category, score(within_budget(_results(budget_spans(hits, 60, 80))), q)["turn_recall"]))
        s6 = score(_results(budget_spans(hits, sys.maxsize, 6)), q)
        at6.append((q.category, s6["turn_recall"]))
        lines6.append(s6["lines"])
    return at60, at6, lines6


def evaluate(questions: list[dict], rerank: Rerank, label: str) -> None:
    at60, at6, lines6 = measure(questions, rerank)

    def mean(rows: list[tuple[int, float]], cat: int | None = None) -> str:
        return f"{statistics.fmean(x for c, x in rows if cat is None or c == cat):.3f}"

    print(f"| {label} | {mean(at60)} | {mean(at60, 1)} | {mean(at60, 3)} | {mean(at6)} | {statistics.fmean(lines6):.0f} |")


def refuse(wv: float) -> Rerank:
    return lambda item, cands: sorted(cands, key=lambda c: -((wv * min(1.0, max(0.0, c[4])) + (1 - wv) * c[5]) * c[6]))


def neighbours(beta: float) -> Rerank:
    """Add beta x the best score of an overlapping or adjacent chunk of the file."""

    def rerank(item: dict, cands: list[Cand]) -> list[Cand]:
        def bonus(c: Cand) -> float:
            return max((d[3] for d in cands if d is not c and d[0] == c[0] and d[1] <= c[2] + 1 and c[1] <= d[2] + 1), default=0.0)

        return sorted(cands, key=lambda c: -(c[3] + beta * bonus(c)))

    return rerank


def density(alpha: float) -> Rerank:
    """Score per line read: score / lines ** alpha."""
    return lambda item, cands: sorted(cands, key=lambda c: -(c[3] / (c[2] - c[1] + 1) ** alpha))


def file_variety(gamma: float) -> Rerank:
    """Greedy: each result already taken from a file multiplies that file's next scores by gamma."""

    def rerank(item: dict, cands: list[Cand]) -> list[Cand]:
        pool, out, taken = list(cands), [], {}
        while pool:
            best = max(pool, key=lambda c: c[3] * gamma ** taken.get(c[0], 0))
            pool.remove(best)
            out.append(best)
            taken[best[0]] = taken.get(best[0], 0) + 1
        return out

    return rerank


def line_vectors(out: Path, sample: dict, model: Path) -> dict[tuple[str, int], np.ndarray]:
    """Every non-blank line of one conversation embedded alone (cached)."""
    cache = out / f"line-vectors-{sample['sample_id']}-{model.stem}.npz"
    if cache.exists():
        return {(k.split("|")[0], int(k.split("|")[1])): v for k, v in np.load(cache).items()}
    from llama_cpp import Llama

    llm = Llama(str(model), embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=2, verbose=False)
    keys = [
        (path, n, line)
        for path, lines in build_layout(sample["conversation"]).files.items()
        for n, line in enumerate(lines, start=1)
        if line.strip()
    ]
    found = {}
    for i in range(0, len(keys), 16):
        batch = keys[i : i + 16]
        for (path, n, _), vec in zip(batch, llm.embed([t for _, _, t in batch], normalize=True)):
            found[(path, n)] = np.asarray(vec, dtype=np.float32)
    np.savez(cache, **{f"{p}|{n}": v for (p, n), v in found.items()})
    return found


def _line_rerank(lines: dict[tuple[str, str, int], np.ndarray], cosine: Callable[[np.ndarray, np.ndarray, Cand], float]) -> Rerank:
    """Re-fuse with a cosine made from the chunk's line vectors (0.5/0.5, time factor kept)."""

    def rerank(item: dict, cands: list[Cand]) -> list[Cand]:
        def cos(c: Cand) -> float:
            vs = [lines[(item["sid"], c[0], n)] for n in range(c[1], c[2] + 1) if (item["sid"], c[0], n) in lines]
            return cosine(np.stack(vs), item["qvec"], c) if vs else c[4]

        return sorted(cands, key=lambda c: -((0.5 * min(1.0, max(0.0, cos(c))) + 0.5 * c[5]) * c[6]))

    return rerank


def line_max(lines: dict[tuple[str, str, int], np.ndarray], mix: float) -> Rerank:
    """Cosine = mix x the best line's cosine + (1 - mix) x the chunk's."""
    return _line_rerank(lines, lambda m, q, c: mix * float((m @ q).max()) + (1 - mix) * c[4])


def line_mean(lines: dict[tuple[str, str, int], np.ndarray]) -> Rerank:
    """Cosine to the normalised mean of the chunk's line vectors."""
    return _line_rerank(lines, lambda m, q, c: float(m.mean(0) @ q / np.linalg.norm(m.mean(0))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, required=True, help="a folder bench/locomo.py --fast has filled")
    ap.add_argument("--line-vectors", action="store_true", help="also try per-line vectors on the first conversation")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    questions = fetch(out, data, args.model)
    print("| variant | recall@L60 | multi-hop @L60 | open-domain @L60 | recall@6 | lines@6 |")
    print("|---|---|---|---|---|---|")
    evaluate(questions, lambda item, cands: cands, "engine ranking (baseline)")
    for wv in (0.3, 0.4, 0.6, 0.7):
        evaluate(questions, refuse(wv), f"weights {wv:g}/{1 - wv:g}")
    for beta in (0.1, 0.3, 0.5):
        evaluate(questions, neighbours(beta), f"neighbour bonus {beta:g}")
    for alpha in (0.1, 0.3):
        evaluate(questions, density(alpha), f"score / lines^{alpha:g}")
    for gamma in (0.9, 0.8):
        evaluate(questions, file_variety(gamma), f"file variety {gamma:g}")
    if args.line_vectors:
        lines = {(s["sample_id"], *k): v for s in data for k, v in line_vectors(out, s, args.model).items()}
        print("\nWith a vector per line (every line embedded alone):\n")
        print("| variant | recall@L60 | multi-hop @L60 | open-domain @L60 | recall@6 | lines@6 |")
        print("|---|---|---|---|---|---|")
        evaluate(questions, lambda item, cands: cands, "engine ranking (baseline)")
        for mix in (0.3, 0.5, 0.7, 1.0):
            evaluate(questions, line_max(lines, mix), f"best line's cosine x {mix:g} + chunk's x {1 - mix:g}")
        evaluate(questions, line_mean(lines), "mean of the lines' vectors instead of the chunk's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
