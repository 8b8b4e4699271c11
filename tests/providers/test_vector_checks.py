"""Every vector a provider hands back is checked (DESIGN.md §6): finite, of the
right size, not all zero, or the whole answer is rejected with a clear
ProviderError, before anything is stored or cached. Real ``openai`` client
and ``httpx2`` against the real HTTP server in tests/servers.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import make_agent
from servers import GEMINI_KEY, OPENAI_KEY, EmbeddingAPIServer, stored_vectors

from memext.engine import MemoryIndex
from memext.engine.errors import ProviderError
from memext.engine.providers.gemini import DEFAULT_MODEL as GEMINI_MODEL, GeminiProvider
from memext.engine.providers.openai import OpenAIProvider
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy
from memext.engine.providers.vector_checks import BadVectors, check_vectors
from memext.engine.store.sqlite.store import Store

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
ROUTES = {"openai": "openai.embeddings", "gemini": "gemini."}
PROBLEMS = {"nan": "NaN", "inf": "infinite", "zero": "all-zero"}


def make(kind: str, server: EmbeddingAPIServer, **kw):
    if kind == "openai":
        return OpenAIProvider(RemoteTarget(OPENAI_KEY, server.openai_base_url, "text-embedding-3-small"), retry=FAST, **kw)
    return GeminiProvider(RemoteTarget(GEMINI_KEY, server.gemini_base_url, GEMINI_MODEL), retry=FAST, **kw)


def dims_of(kind: str, server: EmbeddingAPIServer) -> int:
    return server.openai_dims if kind == "openai" else server.gemini_dims


@pytest.mark.parametrize("kind", ["openai", "gemini"])
@pytest.mark.parametrize("bad", ["nan", "inf", "zero"])
def test_non_finite_or_zero_vectors_reject_the_answer(api_server, kind, bad):
    p = make(kind, api_server)
    api_server.add_fault(ROUTES[kind], status=None, vectors=bad, times=2)
    with pytest.raises(ProviderError, match=PROBLEMS[bad]) as batch_err:
        p.embed_batch(["alpha", "beta", "gamma"])
    assert "rejected" in str(batch_err.value)
    with pytest.raises(ProviderError, match=PROBLEMS[bad]):
        p.embed_query("alpha")
    # The server is healthy again: so is the provider.
    assert len(p.embed_batch(["alpha", "beta"])) == 2 and len(p.embed_query("alpha")) == dims_of(kind, api_server)


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_a_wrong_size_is_rejected_and_does_not_latch(api_server, kind):
    p = make(kind, api_server)
    right = dims_of(kind, api_server)
    assert len(p.embed_query("first")) == right and p.dims == right
    api_server.add_fault(ROUTES[kind], status=None, vectors="dims:7", times=1)
    with pytest.raises(ProviderError, match=rf"7 dimensions .*expected {right}"):
        p.embed_batch(["alpha", "beta"])
    assert len(p.embed_batch(["alpha", "beta"])[0]) == right  # recovered at once
    assert p.dims == right


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_a_wrong_first_answer_recovers_by_itself(api_server, kind):
    """A fresh provider whose first answer has the wrong size: the size the
    caller holds (the index's) rejects it; without one, one later call may
    fail but none after it (the old code kept the wrong size for good)."""
    right = dims_of(kind, api_server)
    told = make(kind, api_server)
    told.expected_dims = right
    api_server.add_fault(ROUTES[kind], status=None, vectors="dims:7", times=1)
    with pytest.raises(ProviderError, match="7 dimensions"):
        told.embed_query("alpha")
    assert len(told.embed_query("alpha")) == right

    fresh = make(kind, api_server)
    api_server.add_fault(ROUTES[kind], status=None, vectors="dims:7", times=1)
    assert len(fresh.embed_query("alpha")) == 7  # nothing known yet to judge it by
    outcomes = []
    for _ in range(3):
        try:
            outcomes.append(len(fresh.embed_query("alpha")))
        except ProviderError:
            outcomes.append("rejected")
    assert outcomes[-2:] == [right, right]


def test_check_vectors_names_each_problem():
    good = [[0.1, 0.2], [0.3, 0.4]]
    assert check_vectors(good, 2, 2) == good
    cases = {
        "1 vectors for 2 texts": ([[0.1, 0.2]], 2, None),
        "NaN": ([[0.1, math.nan], [0.3, 0.4]], 2, None),
        "infinite": ([[0.1, 0.2], [0.3, -math.inf]], 2, None),
        "infinite values for text 1": ([[1e39, 0.2], [0.3, 0.4]], 2, None),  # overflows float32
        "all-zero vector for text 2": ([[0.1, 0.2], [0.0, 0.0]], 2, None),
        "3 dimensions for text 1 of 2 (expected 2)": ([[0.1, 0.2, 0.3], [0.1, 0.2]], 2, 2),
        "the others have 2": ([[0.1, 0.2], [0.1, 0.2, 0.3]], 2, None),
        "empty or malformed": ([[], []], 2, None),
        "malformed vector": ([["x", 1.0], [0.1, 0.2]], 2, None),
    }
    for needle, (vectors, count, dims) in cases.items():
        with pytest.raises(BadVectors, match=needle.replace("(", r"\(").replace(")", r"\)")):
            check_vectors(vectors, count, dims)


def test_a_sync_never_stores_or_caches_bad_vectors_and_recovers(workspace, tmp_path, api_server):
    db = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=db, provider="openai", remote={"base_url": api_server.openai_base_url})
    env = {"OPENAI_API_KEY": OPENAI_KEY}
    api_server.add_fault("openai.embeddings", status=None, vectors="nan", times=None)
    with MemoryIndex(agent, env=env) as idx:
        report = idx.sync()
        assert report.provider_error and "NaN" in report.provider_error
        assert stored_vectors(db) == {}
        assert cache_rows(db) == 0
        assert idx.search("Anna billing").results  # keyword search still answers
        api_server.clear_faults()
        again = idx.sync(force=True)
        assert again.provider_error is None
        vectors = stored_vectors(db)
        assert vectors and all(np.isfinite(v).all() for v in vectors.values())
        assert idx.search("Anna billing").mode == "hybrid"


def cache_rows(db) -> int:
    # Through memext's own SQLite binding: a second SQLite library in one
    # process would break the other's file locks.
    store = Store(db)
    try:
        return store.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    finally:
        store.close()
