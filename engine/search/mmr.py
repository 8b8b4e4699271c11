"""Maximal marginal relevance (``query.hybrid.mmr``, off by default): a
search's top results reordered so that near-duplicates give way to variety
(DESIGN.md §7)."""

from __future__ import annotations

from typing import Protocol, TypeVar

from ..store import ChunkRow, IndexStore
from ..text import words


class Ranked(Protocol):
    rowid: int
    score: float


C = TypeVar("C", bound=Ranked)


def mmr_order(store: IndexStore, ranked: list[C], rows: dict[int, ChunkRow], lam: float, limit: int) -> list[C]:
    """Maximal marginal relevance: trade score for variety among the top
    ``2 * limit`` of ``ranked`` (best first), by the cosine of the chunks'
    vectors, or the overlap of their words where a chunk has none."""
    import numpy as np

    head, tail = ranked[: max(limit, 1) * 2], ranked[max(limit, 1) * 2 :]
    vectors = store.chunk_vectors([c.rowid for c in head])
    token_sets = {c.rowid: set(words(rows[c.rowid].text)) for c in head if c.rowid not in vectors}

    def similarity(a: int, b: int) -> float:
        if a in vectors and b in vectors:
            return float(np.dot(vectors[a], vectors[b]))
        sa = token_sets.get(a) or set(words(rows[a].text))
        sb = token_sets.get(b) or set(words(rows[b].text))
        return len(sa & sb) / max(1, len(sa | sb))

    chosen: list[C] = []
    remaining = list(head)
    while remaining:
        best = max(
            remaining,
            key=lambda c: lam * c.score - (1 - lam) * max((similarity(c.rowid, s.rowid) for s in chosen), default=0.0),
        )
        remaining.remove(best)
        chosen.append(best)
    return chosen + tail
