"""The keyword side's query: which terms go to FTS5 (DESIGN.md §7)."""

from __future__ import annotations

from typing import Collection, Sequence

from ..store import IndexStore
from ..text import STOP_WORDS, fts_match_expression

#: Indexes smaller than this score BM25 relative to the best hit only.
MIN_CHUNKS_FOR_IDF = 20
#: The largest candidate pool a side draws.
MAX_POOL = 200


#: Most postings an OR query may walk before its commonest terms are left
#: out (about 15 ms on the 2-core benchmark machine); only large indexes
#: reach it.
MAX_POSTINGS = 20_000


def keyword_terms(terms: list[str], doc_counts: dict[str, int], total: int) -> list[str]:
    """The terms worth sending to FTS5, rarest first.

    FTS5 clamps the IDF of a term found in more than half of the chunks to
    ~0, so such a term cannot change any ranking, yet an OR over it makes
    FTS5 score nearly every chunk. Those terms are dropped; then, as in
    max-score pruning, the commonest (lowest IDF) terms are dropped while the
    postings to walk exceed MAX_POSTINGS. The rarest term is always kept.
    """
    if len(terms) < 2:
        return terms
    if total < MIN_CHUNKS_FOR_IDF:
        # FTS5's IDF cannot tell "what" from "fusion" in a handful of chunks.
        return [t for t in terms if t not in STOP_WORDS] or terms
    ranked = sorted(terms, key=lambda t: doc_counts.get(t, 0))
    kept: list[str] = []
    postings = 0
    for t in ranked:
        df = doc_counts.get(t, 0)
        if kept and (df * 2 > total or postings + df > MAX_POSTINGS):
            break
        kept.append(t)
        postings += df
    return kept


def keyword_pool(
    store: IndexStore, sent: list[str], content: list[str], pool: int, sources: Sequence[str] | None, paths: Collection[str] | None
) -> list[tuple[int, float]]:
    """The keyword pool: chunks that hold a content term of the query, ranked
    by BM25 over all the terms ``sent``. Stop words never carry a match (a
    chunk that holds only "when" and "my" is no hit), but where the index
    is big enough to weigh them (common words weigh little) they still break
    ties between chunks that hold the content terms."""
    match, required = fts_match_expression(sent), fts_match_expression(content)
    if match is None or required is None:
        return []
    hits = store.keyword_search(match, pool, sources, paths)
    if len(content) == len(sent):
        return hits
    holding = {r for r, _ in store.keyword_search(required, MAX_POOL, sources, paths)}
    return [h for h in hits if h[0] in holding]
