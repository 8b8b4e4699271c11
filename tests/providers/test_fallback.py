"""Provider failures seen through ``MemoryIndex``: fallback with a rebuild,
and keyword-only search during an outage (DESIGN.md §6-7).

One real HTTP server on 127.0.0.1 speaks both OpenAI's and Gemini's wire
formats behind the same ``remote.base_url`` (like a gateway serving both),
so ``provider = "openai"`` can fail while ``fallback = "gemini"`` works.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import make_agent
from servers import GEMINI_KEY, OPENAI_KEY, stored_vectors, unit

from memext.engine import IndexBuildError, MemoryIndex
from memext.engine.paths import app_paths
from memext.engine.providers.openai import OpenAIProvider
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy
from memext.engine.store import open_store

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
KEYS = {"OPENAI_API_KEY": OPENAI_KEY, "GEMINI_API_KEY": GEMINI_KEY}


def agent_for(ws, tmp_path, server, **settings):
    settings.setdefault("fallback", "gemini")
    return make_agent(ws, db_path=tmp_path / "idx.sqlite", provider="openai", remote={"base_url": server.openai_base_url}, **settings)


def fast_openai(server) -> OpenAIProvider:
    """The configured provider, with retry delays short enough for a test."""
    return OpenAIProvider(RemoteTarget(OPENAI_KEY, server.openai_base_url, "text-embedding-3-small"), retry=FAST)


def assert_gemini_index(idx, server) -> None:
    stored = stored_vectors(idx)
    assert stored and all(np.allclose(v, unit(server.gemini_vector(t)), atol=1e-5) for t, v in stored.items())
    assert idx.status().vector.dims == server.gemini_dims


def test_a_rejected_key_at_the_first_sync_switches_to_the_fallback(workspace, tmp_path, api_server):
    agent = agent_for(workspace, tmp_path, api_server)
    with MemoryIndex(agent, env={**KEYS, "OPENAI_API_KEY": "sk-revoked"}) as idx:
        report = idx.sync()
        assert report.rebuilt and report.provider_error is None and report.texts_embedded == 3 + 7  # three chunks and their seven entries

        st = idx.status()
        assert st.provider.requested == "openai" and st.provider.in_force == "gemini"
        assert st.fallback.from_provider == "openai" and "HTTP 401: Incorrect API key provided" in st.fallback.reason
        assert len(api_server.requests("openai.embeddings")) == 1  # a 401 is not retried
        sent = api_server.inputs("gemini.batchEmbedContents")
        assert set(stored_vectors(idx)) <= set(sent) and len(sent) == report.texts_embedded  # every chunk, and the entries
        assert_gemini_index(idx, api_server)

        hits = idx.search("who prefers green tea")
        assert hits.mode == "hybrid" and hits.provider == "gemini" and hits[0].path == "MEMORY.md"
        assert hits.fallback["from"] == "openai" and "401" in hits.fallback["reason"]
        assert api_server.requests("gemini.embedContent")[-1].task_types == ["RETRIEVAL_QUERY"]


def test_server_errors_during_a_rebuild_switch_to_the_fallback(workspace, tmp_path, api_server):
    agent = agent_for(workspace, tmp_path, api_server)
    with MemoryIndex(agent, provider=fast_openai(api_server), env=KEYS) as idx:
        idx.sync()
        assert idx.status().vector.dims == api_server.openai_dims and idx.status().fallback is None

        api_server.add_fault("openai.embeddings", 500, "The server had an error while processing your request.", times=None)
        note = workspace / "memory" / "2026-01-05.md"
        note.write_text(note.read_text() + "- Rotated the staging certificates.\n")
        report = idx.sync(force=True)  # the edited chunk needs OpenAI, which fails 4 times

        assert len(api_server.requests("openai.embeddings")) == 1 + 4
        assert report.rebuilt and report.provider_error is None
        st = idx.status()
        assert st.provider.in_force == "gemini" and "HTTP 500" in st.fallback.reason
        assert_gemini_index(idx, api_server)
        hits = idx.search("staging certificates")
        assert hits.mode == "hybrid" and hits[0].path == "memory/2026-01-05.md" and hits.fallback["from"] == "openai"


def test_without_a_usable_fallback_sync_goes_keyword_only_and_says_why(workspace, tmp_path, api_server):
    agent = agent_for(workspace, tmp_path, api_server)
    with MemoryIndex(agent, env={"OPENAI_API_KEY": "sk-revoked"}) as idx:  # no Gemini key
        report = idx.sync()
        assert report.files_indexed == 3 and "HTTP 401" in report.provider_error
        assert idx.status().last_error == report.provider_error
        hits = idx.search("green tea")
        assert hits.mode == "keyword" and hits[0].path == "MEMORY.md" and "401" in hits.error and "keyword-only" in hits.notice


def test_a_query_time_outage_returns_keyword_results(workspace, tmp_path, api_server, monkeypatch):
    agent = agent_for(workspace, tmp_path, api_server, fallback="none")
    with MemoryIndex(agent, provider=fast_openai(api_server), env=KEYS) as idx:
        idx.sync()
        assert idx.search("green tea").mode == "hybrid"

        api_server.add_fault("openai.embeddings", 500, "The server had an error while processing your request.", times=None)
        hits = idx.search("green tea")
        assert hits.mode == "keyword" and hits[0].path == "MEMORY.md"
        assert "HTTP 500: The server had an error" in hits.error and "keyword-only" in hits.notice

        # During an outage the next searches do not wait on the provider again.
        asked = len(api_server.requests("openai.embeddings"))
        again = idx.search("green tea")
        assert again.mode == "keyword" and "HTTP 500" in again.error and "failed 0 s ago" in again.notice
        assert len(api_server.requests("openai.embeddings")) == asked

        monkeypatch.setattr("memext.engine.search.query_embedding.QUERY_RETRY_AFTER_S", 0.0)  # time to try again
        api_server.stop()  # the endpoint goes away entirely
        hits = idx.search("Tuesdays")
        assert hits.mode == "keyword" and hits[0].path == "MEMORY.md" and "cannot connect" in hits.error
        assert hits.to_dict()["error"] == hits.error


def test_when_the_fallback_fails_too_sync_says_so_and_keeps_the_index(workspace, tmp_path, api_server):
    api_server.add_fault("gemini", 400, "User location is not supported for the API use.", times=None)
    agent = agent_for(workspace, tmp_path, api_server)
    with MemoryIndex(agent, env={**KEYS, "OPENAI_API_KEY": "sk-revoked"}) as idx:
        with pytest.raises(IndexBuildError) as err:
            idx.sync()
        message = str(err.value)
        assert "gemini" in message and "User location is not supported" in message and "previous index is kept" in message
        assert len(api_server.requests("gemini.batchEmbedContents")) == 1  # tried once, not again
        assert "HTTP 401" in idx.status().fallback.reason
        hits = idx.search("green tea")  # the keyword index built before the switch still answers
        assert hits.mode == "keyword" and hits[0].path == "MEMORY.md" and "keyword-only" in hits.notice


def test_a_model_named_for_the_primary_is_not_sent_to_the_fallback(tmp_path, api_server):
    from memext.engine.paths import app_paths
    from memext.engine.providers import choose_provider, create_provider

    agent = agent_for(tmp_path, tmp_path, api_server, model="text-embedding-3-large")
    assert create_provider("openai", agent, app_paths(), KEYS).model == "text-embedding-3-large"
    assert create_provider("gemini", agent, app_paths(), KEYS).model == "gemini-embedding-001"
    # auto picks OpenAI by its key; OPENAI_BASE_URL points it at this server.
    auto = make_agent(tmp_path, provider="auto", allow_remote=["openai"])
    choice = choose_provider(auto, app_paths(), {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": api_server.openai_base_url})
    assert choice.name == "openai" and len(choice.provider.embed_query("hi")) == api_server.openai_dims


def test_the_primarys_key_is_not_sent_to_the_other_vendor(workspace, tmp_path, api_server, monkeypatch):
    """With no shared remote.base_url, a Gemini fallback behind OpenAI uses
    GEMINI_API_KEY and Google's endpoint, never remote.api_key; also when
    ``provider = "auto"`` resolved to OpenAI."""
    from memext.engine.paths import app_paths
    from memext.engine.providers import create_provider
    from memext.engine.providers.remote import remote_target

    secret = {"api_key": "sk-openai-secret", "headers": {"X-Org": "org-123"}}
    agent = make_agent(Path("/tmp"), provider="openai", fallback="gemini", remote=secret)
    target = remote_target(
        "gemini", agent, {"GEMINI_API_KEY": "g-key"}, default_base_url="https://gemini.example", default_model="gemini-embedding-001"
    )
    assert target.api_key == "g-key" and target.base_url == "https://gemini.example" and target.headers == {}
    primary = remote_target("openai", agent, {}, default_base_url="https://openai.example", default_model="m")
    assert primary.api_key == "sk-openai-secret" and primary.headers == {"X-Org": "org-123"}

    # provider = "auto" (the default) resolves to OpenAI by remote.api_key.
    auto = make_agent(
        workspace,
        db_path=tmp_path / "auto.sqlite",
        fallback="gemini",
        model="text-embedding-3-large",
        remote=secret,
        allow_remote=["openai"],
    )
    assert auto.settings.provider == "auto"
    env = {"OPENAI_BASE_URL": api_server.openai_base_url, "GEMINI_API_KEY": GEMINI_KEY}
    gemini = create_provider("gemini", auto, app_paths(), env)  # auto resolved here: the fallback's own settings
    assert (gemini.model, gemini.base_url) == ("gemini-embedding-001", "https://generativelanguage.googleapis.com/v1beta")

    # End to end: OpenAI takes the key but refuses the request, the index
    # falls back to Gemini, whose default endpoint is this server for the test.
    auto = make_agent(
        workspace,
        db_path=tmp_path / "auto.sqlite",
        fallback="gemini",
        model="text-embedding-3-large",
        remote={**secret, "api_key": OPENAI_KEY},
        allow_remote=["openai"],
    )
    api_server.add_fault("openai.embeddings", 403, "Project does not have access to model text-embedding-3-large", times=None)
    monkeypatch.setattr("memext.engine.providers.gemini.DEFAULT_BASE_URL", api_server.gemini_base_url)
    with MemoryIndex(auto, env=env) as idx:
        report = idx.sync()
        assert report.provider_error is None and report.texts_embedded == 3 + 7  # three chunks and their seven entries
        st = idx.status()
        assert (st.provider.requested, st.provider.in_force, st.provider.model) == ("auto", "gemini", "gemini-embedding-001")
        assert st.fallback.from_provider == "openai" and "HTTP 403: Project does not have access" in st.fallback.reason
        assert idx.search("green tea").mode == "hybrid"

    (rejected,) = api_server.requests("openai")  # the primary got its own settings
    assert rejected.headers["authorization"] == f"Bearer {OPENAI_KEY}" and rejected.headers["x-org"] == "org-123"
    assert rejected.body["model"] == "text-embedding-3-large"
    seen = api_server.requests("gemini")
    assert {r.route for r in seen} == {"gemini.batchEmbedContents", "gemini.embedContent"}
    for r in seen:
        assert r.status == 200 and r.headers["x-goog-api-key"] == GEMINI_KEY
        assert "authorization" not in r.headers and "x-org" not in r.headers
        assert not any(OPENAI_KEY in v or "org-123" in v for v in r.headers.values())
        assert "/models/gemini-embedding-001:" in r.path and "text-embedding-3-large" not in json.dumps(r.body)


def test_a_hanging_server_costs_a_search_one_query_timeout(workspace, tmp_path, api_server):
    agent = agent_for(workspace, tmp_path, api_server, fallback="none")
    target = RemoteTarget(OPENAI_KEY, api_server.openai_base_url, "text-embedding-3-small")
    with MemoryIndex(agent, provider=OpenAIProvider(target, query_timeout_s=0.5), env=KEYS) as idx:  # DESIGN.md §6's retry policy
        idx.sync()
        api_server.add_fault("openai.embeddings", status=None, delay_s=5.0, times=None)  # it hangs
        started = time.monotonic()
        hits = idx.search("green tea")
        assert time.monotonic() - started < 1.5  # not 4 attempts x 0.5 s, plus backoff
        assert hits.mode == "keyword" and hits[0].path == "MEMORY.md"
        assert "timed out (the 0.5 s query timeout (remote.query_deadline_ms) passed)" in hits.error and "keyword-only" in hits.notice


@pytest.mark.parametrize("primary", ["local", "openai"])
def test_a_primary_that_cannot_start_hands_over_to_the_fallback(workspace, tmp_path, api_server, primary):
    """``local`` with a missing model file, or ``openai`` with no API key:
    the fallback is in force from the first sync, and status says why."""
    if primary == "local":
        agent = make_agent(
            workspace,
            db_path=tmp_path / "idx.sqlite",
            provider="local",
            fallback="openai",
            local={"model_path": str(tmp_path / "missing.gguf")},
            remote={"base_url": api_server.openai_base_url},
        )
        env, fallback, why = {"OPENAI_API_KEY": OPENAI_KEY}, "openai", "missing.gguf does not exist"
    else:
        agent = agent_for(workspace, tmp_path, api_server)  # openai, fallback gemini, one gateway for both
        env, fallback, why = {"GEMINI_API_KEY": GEMINI_KEY}, "gemini", "no API key for the openai embedding provider"
    with MemoryIndex(agent, env=env) as idx:
        report = idx.sync()
        assert report.provider_error is None and report.texts_embedded == 3 + 7  # three chunks and their seven entries
        st = idx.status()
        assert (st.provider.requested, st.provider.in_force) == (primary, fallback)
        assert st.fallback.from_provider == primary and why in st.fallback.reason
        hits = idx.search("who prefers green tea")
        assert hits.mode == "hybrid" and hits.provider == fallback and hits.fallback["from"] == primary
        assert idx.status().vector.dims == (api_server.openai_dims if fallback == "openai" else api_server.gemini_dims)
    recorded = open_store(agent, agent.db_path(app_paths())).get_meta_json("fallback")
    assert recorded["from"] == primary and recorded["to"] == fallback and why in recorded["reason"]
    if primary == "openai":
        assert api_server.requests("openai") == []  # it never started


def test_auto_picks_gemini_when_only_a_gemini_key_is_set(workspace, tmp_path, api_server):
    """DESIGN.md §6 order: a local model, else an OpenAI key, else a Gemini key."""
    from memext.engine.providers import choose_provider

    agent = make_agent(
        workspace, db_path=tmp_path / "idx.sqlite", remote={"base_url": api_server.gemini_base_url}, allow_remote=["openai", "gemini"]
    )
    assert choose_provider(agent, app_paths(), KEYS).name == "openai"  # both keys: OpenAI first
    with MemoryIndex(agent, env={"GEMINI_API_KEY": GEMINI_KEY}) as idx:
        st = idx.status()
        assert (st.provider.requested, st.provider.in_force, st.provider.embedded) == ("auto", "gemini", "sent to Gemini")
        assert st.provider.reason == "auto: Gemini API key found, sending notes to Gemini allowed (allow_remote)" and st.fallback is None
        idx.sync()
        assert_gemini_index(idx, api_server)
        assert idx.search("green tea").mode == "hybrid"
    assert api_server.requests("openai") == [] and api_server.requests("gemini")


def test_status_names_a_provider_that_failed_to_start(workspace, tmp_path):
    """``failed`` tells a broken provider (the tray shows it as an error)
    from keyword-only by choice."""
    broken = make_agent(workspace, db_path=tmp_path / "a.sqlite", provider="openai", fallback="none")
    with MemoryIndex(broken, env={}) as idx:
        st = idx.status()
        assert st.provider.in_force == "none" and st.provider.failed == "openai"
        assert "no API key for the openai embedding provider" in st.provider.reason
    for choice in ("none", "auto"):
        agent = make_agent(workspace, db_path=tmp_path / f"{choice}.sqlite", provider=choice)
        with MemoryIndex(agent, env={}) as idx:
            assert idx.status().provider.failed is None


def test_auto_names_a_configured_model_file_that_is_missing(workspace, tmp_path):
    gone = tmp_path / "models" / "moved-away.gguf"
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", local={"model_path": str(gone)})
    with MemoryIndex(agent, env={}) as idx:
        reason = idx.status().provider.reason or ""
    assert str(gone) in reason and "is missing" in reason and "no local model" not in reason
    assert "local.model_path" in reason
