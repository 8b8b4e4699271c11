"""Fusion: the keyword and the vector side's scores of a candidate, as one
0..1 score (DESIGN.md §7).

BM25 comes from FTS5, whose ``bm25()`` is negative (more negative is
better); we map relevance ``x = -bm25`` to ``x / max(x_best, x_ref)`` (the
reference mapped every hit to 1.0):

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
``min_score`` hardly filters it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # numpy loads on first use: keyword-only work never needs it
    import numpy as np

    from ..store import EntryHit, IndexStore


@dataclass
class Candidate:
    """A chunk from either pool (or both), with what each side said of it
    and the score fused from that; later stages mark it (time boost, decay,
    an exact keyword hit)."""

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
    #: The best cosine of the chunk's entries found by entry-level vector
    #: search, and those entries' lines with their cosines, best first.
    e_sim: float | None = None
    entries: list[tuple[int, int, float]] = field(default_factory=list)

    def entry_info(self) -> dict | None:
        """What the entry pool said of the chunk, for ``explain``."""
        return {"similarity": self.e_sim, "lines": [f"{a}-{b}" for a, b, _ in self.entries]} if self.entries else None


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


def fill_similarities(store: IndexStore, cands: dict[int, "Candidate"], query_vector: np.ndarray) -> None:
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


def add_entry_hits(cands: dict[int, Candidate], hits: Sequence[EntryHit]) -> None:
    """Add the entry pool (:meth:`~..store.IndexStore.entry_vector_search`):
    each hit is a candidate for the chunk that holds it, with its cosine."""
    for hit in hits:
        c = cands.setdefault(hit.chunk, Candidate(hit.chunk))
        c.e_sim = hit.similarity if c.e_sim is None else max(c.e_sim, hit.similarity)
        c.entries.append((hit.start_line, hit.end_line, hit.similarity))


#: Entries within this cosine of a hit's best entry carried it too.
CARRY_MARGIN = 0.05


def carried_by_entries(c: Candidate) -> tuple[int, int] | None:
    """The lines of the entries that carried a hit: those found by their
    own vectors, within :data:`CARRY_MARGIN` of the best of them, when the
    best one is nearer the query than the whole chunk (None: the chunk
    carried it)."""
    if c.e_sim is None or (c.v_sim is not None and c.e_sim <= c.v_sim):
        return None
    near = [(a, b) for a, b, sim in c.entries if sim >= c.e_sim - CARRY_MARGIN]
    return min(a for a, _ in near), max(b for _, b in near)


def carried_by_words(c: Candidate) -> bool:
    """The keyword side carried a hit: it is in the keyword pool and its
    words gave at least as much of its fused score as its meaning did. Such
    a hit's citation keeps a line holding a query term in view; one carried
    by meaning cites its own lines (bench/LOCOMO_RESULTS.md: on the LoCoMo
    dev split the same recall with half a line less read per six results)."""
    if c.t_rank is None:
        return False
    return c.parts.get("text", 0.0) >= c.parts.get("vector", 0.0)


def semantic(c: Candidate, entry_share: float) -> float:
    """The vector side's evidence for a candidate: its chunk's cosine, with
    ``entry_share`` of it taken by its best entry's cosine when that is
    higher (a short entry's vector says what it says; a chunk's averages
    its neighbours in). An entry below its chunk takes nothing away: the
    chunk's cosine already says the chunk is near."""
    v = c.v_sim if c.v_sim is not None else 0.0
    if c.e_sim is not None and c.e_sim > v:
        v += entry_share * (c.e_sim - v)
    return min(1.0, max(0.0, v))


def fuse(cands, mode: str, h, best_bm25: float, reference: float) -> None:
    wv, wt = h.weights
    for c in cands:
        v = semantic(c, h.entry_share)
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
