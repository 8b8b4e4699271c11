"""How far re-ranking the engine's own candidates by its own signals can go (LoCoMo dev split).

    python bench/locomo_ceiling.py --out bench/out/locomo

Reuses an index and the cached query vectors that ``bench/locomo.py --fast
--out DIR`` left in ``DIR``, and the harness of ``bench/locomo_variants.py``:
each question's 200 best results from the engine (``fetch``), scored as the
engine would return a re-ranked list (recall@L60 through
``engine.spans.budget_spans``, turn_recall@6). For every candidate it takes
the signals memext already has or makes cheaply without another model:
fused score and rank, chunk cosine and BM25 (0..1) with their ranks, the
time factor, the best entry cosine within the candidate (entry vectors of
the index's ``entries`` table against the query vector), the best entry's
confidence, answer confidence and coverage as the search judged them, an
IDF-weighted share of the query's stems held by the best entry (the
``stems`` column, ``entry_stems`` of the query), the candidate's length in
lines, the rank within each signal and each signal's distance from the
question's best. A logistic regression (numpy, L2, Newton) learns whether
a candidate holds an evidence turn; a pairwise version (RankNet-style, on
the differences of an evidence candidate and a non-evidence one of the
same question) and one with every product of two features (a cheap
non-linear fit) beside it. Each is scored with leave-one-conversation-out
cross-validation (fit on four conversations, rank the fifth) and in-sample
(fit and rank on all five: an optimistic ceiling), next to the engine's
order and an oracle order (evidence candidates first, shortest first).

An exploration tool, like ``locomo_variants.py``: it answers whether the
signals memext has can order the candidates well enough, not what to ship.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import CATEGORIES, CATEGORY_NAMES, DEFAULT_DATA, DEFAULT_MODEL  # noqa: E402
from locomo_variants import Cand, fetch, measure  # noqa: E402

from memext.engine.memory.index_entries import entry_stems  # noqa: E402
from memext.engine.search.results import SearchResult  # noqa: E402

#: A rank given to a candidate a signal did not find at all (its pool is 200 deep at most).
UNRANKED = 400
#: Features per candidate, in the order :func:`features` makes them.
FEATURES = (
    "log engine position",
    "fused score",
    "fused score / best",
    "log fused rank",
    "chunk cosine",
    "chunk cosine - best",
    "log cosine rank",
    "bm25 0..1",
    "log bm25 rank",
    "keyword hit",
    "time factor > 1",
    "best entry cosine",
    "entry cosine - best",
    "log entry cosine rank",
    "confidence",
    "answer confidence",
    "log confidence rank",
    "coverage (judge)",
    "stem coverage (idf)",
    "stem coverage - best",
    "log stem coverage rank",
    "exact",
    "log lines",
    "same file in engine top 20",
)


class Kept(NamedTuple):
    """What a ranker needs of one result of the engine (from its ``explain``)."""

    path: str
    start: int
    end: int
    score: float
    v_sim: float | None
    v_rank: int | None
    t_score: float | None
    t_rank: int | None
    time: float
    confidence: float
    answer: float
    coverage: float
    exact: float


def keep(r: SearchResult) -> Kept:
    e = r.explain or {}
    ev = e.get("evidence") or {}
    return Kept(
        r.path,
        r.start_line,
        r.end_line,
        r.score,
        e["vector"]["similarity"],
        e["vector"]["rank"],
        e["keyword"]["score"],
        e["keyword"]["rank"],
        e.get("time_boost", 1.0),
        r.confidence,
        r.answer_confidence,
        float(ev.get("coverage") or 0.0),
        float(ev.get("exact") or 0.0),
    )


class Entries(NamedTuple):
    """The entries of one index, by file: lines, unit vectors, stems."""

    by_path: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, list[set[str]]]]
    doc_freq: Counter
    total: int


def load_entries(db: Path) -> Entries:
    rows: dict[str, list[tuple[int, int, bytes, str]]] = {}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        for path, start, end, stems, vector in con.execute("SELECT path, start_line, end_line, stems, vector FROM entries"):
            rows.setdefault(path, []).append((start, end, vector, stems))
    by_path = {}
    df: Counter = Counter()
    total = 0
    for path, items in rows.items():
        items.sort()
        vecs = np.stack([np.frombuffer(v, dtype=np.float16).astype(np.float32) for _, _, v, _ in items])
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        stems = [set(s.split()) for _, _, _, s in items]
        for s in stems:
            df.update(s)
        total += len(items)
        by_path[path] = (np.array([a for a, _, _, _ in items]), np.array([b for _, b, _, _ in items]), vecs, stems)
    return Entries(by_path, df, total)


def _rank(values: np.ndarray) -> np.ndarray:
    """1 for the highest value, ties by position."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def features(item: dict, entries: Entries) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate of one question."""
    kept: list[Kept] = item["kept"]
    q = item["qvec"] / max(float(np.linalg.norm(item["qvec"])), 1e-12)
    qstems = set(entry_stems([item["q"].query])[0].split())
    idf = {t: math.log(1 + (entries.total - entries.doc_freq[t] + 0.5) / (entries.doc_freq[t] + 0.5)) for t in qstems}
    whole = sum(idf.values()) or 1.0
    ecos, scov = [], []
    for k in kept:
        starts, ends, vecs, stems = entries.by_path.get(k.path, (np.zeros(0), np.zeros(0), np.zeros((0, 1)), []))
        inside = np.nonzero((starts <= k.end) & (ends >= k.start))[0]
        if len(inside):
            ecos.append(float((vecs[inside] @ q).max()))
            scov.append(max(sum(w for t, w in idf.items() if t in stems[i]) for i in inside) / whole)
        else:
            ecos.append(k.v_sim or 0.0)
            scov.append(0.0)
    n = len(kept)
    score = np.array([k.score for k in kept])
    vsim = np.array([k.v_sim if k.v_sim is not None else 0.0 for k in kept])
    vrank = np.array([k.v_rank if k.v_rank is not None else UNRANKED for k in kept], dtype=float)
    tscore = np.array([k.t_score if k.t_score is not None else 0.0 for k in kept])
    trank = np.array([k.t_rank if k.t_rank is not None else UNRANKED for k in kept], dtype=float)
    conf = np.array([k.confidence for k in kept])
    e, c = np.array(ecos), np.array(scov)
    top_files = Counter(k.path for k in kept[:20])
    return np.column_stack(
        [
            np.log1p(np.arange(n)),
            score,
            score / max(score.max(), 1e-9),
            np.log(_rank(score)),
            vsim,
            vsim - vsim.max(),
            np.log(vrank),
            tscore,
            np.log(trank),
            [k.t_rank is not None for k in kept],
            [k.time > 1.0 for k in kept],
            e,
            e - e.max(),
            np.log(_rank(e)),
            conf,
            [k.answer for k in kept],
            np.log(_rank(conf)),
            [k.coverage for k in kept],
            c,
            c - c.max(),
            np.log(_rank(c)),
            [k.exact for k in kept],
            np.log([k.end - k.start + 1 for k in kept]),
            [top_files[k.path] for k in kept],
        ]
    ).astype(np.float64)


def labels(item: dict) -> np.ndarray:
    """1 for a candidate whose lines hold an evidence turn of the question."""
    turns = item["q"].turns
    return np.array([any(p == k.path and k.start <= line <= k.end for p, line in turns) for k in item["kept"]], dtype=float)


# ---------------------------------------------------------------------------
# Fits (numpy: no learning library is a dependency of memext)


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, intercept: bool = True, iters: int = 25) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method; returns the
    weights (the intercept last when ``intercept``)."""
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    if intercept:
        reg[-1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -50, 50)))
        grad = x.T @ (p - y) + reg * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


class Scaler(NamedTuple):
    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> "Scaler":
        return cls(x.mean(0), np.maximum(x.std(0), 1e-9))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std


def products(x: np.ndarray) -> np.ndarray:
    """The features and every product of two of them (squares included)."""
    i, j = np.triu_indices(x.shape[1])
    return np.column_stack([x, x[:, i] * x[:, j]])


#: A ranker made from training questions: returns each candidate's score for one question's features.
Fitter = Callable[[list[np.ndarray], list[np.ndarray]], Callable[[np.ndarray], np.ndarray]]


def pointwise(expand: bool = False, l2: float = 1.0) -> Fitter:
    def fit(xs: list[np.ndarray], ys: list[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        scale = Scaler.of(np.concatenate(xs))
        prep = (lambda x: products(scale(x))) if expand else scale
        w = logistic(prep(np.concatenate(xs)), np.concatenate(ys), l2)
        return lambda x: prep(x) @ w[:-1] + w[-1]

    return fit


def pairwise(negatives: int = 60, l2: float = 1.0, seed: int = 0) -> Fitter:
    """RankNet-style: each evidence candidate against up to ``negatives``
    non-evidence ones of its question (the engine's best first, then a
    sample of the rest), both orders, logistic on the difference."""

    def fit(xs: list[np.ndarray], ys: list[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        rng = np.random.default_rng(seed)
        scale = Scaler.of(np.concatenate(xs))
        diffs = []
        for x, y in zip(xs, ys):
            z = scale(x)
            pos, neg = np.nonzero(y > 0)[0], np.nonzero(y == 0)[0]
            if not len(pos) or not len(neg):
                continue
            half = negatives // 2
            picked = (
                np.concatenate([neg[:half], rng.choice(neg[half:], min(len(neg[half:]), negatives - half), replace=False)])
                if len(neg) > half
                else neg
            )
            d = (z[pos][:, None, :] - z[picked][None, :, :]).reshape(-1, z.shape[1])
            diffs.append(d)
        d = np.concatenate(diffs)
        w = logistic(np.concatenate([d, -d]), np.concatenate([np.ones(len(d)), np.zeros(len(d))]), l2, intercept=False)
        return lambda x: scale(x) @ w

    return fit


class Tree(NamedTuple):
    """A regression tree on binned features: ``nodes[i]`` is (feature, bin
    threshold, left, right) for a split, or (-1, 0, 0, 0) for a leaf whose
    value is ``values[i]``."""

    nodes: list[tuple[int, int, int, int]]
    values: list[float]

    def predict(self, xb: np.ndarray) -> np.ndarray:
        at = np.zeros(len(xb), dtype=int)
        for i, (f, t, left, right) in enumerate(self.nodes):
            if f < 0:
                continue
            here = at == i
            at[here] = np.where(xb[here, f] <= t, left, right)
        return np.asarray(self.values)[at]


def boosted(trees: int = 150, depth: int = 3, rate: float = 0.1, bins: int = 32, l2: float = 1.0, min_hess: float = 20.0) -> Fitter:
    """Gradient-boosted trees on the log loss (second-order leaves, features
    cut at their training quantiles): a small non-linear fit in numpy."""

    def fit(xs: list[np.ndarray], ys: list[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        x, y = np.concatenate(xs), np.concatenate(ys)
        edges = [np.unique(np.quantile(x[:, f], np.linspace(0, 1, bins + 1)[1:-1])) for f in range(x.shape[1])]

        def binned(z: np.ndarray) -> np.ndarray:
            return np.column_stack([np.searchsorted(e, z[:, f], side="right") for f, e in enumerate(edges)])

        xb = binned(x)
        n_feat = xb.shape[1]
        offsets = np.arange(n_feat) * bins
        base = math.log(max(y.mean(), 1e-9) / max(1 - y.mean(), 1e-9))
        raw = np.full(len(y), base)
        forest: list[Tree] = []
        for _ in range(trees):
            p = 1.0 / (1.0 + np.exp(-raw))
            g, h = p - y, p * (1 - p)
            nodes: list[tuple[int, int, int, int]] = []
            values: list[float] = []

            def grow(idx: np.ndarray, level: int) -> int:
                me = len(nodes)
                nodes.append((-1, 0, 0, 0))
                gs, hs = g[idx].sum(), h[idx].sum()
                values.append(-rate * gs / (hs + l2))
                if level == depth or hs < 2 * min_hess:
                    return me
                flat = (xb[idx] + offsets).ravel()
                gh = np.bincount(flat, np.repeat(g[idx], n_feat), n_feat * bins).reshape(n_feat, bins).cumsum(1)
                hh = np.bincount(flat, np.repeat(h[idx], n_feat), n_feat * bins).reshape(n_feat, bins).cumsum(1)
                gain = gh**2 / (hh + l2) + (gs - gh) ** 2 / (hs - hh + l2) - gs**2 / (hs + l2)
                gain[(hh < min_hess) | (hs - hh < min_hess)] = -np.inf
                f, t = np.unravel_index(int(np.argmax(gain)), gain.shape)
                if not gain[f, t] > 0:
                    return me
                go_left = xb[idx, f] <= t
                left = grow(idx[go_left], level + 1)
                right = grow(idx[~go_left], level + 1)
                nodes[me] = (int(f), int(t), left, right)
                return me

            grow(np.arange(len(y)), 0)
            tree = Tree(nodes, values)
            forest.append(tree)
            raw += tree.predict(xb)

        def predict(z: np.ndarray) -> np.ndarray:
            zb = binned(z)
            return base + sum(t.predict(zb) for t in forest)

        return predict

    return fit


# ---------------------------------------------------------------------------
# Orders and scores


def order_by(item: dict, key: np.ndarray) -> list[Cand]:
    """The question's candidates, highest ``key`` first (the engine's order breaking ties)."""
    return [item["cands"][i] for i in np.lexsort((np.arange(len(key)), -key))]


def row(label: str, questions: list[dict], keys: list[np.ndarray] | None) -> str:
    """One table row: ``keys[i]`` orders question i (None: the engine's order)."""
    index = {id(item): i for i, item in enumerate(questions)}
    if keys is None:
        at60, at6, lines6 = measure(questions, lambda item, cands: cands)
    else:
        at60, at6, lines6 = measure(questions, lambda item, cands: order_by(item, keys[index[id(item)]]))

    def mean(rows: list[tuple[int, float]], cat: int | None = None) -> str:
        return f"{statistics.fmean(x for c, x in rows if cat is None or c == cat):.3f}"

    cells = [mean(at60)] + [mean(at60, c) for c in CATEGORIES] + [mean(at6), f"{statistics.fmean(lines6):.0f}"]
    return f"| {label} | " + " | ".join(cells) + " |"


def cross_validated(fitter: Fitter, xs: list[np.ndarray], ys: list[np.ndarray], sids: list[str]) -> list[np.ndarray]:
    """Each question's scores from a fit on the other conversations."""
    scores: list[np.ndarray] = [np.zeros(0)] * len(xs)
    for held in sorted(set(sids)):
        train = [i for i, s in enumerate(sids) if s != held]
        f = fitter([xs[i] for i in train], [ys[i] for i in train])
        for i, s in enumerate(sids):
            if s == held:
                scores[i] = f(xs[i])
    return scores


def in_sample(fitter: Fitter, xs: list[np.ndarray], ys: list[np.ndarray]) -> list[np.ndarray]:
    f = fitter(xs, ys)
    return [f(x) for x in xs]


def per_line(logits: list[np.ndarray], xs: list[np.ndarray]) -> list[np.ndarray]:
    """Log-odds turned into the log of the probability per line read."""
    lines = FEATURES.index("log lines")
    return [-np.logaddexp(0.0, -z) - x[:, lines] for z, x in zip(logits, xs)]


def depth_table(questions: list[dict], xs: list[np.ndarray]) -> str:
    """Share of evidence turns whose best fused rank is within each depth, per category."""
    depths = (1, 3, 6, 10, 20, 50, 200)
    found: dict[int, list[int]] = {c: [] for c in CATEGORIES}
    for item, x in zip(questions, xs):
        ranks = np.exp(x[:, FEATURES.index("log fused rank")]).round()
        for path, line in item["q"].turns:
            held = [r for k, r in zip(item["kept"], ranks) if k.path == path and k.start <= line <= k.end]
            found[item["q"].category].append(int(min(held)) if held else 10**6)
    head = "| category | turns | " + " | ".join(f"rank ≤ {d}" for d in depths) + " |"
    out = [head, "|" + "---|" * (len(depths) + 2)]
    for c in (*CATEGORIES, None):
        ranks = [r for k in CATEGORIES if c in (None, k) for r in found[k]]
        name = CATEGORY_NAMES[c] if c is not None else "all"
        out.append(f"| {name} | {len(ranks)} | " + " | ".join(f"{sum(r <= d for r in ranks) / len(ranks):.3f}" for d in depths) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, required=True, help="a folder bench/locomo.py --fast has filled")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    questions = fetch(out, data, args.model, keep=keep)
    entries = {s["sample_id"]: load_entries(out / f"{s['sample_id']}.sqlite") for s in data}
    xs = [features(item, entries[item["sid"]]) for item in questions]
    ys = [labels(item) for item in questions]
    sids = [item["sid"] for item in questions]
    cands = sum(len(y) for y in ys)
    print(
        f"{len(questions)} questions, {cands} candidates ({cands / len(questions):.0f} a question), "
        f"{int(sum(y.sum() for y in ys))} hold an evidence turn; "
        f"{sum(1 for y in ys if y.sum() == 0)} questions with none among their candidates\n"
    )
    head = ["order", "recall@L60"] + [f"{CATEGORY_NAMES[c]} @L60" for c in CATEGORIES] + ["recall@6", "lines@6"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    print(row("engine's list of 200 (by confidence: locomo_variants.py's baseline)", questions, None))
    lines = [x[:, FEATURES.index("log lines")] for x in xs]
    print(row("oracle (evidence first, shortest first)", questions, [y * 1000 - lx for y, lx in zip(ys, lines)]))
    print(row("fused score (the order the engine's budget takes)", questions, [-x[:, FEATURES.index("log fused rank")] for x in xs]))
    # (name, fitter, whether its scores are log-odds, so that a probability per line can be made of them)
    fitters: list[tuple[str, Fitter, bool]] = [
        ("logistic", pointwise(), True),
        ("pairwise logistic", pairwise(), False),
        ("logistic, feature products", pointwise(expand=True, l2=10.0), True),
        ("boosted trees", boosted(), True),
    ]
    for name, fitter, calibrated in fitters:
        cv, ins = cross_validated(fitter, xs, ys, sids), in_sample(fitter, xs, ys)
        print(row(f"{name}: cross-validated", questions, cv))
        print(row(f"{name}: in-sample", questions, ins))
        if calibrated:
            print(row(f"{name}, p per line: cross-validated", questions, per_line(cv, xs)))
            print(row(f"{name}, p per line: in-sample", questions, per_line(ins, xs)))
    print("\nWhere the evidence turns sit in the fused order (the best fused rank of a candidate holding the turn):\n")
    print(depth_table(questions, xs))
    scale = Scaler.of(np.concatenate(xs))
    w = logistic(scale(np.concatenate(xs)), np.concatenate(ys))
    print("\nIn-sample logistic weights (standardised features), largest first:\n")
    for i in np.argsort(-np.abs(w[:-1])):
        print(f"  {w[i]:+.3f}  {FEATURES[i]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
