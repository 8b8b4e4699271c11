"""Deadlines bound a whole provider call, not each read (DESIGN.md §6).

A server that hangs, or trickles its answer one byte every 2 s (each read
well inside the read timeout), must not hold a search past the query
deadline nor a sync's embedding call past the embedding deadline. The real
``openai`` client and ``httpx2`` against the real HTTP server in
tests/servers.py; deadlines are shortened through the providers' options.
"""

from __future__ import annotations

import threading
import time

import pytest
from conftest import make_agent
from servers import GEMINI_KEY, OPENAI_KEY, EmbeddingAPIServer

from memext.engine import MemoryIndex
from memext.engine.errors import ProviderError
from memext.engine.providers.gemini import DEFAULT_MODEL as GEMINI_MODEL, GeminiProvider
from memext.engine.providers.openai import OpenAIProvider
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy
from memext.engine.store.sqlite.lock import WriterLock

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
ROUTES = {"openai": "openai.embeddings", "gemini": "gemini."}
DEADLINE_S = 3.0
#: What a deadline may overrun by: thread hand-over and a loaded CI machine.
SLACK_S = 1.5
# On the old code these calls ran for minutes; fail instead of hanging.
pytestmark = pytest.mark.timeout(120)


def make(kind: str, server: EmbeddingAPIServer, **kw):
    kw.setdefault("retry", FAST)
    if kind == "openai":
        return OpenAIProvider(RemoteTarget(OPENAI_KEY, server.openai_base_url, "text-embedding-3-small"), **kw)
    return GeminiProvider(RemoteTarget(GEMINI_KEY, server.gemini_base_url, GEMINI_MODEL), **kw)


def timed(fn) -> tuple[float, BaseException | None]:
    started = time.monotonic()
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the caller asserts on it
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


BEHAVIOURS = {
    "hang": {"delay_s": 60.0},
    "trickle body": {"trickle_s": 2.0},
    "trickle headers": {"trickle_s": 2.0, "trickle_headers": True},
}


@pytest.mark.parametrize("kind", ["openai", "gemini"])
@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
def test_a_query_never_outlives_its_deadline(api_server, kind, behaviour):
    api_server.add_fault(ROUTES[kind], status=None, times=None, **BEHAVIOURS[behaviour])
    p = make(kind, api_server, query_timeout_s=DEADLINE_S)
    elapsed, err = timed(lambda: p.embed_query("what does Bob drink?"))
    print(f"\n{kind} query, server {behaviour}: gave up after {elapsed:.2f} s ({DEADLINE_S:g} s deadline)")
    assert isinstance(err, ProviderError) and "timed out" in str(err) and "query timeout" in str(err)
    assert DEADLINE_S - 0.2 < elapsed < DEADLINE_S + SLACK_S


@pytest.mark.parametrize("kind", ["openai", "gemini"])
@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
def test_an_embedding_call_never_outlives_its_deadline(api_server, kind, behaviour):
    api_server.add_fault(ROUTES[kind], status=None, times=None, **BEHAVIOURS[behaviour])
    # The per-attempt timeout alone (60 s, retried 3 times) would allow minutes.
    p = make(kind, api_server, embedding_deadline_s=DEADLINE_S, document_timeout_s=60.0)
    elapsed, err = timed(lambda: p.embed_batch([f"note {i} about the billing team" for i in range(40)]))
    print(f"\n{kind} embed_batch, server {behaviour}: gave up after {elapsed:.2f} s ({DEADLINE_S:g} s deadline)")
    assert isinstance(err, ProviderError) and "embedding deadline" in str(err)
    assert elapsed < DEADLINE_S + SLACK_S


def test_quick_retries_still_fit_inside_the_embedding_deadline(api_server):
    api_server.add_fault("openai.embeddings", 503, times=2)
    p = make("openai", api_server, embedding_deadline_s=DEADLINE_S)
    assert len(p.embed_batch(["alpha", "beta"])) == 2
    assert [r.status for r in api_server.requests("openai.embeddings")] == [503, 503, 200]


def test_a_sync_against_a_trickling_server_gives_up_in_time_and_releases_the_lock(workspace, tmp_path, api_server):
    db = tmp_path / "idx.sqlite"
    agent = make_agent(workspace, db_path=db, provider="openai", remote={"base_url": api_server.openai_base_url})
    api_server.add_fault("openai.embeddings", status=None, times=None, trickle_s=2.0)
    p = make("openai", api_server, embedding_deadline_s=DEADLINE_S)
    with MemoryIndex(agent, provider=p) as idx:
        report = []
        elapsed, err = timed(lambda: report.append(idx.sync()))
        print(f"\nsync, server trickling: finished after {elapsed:.2f} s ({DEADLINE_S:g} s embedding deadline)")
        assert err is None and elapsed < DEADLINE_S + SLACK_S + 2.0
        assert "embedding deadline" in (report[0].provider_error or "")
        with WriterLock(db, timeout=0):
            pass  # released: another writer gets it at once
        assert idx.search("Anna billing").results  # keyword search answers meanwhile


@pytest.mark.parametrize("kind", ["openai", "gemini"])
@pytest.mark.parametrize("behaviour", ["hang", "trickle body"])
def test_the_abandoned_attempt_ends_too(api_server, kind, behaviour):
    """Not only the caller is back on time: the request itself stops (its
    timeouts are capped at the deadline, a trickled body is cut off), so no
    worker thread keeps a connection open for minutes."""
    api_server.add_fault(ROUTES[kind], status=None, times=None, **BEHAVIOURS[behaviour])
    p = make(kind, api_server, query_timeout_s=DEADLINE_S)
    before = set(threading.enumerate())  # earlier tests' trickled headers may still be arriving
    elapsed, err = timed(lambda: p.embed_query("hello"))
    assert isinstance(err, ProviderError)
    workers = lambda: [t for t in set(threading.enumerate()) - before if t.name == f"memext-{kind}" and t.is_alive()]  # noqa: E731
    end = time.monotonic() + 2.0 + SLACK_S  # a trickle sends a byte every 2 s
    while workers() and time.monotonic() < end:
        time.sleep(0.05)
    assert workers() == []
