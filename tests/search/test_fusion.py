"""Fusion: what carried a hit decides what its citation keeps in view."""

from __future__ import annotations

from types import SimpleNamespace

from memext.engine.search.fusion import Candidate, carried_by_words, fuse

HYBRID = SimpleNamespace(weights=(0.5, 0.5), entry_share=0.5, fusion="weighted", rrf_k=60)


def _fused(**sides) -> Candidate:
    c = Candidate(1, **sides)
    fuse([c], "hybrid", HYBRID, best_bm25=-10.0, reference=0.0)
    return c


def test_a_hit_is_carried_by_words_when_they_weigh_at_least_as_much_as_its_meaning():
    # bm25 -10 of a best -10: the words score 1.0 against a cosine of 0.4.
    assert carried_by_words(_fused(v_rank=3, v_sim=0.4, t_rank=1, t_bm25=-10.0))
    # A weak keyword match on a near chunk: meaning carried it.
    assert not carried_by_words(_fused(v_rank=1, v_sim=0.8, t_rank=9, t_bm25=-2.0))
    # A strong entry lifts the meaning side above the same words.
    assert not carried_by_words(_fused(v_rank=1, v_sim=0.5, e_sim=0.9, t_rank=2, t_bm25=-6.0))
    assert carried_by_words(_fused(v_rank=1, v_sim=0.5, t_rank=2, t_bm25=-6.0))
    # Not in the keyword pool: never.
    assert not carried_by_words(_fused(v_rank=1, v_sim=0.1))


def test_without_vectors_every_keyword_hit_is_carried_by_words():
    c = Candidate(1, t_rank=5, t_bm25=-1.0)
    fuse([c], "keyword", HYBRID, best_bm25=-10.0, reference=0.0)
    assert carried_by_words(c)
