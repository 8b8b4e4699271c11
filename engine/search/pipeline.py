"""Hybrid search: vector KNN + BM25, fused into one 0..1 score (DESIGN.md §7).

Both sides draw a candidate pool of ``min(200, max_results *
candidate_multiplier)``. BM25 comes from FTS5, whose ``bm25()`` is negative
(more negative is better); we map relevance ``x = -bm25`` to
``x / max(x_best, x_ref)`` (the reference mapped every hit to 1.0):

- ``x_ref`` is the bm25 an average-length chunk would get for holding each
  query term once, i.e. the sum of the terms' IDF as FTS5 computes it. A
  chunk that matches only a few minor words of the question scores low in
  any workspace, so ``min_score`` can drop junk on the keyword side too;
- ``x_best``, the pool's best, takes over when it is higher, so the order
  and proportions of strong hits are kept and no score exceeds 1;
- in indexes of under 20 chunks FTS5's IDF is too coarse for ``x_ref`` (a
  term in half the chunks weighs nothing), so there the best hit is 1.0.

The mapping is monotone (a constant per query), so it never changes the
keyword ranking. Fusion is ``weighted`` (``vector_weight * v + text_weight * t``,
``v`` the cosine similarity, read from the stored vector for keyword
candidates outside the vector pool) or ``rrf`` (reciprocal rank fusion, scaled so a
first place on both sides is 1.0; its scores say little about relevance, so
``min_score`` hardly filters it). A chunk that contains every query term is
an exact keyword hit and is never dropped by ``min_score``. The defaults
(weighted 0.5/0.5, min_score 0.1, Porter stemming) were chosen on the
LoCoMo dev split: see bench/LOCOMO_RESULTS.md.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import islice
from typing import TYPE_CHECKING, Collection, Iterator, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from ..settings import QuerySettings
from ..store import ChunkRow, IndexStore
from ..text import contains_all_terms, content_terms, find_terms, query_terms
from .citing import Citer, TermsFound
from .confidence import CALIBRATION_DEPTH, Calibration, Judge, make_judge
from .decay import decay_factor
from .excerpt import make_excerpt, make_snippet
from .keywords import MAX_POOL, MAX_POSTINGS, MIN_CHUNKS_FOR_IDF, keyword_pool, keyword_terms  # noqa: F401  (imported from here)
from .lines import LineScorer
from .mmr import mmr_order
from .options import SearchOptions
from .results import SearchResult
from .spans import Span, budget_spans, merged_text
from .stems import with_stems
from .time_cues import find_time_cues
from .time_ranking import chunk_dates, in_cues
from .updates import newer_first


@dataclass
class _Candidate:
    rowid: int
    v_rank: int | None = None
    v_sim: float | None = None
    t_rank: int | None = None
    t_bm25: float | None = None
    t_score: float | None = None
    score: float = 0.0
    parts: dict = field(default_factory=dict)
    exact: bool = False
    decay: float = 1.0
    time: float = 1.0  # the time-cue boost applied
    no_vector: bool = False
    #: Share of the query's terms the chunk holds (scales the keyword
    #: score in an index too small for BM25's reference).
    cover: float = 1.0


def bm25_to_score(bm25: float, best_bm25: float, reference: float = 0.0) -> float:
    """Map FTS5's negative bm25 to 0..1: ``x / max(x_best, reference)``.

    Better -> higher. ``reference`` is :func:`bm25_reference` of the query;
    with 0 the pool's best hit scores 1.0.
    """
    x = max(0.0, -bm25)
    scale = max(0.0, -best_bm25, reference)
    return 1.0 if scale <= 0 else min(1.0, x / scale)


def fts5_idf(total: int, doc_count: int) -> float:
    """The IDF FTS5's bm25() gives a term found in ``doc_count`` of ``total``
    rows (clamped to 1e-6 for terms in half the rows or more)."""
    idf = math.log((total - doc_count + 0.5) / (doc_count + 0.5))
    return idf if idf > 0 else 1e-6


def bm25_reference(terms: Sequence[str], doc_counts: dict[str, int], total: int) -> float:
    """The bm25 relevance of an average-length chunk that holds each term once.

    With tf = 1 and a chunk of average length, bm25's term-frequency factor
    is exactly 1, so this is the sum of the terms' IDF.
    """
    return sum(fts5_idf(total, doc_counts.get(t, 0)) for t in terms)


def pool_size(max_results: int, multiplier: int) -> int:
    return max(1, min(MAX_POOL, max_results * multiplier))


def run_search(
    store: IndexStore,
    query: str,
    query_vector: np.ndarray | None,
    settings: QuerySettings,
    options: SearchOptions,
    *,
    paths: Collection[str] | None = None,
    lines: LineScorer | None = None,
) -> tuple[list[SearchResult], str]:
    """Search one store; returns (results, mode).

    ``options`` (:class:`SearchOptions`) as the index passes them down,
    ``max_results`` and ``min_score`` defaulting to ``settings``'. Its
    ``sources`` and ``after``/``before`` were resolved already: ``sources``
    filters, ``paths`` searches only those files (the stores filter before
    they rank).

    With ``max_lines``, returns as many results (at most ``max_results``) as
    fit in that many lines, hits of one file that overlap or touch merged
    into one span (:mod:`.spans`). ``snippets=False`` leaves snippets
    empty and excerpts out, for callers that only rank (benchmarks).
    Time cues in the query ("last week") are read relative to ``now``
    (default: the current time).
    Results carry their confidence (:mod:`.confidence`); the keyword side
    searches content terms only. ``lines`` (:mod:`.lines`) marks the line
    that carries a hit found by meaning alone, and in an index of fewer
    than ``CALIBRATION_DEPTH`` chunks ranks and judges each chunk by its
    closest line.
    """
    options = options.with_defaults(settings)
    assert options.max_results is not None and options.min_score is not None
    max_results, min_score, sources, explain = options.max_results, options.min_score, options.sources, options.explain
    today, max_lines, snippets, now = options.today, options.max_lines, options.snippets, options.now
    h = settings.hybrid
    cues = find_time_cues(query, now or datetime.now()) if settings.time_boost > 0 else []
    # A boost can only lift what the pools hold: a query naming a time
    # draws full pools, so chunks of that time are among the candidates.
    pool = MAX_POOL if cues else pool_size(max_results, h.candidate_multiplier)
    asked = query_terms(query)
    terms = content_terms(asked)
    doc_counts = store.term_doc_counts(asked)
    total = store.chunk_count()
    sent = keyword_terms(asked, doc_counts, total) if terms else []
    keyword_hits = keyword_pool(store, sent, [t for t in sent if t in terms], pool, sources, paths)
    drawn = store.vector_search(query_vector, max(pool, CALIBRATION_DEPTH), sources, paths) if query_vector is not None else []
    vector_hits = drawn[:pool]
    calibration = Calibration.of_pool(drawn)
    if lines is not None and 0 < len(drawn) < CALIBRATION_DEPTH:
        # Too few chunks to calibrate against: every chunk is in the pool,
        # judged by its closest line against the model's line null.
        vector_hits = drawn = _by_lines(store, drawn, lines)
        calibration = Calibration(lines.null)
    spoken = cues if settings.time_boost > 0 else find_time_cues(query, now or datetime.now())
    time_words = {w for cue in spoken for w in query_terms(cue.text)}
    judge = make_judge(query, {t: doc_counts[t] for t in terms}, total, calibration, h.weights, time_words)
    use_vector = query_vector is not None and store.dims is not None
    use_keyword = store.keyword_search_available and (h.enabled or not use_vector)
    if use_vector and not h.enabled:
        keyword_hits = []
    mode = "hybrid" if use_vector and use_keyword else ("vector" if use_vector else "keyword")

    cands: dict[int, _Candidate] = {}
    for rank, (rowid, sim) in enumerate(vector_hits, start=1):
        cands[rowid] = _Candidate(rowid, v_rank=rank, v_sim=sim)
    for rank, (rowid, bm25) in enumerate(keyword_hits, start=1):
        c = cands.setdefault(rowid, _Candidate(rowid))
        c.t_rank, c.t_bm25 = rank, bm25
    if not cands:
        return [], mode

    best_bm25 = keyword_hits[0][1] if keyword_hits else 0.0
    found = TermsFound(terms)
    # Below MIN_CHUNKS_FOR_IDF, FTS5's IDF is too coarse to measure a query
    # against (with 2 chunks a term in one of them weighs 0): scores are
    # relative to the best hit, times the share of the query's terms (by
    # rarity) a hit holds, so a hit on one word of three is no full match.
    reference = bm25_reference(sent, doc_counts, total) if keyword_hits and total >= MIN_CHUNKS_FOR_IDF else 0.0
    if keyword_hits and total < MIN_CHUNKS_FOR_IDF:
        held = store.chunks(r for r, _ in keyword_hits)
        for rowid, row in held.items():
            cands[rowid].cover = judge.coverage(found(row))
    if mode == "hybrid" and query_vector is not None:  # hybrid always has one
        _fill_similarities(store, cands, query_vector)
    _fuse(cands.values(), mode, h, best_bm25, reference)
    budget = max_lines is not None or settings.merge_spans
    # The hits a search likely reaches: a budget asks for one past the last
    # it takes (to see that it would start a spare span), and a merge or a
    # hit below min_score costs one more.
    likely = max_results + 2 if budget else max_results
    if cues or explain or h.temporal_decay.enabled or h.mmr.enabled:
        # Scores depend on the chunks' paths or texts, or every candidate is shown.
        rows = store.chunks(cands)
        for c in cands.values():
            row_or_none = rows.get(c.rowid)
            if row_or_none is None:
                continue
            row = row_or_none
            if cues and in_cues(chunk_dates(row.path, row.text, row.start_line), cues):
                c.time = 1 + settings.time_boost
                c.score *= c.time
            # Only needed to rescue a keyword hit from min_score (or to explain).
            if c.t_rank is not None and (explain or c.score * c.decay < min_score or h.temporal_decay.enabled):
                c.exact = contains_all_terms(row.text, terms)
            if h.temporal_decay.enabled:
                c.decay = decay_factor(row.path, h.temporal_decay.half_life_days, today or date.today())
                c.score *= c.decay

        ranked = sorted((c for c in cands.values() if c.rowid in rows), key=lambda c: (-c.score, c.rowid))
        if h.mmr.enabled:
            ranked = mmr_order(store, ranked, rows, h.mmr.lambda_, max_results * 2)
        stream: Iterator[_Candidate] = (c for c in ranked if c.score >= min_score or c.exact)
    else:
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.rowid))
        rows = {}
        stream = _passing(store, ranked, terms, min_score, rows, likely)
    # IDF-like: rare terms say more about where the snippet should start
    # and which line matched best.
    weights = {t: math.log(1 + max(1, total) / max(1, n)) for t, n in doc_counts.items()}
    cite = Citer(store, sent, [c.rowid for c in ranked[:likely]], found)
    if budget:
        passed: list[_Candidate] = []
        cited: list[tuple[int, int, str]] = []

        def hits() -> Iterator[tuple[str, int, int]]:
            # Read and cited as the budget asks: six results rarely need
            # more than the first few hits.
            for c in stream:
                passed.append(c)
                cited.append(cite(rows[c.rowid], keyword_hit=c.t_rank is not None))
                yield rows[c.rowid].path, cited[-1][0], cited[-1][1]

        spans = budget_spans(hits(), max_lines if max_lines is not None else sys.maxsize, max_results)
        span_results = [
            _span_result(span, passed, cited, rows, found, weights, mode, h.fusion, explain, snippets, judge, lines) for span in spans
        ]
        ordered, rowids = _confident_first(span_results, [passed[span.members[0]].rowid for span in spans])
        return newer_first(cues, ordered, found, rows, rowids), mode
    shown = list(islice(stream, max_results))
    results = [
        _result(
            rows[c.rowid],
            cite(rows[c.rowid], keyword_hit=c.t_rank is not None),
            c,
            found,
            weights,
            mode,
            h.fusion,
            explain,
            snippets,
            judge,
            lines,
        )
        for c in shown
    ]
    ordered, rowids = _confident_first(results, [c.rowid for c in shown])
    return newer_first(cues, ordered, found, rows, rowids), mode


def _passing(
    store: IndexStore, ranked: list[_Candidate], terms: list[str], min_score: float, rows: dict[int, ChunkRow], first: int
) -> Iterator[_Candidate]:
    """The candidates of ``ranked`` that pass ``min_score`` (or are exact
    keyword hits), best first, with their rows read into ``rows`` as they
    are reached: ``first`` rows at once, then twice as many each time, so a
    search that needs six results reads little more than six chunks. A
    keyword hit below ``min_score`` passes only when it holds every term; a
    candidate whose chunk is gone (deleted since the pools were drawn) is
    skipped."""
    could = [c for c in ranked if c.score >= min_score or c.t_rank is not None]
    at, size = 0, max(1, first)
    while at < len(could):
        batch = could[at : at + size]
        at, size = at + len(batch), size * 2
        rows.update(store.chunks(c.rowid for c in batch))
        for c in batch:
            row = rows.get(c.rowid)
            if row is None:
                continue
            if c.score < min_score:  # a keyword hit: only an exact one passes
                c.exact = contains_all_terms(row.text, terms)
                if not c.exact:
                    continue
            yield c


def _span_result(
    span: Span,
    passed: list[_Candidate],
    cited: list[tuple[int, int, str]],
    rows: dict[int, ChunkRow],
    found_in: TermsFound,
    weights: dict[str, float],
    mode: str,
    method: str,
    explain: bool,
    snippets: bool,
    judge: Judge,
    lines: LineScorer | None = None,
) -> SearchResult:
    """The result for one span of the budget: its best hit, widened to the span
    (``cited[i]`` is the cited lines of ``passed[i]``)."""
    best = passed[span.members[0]]
    terms = found_in.terms
    merged = len(span.members) > 1
    # A merged span's snippet and excerpt come from the merged text below,
    # so the best hit's own are not made.
    result = _result(
        rows[best.rowid], cited[span.members[0]], best, found_in, weights, mode, method, explain, snippets and not merged, judge, lines
    )
    if not merged:
        return result
    members = [rows[passed[i].rowid] for i in span.members]
    result.start_line, result.end_line = span.start_line, span.end_line
    if snippets:
        whole = merged_text([(r.start_line, r.end_line, r.text) for r in members])
        shown = merged_text([cited[i] for i in span.members])
        found = with_stems(whole, terms, find_terms(whole, terms))
        result.snippet = make_snippet(whole, terms, weights=weights, found=found)
        in_shown = found if shown == whole else with_stems(shown, terms, find_terms(shown, terms))
        result.excerpt = make_excerpt(
            shown, span.start_line, terms, weights, found=in_shown, meaning_line=_meaning_line(shown, in_shown, judge, lines)
        )
    if result.explain is not None:
        result.explain["merged"] = [f"{r.path}:{r.start_line}-{r.end_line}" for r in members]
    return result


def _fill_similarities(store: IndexStore, cands: dict[int, "_Candidate"], query_vector: np.ndarray) -> None:
    """Give keyword candidates outside the vector pool their real cosine.

    Otherwise a chunk's fused score would depend on whether it happened to
    make the other side's pool (it would count as similarity 0): reading
    the few stored vectors is cheap, and it was worth +1.2 points of LoCoMo
    turn_recall@6 with weighted fusion. Chunks without a vector (indexed
    while the provider was down) can only be judged by keywords: they are
    scored as keyword-only.
    """
    import numpy as np

    unranked = [r for r, c in cands.items() if c.v_rank is None]
    if not unranked:
        return
    vectors = store.chunk_vectors(unranked)
    q = np.asarray(query_vector, dtype=np.float32)
    for r in unranked:
        vec = vectors.get(r)
        if vec is None:
            cands[r].no_vector = True
        elif len(vec) == len(q):
            cands[r].v_sim = float(np.dot(vec, q))


def _fuse(cands, mode: str, h, best_bm25: float, reference: float) -> None:
    wv, wt = h.weights
    for c in cands:
        v = min(1.0, max(0.0, c.v_sim)) if c.v_sim is not None else 0.0
        t = bm25_to_score(c.t_bm25, best_bm25, reference) * c.cover if c.t_bm25 is not None else 0.0
        c.t_score = t
        if mode == "keyword" or c.no_vector:
            if h.fusion == "rrf" and mode == "hybrid":
                t = (h.rrf_k + 1) / (h.rrf_k + c.t_rank)
            c.score, c.parts = t, {"text": t}
        elif mode == "vector":
            c.score, c.parts = v, {"vector": v}
        elif h.fusion == "rrf":
            k = h.rrf_k
            rv = wv * (k + 1) / (k + c.v_rank) if c.v_rank else 0.0
            rt = wt * (k + 1) / (k + c.t_rank) if c.t_rank else 0.0
            c.score, c.parts = rv + rt, {"vector": rv, "text": rt}
        else:
            c.score, c.parts = wv * v + wt * t, {"vector": wv * v, "text": wt * t}


def _result(
    row: ChunkRow,
    cited: tuple[int, int, str],
    c: _Candidate,
    found_in: TermsFound,
    weights: dict[str, float],
    mode: str,
    method: str,
    explain: bool,
    snippets: bool,
    judge: Judge,
    lines: LineScorer | None = None,
) -> SearchResult:
    """The result for one chunk, citing ``cited`` (its lines without the
    headings that open it: :func:`engine.spans.cited_lines`). The excerpt
    shows the cited lines; the snippet is drawn from the whole chunk, so a
    reader of the search answer still sees the section's heading."""
    start, end, text = cited
    info = None
    if explain:
        info = {
            "mode": mode,
            "vector": {"rank": c.v_rank, "similarity": c.v_sim},
            "keyword": {
                "rank": c.t_rank,
                "bm25": c.t_bm25,
                "score": c.t_score,
            },
            "fusion": {"method": "none" if mode != "hybrid" else method, **c.parts},
            "decay": c.decay,
            "exact_match": c.exact,
        }
        if c.time != 1.0:
            info["time_boost"] = c.time
    evidence = judge.hit(c.v_sim, c.t_score, found_in(row), row.text, has_vector=mode != "keyword" and not c.no_vector)
    confidence = judge.confidence(evidence.value)
    if info is not None:
        info["evidence"] = evidence._asdict()
    days = chunk_dates(row.path, row.text, row.start_line)
    terms = found_in.terms
    found = found_in(row) if snippets else {}
    excerpt = None
    if snippets:
        in_text = found_in.in_lines(row, start - row.start_line, text)
        excerpt = make_excerpt(text, start, terms, weights, found=in_text, meaning_line=_meaning_line(text, in_text, judge, lines))
    return SearchResult(
        path=row.path,
        start_line=start,
        end_line=end,
        score=round(c.score, 6),
        snippet=make_snippet(row.text, terms, weights=weights, found=found) if snippets else "",
        source=row.source,
        explain=info,
        excerpt=excerpt,
        confidence=confidence,
        confident=confidence >= 0.5,
        date=max(days).isoformat() if days else None,
    )


def _confident_first(results: list[SearchResult], rowids: list[int]) -> tuple[list[SearchResult], list[int]]:
    """The results the search is confident of before the weak ones, each
    group in rank order (``rowids``: each result's chunk, reordered alike).
    The set shown is unchanged; a weak hit that outscores a confident one
    (a common word of the query in a long note) no longer leads the answer."""
    order = sorted(range(len(results)), key=lambda i: not results[i].confident)
    return [results[i] for i in order], [rowids[i] for i in order]


def _by_lines(store: IndexStore, drawn: list[tuple[int, float]], lines: LineScorer) -> list[tuple[int, float]]:
    """The vector pool of a small index with each chunk's cosine raised to
    that of its closest line (a note's lines are separate facts; the
    chunk's vector averages them), best first."""
    rows = store.chunks(r for r, _ in drawn)
    out = []
    for rowid, sim in drawn:
        row = rows.get(rowid)
        best = lines.best(row.text.split("\n")) if row is not None else None
        out.append((rowid, max(sim, best[1]) if best else sim))
    return sorted(out, key=lambda h: (-h[1], h[0]))


def _meaning_line(text: str, found: dict[str, list[int]], judge: Judge, lines: LineScorer | None) -> int | None:
    """For a hit no line of which holds a query term: the line of ``text``
    (0-based) that carries its meaning, when that line alone is semantic
    evidence enough for a confident answer; else None (no line is marked)."""
    if lines is None or found:
        return None
    best = lines.best(text.split("\n"))
    if best is None:
        return None
    weight = judge.vector_weight / max(1e-9, judge.vector_weight + judge.text_weight)
    return best[0] if weight * lines.semantic(best[1]) >= judge.threshold else None
