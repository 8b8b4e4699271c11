"""Fit search's confidence: ``engine/search/confidence.json`` from notes of many kinds.

    python bench/trust/fit.py                  # collect the evidence, fit, write both files
    python bench/trust/fit.py --from-data      # fit the committed evidence again (no search)
    python bench/trust/fit.py --null [--model PATH]   # measure a model's null (engine/providers/nulls.json)

What is fitted (engine/search/confidence.py says what the features mean):
two logistic regressions over an entry's evidence (``semantic``,
``coverage``, ``exact``, and for the answer ``missing``), each also
without ``semantic`` (the ``words`` fit, for search without a cosine to
judge by):

- ``hit``: that a result answers the question: it cites an entry that
  answers it (the trust benchmark; for a changed fact the new entry) or
  the turn that does (LoCoMo's evidence). Fitted on the first result of
  each question, weak answers included: the result a reader takes, and
  the one the trust benchmark's calibration scores;
- ``answer``: that memory holds an answer to the question (the trust
  benchmark's answerable and changed facts, LoCoMo's own questions; not
  the unanswerable kinds), from each question's best result. Below the
  engine's decision point (``NOTHING_BELOW``: the least expected cost
  for the stated cost of a wrong "nothing", engine/search/confidence.py)
  the answer is "nothing": memory holds nothing on it. The report prints
  the trade-off over that point on the evidence fitted.

The evidence is collected from the searches themselves (default
settings, the local MiniLM model, ``include_weak``, ``explain``) on two
kinds of notes: the **tune half** of bench/trust (16 styles and sizes of
personal notes, never the check half) and the **LoCoMo dev split**
(conversations; their own questions, and both kinds of negatives of
bench/negatives.py). Each corpus weighs the same in the fit, so neither
kind of notes decides it. A query naming an ID no note holds is answered
"nothing" by rule, and left out. The evidence is written to
``bench/trust/fit_data.csv.gz`` (committed: ``--from-data`` and
tests/bench/test_fit.py fit it again and get the shipped parameters);
since the results searched depend on the parameters in force, the
command is run until the parameters stop moving (twice from a fresh start).

``--null`` measures a model's null, the median cosine of two entries of one
memory (engine/providers/nulls.py), on the same memories: the median over
them of each memory's null, recorded in engine/providers/nulls.json. A
model gets its null by this command; without one, an index estimates it
at sync from its own entries.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import statistics
import sys
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import locomo as L  # noqa: E402
import negatives as N  # noqa: E402

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.providers import nulls as nulls_mod  # noqa: E402
from memext.engine.search import confidence as C  # noqa: E402
from memext.engine.store import open_store  # noqa: E402
from trust.generate import build_suite, load_manifest, write_suite  # noqa: E402
from trust.run import DEFAULT_MODEL, DEFAULT_OUT, Top, agent_for  # noqa: E402

DATA = HERE / "fit_data.csv.gz"
#: Results of each question the hit fit learns from: the first.
HIT_RESULTS = 1
#: L2 penalty of the fits (on the weights, not the intercept): enough to
#: keep a feature that never varies in a corpus from running off.
L2 = 1.0
COLUMNS = ("corpus", "question", "kind", "rank", "semantic", "coverage", "exact", "missing", "hit", "answer")


@dataclass(frozen=True)
class Row:
    """One result's evidence and what it was."""

    corpus: str
    question: str
    kind: str
    rank: int
    semantic: float | None
    coverage: float
    exact: float
    missing: float
    hit: int  # the result answers
    answer: int  # memory holds an answer to the question

    def features(self, meaning: bool) -> list[float]:
        return [(self.semantic or 0.0) if meaning else 0.0, self.coverage, self.exact, self.missing]


# ---------------------------------------------------------------------------
# Collecting


#: The kinds of question memory holds an answer to.
ANSWERABLE = ("answerable", "superseded", "own")


def _rows(corpus: str, qid: str, kind: str, results, correct) -> list[Row]:
    """The rows of one question's results (``correct(result)``: it answers)."""
    flags = [bool(correct(r)) for r in results]
    holds = int(kind in ANSWERABLE)
    out = []
    for rank, (r, ok) in enumerate(zip(results, flags), start=1):
        if rank > HIT_RESULTS:
            break
        e = (r.explain or {}).get("evidence")
        if e is None:
            continue
        out.append(Row(corpus, qid, kind, rank, e["semantic"], e["coverage"], e["exact"], e["missing"], int(ok), holds))
    return out


def _search(idx: MemoryIndex, query: str, now: datetime):
    return idx.search(query, now=now, include_weak=True, explain=True, log_use=False)


def collect_trust(out: Path, model: Path, log) -> Iterator[Row]:
    seed, specs, _ = load_manifest()
    suite = build_suite([s for s in specs if s.half == "tune"], seed)
    write_suite(suite, out)
    for ws in suite:
        now = datetime.combine(ws.last_day, datetime.max.time())
        with MemoryIndex(agent_for(ws, out, model)) as idx:
            idx.sync(reason="manual")
            for q in ws.questions:
                resp = _search(idx, q.query, now)
                if any(r.explain and r.explain.get("absent_id") for r in resp.results):
                    continue  # an ID no note holds: "nothing" by rule
                yield from _rows("trust", q.id, q.kind, resp.results, lambda r, q=q: any(Top.of([r]).cites(a) for a in q.answers))
        log(f"trust {ws.spec.id}: {len(ws.questions)} questions")


def collect_locomo(data: Path, out: Path, model: Path, log) -> Iterator[Row]:
    samples = json.loads(data.read_text(encoding="utf-8"))
    layouts = {s["sample_id"]: L.build_layout(s["conversation"]) for s in samples}
    questions = {s["sample_id"]: L.load_questions(s, layouts[s["sample_id"]]) for s in samples}
    for sample in samples:
        sid = sample["sample_id"]
        layout = layouts[sid]
        ws = out / sid
        L.write_workspace(layout, ws)
        text = "\n".join(line for lines in layout.files.values() for line in lines)
        vocabulary = set(N.words(text))
        others = [o for o in samples if o["sample_id"] != sid]
        negatives = {
            "absent_people": [q.query for o in others for q in questions[o["sample_id"]] if N.absent_names(q.query, vocabulary)],
            "absent_topics": N.absent_topic_questions(sample, others, N.content_stems(text)),
        }
        now = datetime.combine(layout.last_day or date.today(), datetime.max.time())
        with MemoryIndex(L.agent_config(ws, out / f"{sid}.sqlite", model, out / "model-cache")) as idx:
            idx.sync(reason="manual")
            for n, q in enumerate(questions[sid]):
                covers = lambda r, q=q: any(r.path == t[0] and r.start_line <= t[1] <= r.end_line for t in q.turns)  # noqa: E731
                yield from _rows("locomo", f"{sid}/own/{n}", "own", _search(idx, q.query, now).results, covers)
            for kind, asked in negatives.items():
                for n, query in enumerate(asked):
                    yield from _rows("locomo", f"{sid}/{kind}/{n}", kind, _search(idx, query, now).results, lambda r: False)
        log(f"locomo {sid}: {len(questions[sid])} own questions, {sum(map(len, negatives.values()))} negatives")


def write_data(rows: Iterable[Row], path: Path = DATA) -> int:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    n = 0
    for r in rows:
        sem = "" if r.semantic is None else f"{r.semantic:.4f}"
        w.writerow([r.corpus, r.question, r.kind, r.rank, sem, f"{r.coverage:.4f}", f"{r.exact:g}", f"{r.missing:.4f}", r.hit, r.answer])
        n += 1
    # mtime 0: the same rows give the same bytes.
    path.write_bytes(gzip.compress(buf.getvalue().encode(), mtime=0))
    return n


def read_data(path: Path = DATA) -> list[Row]:
    rows = []
    for d in csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())):
        rows.append(
            Row(
                d["corpus"],
                d["question"],
                d["kind"],
                int(d["rank"]),
                float(d["semantic"]) if d["semantic"] else None,
                float(d["coverage"]),
                float(d["exact"]),
                float(d["missing"]),
                int(d["hit"]),
                int(d["answer"]),
            )
        )
    return rows


# ---------------------------------------------------------------------------
# Fitting


def logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Weighted L2-penalised logistic regression by Newton's method
    (deterministic: the same data give the same parameters)."""
    n, k = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(k + 1)
    penalty = np.diag([l2] * k + [0.0])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(xb @ beta)))
        grad = xb.T @ (w * (p - y)) + penalty @ beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + penalty
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta[:-1], float(beta[-1])


def corpus_weights(rows: list[Row]) -> np.ndarray:
    """Each corpus weighs the same in total (each of its rows alike)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.corpus] = counts.get(r.corpus, 0) + 1
    return np.array([len(rows) / (len(counts) * counts[r.corpus]) for r in rows])


#: The features each fit weighs. Whether this result is the one that
#: answers is a matter of the result (its meaning, its words, an exact
#: match); whether memory holds an answer at all is also a matter of the
#: question's words no note holds.
HIT_FEATURES = ("semantic", "coverage", "exact")
ANSWER_FEATURES = ("semantic", "coverage", "exact", "missing")


def fit_one(rows: list[Row], label: str, meaning: bool, features: tuple[str, ...]) -> dict:
    used = [r for r in rows if r.semantic is not None or not meaning]
    x = np.array([r.features(meaning) for r in used])
    y = np.array([getattr(r, label) for r in used], dtype=float)
    names = [f for f in features if meaning or f != "semantic"]
    cols = [C.FEATURES.index(f) for f in names]
    weights, intercept = logistic(x[:, cols], y, corpus_weights(used))
    return {"weights": {f: round(float(v), 4) for f, v in zip(names, weights)}, "intercept": round(intercept, 4), "rows": len(used)}


def fit(rows: list[Row]) -> dict:
    """The four fits of confidence.json from the evidence."""
    hit = [r for r in rows if r.rank <= HIT_RESULTS]
    best = [r for r in rows if r.rank == 1]
    return {
        "hit": {"meaning": fit_one(hit, "hit", True, HIT_FEATURES), "words": fit_one(hit, "hit", False, HIT_FEATURES)},
        "answer": {"meaning": fit_one(best, "answer", True, ANSWER_FEATURES), "words": fit_one(best, "answer", False, ANSWER_FEATURES)},
    }


def write_params(fits: dict, rows: list[Row]) -> None:
    corpora = {c: sum(1 for r in rows if r.corpus == c and r.rank == 1) for c in sorted({r.corpus for r in rows})}
    raw = {
        "about": "written by python bench/trust/fit.py from bench/trust/fit_data.csv.gz; see engine/search/confidence.py",
        "questions": corpora,
        **fits,
    }
    C.PARAMS_FILE.write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")


def report(rows: list[Row], fits: dict) -> str:
    """ECE and "nothing" per corpus and kind, on the evidence fitted (not held-out figures)."""
    table = C.Params.from_json(fits)
    lines = []
    for corpus in sorted({r.corpus for r in rows}):
        best = [r for r in rows if r.corpus == corpus and r.rank == 1]
        p = np.array([(table.hit_meaning if r.semantic is not None else table.hit_words).probability(r.features(True)) for r in best])
        a = np.array([(table.answer_meaning if r.semantic is not None else table.answer_words).probability(r.features(True)) for r in best])
        y = np.array([r.hit for r in best])
        bins = np.minimum((p * 10).astype(int), 9)
        ece = sum(abs(y[bins == b].mean() - p[bins == b].mean()) * (bins == b).sum() for b in range(10) if (bins == b).any()) / len(best)
        kinds = sorted({r.kind for r in best})
        shown = ", ".join(f"{k} {np.mean([x >= C.NOTHING_BELOW for x, r in zip(a, best) if r.kind == k]):.2f}" for k in kinds)
        lines.append(f"{corpus}: {len(best)} questions, first-result ECE {ece:.3f}; answered (not nothing): {shown}")
    lines.append(trade_off(rows, table))
    return "\n".join(lines)


#: The decision points the trade-off is printed at.
DECISION_POINTS = (0.15, 0.2, 0.25, 0.3, 1 / 3, 0.35, 0.4, 0.45, 0.5)


def trade_off(rows: list[Row], table: C.Params) -> str:
    """The trade-off over the decision point (the answer's confidence below
    which it is "nothing"), on the evidence fitted: per corpus and kind,
    the share answered (kinds memory holds an answer to) or answered
    "nothing" (the others); the engine's point (``NOTHING_BELOW``) marked."""
    best = [r for r in rows if r.rank == 1]
    a = [(table.answer_meaning if r.semantic is not None else table.answer_words).probability(r.features(True)) for r in best]
    kinds = sorted({(r.corpus, r.kind) for r in best})
    head = " ".join(f"{c[:6]}/{k[:9]:>9}" for c, k in kinds)
    lines = ["trade-off over the decision point (answerable kinds: share answered; the others: share answered nothing):", f"  point {head}"]
    for t in sorted({*DECISION_POINTS, C.NOTHING_BELOW}):
        cells = []
        for c, k in kinds:
            got = [p for p, r in zip(a, best) if r.corpus == c and r.kind == k]
            share = np.mean([p >= t for p in got]) if k in ANSWERABLE else np.mean([p < t for p in got])
            cells.append(f"{share:>16.3f}")
        mark = "  <- engine" if abs(t - C.NOTHING_BELOW) < 1e-9 else ""
        lines.append(f"  {t:5.3f} {' '.join(cells)}{mark}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The null


def memory_null(agent, db_path: Path) -> float | None:
    store = open_store(agent, db_path)
    try:
        return nulls_mod.null_of(store.entry_vector_sample(nulls_mod.NULL_SAMPLE))
    finally:
        store.close()


def measure_null(model: Path, trust_out: Path, locomo_out: Path, data: Path, log) -> float:
    nulls = []
    seed, specs, _ = load_manifest()
    suite = build_suite([s for s in specs if s.half == "tune"], seed)
    write_suite(suite, trust_out)
    for ws in suite:
        agent = agent_for(ws, trust_out, model)
        with MemoryIndex(agent) as idx:
            idx.sync(reason="manual")
        nulls.append(memory_null(agent, trust_out / ws.spec.id / "index.sqlite"))
        log(f"null of trust {ws.spec.id}: {nulls[-1]}")
    for sample in json.loads(data.read_text(encoding="utf-8")):
        sid = sample["sample_id"]
        ws = locomo_out / sid
        L.write_workspace(L.build_layout(sample["conversation"]), ws)
        agent = L.agent_config(ws, locomo_out / f"{sid}.sqlite", model, locomo_out / "model-cache")
        with MemoryIndex(agent) as idx:
            idx.sync(reason="manual")
        nulls.append(memory_null(agent, locomo_out / f"{sid}.sqlite"))
        log(f"null of locomo {sid}: {nulls[-1]}")
    return round(statistics.median(n for n in nulls if n is not None), 3)


def model_key(model: Path) -> str:
    """The name a model's null is recorded under: its file name up to the
    quantisation (``all-minilm-l6-v2-f16.gguf`` -> ``all-minilm-l6-v2``)."""
    stem = model.name.lower().removesuffix(".gguf")
    parts = stem.split("-")
    while parts and (parts[-1].startswith(("f16", "f32", "q")) or parts[-1] in ("bf16",)):
        parts.pop()
    return "-".join(parts) or stem


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-data", action="store_true", help="fit the committed evidence again, without searching")
    ap.add_argument("--null", action="store_true", help="measure the model's null and record it")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--trust-out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--locomo-out", type=Path, default=L.DEFAULT_OUT)
    ap.add_argument("--data", type=Path, default=L.DEFAULT_DATA, help="the LoCoMo dev split")
    args = ap.parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.null:
        nulls = json.loads(nulls_mod.NULLS_FILE.read_text(encoding="utf-8"))
        nulls[model_key(args.model)] = measure_null(args.model, args.trust_out.resolve(), args.locomo_out.resolve(), args.data, log)
        nulls_mod.NULLS_FILE.write_text(json.dumps(nulls, indent=1) + "\n", encoding="utf-8")
        print(f"null of {model_key(args.model)}: {nulls[model_key(args.model)]}")
        return 0
    if not args.from_data:
        rows = [
            *collect_trust(args.trust_out.resolve(), args.model, log),
            *collect_locomo(args.data, args.locomo_out.resolve(), args.model, log),
        ]
        log(f"{write_data(rows)} rows of evidence written to {DATA.relative_to(ROOT)}")
    rows = read_data()
    fits = fit(rows)
    write_params(fits, rows)
    print(json.dumps(fits, indent=1))
    print(report(rows, fits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
