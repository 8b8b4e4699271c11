"""Pseudo-relevance feedback for the entry pool (DESIGN.md §7): a query
moved toward the entries nearest it, without a model call.

A question rarely shares its answer's words, and a short question's
vector sits between the entries that answer it and everything else it
names. The entries nearest the query in a first pass of the entry pool
say what the notes call the thing asked about; the pool is drawn again
with the query moved toward their mean (``query + FEEDBACK_WEIGHT x mean``
of the :data:`FEEDBACK_ENTRIES` nearest), and the cosines of its hits are
to the moved query. Chunk vectors, keywords and judging keep the query
as asked.

Only when the first pass is confident: one of those entries would already
answer (its answer confidence, :mod:`.confidence`, at least
:data:`FEEDBACK_CONFIDENCE`, the mark of a confident result). A question
the notes hold nothing on is not pulled toward the notes nearest it, so it
is still answered "nothing": moving every query, or those whose first pass
passed only the "nothing" cut, cost the trust benchmark an absent-topic
"nothing" (bench/LOCOMO_RESULTS.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..store import EntryHit, IndexStore
from .confidence import Judge

if TYPE_CHECKING:
    import numpy as np

#: The nearest entries of the first pass the query moves toward, and how far.
FEEDBACK_ENTRIES = 3
FEEDBACK_WEIGHT = 0.5
#: The answer confidence one of them needs: that of a result marked
#: confident, above the "nothing" cut (NOTHING_BELOW, 1/3), so a question
#: the notes barely answer is not moved either.
FEEDBACK_CONFIDENCE = 0.5


def confident_first(store: IndexStore, judge: Judge, hits: Sequence[EntryHit]) -> bool:
    """Whether one of the first pass's :data:`FEEDBACK_ENTRIES` nearest
    entries answers the query confidently, its answer confidence reckoned
    on its cosine and its words as judging reckons it
    (:meth:`~.confidence.Judge.confidences`; no ID or phrase evidence: an
    entry that holds one is confident without feedback)."""
    top = list(hits[:FEEDBACK_ENTRIES])
    if not top or judge.null is None:
        return False
    stems = {(e.path, e.start_line, e.end_line): e.stems for e in store.entries_within([(h.path, h.start_line, h.end_line) for h in top])}
    coverage = judge.coverages_of([stems.get((h.path, h.start_line, h.end_line)) or "" for h in top])
    answers = judge.confidences([judge.semantic(h.similarity) for h in top], coverage, fit="answer")
    return max(answers) >= FEEDBACK_CONFIDENCE


def moved_query(query_vector: np.ndarray, hits: Sequence[EntryHit]) -> np.ndarray | None:
    """The query moved toward the mean of its nearest entries' vectors
    (normalised); None when those hits carry no vector of its size."""
    import numpy as np

    q = np.asarray(query_vector, dtype=np.float32)
    vectors = [np.asarray(h.vector, dtype=np.float32) for h in hits[:FEEDBACK_ENTRIES] if h.vector is not None and len(h.vector) == len(q)]
    if not vectors:
        return None
    moved = q + FEEDBACK_WEIGHT * np.mean(vectors, axis=0)
    norm = float(np.linalg.norm(moved))
    return moved / norm if norm > 0 else None
