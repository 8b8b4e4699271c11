"""A model's "nothing" level (engine/providers/nulls.py): shipped for a
measured model, estimated from an index's own entries for any other, and
the same verdicts on any score scale (DESIGN.md §7)."""

from __future__ import annotations

import numpy as np
import pytest

from memext.engine.providers import nulls as N
from memext.engine.search.confidence import semantic


def test_semantic_evidence_is_the_same_on_any_score_scale():
    rng = np.random.default_rng(7)
    vectors = [v / np.linalg.norm(v) for v in rng.standard_normal((40, 16))]
    null = N.null_of(vectors)
    # Another model's scale: the same directions plus a shared one, so every
    # cosine becomes a * cos + (1 - a).
    squeezed = [np.append(v, 1.5) / np.sqrt(1 + 1.5**2) for v in vectors]
    a = 1 / (1 + 1.5**2)
    other = N.null_of(squeezed)
    assert other == pytest.approx(a * null + 1 - a, abs=1e-3)
    cos = float(vectors[0] @ vectors[1])
    cos2 = float(squeezed[0] @ squeezed[1])
    assert semantic(cos2, other) == pytest.approx(semantic(cos, null), abs=5e-3)


def test_too_few_entries_estimate_no_null():
    assert N.null_of([np.ones(4)] * (N.MIN_NULL_ENTRIES - 1)) is None


def test_the_null_in_force_is_the_shipped_one_else_the_index_estimate():
    shipped = N.model_null("all-minilm-l6-v2-f16.gguf")
    assert shipped is not None and N.model_null("All-MiniLM-L6-v2-Q8_0.gguf") == shipped
    stored = {"provider": "openai", "model": "text-embedding-3-small", "value": 0.31}
    assert N.null_for("local", "all-minilm-l6-v2-f16.gguf", stored) == shipped
    assert N.null_for("openai", "text-embedding-3-small", stored) == 0.31
    assert N.null_for("openai", "text-embedding-3-large", stored) is None  # another model's estimate is not this one's
    assert N.null_for("gemini", "gemini-embedding-001", None) is None


def test_entries_the_model_cannot_tell_apart_give_no_null():
    same = [np.ones(8) / np.sqrt(8)] * 40
    assert N.null_of(same) is None
