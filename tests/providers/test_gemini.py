"""The ``gemini`` provider against a real HTTP server speaking Gemini's REST API.

``httpx2`` talks over TCP to ``tests/servers.py``'s server on 127.0.0.1
(``embedContent``, ``batchEmbedContents``, ``x-goog-api-key``, Google's
error bodies); the assertions are about what went over the wire.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import make_agent
from servers import GEMINI_KEY, EmbeddingAPIServer, stored_vectors, unit

from memext.engine import MemoryIndex
from memext.engine.errors import ProviderError
from memext.engine.paths import app_paths
from memext.engine.providers import create_provider
from memext.engine.providers.gemini import DEFAULT_BASE_URL, DEFAULT_MODEL, GeminiProvider
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


def provider(server: EmbeddingAPIServer, key: str = GEMINI_KEY, model: str = DEFAULT_MODEL, **kw) -> GeminiProvider:
    kw.setdefault("retry", FAST)
    return GeminiProvider(RemoteTarget(key, server.gemini_base_url, model, kw.pop("headers", {})), **kw)


def test_query_and_document_task_types(api_server):
    p = provider(api_server)
    query = p.embed_query("what does Bob drink?")
    docs = p.embed_batch(["Bob prefers green tea.", "We ship on Tuesdays."])
    q_req, d_req = api_server.requests("gemini")
    assert q_req.route == "gemini.embedContent" and q_req.task_types == ["RETRIEVAL_QUERY"]
    assert q_req.path == "/v1beta/models/gemini-embedding-001:embedContent"
    assert d_req.route == "gemini.batchEmbedContents" and d_req.task_types == ["RETRIEVAL_DOCUMENT"] * 2
    assert q_req.headers["x-goog-api-key"] == GEMINI_KEY and "authorization" not in q_req.headers
    assert np.allclose(query, api_server.gemini_vector("what does Bob drink?"))
    assert np.allclose(docs[1], api_server.gemini_vector("We ship on Tuesdays."))
    assert p.dims == api_server.gemini_dims


def test_at_most_100_texts_per_request_in_order(api_server):
    texts = [f"fact {i} about topic {i % 7}" for i in range(250)]
    vectors = provider(api_server, concurrency=3).embed_batch(texts)
    sent = api_server.requests("gemini.batchEmbedContents")
    assert len(sent) == 3 and all(r.status == 200 and len(r.inputs) <= 100 for r in sent)
    for text, vec in zip(texts, vectors):
        assert np.allclose(vec, api_server.gemini_vector(text))


def test_long_inputs_are_capped(api_server):
    p = provider(api_server, max_input_tokens=50)
    p.embed_batch(["z" * 1000])
    assert api_server.requests("gemini.batchEmbedContents")[0].inputs == ["z" * 200]


def test_settings_defaults_and_missing_key(tmp_path, api_server):
    agent = make_agent(tmp_path, provider="gemini")
    with pytest.raises(ProviderError) as err:
        create_provider("gemini", agent, app_paths(), env={})
    assert "GEMINI_API_KEY" in str(err.value) and "memory_search.remote.api_key" in str(err.value)
    p = create_provider("gemini", agent, app_paths(), env={"GEMINI_API_KEY": "k"})
    assert (p.base_url, p.model, p.endpoint_key) == (DEFAULT_BASE_URL, DEFAULT_MODEL, DEFAULT_BASE_URL)

    custom = make_agent(
        tmp_path,
        provider="gemini",
        model="models/text-embedding-004",
        remote={"base_url": api_server.gemini_base_url + "/", "api_key": GEMINI_KEY, "headers": {"X-Proxy-Token": "t0ken"}},
    )
    p = create_provider("gemini", custom, app_paths(), env={})
    assert p.model == "text-embedding-004" and p.endpoint_key == f"{api_server.gemini_base_url} headers=x-proxy-token"
    p.embed_query("hi")
    req = api_server.requests("gemini")[0]
    assert req.path.endswith("/models/text-embedding-004:embedContent") and req.headers["x-proxy-token"] == "t0ken"


def test_429_waits_for_retry_after_and_retry_info(api_server):
    api_server.add_fault("gemini.embedContent", 429, "Resource has been exhausted (e.g. check quota).", retry_after="1", times=1)
    retry_info = {
        "error": {
            "code": 429,
            "message": "Quota exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.4s"}],
        }
    }
    api_server.add_fault("gemini.embedContent", 429, body=retry_info, times=1)
    provider(api_server).embed_query("hello")
    first, second, third = api_server.requests("gemini.embedContent")
    assert [first.status, second.status, third.status] == [429, 429, 200]
    assert second.at - first.at >= 0.95 and third.at - second.at >= 0.38


def test_5xx_is_retried_then_gives_up(api_server):
    api_server.add_fault("gemini.batchEmbedContents", 503, "The model is overloaded. Please try again later.", times=2)
    assert len(provider(api_server).embed_batch(["a"])) == 1
    api_server.reset_log()
    api_server.add_fault("gemini.batchEmbedContents", 500, "An internal error has occurred.", times=None)
    with pytest.raises(ProviderError, match=r"HTTP 500 \(INTERNAL\): An internal error has occurred.*4 attempts"):
        provider(api_server).embed_batch(["a"])
    assert len(api_server.requests("gemini.batchEmbedContents")) == 4


@pytest.mark.parametrize(
    "key, model, expected",
    [
        ("wrong-key", DEFAULT_MODEL, "HTTP 400 (INVALID_ARGUMENT): API key not valid. Please pass a valid API key."),
        (GEMINI_KEY, "no-such-model", "HTTP 404 (NOT_FOUND): models/no-such-model is not found"),
    ],
)
def test_client_errors_fail_at_once_with_googles_message(api_server, key, model, expected):
    with pytest.raises(ProviderError) as err:
        provider(api_server, key=key, model=model).embed_query("hello")
    assert expected in str(err.value)
    assert len(api_server.requests("gemini")) == 1


def test_a_slow_answer_times_out(api_server):
    """Document requests (sync): a timeout per attempt, each retried."""
    api_server.add_fault("gemini.batchEmbedContents", status=None, delay_s=1.0, times=None)
    p = provider(api_server, document_timeout_s=0.2, retry=RetryPolicy(retries=2, base_delay_s=0.01))
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out"):
        p.embed_batch(["hello"])
    assert time.monotonic() - started < 1.5 and len(api_server.requests("gemini")) == 3


def test_a_hanging_server_costs_a_query_one_timeout_not_one_per_attempt(api_server):
    api_server.add_fault("gemini.embedContent", status=None, delay_s=3.0, times=None)
    p = provider(api_server, query_timeout_s=0.5)  # 3 retries, as by default
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"timed out \(the 0.5 s query timeout \(remote\.query_deadline_ms\) passed\)"):
        p.embed_query("hello")
    assert 0.45 < time.monotonic() - started < 1.0  # per attempt it would be 4 x 0.5 s
    assert len(api_server.requests("gemini")) == 1
    assert GeminiProvider(RemoteTarget("k", "http://127.0.0.1:9", DEFAULT_MODEL)).query_timeout_s == 5.0


def test_a_retry_delay_above_the_cap_fails_at_once_saying_when_to_retry(api_server):
    retry_info = {
        "error": {
            "code": 429,
            "message": "Quota exceeded for quota metric 'Embed requests per minute'",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "90s"}],
        }
    }
    api_server.add_fault("gemini.batchEmbedContents", 429, body=retry_info, times=None)
    with pytest.raises(ProviderError) as err:
        provider(api_server).embed_batch(["a"])
    assert len(api_server.requests("gemini")) == 1
    message = str(err.value)
    assert "HTTP 429 (RESOURCE_EXHAUSTED): Quota exceeded" in message and "retry after 90 s, at " in message


def test_sync_and_search_with_gemini(workspace, tmp_path, api_server):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", provider="gemini", remote={"base_url": api_server.gemini_base_url})
    with MemoryIndex(agent, env={"GEMINI_API_KEY": GEMINI_KEY}) as idx:
        report = idx.sync()
        assert report.texts_embedded == 3 + 7 and report.provider_error is None  # three chunks, seven entries
        for text, vec in stored_vectors(idx.db_path).items():
            assert np.allclose(vec, unit(api_server.gemini_vector(text)), atol=1e-5)
        hits = idx.search("green tea")
        assert hits.mode == "hybrid" and hits.provider == "gemini" and hits.model == DEFAULT_MODEL
        assert hits[0].path == "MEMORY.md"
        assert idx.status().vector.dims == api_server.gemini_dims and idx.status().batch is None
    assert api_server.requests("gemini.embedContent")[-1].task_types == ["RETRIEVAL_QUERY"]
