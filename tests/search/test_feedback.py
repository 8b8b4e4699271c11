"""Pseudo-relevance feedback for the entry pool: moved only when the first
pass already answers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_agent

from memext.engine.indexing.sync import Syncer
from memext.engine.search.confidence import make_judge
from memext.engine.search.feedback import FEEDBACK_WEIGHT, confident_first, moved_query
from memext.engine.store import open_store
from memext.engine.store.base import EntryHit
from memext.engine.vector_math import normalize


def test_the_query_moves_toward_the_mean_of_its_nearest_entries():
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    a, b = np.array([0.0, 1.0, 0.0], dtype=np.float16), np.array([0.0, 0.0, 1.0], dtype=np.float16)
    hits = [EntryHit(1, "m.md", 1, 1, 0.2, a), EntryHit(1, "m.md", 2, 2, 0.1, b)]
    moved = moved_query(q, hits)
    expected = q + FEEDBACK_WEIGHT * np.array([0.0, 0.5, 0.5])
    assert moved == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
    # Hits without a vector (or of another size) give nothing to move toward.
    assert moved_query(q, [EntryHit(1, "m.md", 1, 1, 0.2)]) is None
    assert moved_query(q, [EntryHit(1, "m.md", 1, 1, 0.2, np.ones(4, dtype=np.float16))]) is None


def test_feedback_is_asked_only_where_the_first_pass_answers(tmp_path, hashing_provider):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# Memory\n\n- Ines drinks black coffee every morning.\n- Lars lives in Bergen.\n")
    agent = make_agent(ws, db_path=tmp_path / "idx.sqlite")
    store = open_store(agent, tmp_path / "idx.sqlite")
    try:
        Syncer(agent, store, hashing_provider).run()
        chunks = list(store.chunks(range(1, 100)))
        total = store.chunk_count()

        def first_pass(query: str, null: float | None = 0.1):
            terms = ["ines", "coffee"] if "coffee" in query else ["volcano"]
            judge = make_judge(query, store.term_doc_counts(terms), total, null, {t: (t,) for t in terms})
            hits = store.entry_vector_search(normalize(hashing_provider.embed_query(query)), 3, chunks)
            return judge, hits

        judge, hits = first_pass("- Ines drinks black coffee every morning.")
        assert hits and hits[0].vector is not None and confident_first(store, judge, hits)
        # Nothing in the notes on it: not pulled toward them.
        judge, hits = first_pass("volcano")
        assert not confident_first(store, judge, hits)
        # Meaning is no evidence without a null: no feedback either.
        judge, hits = first_pass("- Ines drinks black coffee every morning.", null=None)
        assert not confident_first(store, judge, hits)
    finally:
        store.close()
