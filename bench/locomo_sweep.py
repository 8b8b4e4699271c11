"""Parameter sweep behind memext's search defaults (bench/LOCOMO_RESULTS.md).

    python bench/locomo_sweep.py [--data PATH] [--model PATH] [--out bench/out/locomo]

Reuses the indexes that ``bench/locomo.py`` builds (run it first), fetches
each question's raw vector and BM25 candidates once per keyword-query
variant, and then re-fuses them in Python for every fusion setting, so a
whole grid costs seconds. Keyword variants (tokenizer, query building) are
built as temporary FTS5 tables on the same chunks; nothing is written to the
index files. The figures are turn_recall@6 / @10 with min_score 0 unless a
threshold is named, plus, for thresholds, the share of results kept for
questions asked of the *wrong* conversation (junk that min_score should drop).
This is an exploration tool: the defaults it points to are implemented in
the engine and measured for real by ``bench/locomo.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import (  # noqa: E402
    DEFAULT_DATA,
    DEFAULT_MODEL,
    DEFAULT_OUT,
    Question,
    agent_config,
    build_layout,
    load_questions,
)

from memext.engine import MemoryIndex  # noqa: E402
from memext.engine.store import StoreOptions  # noqa: E402
from memext.engine.store.sqlite.store import Store  # noqa: E402
from memext.engine.text import FTS_TOKENIZER, contains_all_terms, fts_document, query_terms  # noqa: E402
from memext.engine.vector_math import normalize  # noqa: E402

POOL = 200


@dataclass
class Hit:
    path: str
    start: int
    end: int


@dataclass
class Conv:
    sid: str
    questions: list[Question]
    foreign: list[str]  # questions of other conversations (no answer here)
    rows: dict[int, Hit]
    texts: dict[int, str]
    store: Store
    qvec: dict[str, np.ndarray] = field(default_factory=dict)
    vhits: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    khits: dict[tuple[str, str], list[tuple[int, float]]] = field(default_factory=dict)  # (variant, query)
    xref: dict[tuple[str, str], float] = field(default_factory=dict)  # sum of the query terms' FTS5 IDF


# -- keyword variants -----------------------------------------------------------

_UNICODE61 = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
TOKENIZERS = {"unicode61": _UNICODE61, "porter": "porter " + _UNICODE61}
assert FTS_TOKENIZER in TOKENIZERS.values(), "the engine's tokenizer should be one of the variants"


def make_fts(store: Store, name: str, tokenizer: str) -> None:
    c = store.conn
    c.execute(f"DROP TABLE IF EXISTS temp.{name}")
    c.execute(f"CREATE VIRTUAL TABLE temp.{name} USING fts5(text, content='', tokenize=\"{tokenizer}\")")
    rows = c.execute("SELECT rowid, text FROM chunks").fetchall()
    c.executemany(f"INSERT INTO temp.{name}(rowid, text) VALUES (?, ?)", [(r, fts_document(t)) for r, t in rows])


def doc_freq(store: Store, table: str, terms: list[str]) -> dict[str, int]:
    c = store.conn
    c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab USING fts5vocab(temp, {table}, row)")
    out = {}
    for t in terms:
        # the vocab holds stemmed terms for porter: ask FTS itself instead
        n = c.execute(f"SELECT count(*) FROM temp.{table} WHERE {table} MATCH ?", ('"' + t.replace('"', '""') + '"',)).fetchone()[0]
        out[t] = n
    return out


QueryBuilder = Callable[[Store, str, list[str], int], list[str]]


def q_all(store, table, terms, n):
    return terms


def q_drop_common(store, table, terms, n):
    """Drop terms found in more than half the chunks (FTS5 clamps their IDF to ~0
    anyway), unless that would drop every term."""
    df = doc_freq(store, table, terms)
    kept = [t for t in terms if df[t] * 2 <= n]
    return kept or terms


QUERY_BUILDERS: dict[str, QueryBuilder] = {"or": q_all, "or-drop-common": q_drop_common}


def keyword_hits(store: Store, table: str, terms: list[str]) -> list[tuple[int, float]]:
    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    sql = f"SELECT rowid, bm25({table}) AS r FROM temp.{table} WHERE {table} MATCH ? ORDER BY r LIMIT ?"
    return [(r, float(s)) for r, s in store.conn.execute(sql, (match, POOL)).fetchall()]


def fts5_idf(n: int, df: int) -> float:
    """FTS5's bm25 IDF, including its clamp for terms in half the rows or more."""
    idf = math.log((n - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else 1e-6


# -- loading -----------------------------------------------------------------------


def load(data: list[dict], out: Path, model: Path, kvariants: list[tuple[str, str]]) -> list[Conv]:
    convs = []
    all_q = {s["sample_id"]: [q.query for q in load_questions(s, build_layout(s["conversation"]))] for s in data}
    for sample in data:
        sid = sample["sample_id"]
        layout = build_layout(sample["conversation"])
        ws = out / sid
        idx = MemoryIndex(agent_config(ws, out / f"{sid}.sqlite", model, out / "model-cache"))
        # A store of its own on the same file: the sweep adds temp FTS tables to it.
        store = Store(idx.db_path, StoreOptions.from_settings(idx.agent.settings.store.vector))
        if store.chunk_count() == 0:
            raise SystemExit(f"{sid}: no index in {out}; run bench/locomo.py first")
        provider = idx.provider_choice.provider
        questions = load_questions(sample, layout)
        foreign = [q for other, qs in all_q.items() if other != sid for q in qs[:40]]
        rows = {r: Hit(p, a, b) for r, p, a, b in store.conn.execute("SELECT rowid, path, start_line, end_line FROM chunks")}
        texts = dict(store.conn.execute("SELECT rowid, text FROM chunks"))
        conv = Conv(sid, questions, foreign, rows, texts, store)
        cache_file = out / f"qvec-{sid}.npz"
        cached = dict(np.load(cache_file)) if cache_file.exists() else {}
        for tok_name, tok in TOKENIZERS.items():
            make_fts(store, f"fts_{tok_name}", tok)
        n = len(rows)
        for query in [q.query for q in questions] + foreign:
            if query not in cached:
                cached[query] = normalize(provider.embed_query(query))
            conv.qvec[query] = cached[query]
            conv.vhits[query] = store.vector_search(cached[query], POOL)
            terms = query_terms(query)
            for tok_name, qb_name in kvariants:
                table = f"fts_{tok_name}"
                used = QUERY_BUILDERS[qb_name](store, table, terms, n)
                conv.khits[(f"{tok_name}/{qb_name}", query)] = keyword_hits(store, table, used)
                df = doc_freq(store, table, used)
                conv.xref[(f"{tok_name}/{qb_name}", query)] = sum(fts5_idf(n, df[t]) for t in used)
        np.savez(cache_file, **{k: v for k, v in cached.items()})
        convs.append(conv)
        print(f"loaded {sid}: {n} chunks, {len(questions)} questions", file=sys.stderr)
    return convs


# -- fusion --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fusion:
    kind: str  # weighted | rrf | vector | keyword
    wv: float = 0.5
    wt: float = 0.5
    rrf_k: int = 60
    mult: int = 4
    vnorm: str = "raw"  # raw | best (v / v_best)
    # rel: x / x_best of the pool; abs: x / x_ref capped at 1, where x_ref = sum of
    # the query terms' IDF (the bm25 of an average-length chunk holding each term
    # once); max: x / max(x_best, x_ref)
    tmap: str = "rel"
    # fill: score every candidate of either pool on both sides (its real cosine
    # and bm25), instead of 0 for the side whose pool it missed
    fill: str = ""  # "", "v" (cosines only), "t" (bm25 only) or "vt"


def fuse(f: Fusion, vh: list[tuple[int, float]], kh: list[tuple[int, float]], k: int, xref: float = 0.0) -> list[tuple[int, float]]:
    pool = min(POOL, k * f.mult)
    full_v, full_k = dict(vh), dict(kh)
    vh, kh = vh[:pool], kh[:pool]
    if f.kind == "vector":
        return [(r, max(0.0, s)) for r, s in vh]
    best = max(0.0, -kh[0][1]) if kh else 0.0
    if f.tmap == "abs":
        best = xref
    elif f.tmap == "max":
        best = max(best, xref)
    t = {r: (min(1.0, max(0.0, -s) / best) if best > 0 else 1.0) for r, s in kh}
    if f.kind == "keyword":
        return [(r, t[r]) for r, _ in kh]
    total = f.wv + f.wt
    wv, wt = f.wv / total, f.wt / total
    scores: dict[int, float] = {}
    if f.kind == "rrf":
        for rank, (r, _) in enumerate(vh, 1):
            scores[r] = scores.get(r, 0.0) + wv * (f.rrf_k + 1) / (f.rrf_k + rank)
        for rank, (r, _) in enumerate(kh, 1):
            scores[r] = scores.get(r, 0.0) + wt * (f.rrf_k + 1) / (f.rrf_k + rank)
    else:
        vbest = max((s for _, s in vh), default=1.0)
        if f.fill:
            union = dict.fromkeys([r for r, _ in vh] + [r for r, _ in kh])
            if "v" in f.fill:
                vh = [(r, full_v.get(r, 0.0)) for r in union]
            if "t" in f.fill:
                kh = [(r, full_k[r]) for r in union if r in full_k]
            t = {r: (min(1.0, max(0.0, -s) / best) if best > 0 else 1.0) for r, s in kh}
        for r, s in vh:
            v = max(0.0, s)
            if f.vnorm == "best" and vbest > 0:
                v = v / vbest
            scores[r] = wv * v
        for r, _ in kh:
            scores[r] = scores.get(r, 0.0) + wt * t[r]
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))


def evaluate(convs: list[Conv], kvariant: str, f: Fusion, min_score: float = 0.0, exact_keep: bool = True) -> dict:
    rec = {6: [], 10: []}
    mrr = []
    junk_kept = []
    for conv in convs:
        for q in conv.questions:
            for k in (6, 10):
                ranked = fuse(f, conv.vhits[q.query], conv.khits[(kvariant, q.query)], k, conv.xref[(kvariant, q.query)])
                kept = _apply_min(conv, q.query, ranked, min_score, exact_keep)[:k]
                hits = [conv.rows[r] for r, _ in kept]
                covered = [t for t in q.turns if any(h.path == t[0] and h.start <= t[1] <= h.end for h in hits)]
                rec[k].append(len(covered) / len(q.turns))
                if k == 6:
                    first = next(
                        (i for i, h in enumerate(hits, 1) if any(h.path == t[0] and h.start <= t[1] <= h.end for t in q.turns)), None
                    )
                    mrr.append(1 / first if first else 0.0)
        if min_score > 0:
            for query in conv.foreign:
                ranked = fuse(f, conv.vhits[query], conv.khits[(kvariant, query)], 6, conv.xref[(kvariant, query)])
                junk_kept.append(len(_apply_min(conv, query, ranked, min_score, exact_keep)[:6]) / 6)
    out = {"r6": statistics.fmean(rec[6]), "r10": statistics.fmean(rec[10]), "mrr6": statistics.fmean(mrr)}
    if junk_kept:
        out["junk"] = statistics.fmean(junk_kept)
    return out


def _apply_min(conv: Conv, query: str, ranked, min_score: float, exact_keep: bool):
    if min_score <= 0:
        return ranked
    terms = query_terms(query) if exact_keep else []
    return [(r, s) for r, s in ranked if s >= min_score or (exact_keep and contains_all_terms(conv.texts[r], terms))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    kvariants = [(t, q) for t in TOKENIZERS for q in QUERY_BUILDERS]
    convs = load(data, args.out, args.model, kvariants)

    def show(label: str, r: dict) -> None:
        extra = f"  junk kept {r['junk']:.3f}" if "junk" in r else ""
        print(f"{label:<44} r@6 {r['r6']:.3f}  r@10 {r['r10']:.3f}  mrr@6 {r['mrr6']:.3f}{extra}", flush=True)

    engine_kv = "porter/or-drop-common"  # what the engine does
    default = Fusion("weighted", 0.5, 0.5, tmap="max", fill="v")  # the engine's default

    print("== A. keyword side: tokenizer and OR query (min_score 0) ==")
    for tok, qb in kvariants:
        kv = f"{tok}/{qb}"
        show(f"{kv} BM25 alone", evaluate(convs, kv, Fusion("keyword")))
        show(f"{kv} default fusion", evaluate(convs, kv, default))
        show(f"{kv} rrf k60 .5/.5", evaluate(convs, kv, Fusion("rrf", 0.5, 0.5)))
    show("vector alone", evaluate(convs, engine_kv, Fusion("vector")))

    print(f"== B. BM25 to 0..1 mapping ({engine_kv}, weighted .5/.5, cosines filled, min_score 0) ==")
    for tmap in ("rel", "abs", "max"):
        show(f"t={tmap}", evaluate(convs, engine_kv, Fusion("weighted", 0.5, 0.5, tmap=tmap, fill="v")))

    print(f"== C. fusion ({engine_kv}, t=max, min_score 0) ==")
    for wv in (0.7, 0.6, 0.5, 0.4, 0.3, 0.2):
        for fill in ("", "v", "vt"):
            show(
                f"weighted {wv:.1f}/{1 - wv:.1f} fill={fill or '-'}",
                evaluate(convs, engine_kv, Fusion("weighted", wv, 1 - wv, tmap="max", fill=fill)),
            )
    for wv in (0.5, 0.3):
        show(
            f"weighted {wv:.1f}/{1 - wv:.1f} v=cosine/best fill=v",
            evaluate(convs, engine_kv, Fusion("weighted", wv, 1 - wv, vnorm="best", tmap="max", fill="v")),
        )
    for rk in (1, 10, 30, 60):
        for wv in (0.5, 0.3):
            show(f"rrf k={rk} {wv:.1f}/{1 - wv:.1f}", evaluate(convs, engine_kv, Fusion("rrf", wv, 1 - wv, rrf_k=rk)))
    for mult in (2, 4, 8):
        show(
            f"default, candidate_multiplier {mult}",
            evaluate(convs, engine_kv, Fusion("weighted", 0.5, 0.5, mult=mult, tmap="max", fill="v")),
        )

    print(f"== D. min_score ({engine_kv}; junk: share of the top 6 kept for other conversations' questions) ==")
    fs = [
        ("default (weighted .5/.5)", default),
        ("weighted .4/.6", Fusion("weighted", 0.4, 0.6, tmap="max", fill="v")),
        ("weighted .5/.5 t=rel", Fusion("weighted", 0.5, 0.5, tmap="rel", fill="v")),
        ("weighted .7/.3", Fusion("weighted", 0.7, 0.3, tmap="max", fill="v")),
        ("rrf k60 .5/.5", Fusion("rrf", 0.5, 0.5)),
        ("vector alone", Fusion("vector")),
        ("BM25 alone t=max", Fusion("keyword", tmap="max")),
    ]
    for name, f in fs:
        for ms in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35):
            show(f"{name} min_score {ms:g}", evaluate(convs, engine_kv, f, ms))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
