"""The typed status: its parts, the JSON form, and what faces read from it."""

from __future__ import annotations

import json

import click

from memext.engine import (
    BatchJob,
    BatchStatus,
    CacheStatus,
    FallbackStatus,
    FtsStatus,
    IndexStatus,
    LastSync,
    ProviderStatus,
    SearchKind,
    SearchMode,
    SkippedFile,
    StorageStatus,
    VectorStatus,
)


def status(**changes) -> IndexStatus:
    fields = dict(
        agent="a",
        workspace="/ws",
        db_path="/ws/a.sqlite",
        enabled=True,
        files={"memory": 2},
        chunks={"memory": 5, "sessions": 1},
        dirty=False,
        syncing=False,
        last_sync=LastSync(at=1.0, duration_s=0.5, rebuilt=True, files_indexed=2),
        provider=ProviderStatus("gemini", "gemini", "gemini-embedding-001", embedded="sent to Gemini"),
        fallback=FallbackStatus("openai", "HTTP 401"),
        vector=VectorStatus(True, "v0.1.9", "vec0", "vec0", 768),
        fts=FtsStatus(True),
        cache=CacheStatus(True, 7, 100),
        storage=StorageStatus("sqlean", "3.50.4"),
        batch=BatchStatus(True, "batch", True, 0, 2, jobs=(BatchJob("b1", "completed", 3, 3),)),
        skipped=[SkippedFile("memory/big.md", "too big")],
    )
    fields.update(changes)
    return IndexStatus(**fields)


def test_to_dict_is_plain_json_with_the_user_facing_keys():
    d = status().to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["fallback"] == {"from": "openai", "reason": "HTTP 401"}
    assert d["provider"] == {
        "requested": "gemini",
        "in_force": "gemini",
        "model": "gemini-embedding-001",
        "reason": None,
        "failed": None,
        "embedded": "sent to Gemini",
        "cause": None,
        "advice": None,
    }
    assert d["storage"] == {"binding": "sqlean", "version": "3.50.4", "backend": "sqlite", "server": None, "schema": None}
    assert d["last_sync"]["rebuilt"] and d["batch"]["jobs"][0]["id"] == "b1" and d["local_model"] is None
    assert d["skipped"] == [{"path": "memory/big.md", "reason": "too big"}] and d["mode"] == "hybrid"
    assert d["search_mode"] == {
        "kind": "hybrid",
        "provider": "gemini",
        "model": "gemini-embedding-001",
        "reason": None,
        "advice": None,
        "fallback_from": "openai",
        "embedded": "sent to Gemini",
    }
    assert (status().total_files, status().total_chunks) == (2, 6)


def test_mode_is_keyword_only_without_a_provider_or_with_a_reason():
    assert status(provider=ProviderStatus("none", "none", "")).mode == "keyword-only"
    assert status(keyword_only_reason="the index has no vectors yet").mode == "keyword-only"
    assert status(enabled=False).mode == "off"


def test_the_search_mode_is_typed_with_why_and_what_to_do():
    assert status().search_mode == SearchMode(
        SearchKind.HYBRID, "gemini", "gemini-embedding-001", fallback_from="openai", embedded="sent to Gemini"
    )
    assert status().search_mode.describe() == "hybrid (gemini gemini-embedding-001, sent to Gemini), fallback from openai"
    assert status(fallback=None).search_mode.describe() == "hybrid (gemini gemini-embedding-001, sent to Gemini)"
    no_provider = ProviderStatus(
        "auto",
        "none",
        "",
        "auto: no key: keyword-only search; run `memext model install minilm`",
        cause="auto: no key",
        advice="run `memext model install minilm`",
    )
    mode = status(provider=no_provider, fallback=None).search_mode
    assert (mode.kind, mode.reason, mode.advice) == (SearchKind.KEYWORD_ONLY, "auto: no key", "run `memext model install minilm`")
    assert mode.describe() == "keyword-only"
    stale = status(keyword_only_reason="the index has no vectors yet").search_mode
    assert (stale.kind, stale.reason, stale.advice, stale.provider) == (
        SearchKind.KEYWORD_ONLY,
        "the index has no vectors yet",
        None,
        "gemini",
    )
    off = status(enabled=False).search_mode
    assert off.kind == SearchKind.OFF and off.describe() == "off" and "enabled = false" in off.reason and "enabled = true" in off.advice


def test_the_engine_splits_a_keyword_only_reason_into_why_and_advice(tmp_path, monkeypatch):
    """Built from the provider choice, not read back out of its sentence."""
    from memext.engine import AgentConfig, MemorySearchSettings
    from memext.engine.paths import app_paths
    from memext.engine.providers import choose_provider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    (tmp_path / "ws").mkdir()
    agent = AgentConfig("a", tmp_path / "ws", MemorySearchSettings(provider="auto"))
    choice = choose_provider(agent, app_paths())
    assert choice.provider is None and choice.advice == "run `memext model install minilm` for local semantic search"
    assert choice.reason == f"{choice.cause}: keyword-only search; {choice.advice}"


def test_a_provider_problem_only_when_a_wanted_provider_did_not_start():
    assert ProviderStatus("none", "none", "", "provider = none").problem is None  # keyword-only by choice
    assert ProviderStatus("auto", "none", "", "auto: no API key found").problem is None
    failed = ProviderStatus("local", "none", "", "the local model crashed the probe process (SIGSEGV)", failed="local")
    assert failed.problem == "the local model crashed the probe process (SIGSEGV)" and failed.keyword_only
    assert ProviderStatus("openai", "none", "", None, failed="openai").problem == (
        "the openai embedding provider is not available; keyword-only search"
    )


def test_last_sync_reads_what_a_sync_recorded_and_older_records():
    assert LastSync.from_dict(None) is None and LastSync.from_dict({}) is None
    recorded = {
        "at": 5.0,
        "duration_s": 1.25,
        "rebuilt": False,
        "files_indexed": 3,
        "provider_error": "HTTP 500",
        "embeddings_pending": None,
    }
    assert LastSync.from_dict(recorded) == LastSync(5.0, 1.25, False, 3, "HTTP 500", None)
    assert LastSync.from_dict(recorded).to_dict() == recorded
    assert LastSync.from_dict({"at": 5, "duration_s": 2}) == LastSync(5.0, 2.0)  # written before the other keys existed


def test_changed_settings_are_said_until_the_rebuild(tmp_path):
    """An index built with other settings (here the chunking) says so in its
    status, the CLI's lines and the notebook's state, until a sync rebuilds
    it; it is not shown as up to date meanwhile."""
    from conftest import make_agent

    from memext.engine import MemoryIndex
    from memext.engine.faces.cli.output import status_lines
    from memext.views import state_words

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- Dana likes rooibos.\n", encoding="utf-8")
    db = tmp_path / "idx.sqlite"
    with MemoryIndex(make_agent(ws, db_path=db, provider="none"), provider=None) as idx:
        idx.sync()
        assert idx.status().settings_changed is False
    with MemoryIndex(make_agent(ws, db_path=db, provider="none", chunking={"tokens": 50, "overlap": 10}), provider=None) as idx:
        st = idx.status()
        assert st.settings_changed is True and st.to_dict()["settings_changed"] is True
        assert state_words(st) == "settings changed: the next sync rebuilds it"
        lines = click.unstyle("\n".join(status_lines(st)))
        assert "settings   changed since the index was built (provider, model or chunking)" in lines
        assert idx.sync().rebuilt
        st = idx.status()
        assert st.settings_changed is False and state_words(st) == "up to date"


def test_a_memory_file_past_its_size_is_warned_about(tmp_path):
    """MEMORY.md larger than memory_search.memory_file_warn_bytes: the
    status says its size, and the CLI and the notebook say what to do."""
    from conftest import make_agent

    from memext.engine import MemoryIndex
    from memext.engine.faces.cli.output import status_lines
    from memext.views import StatusTable

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- Dana likes rooibos.\n", encoding="utf-8")
    with MemoryIndex(make_agent(ws, db_path=tmp_path / "i.sqlite", memory_file_warn_bytes=2048), provider=None) as idx:
        idx.sync()
        st = idx.status()
        assert (st.long_term.path, st.long_term.size, st.long_term.too_big) == ("MEMORY.md", 31, False)
        assert st.long_term.warning() is None and "MEMORY.md" not in "\n".join(status_lines(st))

        (ws / "MEMORY.md").write_text("# Facts\n\n" + "- Dana likes rooibos with a slice of lemon.\n" * 60, encoding="utf-8")
        st = idx.status()
        assert st.long_term.too_big and st.to_dict()["long_term"] == {"path": "MEMORY.md", "size": 2649, "warn_bytes": 2048}
        warning = "MEMORY.md is 2,649 bytes (2.6 KB), over the 2,048 an agent should load at the start of a session"
        lines = click.unstyle("\n".join(status_lines(st)))
        assert f"warning    {warning}" in lines and "raise memory_search.memory_file_warn_bytes" in lines
        assert warning in StatusTable([st]).to_text() and warning in StatusTable([st])._repr_html_()

    with MemoryIndex(make_agent(ws, db_path=tmp_path / "i.sqlite", memory_file_warn_bytes=0), provider=None) as idx:
        assert idx.status().long_term.too_big is False  # 0: never warn
