"""Secrets never leave a provider in a message: a server error
that echoes the API key or a header value is masked before it is raised,
logged or stored. Real clients against the real server in tests/servers.py."""

from __future__ import annotations

import logging
import traceback

import pytest
from conftest import make_agent
from servers import GEMINI_KEY, OPENAI_KEY

from memext.engine import MemoryIndex
from memext.engine.errors import ProviderError
from memext.engine.paths import app_paths
from memext.engine.providers import create_provider
from memext.engine.providers.gemini import DEFAULT_MODEL as GEMINI_MODEL, GeminiProvider
from memext.engine.providers.openai import OpenAIProvider
from memext.engine.providers.remote import RemoteTarget
from memext.engine.providers.retry import RetryPolicy
from memext.engine.redact import MASK, Redactor

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
GATEWAY_TOKEN = "gw-token-5f1e9a77"


def test_redactor_masks_every_secret_and_nothing_else():
    r = Redactor(["sk-abcdef123456", "sk-abcdef", None, "", "json"])  # "json" is too short to be a secret
    assert r("key sk-abcdef123456 and sk-abcdef, as json") == f"key {MASK} and {MASK}, as json"
    assert r.reveals("Bearer sk-abcdef") and not r.reveals("nothing here")
    assert "sk-" not in repr(r)
    assert Redactor()("unchanged") == "unchanged"


def openai_provider(server):
    target = RemoteTarget(OPENAI_KEY, server.openai_base_url, "text-embedding-3-small", {"x-gateway-token": GATEWAY_TOKEN})
    return OpenAIProvider(target, retry=FAST)


def gemini_provider(server):
    return GeminiProvider(RemoteTarget(GEMINI_KEY, server.gemini_base_url, GEMINI_MODEL, {"x-gateway-token": GATEWAY_TOKEN}), retry=FAST)


@pytest.mark.parametrize(
    "make,route,key",
    [(openai_provider, "openai.embeddings", OPENAI_KEY), (gemini_provider, "gemini.", GEMINI_KEY)],
    ids=["openai", "gemini"],
)
@pytest.mark.parametrize("status", [400, 500])
def test_an_echoed_key_is_masked_in_errors_and_logs(api_server, caplog, make, route, key, status):
    api_server.add_fault(route, status, "Bad request from", echo_request=True, times=None)
    p = make(api_server)
    with caplog.at_level(logging.DEBUG, logger="memext"):
        for call in (lambda: p.embed_query("hello"), lambda: p.embed_batch(["hello", "world"])):
            with pytest.raises(ProviderError) as err:
                call()
            shown = "".join(traceback.format_exception(err.value))
            assert MASK in str(err.value)
            assert key not in shown and GATEWAY_TOKEN not in shown
    assert api_server.requests(route)[0].status == status  # the server really echoed them
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert key not in logged and GATEWAY_TOKEN not in logged
    if status == 500:
        assert "retry" in logged  # the retries were logged, masked


def test_configured_and_environment_keys_are_all_secrets(workspace, tmp_path, api_server):
    agent = make_agent(
        workspace,
        db_path=tmp_path / "idx.sqlite",
        provider="openai",
        remote={"base_url": api_server.openai_base_url, "headers": {"x-gateway-token": GATEWAY_TOKEN}},
    )
    env = {"OPENAI_API_KEY": OPENAI_KEY, "GEMINI_API_KEY": GEMINI_KEY}
    p = create_provider("openai", agent, app_paths(), env)
    assert {OPENAI_KEY, GEMINI_KEY, GATEWAY_TOKEN} <= set(p.redact.secrets)


def test_a_sync_stores_and_logs_only_the_masked_message(workspace, tmp_path, api_server, caplog):
    agent = make_agent(workspace, db_path=tmp_path / "idx.sqlite", provider="openai", remote={"base_url": api_server.openai_base_url})
    api_server.add_fault("openai.embeddings", 401, "Unauthorized", echo_request=True, times=None)
    with caplog.at_level(logging.DEBUG), MemoryIndex(agent, env={"OPENAI_API_KEY": OPENAI_KEY}) as idx:
        report = idx.sync()
        assert report.provider_error and MASK in report.provider_error and OPENAI_KEY not in report.provider_error
        status = str(idx.status().to_dict())
        assert OPENAI_KEY not in status
        response = idx.search("Anna billing")
        assert OPENAI_KEY not in f"{response.notice} {response.error}"
    assert OPENAI_KEY not in "\n".join(r.getMessage() for r in caplog.records)
