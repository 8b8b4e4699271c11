"""An embedding server answering with the wrong dimension: searches and
syncs recover by themselves once it is healthy. The real
``openai`` client against the real HTTP server in tests/servers.py; a
"dims:N" fault answers one request with vectors of N values."""

from __future__ import annotations

import json
import time

import pytest
from conftest import make_agent
from servers import OPENAI_KEY, two_agents_cli

from memext.engine import MemoryIndex

ENV = {"OPENAI_API_KEY": OPENAI_KEY}


def agent_for(workspace, tmp_path, api_server, **settings):
    return make_agent(
        workspace, db_path=tmp_path / "idx.sqlite", provider="openai", remote={"base_url": api_server.openai_base_url}, **settings
    )


@pytest.fixture
def built(workspace, tmp_path, api_server):
    agent = agent_for(workspace, tmp_path, api_server)
    with MemoryIndex(agent, env=ENV) as idx:
        idx.sync()
        assert idx.search("Anna billing").mode == "hybrid"
    return agent


def test_a_wrong_size_query_answer_costs_one_search_only(built, api_server):
    with MemoryIndex(built, env=ENV) as idx:
        assert idx.search("Anna billing").mode == "hybrid"  # the provider knows the size now
        api_server.add_fault("openai.embeddings", status=None, vectors="dims:7", times=1)
        bad = idx.search("Anna billing")
        assert bad.mode == "keyword" and bad.notice and "7 dimensions" in bad.notice
        assert bad.results  # keyword results still
        again = idx.search("Anna billing")  # the old code stayed keyword-only for 30 s
        assert again.mode == "hybrid" and again.notice is None
        assert idx.status().keyword_only_reason is None


def test_a_fresh_process_whose_first_answer_has_the_wrong_size(built, api_server):
    """Nothing known yet but the index: its size judges the first answer."""
    with MemoryIndex(built, env=ENV) as idx:
        api_server.add_fault("openai.embeddings", status=None, vectors="dims:7", times=1)
        assert idx.search("Anna billing").mode == "keyword"
        assert idx.search("Anna billing").mode == "hybrid"
        assert not idx.settings_changed()  # a wrong size never looks like a new model
        report = idx.sync()
        assert not report.rebuilt and report.provider_error is None


def test_a_sync_that_got_the_wrong_size_is_caught_up_by_the_next(built, workspace, api_server, monkeypatch):
    from memext.engine import index as index_module

    note = workspace / "memory" / "2026-01-08.md"
    with MemoryIndex(built, env=ENV) as idx:
        assert idx.search("Anna billing").mode == "hybrid"  # the provider has answered in the index's size
        note.write_text("- The walrus project moved to Friday.\n")
        api_server.add_fault("openai.embeddings", status=None, vectors="dims:7", times=None)
        report = idx.sync()
        assert report.provider_error and "7 dimensions" in report.provider_error and not report.rebuilt
        st = idx.status()
        assert st.last_error and "7 dimensions" in st.last_error
        api_server.clear_faults()
        # The file is keyword-only: a sync would change the index, once the
        # failure is old enough not to make every search wait on an outage.
        assert not idx.needs_sync()
        monkeypatch.setattr(index_module, "RETRY_EMBEDDINGS_AFTER_S", 0.0)
        assert idx.needs_sync()
        again = idx.sync()
        assert again.provider_error is None and again.files_indexed == 1
        assert idx.status().last_error is None and not idx.needs_sync()
        hit = idx.search("walrus project Friday")
        assert hit.mode == "hybrid" and hit.results[0].path == "memory/2026-01-08.md"


def test_a_fresh_process_syncing_against_a_wrong_size_server_keeps_the_index(built, workspace, api_server):
    """The first answer of a fresh process (the sync asking the model's
    size) is of the wrong size: asked again, the model answers in the
    index's size, so it is a bad answer, not a new model (no rebuild, no
    failure)."""
    (workspace / "memory" / "2026-01-09.md").write_text("- Otters were seen near the dock.\n")
    with MemoryIndex(built, env=ENV) as idx:
        api_server.add_fault("openai.embeddings", status=None, vectors="dims:7", times=1)
        report = idx.sync()
        assert not report.rebuilt and report.provider_error is None and report.texts_embedded == 1
        assert idx.search("otters dock").results[0].path == "memory/2026-01-09.md"
        assert idx.search("otters dock").mode == "hybrid"


def test_a_failure_is_shared_with_other_processes_for_the_same_endpoint(tmp_path, api_server):
    """A query that ran out its deadline is written down: another embedder
    (another process) reading the same folder backs off without asking the
    server; another endpoint, a torn record and an old one do not."""
    from memext.engine.providers.openai import OpenAIProvider
    from memext.engine.providers.remote import RemoteTarget
    from memext.engine.providers.retry import RetryPolicy
    from memext.engine.search.query_embedding import QUERY_RETRY_AFTER_S, QueryEmbedder, shared_record

    def provider(base_url: str) -> OpenAIProvider:
        fast = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
        return OpenAIProvider(RemoteTarget(OPENAI_KEY, base_url, "text-embedding-3-small"), retry=fast, query_timeout_s=1.0)

    here = provider(api_server.openai_base_url)
    api_server.add_fault("openai.embeddings", status=None, times=None, delay_s=30.0)
    vec, error, notice = QueryEmbedder(tmp_path).vector(here, "heron", 64)
    assert vec is None and "the 1 s query timeout (remote.query_deadline_ms) passed" in (error or "")
    api_server.reset_log()
    vec, error, notice = QueryEmbedder(tmp_path).vector(provider(api_server.openai_base_url), "heron", 64)
    assert vec is None and "the embedding provider failed" in (notice or "") and api_server.requests() == []
    assert QueryEmbedder(tmp_path).backing_off(provider("http://127.0.0.1:9/v1")) is None  # another endpoint
    record = shared_record(tmp_path, here)
    assert record is not None and record.parent == tmp_path
    record.write_text('{"at": ', encoding="utf-8")  # torn
    assert QueryEmbedder(tmp_path).backing_off(here) is None
    record.write_text(json.dumps({"at": time.time() - QUERY_RETRY_AFTER_S - 1, "error": "old"}), encoding="utf-8")
    assert QueryEmbedder(tmp_path).backing_off(here) is None


# -- a silent provider costs a search its own short deadline ---------------------------

#: What a deadline may overrun by: thread hand-over and a loaded CI machine.
SLACK_S = 1.5
SILENT = {
    "hang": {"status": None, "delay_s": 120.0},
    "trickle": {"status": None, "trickle_s": 1.0},
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("behaviour", list(SILENT))
def test_a_search_waits_for_a_silent_provider_its_query_deadline_only(built, api_server, behaviour):
    """With the settings a user gets (a sync's call may take
    `remote.deadline_ms`, 60 s), a search against a server that stopped
    answering gives up the query embedding after `remote.query_deadline_ms`
    (5 s), answers by keyword and says why; the old code waited the sync's
    60 s."""
    from memext.engine.providers.openai import QUERY_TIMEOUT_S

    with MemoryIndex(built, env=ENV) as idx:
        api_server.add_fault("openai.embeddings", times=None, **SILENT[behaviour])
        started = time.monotonic()
        response = idx.search("Anna billing")
        elapsed = time.monotonic() - started
    print(f"\nsearch, server {behaviour}: answered after {elapsed:.2f} s (default query deadline {QUERY_TIMEOUT_S:g} s)")
    assert QUERY_TIMEOUT_S - 0.2 < elapsed < QUERY_TIMEOUT_S + SLACK_S
    assert response.mode == "keyword" and response.results
    assert f"the {QUERY_TIMEOUT_S:g} s query timeout (remote.query_deadline_ms) passed" in (response.notice or "")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("behaviour", list(SILENT))
def test_another_agents_search_does_not_wait_behind_a_stuck_index(workspace, tmp_path, api_server, behaviour):
    """`memext index -a alpha` waits on a silent server for its 60 s
    deadline (the default) with its writer lock taken; meanwhile `memext
    search -a beta`, from another process and before any failure is written
    down, answers by keyword after its own query deadline
    (`remote.query_deadline_ms`, set to 2 s here) and says so, and writes
    the failure down: the next search asks the silent server nothing."""
    import subprocess

    from memext.engine.errors import LockTimeout
    from memext.engine.store.drivers import writer_lock

    query_deadline_s = 2.0
    memext = two_agents_cli(tmp_path, workspace, api_server.openai_base_url, f"query_deadline_ms = {int(query_deadline_s * 1000)}")

    def timed_search() -> tuple[float, subprocess.CompletedProcess]:
        begun = time.monotonic()
        p = memext("search", "-a", "beta", "heron")
        out, err = p.communicate(timeout=90)
        return time.monotonic() - begun, subprocess.CompletedProcess(p.args, p.returncode, out, err)

    assert memext("index", "-a", "beta").wait(60) == 0
    floor, healthy = timed_search()  # the same search, healthy server: process start-up on this machine now
    assert healthy.returncode == 0 and "the embedding provider failed" not in healthy.stderr, healthy.stderr
    api_server.add_fault("openai.embeddings", times=None, **SILENT[behaviour])
    api_server.reset_log()
    indexing = memext("index", "-a", "alpha")
    try:
        alpha = make_agent(workspace, db_path=tmp_path / "index" / "alpha.sqlite")
        while True:  # until alpha's sync holds its writer lock, waiting for the server
            assert indexing.poll() is None, indexing.communicate()
            try:
                with writer_lock(alpha, alpha.db_path(), timeout=0):
                    time.sleep(0.05)
            except LockTimeout:
                break
        elapsed, searched = timed_search()
        assert indexing.poll() is None  # alpha's sync is still waiting for the server
    finally:
        indexing.kill()
        indexing.communicate()
    print(f"\nserver {behaviour}: search of another agent {elapsed:.2f} s (healthy {floor:.2f} s; {query_deadline_s:g} s query deadline)")
    assert searched.returncode == 0 and "MEMORY.md" in searched.stdout, searched.stderr
    assert f"the {query_deadline_s:g} s query timeout (remote.query_deadline_ms) passed" in searched.stderr, searched.stderr
    assert "keyword-only results" in searched.stderr
    # One query deadline beyond a healthy search, not alpha's 60 s (the
    # margin is for start-up beside alpha's process on a loaded machine:
    # bench/hung_provider.py measures it beside a floor).
    assert elapsed < floor + query_deadline_s + 10.0, (elapsed, floor)
    api_server.reset_log()
    _, again = timed_search()
    assert again.returncode == 0 and "MEMORY.md" in again.stdout, again.stderr
    assert "the embedding provider failed" in again.stderr and api_server.requests("openai.embeddings") == [], again.stderr
