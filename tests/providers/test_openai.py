"""The ``openai`` provider and its Batch API path, against a real HTTP server.

The official ``openai`` client talks over TCP to ``tests/servers.py``'s
server on 127.0.0.1, which speaks OpenAI's wire format (base64 and float
vectors, files, batches, error bodies, Retry-After, slow answers) and logs
every request, so the assertions are about what went over the wire.
"""

from __future__ import annotations

import email.utils
import json
import re
import threading
import time

import numpy as np
import pytest
from conftest import make_agent
from servers import OPENAI_KEY, EmbeddingAPIServer, stored_vectors, unit

from memext.engine import CacheStatus, MemoryIndex
from memext.engine.errors import ProviderError
from memext.engine.paths import app_paths
from memext.engine.providers import create_provider
from memext.engine.providers.openai import DEFAULT_BASE_URL, DEFAULT_MODEL, INLINE_GROUP_SIZE, OpenAIProvider
from memext.engine.providers.openai_batch import BatchPending
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy
from memext.engine.settings import BatchSettings
from memext.engine.store.sqlite.store import Store

#: DESIGN.md §6's retry count, with delays short enough for tests.
FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
MODEL = "text-embedding-3-small"


def provider(server: EmbeddingAPIServer, key: str = OPENAI_KEY, **kw) -> OpenAIProvider:
    kw.setdefault("retry", FAST)
    headers = kw.pop("headers", {})
    return OpenAIProvider(RemoteTarget(key, server.openai_base_url, kw.pop("model", MODEL), headers), **kw)


def openai_agent(ws, tmp_path, server, batch=None, **settings):
    remote = {"base_url": server.openai_base_url}
    if batch is not None:
        remote["batch"] = batch
    return make_agent(ws, db_path=tmp_path / "idx.sqlite", provider="openai", remote=remote, **settings)


ENV = {"OPENAI_API_KEY": OPENAI_KEY}


# -- embeddings ------------------------------------------------------------------


@pytest.mark.parametrize("float_only", [False, True], ids=["base64", "float"])
def test_vectors_come_back_in_input_order(float_only):
    texts = ["Anna leads billing", "Bob likes green tea", "we ship on Tuesdays", "Anna leads billing"]
    with EmbeddingAPIServer(float_only=float_only) as server:
        p = provider(server)
        vectors = p.embed_batch(texts)
        query = p.embed_query("green tea")
        sent = server.requests("openai.embeddings")
    # The server shuffles ``data``; the provider must order by ``index``.
    for text, vec in zip(texts, vectors):
        assert np.allclose(vec, server.openai_vector(text), atol=1e-6)
    assert np.allclose(query, server.openai_vector("green tea"), atol=1e-6)
    assert p.dims == server.openai_dims
    # The real client asks for base64; the float-only server ignores that.
    assert all(r.body["encoding_format"] == "base64" and r.body["model"] == MODEL for r in sent)


def test_key_headers_and_endpoint_key(api_server, tmp_path):
    agent = make_agent(
        tmp_path,
        provider="openai",
        remote={"base_url": api_server.openai_base_url, "api_key": OPENAI_KEY, "headers": {"X-Team": "s3cret-team"}},
    )
    p = create_provider("openai", agent, app_paths(), env={})
    p.embed_query("hello")
    seen = api_server.requests("openai.embeddings")[0].headers
    assert seen["authorization"] == f"Bearer {OPENAI_KEY}" and seen["x-team"] == "s3cret-team"
    # The endpoint key names the headers but never holds a secret.
    assert p.endpoint_key == f"{api_server.openai_base_url} headers=x-team"
    assert OPENAI_KEY not in p.endpoint_key and "s3cret" not in p.endpoint_key
    assert p.model == DEFAULT_MODEL


def test_key_from_env_and_clear_error_without_one(tmp_path):
    agent = make_agent(tmp_path, provider="openai")
    with pytest.raises(ProviderError) as err:
        create_provider("openai", agent, app_paths(), env={})
    assert "OPENAI_API_KEY" in str(err.value) and "memory_search.remote.api_key" in str(err.value)
    p = create_provider("openai", agent, app_paths(), env={"OPENAI_API_KEY": "sk-env"})
    assert p.base_url == DEFAULT_BASE_URL and p.endpoint_key == DEFAULT_BASE_URL
    assert p.batch_group_size == 256  # inline: the engine hands over groups


def test_requests_are_packed_under_the_input_limit():
    # 40 texts of 12-30 tokens against a server that refuses requests over 100 tokens.
    texts = [("word%d " % i) * (8 + i % 15) for i in range(40)]
    long_text = "x" * 1000  # 250 tokens: over the 60-token input limit
    with EmbeddingAPIServer(max_request_tokens=100, max_input_tokens=60) as server:
        p = provider(server, max_input_tokens=60, max_request_tokens=100, concurrency=2)
        vectors = p.embed_batch(texts + [long_text])
        sent = server.requests("openai.embeddings")
    assert len(sent) > 5 and all(r.status == 200 for r in sent)
    assert all(sum(-(-len(t) // 4) for t in r.inputs) <= 100 for r in sent)
    assert sorted(t for r in sent for t in r.inputs)[:-1] == sorted(texts)  # each sent once
    capped = max((t for r in sent for t in r.inputs), key=len)
    assert capped == "x" * 240  # cut to the input limit instead of a 400
    for text, vec in zip(texts, vectors):
        assert np.allclose(vec, server.openai_vector(text), atol=1e-6)


def test_concurrency_is_bounded_and_progress_reported():
    with EmbeddingAPIServer() as server:
        server.add_fault("openai.embeddings", status=None, delay_s=0.15, times=None)  # slow but fine
        p = provider(server, concurrency=3, max_request_inputs=1)
        seen: list[tuple[int, int]] = []
        p.embed_batch([f"text {i}" for i in range(9)], lambda done, total: seen.append((done, total)))
        assert server.max_in_flight["openai.embeddings"] == 3
    assert [d for d, _ in seen] == list(range(1, 10)) and {t for _, t in seen} == {9}


# -- failures ----------------------------------------------------------------------


def test_429_waits_as_long_as_retry_after_says(api_server):
    api_server.add_fault("openai.embeddings", 429, "Rate limit reached for requests", retry_after="1", times=1)
    api_server.add_fault("openai.embeddings", 429, "Rate limit reached for requests", times=1)
    vec = provider(api_server).embed_query("hello")
    first, second, third = api_server.requests("openai.embeddings")
    assert [first.status, second.status, third.status] == [429, 429, 200]
    assert second.at - first.at >= 0.95  # Retry-After: 1, although the backoff is 10 ms
    assert third.at - second.at < 0.5  # no Retry-After: the policy's backoff
    assert np.allclose(vec, api_server.openai_vector("hello"), atol=1e-6)


@pytest.mark.parametrize("retry_after", ["120", "http-date"])
def test_a_retry_after_above_the_cap_fails_at_once_saying_when_to_retry(api_server, retry_after):
    """A server that asks for more than 60 s is not hit again early (with
    backoff); the error carries its message and when it said to come back."""
    if retry_after == "http-date":
        retry_after = email.utils.formatdate(time.time() + 181, usegmt=True)
    api_server.add_fault("openai.embeddings", 429, "Rate limit reached for requests", retry_after=retry_after, times=None)
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        provider(api_server).embed_batch(["a"])
    assert time.monotonic() - started < 1.0 and len(api_server.requests("openai.embeddings")) == 1
    message = str(err.value)
    assert "HTTP 429: Rate limit reached for requests" in message
    assert re.search(r"the server asks to retry after [23] min, at \d\d:\d\d:\d\d; not retried sooner", message), message


def test_a_retry_after_up_to_the_cap_is_waited_for(api_server):
    api_server.add_fault("openai.embeddings", 429, "Rate limit reached for requests", retry_after="1.5", times=1)
    p = provider(api_server, retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_retry_after_s=1.5))
    assert len(p.embed_batch(["a"])) == 1
    first, second = api_server.requests("openai.embeddings")
    assert (first.status, second.status) == (429, 200) and second.at - first.at >= 1.45
    assert RetryPolicy().max_retry_after_s == 60.0


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried(api_server, status):
    api_server.add_fault("openai.embeddings", status, times=2)
    p = provider(api_server)
    assert len(p.embed_batch(["a", "b"])) == 2
    assert [r.status for r in api_server.requests("openai.embeddings")] == [status, status, 200]


def test_5xx_gives_up_after_three_retries_with_the_servers_message(api_server):
    api_server.add_fault("openai.embeddings", 500, "The engine is currently overloaded", times=None)
    with pytest.raises(ProviderError) as err:
        provider(api_server).embed_batch(["a"])
    assert len(api_server.requests("openai.embeddings")) == 4  # 1 + 3 retries
    assert "HTTP 500: The engine is currently overloaded" in str(err.value) and "4 attempts" in str(err.value)


def test_default_backoff_is_half_a_second_to_eight():
    policy = RetryPolicy()
    for attempt, low in enumerate([0.5, 1.0, 2.0, 4.0, 8.0, 8.0]):
        delays = [policy.backoff(attempt) for _ in range(50)]
        assert all(low <= d <= min(low * 1.25, 8.0) for d in delays)
    assert policy.retries == 3 and policy.delay(0, retry_after=3.0) == 3.0


@pytest.mark.parametrize(
    "key, model, status, message",
    [
        ("sk-wrong", MODEL, 401, "Incorrect API key provided"),
        (OPENAI_KEY, "text-embedding-9", 404, "The model `text-embedding-9` does not exist"),
    ],
)
def test_client_errors_fail_at_once_with_the_servers_message(api_server, key, model, status, message):
    with pytest.raises(ProviderError) as err:
        provider(api_server, key=key, model=model).embed_query("hello")
    assert f"HTTP {status}: {message}" in str(err.value)
    assert len(api_server.requests("openai.embeddings")) == 1


def test_400_fails_at_once(api_server):
    api_server.add_fault("openai.embeddings", 400, "'$.input' is invalid.", times=None)
    with pytest.raises(ProviderError, match=r"HTTP 400: '\$.input' is invalid"):
        provider(api_server).embed_batch(["a"])
    assert len(api_server.requests("openai.embeddings")) == 1


def test_a_slow_answer_times_out_and_is_retried(api_server):
    """Document requests (sync) have a timeout per attempt, and a timed-out
    attempt is retried."""
    api_server.add_fault("openai.embeddings", status=None, delay_s=1.0, times=None)
    p = provider(api_server, document_timeout_s=0.2, retry=RetryPolicy(retries=1, base_delay_s=0.01))
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out"):
        p.embed_batch(["hello"])
    assert time.monotonic() - started < 1.0
    assert len(api_server.requests("openai.embeddings")) == 2

    api_server.clear_faults()
    api_server.add_fault("openai.embeddings", status=None, delay_s=1.0, times=1)  # only the first is slow
    assert len(p.embed_batch(["hello"])) == 1


def test_a_hanging_server_costs_a_query_one_timeout_not_one_per_attempt(api_server):
    api_server.add_fault("openai.embeddings", status=None, delay_s=3.0, times=None)
    p = provider(api_server, query_timeout_s=0.5)  # 3 retries, as by default
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"timed out \(the 0.5 s query timeout \(remote\.query_deadline_ms\) passed\)"):
        p.embed_query("hello")
    elapsed = time.monotonic() - started
    assert 0.45 < elapsed < 1.0  # one timeout; per attempt it would be 4 x 0.5 s
    assert len(api_server.requests("openai.embeddings")) == 1


def test_quick_failures_are_still_retried_within_the_query_timeout(api_server):
    api_server.add_fault("openai.embeddings", 503, times=2)
    p = provider(api_server, query_timeout_s=2.0)
    assert len(p.embed_query("hello")) == api_server.openai_dims
    assert [r.status for r in api_server.requests("openai.embeddings")] == [503, 503, 200]


def test_a_retry_after_beyond_the_query_timeout_fails_the_query_at_once(api_server):
    api_server.add_fault("openai.embeddings", 429, "Rate limit reached for requests", retry_after="5", times=None)
    p = provider(api_server, query_timeout_s=2.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        p.embed_query("hello")
    assert time.monotonic() - started < 1.0 and len(api_server.requests("openai.embeddings")) == 1
    assert "HTTP 429: Rate limit reached" in str(err.value)
    assert "the server asks to retry after 5 s, beyond the 2 s query timeout" in str(err.value)


def test_a_query_waits_5_seconds_by_default_and_a_syncs_call_60():
    p = OpenAIProvider(RemoteTarget("k", "http://127.0.0.1:9", MODEL))
    assert (p.query_timeout_s, p.embedding_deadline_s) == (5.0, 60.0)


@pytest.mark.parametrize("name", ["openai", "gemini"])
def test_the_deadlines_come_from_the_remote_settings(tmp_path, name):
    """`remote.deadline_ms` bounds one embedding call of a sync (what a
    silent server holds the writer lock for), `remote.query_deadline_ms` a
    query (someone waits for it), never longer than a sync's call; options
    a caller passes win."""
    from memext.engine.providers import gemini, openai as openai_module

    create = {"openai": openai_module.create, "gemini": gemini.create}[name]
    agent = make_agent(tmp_path / "ws", provider=name, remote={"api_key": "k", "deadline_ms": 2500})
    p = create(agent, app_paths())
    assert p.query_timeout_s == p.embedding_deadline_s == 2.5  # the query's 5 s capped at a call's
    p = create(agent, app_paths(), query_timeout_s=0.5)
    assert (p.query_timeout_s, p.embedding_deadline_s) == (0.5, 2.5)
    default = create(make_agent(tmp_path / "ws", provider=name, remote={"api_key": "k"}), app_paths())
    assert (default.query_timeout_s, default.embedding_deadline_s) == (5.0, 60.0)
    both = make_agent(tmp_path / "ws", provider=name, remote={"api_key": "k", "query_deadline_ms": 1200, "deadline_ms": 9000})
    p = create(both, app_paths())
    assert (p.query_timeout_s, p.embedding_deadline_s) == (1.2, 9.0)


def test_a_server_that_is_down_is_retried_then_reported():
    server = EmbeddingAPIServer().start()
    server.stop()
    with pytest.raises(ProviderError, match="cannot connect"):
        provider(server).embed_query("hello")


# -- the embedding cache, seen from the server ---------------------------------------


def test_forced_rebuild_of_unchanged_files_sends_no_embedding_request(example_workspace, tmp_path, api_server):
    agent = openai_agent(example_workspace, tmp_path, api_server, chunking={"tokens": 60, "overlap": 10})
    with MemoryIndex(agent, env=ENV) as idx:
        first = idx.sync()
        embedded = api_server.inputs("openai.embeddings")
        assert first.texts_embedded == len(embedded) > 20
        api_server.reset_log()

        rebuilt = idx.sync(force=True)
        assert rebuilt.rebuilt and rebuilt.cache_hits == first.texts_embedded
        assert api_server.requests("openai.embeddings") == []

        note = example_workspace / "memory" / "2026-10-12.md"
        note.write_text(note.read_text(encoding="utf-8") + "\n- Decided to rename the nightly job to night-owl.\n", encoding="utf-8")
        edited = idx.sync()
        sent = api_server.inputs("openai.embeddings")
        assert edited.files_indexed == 1 and sent and len(sent) == edited.texts_embedded
        assert all(t in note.read_text(encoding="utf-8") for t in sent)  # only the edited file's new chunks
        assert any("night-owl" in t for t in sent)
        hits = idx.search("night-owl nightly job")
        assert hits.mode == "hybrid" and hits[0].path == "memory/2026-10-12.md"


def test_cache_max_entries_prunes_the_cache_during_a_sync(example_workspace, tmp_path, api_server):
    agent = openai_agent(example_workspace, tmp_path, api_server, chunking={"tokens": 60, "overlap": 10}, cache={"max_entries": 5})
    with MemoryIndex(agent, env=ENV) as idx:
        first = idx.sync()
        assert first.texts_embedded == len(api_server.inputs("openai.embeddings")) > 20
        st = idx.status()
        assert st.cache == CacheStatus(enabled=True, entries=5, max_entries=5)
        assert sum(st.chunks.values()) > 20
        store = Store(idx.db_path)
        try:
            assert store.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] == 5
        finally:
            store.close()

        # A rebuild finds only the 5 kept vectors; the rest are embedded again.
        api_server.reset_log()
        rebuilt = idx.sync(force=True)
        assert rebuilt.cache_hits == 5 and rebuilt.texts_embedded == first.texts_embedded - 5
        assert len(api_server.inputs("openai.embeddings")) == rebuilt.texts_embedded
        assert idx.status().cache.entries == 5


# -- Batch API ------------------------------------------------------------------------


def test_one_batch_job_for_a_sync_across_files(workspace, tmp_path, api_server):
    # More chunks than any inline group, spread over many files: still one job.
    for day in range(10, 16):
        lines = [f"- Day {day} fact {i}: the {('red', 'blue', 'green')[i % 3]} team shipped item {day * 100 + i}." for i in range(60)]
        (workspace / "memory" / f"2026-01-{day}.md").write_text(f"# 2026-01-{day}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    (workspace / "memory" / "2026-01-07.md").write_text("# 2026-01-07\n\n- Carla joined the search team.\n", encoding="utf-8")
    agent = openai_agent(
        workspace, tmp_path, api_server, batch={"enabled": True, "poll_interval_ms": 10}, chunking={"tokens": 20, "overlap": 0}
    )
    progress = []
    with MemoryIndex(agent, env=ENV) as idx:
        report = idx.sync(progress=progress.append)
        routes = [r.route for r in api_server.requests()]
        assert routes.count("openai.files.create") == 1 and routes.count("openai.batches.create") == 1
        assert routes.count("openai.batches.retrieve") >= 1 and "openai.embeddings" not in routes
        assert report.files_indexed == 10 and report.embed_calls == 1 and report.texts_embedded > INLINE_GROUP_SIZE

        # The one input file holds the chunks of every file, as /v1/embeddings requests.
        upload = next(f for f in api_server.files.values() if f["purpose"] == "batch")
        lines = [json.loads(line) for line in upload["content"].decode().splitlines()]
        assert {line["url"] for line in lines} == {"/v1/embeddings"} and len(lines) == report.texts_embedded
        assert len({line["custom_id"] for line in lines}) == len(lines)
        joined = " ".join(line["body"]["input"] for line in lines)
        assert all(word in joined for word in ("Anna", "a828e60", "roadmap", "Carla", "item 1059", "item 1559"))

        # The output was shuffled; mapping by custom_id puts each vector on its text.
        stored = stored_vectors(idx)
        assert len(stored) == report.chunks_written
        for text, vec in stored.items():
            assert np.allclose(vec, unit(api_server.openai_vector(text)), atol=1e-5)
        assert any(p.phase == "embed" and p.chunks_done == report.chunks_written for p in progress)  # counted in chunks

        st = idx.status().batch
        assert st.active and st.failures == 0 and st.jobs_completed == 1
        assert st.jobs[0].status == "completed" and st.jobs[0].requests == len(lines)
        assert idx.search("who joined the search team").mode == "hybrid"


def test_closing_stops_waiting_for_a_job(api_server):
    api_server.batch_outcomes = ["never"]
    p = provider(api_server, batch=BatchSettings(enabled=True, poll_interval_ms=20, timeout_minutes=5))
    errors: list[Exception] = []

    def work() -> None:
        try:
            p.embed_batch(["alpha"])
        except ProviderError as exc:
            errors.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.3)
    p.close()
    worker.join(timeout=5)
    assert not worker.is_alive() and "the index is closing" in str(errors[0])
    assert api_server.requests("openai.embeddings") == [] and p.batch_status().failures == 0


def test_two_batch_failures_switch_to_inline_for_the_rest_of_the_process(workspace, tmp_path, api_server):
    api_server.batch_outcomes = ["failed", "failed"]
    agent = openai_agent(workspace, tmp_path, api_server, batch={"enabled": True, "poll_interval_ms": 10})
    note = workspace / "memory" / "2026-01-05.md"
    with MemoryIndex(agent, env=ENV) as idx:
        first = idx.sync()  # batch fails, the texts go inline
        assert first.provider_error is None and first.texts_embedded == 3 + 7  # three chunks, seven entries
        assert len(api_server.requests("openai.batches.create")) == 1 and len(api_server.inputs("openai.embeddings")) == 3 + 7
        st = idx.status().batch
        assert st.failures == 1 and st.active and "failed" in st.last_error

        note.write_text(note.read_text() + "- Second edit.\n")
        idx.sync()  # the batch path is tried once more, fails again
        st = idx.status().batch
        assert len(api_server.requests("openai.batches.create")) == 2
        assert st.failures == 2 and not st.active and st.mode == "inline"
        assert "failed 2 times" in st.disabled_reason

        api_server.reset_log()
        note.write_text(note.read_text() + "- Third edit.\n")
        third = idx.sync()
        routes = {r.route for r in api_server.requests()}
        assert routes == {"openai.embeddings"} and third.texts_embedded == 2  # the chunk and its new entry
        assert idx.status().to_dict()["batch"]["mode"] == "inline"
        assert idx.search("Third edit").mode == "hybrid"


def test_a_batch_that_never_finishes_times_out_is_cancelled_and_goes_inline(api_server):
    api_server.batch_outcomes = ["never"]
    settings = BatchSettings(enabled=True, poll_interval_ms=20, timeout_minutes=0.01)  # 0.6 s
    p = provider(api_server, batch=settings)
    started = time.monotonic()
    vectors = p.embed_batch(["alpha", "beta"])
    assert 0.5 < time.monotonic() - started < 5
    assert len(api_server.requests("openai.batches.cancel")) == 1
    assert len(api_server.requests("openai.batches.retrieve")) >= 3  # polled until the deadline
    assert np.allclose(vectors[1], api_server.openai_vector("beta"), atol=1e-6)
    st = p.batch_status()
    assert st.failures == 1 and "did not finish within 0.01 minutes" in st.last_error


def test_poll_intervals_grow():
    sleeps: list[float] = []
    with EmbeddingAPIServer(batch_polls_to_finish=6) as server:
        p = provider(server, batch=BatchSettings(enabled=True, poll_interval_ms=10), sleep=sleeps.append)
        p.embed_batch(["one", "two"])
    assert len(sleeps) == 6 and sleeps == sorted(sleeps) and sleeps[-1] > sleeps[0] * 5


def test_large_syncs_split_into_jobs_under_the_request_limit(api_server):
    settings = BatchSettings(enabled=True, poll_interval_ms=10, concurrency=2)
    p = provider(api_server, batch=settings, batch_options={"max_requests_per_job": 2})
    texts = [f"note number {i}" for i in range(5)]
    vectors = p.embed_batch(texts)
    assert len(api_server.requests("openai.batches.create")) == 3
    for text, vec in zip(texts, vectors):
        assert np.allclose(vec, api_server.openai_vector(text), atol=1e-6)


def test_failed_lines_are_reported_from_the_error_file():
    with EmbeddingAPIServer(max_input_tokens=20) as server:
        p = provider(server, batch=BatchSettings(enabled=True, poll_interval_ms=10), max_input_tokens=1000)
        with pytest.raises(ProviderError, match="maximum context length is 20 tokens"):
            p.embed_batch(["short", "y" * 400])  # the batch line fails, then so does inline
        assert "maximum context length is 20 tokens" in p.batch_status().last_error
        assert "returned no embedding for 1 of 2 texts" in p.batch_status().last_error


def test_wait_false_collects_the_job_in_a_later_call(api_server, tmp_path):
    settings = BatchSettings(enabled=True, wait=False, poll_interval_ms=10)
    state = tmp_path / "batches.json"
    with pytest.raises(BatchPending, match="remote.batch.wait = false"):
        provider(api_server, batch=settings, batch_state_file=state).embed_batch(["alpha", "beta"])
    assert json.loads(state.read_text())["jobs"][0]["id"]

    later = provider(api_server, batch=settings, batch_state_file=state)  # e.g. the next process
    with pytest.raises(BatchPending):  # still running: nothing new is submitted
        later.embed_batch(["alpha", "beta"])
    assert len(api_server.requests("openai.batches.create")) == 1
    vectors = later.embed_batch(["beta", "alpha"])
    assert np.allclose(vectors[0], api_server.openai_vector("beta"), atol=1e-6)
    assert len(api_server.requests("openai.batches.create")) == 1 and api_server.requests("openai.embeddings") == []
    assert json.loads(state.read_text())["jobs"] == [] and later.batch_status().failures == 0


def test_wait_false_through_the_index(workspace, tmp_path, api_server):
    agent = openai_agent(workspace, tmp_path, api_server, batch={"enabled": True, "wait": False, "poll_interval_ms": 10})
    agent = agent._replace(settings=agent.settings._replace(fallback="gemini"))
    with MemoryIndex(agent, env=ENV) as idx:
        first = idx.sync()  # submitted; the files are searchable by keyword meanwhile
        # Pending is not a failure: no provider error, and no switch to the fallback.
        assert "remote.batch.wait = false" in first.embeddings_pending and first.files_indexed == 3
        assert first.provider_error is None and idx.status().fallback is None
        assert len(idx.status().batch.pending) == 1 and idx.search("green tea").mode == "keyword"
        idx.sync()  # the job is still running: nothing new is submitted
        third = idx.sync()  # finished: collected by custom_id
        assert third.provider_error is None and third.texts_embedded == 3 + 7  # three chunks, seven entries
        assert idx.status().batch.pending == () and idx.search("green tea").mode == "hybrid"
    assert len(api_server.requests("openai.batches.create")) == 1
    assert api_server.inputs("openai.embeddings") == ["green tea"]  # only the query went inline
