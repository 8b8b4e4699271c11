"""Hybrid search, stage by stage (DESIGN.md §7): the candidate pools
(chunk vectors, entry vectors and BM25, ``min(200, max_results *
candidate_multiplier)`` each), their fusion into one 0..1 score
(:mod:`.fusion`), the marks that move it (a time the query names, temporal
decay, MMR, an exact keyword hit), the reading budget, and the results with
their citations, snippets and confidence.

A chunk that contains every query term is an exact keyword hit and is never
dropped by ``min_score``. The defaults (weighted 0.5/0.5, min_score 0.1,
Porter stemming) were chosen on the LoCoMo dev split: see
bench/LOCOMO_RESULTS.md.

Over 500 lines because the stages meet here and read top to bottom as a
search runs them; each stage's own logic lives in its module.
"""

from __future__ import annotations

import math
import sys
from datetime import date, datetime
from typing import TYPE_CHECKING, Collection, Iterator, NamedTuple, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

from ..citations import cite_lines
from ..settings import HybridSettings, QuerySettings
from ..store import ChunkRow, EntryHit, IndexStore
from ..text import contains_all_terms, content_terms, find_terms, fold, is_id_like, query_terms
from .citing import Citer, TermsFound
from .confidence import Judge, holds_id, make_judge, query_ids
from .excerpt import make_excerpt, snippet_window
from .fusion import Candidate, add_entry_hits, bm25_reference, carried_by_entries, carried_by_words, fill_similarities, fuse
from .judging import Hit, Judged, Marks, judge_hits
from .keywords import MAX_POOL, MAX_POSTINGS, MIN_CHUNKS_FOR_IDF, keyword_pool, keyword_terms  # noqa: F401  (imported from here)
from .options import SearchOptions
from .results import SearchResult
from .spans import Span, budget_spans, merged_text
from .stems import index_terms, with_stems
from .successors import with_successors
from .time_cues import TimeCue, find_time_cues
from .time_ranking import chunk_dates, entry_day, in_cues
from .updates import newer_first


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
    null: float | None = None,
    marks: Marks | None = None,
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
    Results carry their confidence (:mod:`.confidence`), judged entry by
    entry (:mod:`.judging`) against the model's ``null`` (None: meaning is
    no evidence), a live entry before a retired one (``marks``: what each
    file says of its entries now); the keyword side
    searches content terms only.
    """
    options = options.with_defaults(settings)
    pools = _candidate_pools(store, query, query_vector, settings, options, paths, null)
    cands = _fused(store, pools, query_vector, settings.hybrid)
    if not cands:
        return [], pools.mode
    assert options.max_results is not None  # with_defaults set it
    budget = options.max_lines is not None or settings.merge_spans
    # The hits a search likely reaches: a budget asks for one past the last
    # it takes (to see that it would start a spare span), and a merge or a
    # hit below min_score costs one more.
    likely = options.max_results + 2 if budget else options.max_results
    ranked, rows, stream = _marked(store, cands, pools, settings, options, likely)
    pulled: set[int] = set()
    if marks is not None and not options.include_forgotten:
        stream = with_successors(stream, store, rows, cands, marks, options.min_score or 0.0, pulled)
    # IDF-like: rare terms say more about where the snippet should start
    # and which line matched best.
    weights = {t: math.log(1 + max(1, pools.total) / max(1, n)) for t, n in pools.doc_counts.items()}
    cite = Citer(store, pools.sent, [c.rowid for c in ranked[:likely]], pools.found)
    judges = _Judges(store, pools.judge, query_vector, cite, rows, pools.found, marks, options)
    shape = _Shape(pools.found, weights, pools.mode, settings.hybrid.fusion, options.explain, options.snippets, judges)
    if budget:
        ordered, rowids = _budgeted(stream, rows, shape, options, pulled)
    else:
        ordered, rowids = _listed(stream, rows, shape, options.max_results, pulled)
    if pulled:  # a successor pulled in shows when it answers (its predecessor's evidence, or its own)
        kept = [i for i, rowid in enumerate(rowids) if rowid not in pulled or ordered[i].confident][: options.max_results]
        ordered, rowids = [ordered[i] for i in kept], [rowids[i] for i in kept]
    return _say_more_confident(newer_first(pools.cues, ordered, pools.found, rows, rowids)), pools.mode


class _Judges:
    """The hits a search shows, judged entry by entry (:mod:`.judging`):
    each one's cited lines when chosen, then all of them at once (one read
    of their entries)."""

    def __init__(
        self,
        store: IndexStore,
        judge: Judge,
        query_vector: np.ndarray | None,
        cite: Citer,
        rows: dict[int, ChunkRow],
        found: TermsFound,
        marks: Marks | None,
        options: SearchOptions,
    ):
        self.store, self.judge_, self.query_vector, self.cite, self.rows, self.found = store, judge, query_vector, cite, rows, found
        self.marks, self.options = marks, options
        self.cited: dict[int, tuple[int, int, str]] = {}
        self._judged: dict[int, Judged] = {}

    def cited_of(self, c: Candidate) -> tuple[int, int, str]:
        """The lines a hit on ``c`` cites (:class:`~.citing.Citer`), once."""
        if c.rowid not in self.cited:
            self.cited[c.rowid] = self.cite(self.rows[c.rowid], keyword_hit=carried_by_words(c), carried=carried_by_entries(c))
        return self.cited[c.rowid]

    def judge(self, cands: list[Candidate]) -> None:
        hits = []
        for c in cands:
            start, end, _ = self.cited_of(c)
            hits.append(Hit(self.rows[c.rowid], start, end, c.v_sim))
        for c, judged in zip(
            cands,
            judge_hits(
                self.store,
                self.judge_,
                hits,
                self.query_vector,
                self.found,
                self.marks,
                self.options.explain,
                self.options.include_forgotten,
            ),
        ):
            self._judged[c.rowid] = judged

    def __getitem__(self, rowid: int) -> Judged:
        return self._judged[rowid]


class _Pools(NamedTuple):
    """The candidate pools of a query and what was learnt drawing them."""

    #: Time cues of the query when it gets a time boost ("last week").
    cues: list[TimeCue]
    #: The query's content terms, and those sent to the keyword side.
    terms: list[str]
    sent: list[str]
    #: Chunks holding each query term, and chunks in the index.
    doc_counts: dict[str, int]
    total: int
    #: (rowid, bm25) and (rowid, cosine), best first.
    keyword_hits: list[tuple[int, float]]
    vector_hits: list[tuple[int, float]]
    #: Entries nearest the query by their own vectors, best first.
    entry_hits: list[EntryHit]
    judge: Judge
    #: "hybrid", "vector" or "keyword".
    mode: str
    found: TermsFound


def _candidate_pools(
    store: IndexStore,
    query: str,
    query_vector: np.ndarray | None,
    settings: QuerySettings,
    options: SearchOptions,
    paths: Collection[str] | None,
    null: float | None,
) -> _Pools:
    """Both sides' candidate pools (keyword and vector), the judge of
    confidence for the query, and the search's mode."""
    assert options.max_results is not None
    h = settings.hybrid
    now = options.now
    cues = find_time_cues(query, now or datetime.now()) if settings.time_boost > 0 else []
    # A boost can only lift what the pools hold: a query naming a time
    # draws full pools, so chunks of that time are among the candidates.
    pool = MAX_POOL if cues else pool_size(options.max_results, h.candidate_multiplier)
    asked = query_terms(query)
    terms = content_terms(asked)
    doc_counts = store.term_doc_counts(asked)
    total = store.chunk_count()
    sent = keyword_terms(asked, doc_counts, total) if terms else []
    keyword_hits = keyword_pool(store, sent, [t for t in sent if t in terms], pool, options.sources, paths)
    vector_hits = store.vector_search(query_vector, pool, options.sources, paths) if query_vector is not None else []
    spoken = cues if settings.time_boost > 0 else find_time_cues(query, now or datetime.now())
    time_words = {w for cue in spoken for w in query_terms(cue.text)}
    use_vector = query_vector is not None and store.dims is not None
    judge = make_judge(
        query,
        {t: doc_counts[t] for t in terms},
        total,
        null if use_vector else None,
        index_terms(terms) if terms and store.keyword_search_available else {},
        held_ids(store, query_ids(query)),
        time_words,
    )
    # A third pool: the entries nearest the query among those of both
    # pools' chunks, drawn again toward the nearest when they answer (:mod:`.feedback`).
    within = [r for r, _ in vector_hits] + [r for r, _ in keyword_hits]
    entry_hits = store.entry_vector_search(query_vector, pool, within) if query_vector is not None and h.entry_share > 0 else []
    if entry_hits and query_vector is not None:
        from .feedback import confident_first, moved_query  # here: a keyword-only search has no entry pool

        if confident_first(store, judge, entry_hits):
            moved = moved_query(query_vector, entry_hits)
            if moved is not None:
                entry_hits = store.entry_vector_search(moved, pool, within)
    use_keyword = store.keyword_search_available and (h.enabled or not use_vector)
    if use_vector and not h.enabled:
        keyword_hits = []
    mode = "hybrid" if use_vector and use_keyword else ("vector" if use_vector else "keyword")
    return _Pools(cues, terms, sent, doc_counts, total, keyword_hits, vector_hits, entry_hits, judge, mode, TermsFound(terms))


def held_ids(store: IndexStore, ids: list[str]) -> list[str]:
    """The IDs of ``ids`` (:func:`~.confidence.query_ids`) some note holds:
    a key as it is, a hash also as a prefix either way (found by its first
    seven characters, then checked in the chunks' text)."""
    held = []
    for i in ids:
        probe = i[:7] if is_id_like(i) else i
        hits = store.keyword_search('"' + probe.replace('"', '""') + '"' + ("*" if is_id_like(i) else ""), 20)
        if any(holds_id(fold(row.text), i) for row in store.chunks(r for r, _ in hits).values()):
            held.append(i)
    return held


def _fused(store: IndexStore, pools: _Pools, query_vector: np.ndarray | None, h: HybridSettings) -> dict[int, Candidate]:
    """The candidates of both pools, each with its fused score."""
    cands: dict[int, Candidate] = {}
    for rank, (rowid, sim) in enumerate(pools.vector_hits, start=1):
        cands[rowid] = Candidate(rowid, v_rank=rank, v_sim=sim)
    for rank, (rowid, bm25) in enumerate(pools.keyword_hits, start=1):
        c = cands.setdefault(rowid, Candidate(rowid))
        c.t_rank, c.t_bm25 = rank, bm25
    add_entry_hits(cands, pools.entry_hits)
    if not cands:
        return cands
    keyword_hits, total = pools.keyword_hits, pools.total
    best_bm25 = keyword_hits[0][1] if keyword_hits else 0.0
    # Below MIN_CHUNKS_FOR_IDF, FTS5's IDF is too coarse to measure a query
    # against (with 2 chunks a term in one of them weighs 0): scores are
    # relative to the best hit, times the share of the query's terms (by
    # rarity) a hit holds, so a hit on one word of three is no full match.
    reference = bm25_reference(pools.sent, pools.doc_counts, total) if keyword_hits and total >= MIN_CHUNKS_FOR_IDF else 0.0
    if keyword_hits and total < MIN_CHUNKS_FOR_IDF:
        held = store.chunks(r for r, _ in keyword_hits)
        for rowid, row in held.items():
            cands[rowid].cover = pools.judge.coverage(None, pools.found(row))
    if pools.mode == "hybrid" and query_vector is not None:  # hybrid always has one
        fill_similarities(store, cands, query_vector)
    fuse(cands.values(), pools.mode, h, best_bm25, reference)
    return cands


def _marked(
    store: IndexStore, cands: dict[int, Candidate], pools: _Pools, settings: QuerySettings, options: SearchOptions, likely: int
) -> tuple[list[Candidate], dict[int, ChunkRow], Iterator[Candidate]]:
    """The candidates ranked, with their marks: the time boost, an exact
    keyword hit (which passes ``min_score``), temporal decay, MMR's order.
    Returns (ranked, rows, stream): ``stream`` yields those that pass
    ``min_score``, best first, reading their rows into ``rows`` as needed
    (at least the ``likely`` first at once)."""
    h = settings.hybrid
    cues, terms = pools.cues, pools.terms
    min_score, explain = options.min_score, options.explain
    assert min_score is not None and options.max_results is not None
    if cues or explain or h.temporal_decay.enabled or h.mmr.enabled:
        # Scores depend on the chunks' paths or texts, or every candidate is shown.
        from .decay import decay_factor  # here, as MMR's: off by default

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
                c.decay = decay_factor(row.path, h.temporal_decay.half_life_days, options.today or date.today())
                c.score *= c.decay

        ranked = sorted((c for c in cands.values() if c.rowid in rows), key=lambda c: (-c.score, c.rowid))
        if h.mmr.enabled:
            from .mmr import mmr_order

            ranked = mmr_order(store, ranked, rows, h.mmr.lambda_, options.max_results * 2)
        stream: Iterator[Candidate] = (c for c in ranked if c.score >= min_score or c.exact)
    else:
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.rowid))
        rows = {}
        stream = _passing(store, ranked, terms, min_score, rows, likely)
    return ranked, rows, stream


class _Shape(NamedTuple):
    """How a result is made of a hit: the terms found, their weights, the
    search's mode and fusion, whether to explain and to show text, and the
    judged hits (:func:`_result`)."""

    found: TermsFound
    weights: dict[str, float]
    mode: str
    method: str
    explain: bool
    snippets: bool
    judges: _Judges


def _budgeted(
    stream: Iterator[Candidate], rows: dict[int, ChunkRow], shape: _Shape, options: SearchOptions, pulled: set[int]
) -> tuple[list[SearchResult], list[int]]:
    """The results of the reading budget (``max_lines``, or the merged spans
    of ``merge_spans``), in the order of their confidence, and each one's
    best chunk. The spans are chosen as ranked; their hits are then judged
    (one read of their entries) and a span's best entry is its result's;
    the successors ``pulled`` in (:mod:`.successors`) take no result's place."""
    assert options.max_results is not None
    passed: list[Candidate] = []
    cited: list[tuple[int, int, str]] = []

    def hits() -> Iterator[tuple[str, int, int]]:
        # Read and cited as the budget asks: six results rarely need
        # more than the first few hits.
        for c in stream:
            passed.append(c)
            cited.append(shape.judges.cited_of(c))
            yield rows[c.rowid].path, cited[-1][0], cited[-1][1]

    lines = options.max_lines if options.max_lines is not None else sys.maxsize
    spans = budget_spans(hits(), lines, options.max_results, lambda i: passed[i].rowid in pulled)
    shape.judges.judge([passed[i] for span in spans for i in span.members])
    bests = [max(span.members, key=lambda i: (shape.judges[passed[i].rowid].confidence, -i)) for span in spans]
    span_results = [_span_result(span, best, passed, cited, rows, shape) for span, best in zip(spans, bests)]
    return _by_confidence(span_results, [passed[i].rowid for i in bests])


def _listed(
    stream: Iterator[Candidate], rows: dict[int, ChunkRow], shape: _Shape, max_results: int, pulled: set[int]
) -> tuple[list[SearchResult], list[int]]:
    """The first ``max_results`` hits that pass, one result each, in the
    order of their confidence, and each one's chunk; the successors
    ``pulled`` in beside them (:mod:`.successors`) come too, uncounted."""
    shown: list[Candidate] = []
    for c in stream if max_results > 0 else ():
        shown.append(c)
        if len(shown) - sum(1 for s in shown if s.rowid in pulled) >= max_results:
            break
    shape.judges.judge(shown)
    results = [_result(rows[c.rowid], c, shape, shape.snippets) for c in shown]
    return _by_confidence(results, [c.rowid for c in shown])


def _passing(
    store: IndexStore, ranked: list[Candidate], terms: list[str], min_score: float, rows: dict[int, ChunkRow], first: int
) -> Iterator[Candidate]:
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
    span: Span, member: int, passed: list[Candidate], cited: list[tuple[int, int, str]], rows: dict[int, ChunkRow], shape: _Shape
) -> SearchResult:
    """The result for one span of the budget: its best hit (``passed[member]``,
    the one whose best entry is the span's), widened to the span
    (``cited[i]`` is the cited lines of ``passed[i]``)."""
    best = passed[member]
    terms = shape.found.terms
    merged = len(span.members) > 1
    # A merged span's snippet and excerpt come from the merged text below,
    # so the best hit's own are not made.
    result = _result(rows[best.rowid], best, shape, shape.snippets and not merged)
    if not merged:
        return result
    members = [rows[passed[i].rowid] for i in span.members]
    result.start_line, result.end_line = span.start_line, span.end_line
    if shape.snippets:
        shown = merged_text([cited[i] for i in span.members])
        in_shown = with_stems(shown, terms, find_terms(shown, terms))
        result.snippet, result.snippet_line = _snippet(shown, span.start_line, terms, shape.weights, in_shown)
        judged = shape.judges[best.rowid]
        entry = (judged.start - span.start_line, judged.end - span.start_line)
        result.excerpt = make_excerpt(shown, span.start_line, terms, shape.weights, found=in_shown, entry=entry)
    if result.explain is not None:
        result.explain["merged"] = [cite_lines(r.path, r.start_line, r.end_line) for r in members]
    return result


def _result(row: ChunkRow, c: Candidate, shape: _Shape, snippets: bool) -> SearchResult:
    """The result for one chunk, citing its cited lines (without the
    headings that open it: :func:`.spans.cited_lines`), its confidence
    and marked line those of its best entry (:mod:`.judging`). The excerpt
    and the snippet show the cited lines, so the snippet's first line is
    ``start_line`` (or ``snippet_line`` when it is cut to a later window)
    and a reader counting lines from the citation counts right."""
    judged, (start, end, text) = shape.judges[c.rowid], shape.judges.cited[c.rowid]
    mode = shape.mode
    info = None
    if shape.explain:
        info = {
            "mode": mode,
            "vector": {"rank": c.v_rank, "similarity": c.v_sim, "entry": c.entry_info()},
            "keyword": {
                "rank": c.t_rank,
                "bm25": c.t_bm25,
                "score": c.t_score,
            },
            "fusion": {"method": "none" if mode != "hybrid" else shape.method, **c.parts},
            "decay": c.decay,
            "exact_match": c.exact,
            "evidence": judged.evidence._asdict(),
            "absent_id": shape.judges.judge_.absent_id,
            "entries": [{"lines": f"{a}-{b}", **e._asdict()} for a, b, e in judged.entries],
        }
        if c.time != 1.0:
            info["time_boost"] = c.time
    confidence = judged.confidence
    day = entry_day(row.path, row.text, row.start_line, judged.start)
    terms = shape.found.terms
    excerpt = None
    snippet, snippet_line = "", start
    if snippets:
        in_text = shape.found.in_lines(row, start - row.start_line, text)
        entry = (judged.start - start, judged.end - start)
        excerpt = make_excerpt(text, start, terms, shape.weights, found=in_text, entry=entry)
        snippet, snippet_line = _snippet(text, start, terms, shape.weights, in_text)
    return SearchResult(
        path=row.path,
        start_line=start,
        end_line=end,
        score=round(c.score, 6),
        snippet=snippet,
        snippet_line=snippet_line,
        source=row.source,
        explain=info,
        excerpt=excerpt,
        confidence=confidence,
        confident=confidence >= 0.5,
        date=day.isoformat() if day else None,
        answer_confidence=judged.evidence.answer,
    )


def _say_more_confident(results: list[SearchResult]) -> list[SearchResult]:
    """Results come in the order of their confidence, so one may sit above
    a result with a higher score: it says so (``reordered = "more
    confident"``) unless the newer-first rule already gave its reason."""
    for k, r in enumerate(results):
        if r.reordered is None and any(o.score > r.score for o in results[k + 1 :]):
            r.reordered = "more confident"
    return results


def _snippet(text: str, first_line: int, terms: Sequence[str], weights: dict[str, float], found: dict[str, list[int]]) -> tuple[str, int]:
    """The snippet of cited lines ``text`` (file line ``first_line`` on) and
    the file line it starts at."""
    at, snippet = snippet_window(text, terms, weights=weights, found=found)
    return snippet, first_line + text.count("\n", 0, at)


def _by_confidence(results: list[SearchResult], rowids: list[int]) -> tuple[list[SearchResult], list[int]]:
    """The results in the order of their best entries' confidence, the
    answer's confidence breaking ties, then the rank (``rowids``: each
    result's chunk, reordered alike). The set shown is the one ranked: a hit
    on a name many entries share, or a common word in a long note, no
    longer leads the answer."""
    order = sorted(range(len(results)), key=lambda i: (-results[i].confidence, -results[i].answer_confidence, i))
    return [results[i] for i in order], [rowids[i] for i in order]
