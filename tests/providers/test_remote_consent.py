"""No note leaves the machine unasked (DESIGN.md §6): with ``provider =
"auto"`` and a remote provider's API key in the environment, memext embeds
nothing remotely until the user allows that provider (``memext config
allow-remote``, recorded as ``allow_remote``) or names it as the provider.

The API is a real HTTP server on 127.0.0.1 (tests/servers.py) that counts
what reaches it; the CLI runs as a user runs it, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from servers import GEMINI_KEY, OPENAI_KEY

from memext.engine.config import load_config


@pytest.fixture
def setup(tmp_path, workspace, api_server):
    """A config with ``provider = "auto"``, the environment of someone who
    uses other LLM tools: both vendors' keys, pointed at the local server."""
    config = tmp_path / "memext" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '# my memory\n[memory_search]\nprovider = "auto"\n'
        f"[memory_search.store]\npath = {json.dumps(str(tmp_path / 'idx' / '{agent_id}.sqlite'))}\n\n"
        f'[[agents]]\nid = "me"\nworkspace = {json.dumps(str(workspace))}\n',
        encoding="utf-8",
    )
    env = dict(
        os.environ,
        MEMEXT_CONFIG=str(config),
        OPENAI_API_KEY=OPENAI_KEY,
        OPENAI_BASE_URL=api_server.openai_base_url,
        GEMINI_API_KEY=GEMINI_KEY,
    )
    return config, env


def memext(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memext", *args], env=env, capture_output=True, text=True, timeout=120)


def status(env: dict[str, str]) -> dict:
    r = memext(env, "status", "--json")
    assert r.returncode == 0, r.stderr
    (st,) = json.loads(r.stdout)
    return st["provider"]


def test_no_request_reaches_a_remote_api_until_the_user_allows_it(setup, api_server):
    config, env = setup
    r = memext(env, "index")
    assert r.returncode == 0, r.stderr
    assert "notes are sent off this machine only if you allow it" in r.stderr
    search = memext(env, "search", "green tea", "--json")
    assert search.returncode == 0 and "MEMORY.md" in search.stdout
    prov = status(env)
    assert (prov["in_force"], prov["embedded"]) == ("none", "")
    assert "memext config allow-remote openai" in prov["reason"]
    assert api_server.requests() == []  # zero requests: nothing was sent

    # The one-time consent, recorded in the config file (the user's text kept).
    r = memext(env, "config", "allow-remote", "openai")
    assert r.returncode == 0, r.stderr
    assert "notes are sent to OpenAI to be embedded" in r.stdout
    assert config.read_text(encoding="utf-8").startswith("# my memory\n")
    assert load_config(config).agents[0].settings.allow_remote == ["openai"]
    assert memext(env, "index").returncode == 0
    prov = status(env)
    assert (prov["in_force"], prov["embedded"]) == ("openai", "sent to OpenAI")
    sent = api_server.requests("openai.embeddings")
    assert sent and any("green tea" in text for req in sent for text in req.inputs)
    assert api_server.requests("gemini") == []  # consent to OpenAI is not consent to Gemini
    text = memext(env, "status")
    assert "embedding  sent to OpenAI" in text.stdout

    # Taken back: auto stops sending, at once.
    assert memext(env, "config", "allow-remote", "openai", "--revoke").returncode == 0
    assert load_config(config).agents[0].settings.allow_remote == []
    before = len(api_server.requests())
    (Path(load_config(config).agents[0].workspace) / "memory" / "2026-01-07.md").write_text("- Bob now drinks coffee.\n", encoding="utf-8")
    assert memext(env, "index").returncode == 0
    assert memext(env, "search", "coffee").returncode == 0
    assert status(env)["in_force"] == "none"
    assert len(api_server.requests()) == before


def test_a_provider_named_in_the_config_needs_no_other_consent(setup, api_server):
    config, env = setup
    config.write_text(config.read_text(encoding="utf-8").replace('provider = "auto"', 'provider = "gemini"'), encoding="utf-8")
    config.write_text(
        config.read_text(encoding="utf-8") + f"[memory_search.remote]\nbase_url = {json.dumps(api_server.gemini_base_url)}\n",
        encoding="utf-8",
    )
    assert memext(env, "index").returncode == 0
    prov = status(env)
    assert (prov["requested"], prov["in_force"], prov["embedded"]) == ("gemini", "gemini", "sent to Gemini")
    assert api_server.requests("gemini") and api_server.requests("openai") == []


def test_allow_remote_for_one_agent_and_a_wrong_name(setup):
    config, env = setup
    r = memext(env, "config", "allow-remote", "gemini", "-a", "me", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["key"] == "agents[me].memory_search.allow_remote"
    assert load_config(config).agents[0].settings.allow_remote == ["gemini"]
    bad = memext(env, "config", "allow-remote", "local")
    assert bad.returncode == 2 and "'local' is not one of 'openai', 'gemini'" in bad.stderr


@pytest.mark.parametrize("allowed", [False, True])
def test_the_notebook_says_where_notes_are_embedded(tmp_path, workspace, api_server, monkeypatch, allowed):
    from memext_helpers import ipython_shell, write_config

    extra = 'allow_remote = ["openai"]\n' if allowed else ""
    config = write_config(tmp_path / "memext", {"me": workspace}, provider="auto")
    config.write_text(config.read_text(encoding="utf-8").replace('provider = "auto"\n', 'provider = "auto"\n' + extra), encoding="utf-8")
    monkeypatch.setenv("MEMEXT_CONFIG", str(config))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", api_server.openai_base_url)
    with ipython_shell() as ip:
        ip.run_line_magic("load_ext", "memext")
        ip.run_line_magic("memindex", "")
        (row,) = ip.run_line_magic("memstatus", "").rows()
    if allowed:
        assert row["search"] == "hybrid (openai text-embedding-3-small, sent to OpenAI)"
        assert api_server.requests("openai.embeddings")
    else:
        assert row["search"] == "keyword-only"
        assert api_server.requests() == []
