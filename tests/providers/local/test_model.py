"""The local provider with the real all-MiniLM-L6-v2 GGUF (tests/conftest.py: MODEL_PATH)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest
from conftest import MODEL_PATH, make_agent

from memext.engine.errors import ConfigError, ProviderError
from memext.engine.index import MemoryIndex
from memext.engine.paths import app_paths
from memext.engine.providers import choose_provider
from memext.engine.providers.local import probe as probe_mod
from memext.engine.providers.local.model import QUERY_TIMEOUT_S, LocalProvider, context_size, create, loaded_model_files
from memext.engine.providers.local.probe import FAULT_ENV, cached_probe, forget_probe, probe_model


def local_agent(workspace, tmp_path, **settings):
    settings.setdefault("local", {"model_path": str(MODEL_PATH)})
    return make_agent(workspace, "loc", db_path=tmp_path / "loc.sqlite", provider="local", **settings)


@pytest.fixture
def provider(workspace, tmp_path) -> LocalProvider:
    return create(local_agent(workspace, tmp_path), app_paths())


def cos(a, b) -> float:
    return float(np.dot(a, b))


def test_related_texts_score_higher_than_unrelated(provider):
    q = provider.embed_query("a feline resting on a rug")
    cat, tax, code = provider.embed_batch(
        ["The cat sat on the mat.", "The quarterly tax filing is due in April.", "Fixed a null pointer in the parser."]
    )
    assert cos(q, cat) > 0.4
    assert cos(q, cat) > cos(q, tax) + 0.3
    assert cos(q, cat) > cos(q, code) + 0.3


def test_vectors_are_unit_length_and_384_dims(provider):
    vectors = provider.embed_batch(["hello world", "", "咖啡", "x" * 10])
    assert provider.dims == 384
    for v in vectors:
        assert len(v) == 384
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)


def test_batch_order_and_progress(provider):
    texts = [f"note number {i} about topic {i % 3}" for i in range(19)]
    seen = []
    batch = provider.embed_batch(texts, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (19, 19) and len(seen) == 3  # batches of EMBED_BATCH = 8
    single = provider.embed_query(texts[7])
    assert cos(batch[7], single) > 0.9999


def test_over_long_input_is_truncated_to_the_context_not_an_error(provider):
    assert provider.max_input_tokens == 512  # 400-token chunks, capped by the model's training context
    head = " ".join(f"word{i}" for i in range(2000))
    a = provider.embed_query(head + " the ending talks about cats")
    b = provider.embed_query(head + " a completely different ending about taxes and invoices")
    # Both inputs are cut to the same first 512 tokens: the tails are never seen.
    assert len(a) == 384
    assert cos(a, b) > 0.9999


def test_model_is_loaded_once_per_process(workspace, tmp_path):
    paths = app_paths()
    p1 = create(local_agent(workspace, tmp_path), paths)
    p2 = create(make_agent(workspace, "other", local={"model_path": str(MODEL_PATH)}, provider="local"), paths)
    v1 = p1.embed_query("shared model")
    v2 = p2.embed_query("shared model")
    assert p1._loaded is p2._loaded
    assert loaded_model_files().count(MODEL_PATH.resolve()) == 1
    assert v1 == v2
    assert p1.model_status().loaded and p1.model_status().probe == "ok"


def fresh_model_copy(tmp_path):
    """A copy of the model at a path of its own: no test in this process can
    have loaded it already (models are shared per file)."""
    copy = tmp_path / "models" / "fresh-minilm.gguf"
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(MODEL_PATH, copy)
    return copy


def wait_until_idle(provider, limit_s: float = 60.0) -> None:
    end = time.monotonic() + limit_s
    while provider.model_status().busy:
        assert time.monotonic() < end, "the abandoned query never finished"
        time.sleep(0.02)


def test_the_model_is_loaded_lazily(workspace, tmp_path):
    model = fresh_model_copy(tmp_path)
    agent = local_agent(workspace, tmp_path, local={"model_path": str(model)})
    with MemoryIndex(agent) as idx:
        st = idx.status()  # resolves and probes the provider (in a subprocess)
        provider = idx.provider_choice.provider
        assert st.provider.in_force == "local" and provider.model_status().probe == "ok"
        assert not provider.model_status().loaded and model.resolve() not in loaded_model_files()

        assert len(provider.embed_query("first use")) == 384
        assert provider.model_status().loaded and model.resolve() in loaded_model_files()


def test_a_query_past_the_local_timeout_fails_while_the_model_runs_on(workspace, tmp_path):
    """DESIGN.md §6: 5 min by default; here 1 us, so the deadline passes while
    the real model is still loading and embedding."""
    model = fresh_model_copy(tmp_path)
    agent = local_agent(workspace, tmp_path, local={"model_path": str(model)})
    assert create(agent, app_paths()).query_timeout_s == QUERY_TIMEOUT_S == 300.0
    provider = create(agent, app_paths(), query_timeout_s=1e-6)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"the query embedding took over 1e-06 s \(the local query timeout\)"):
        provider.embed_query("a feline resting on a rug")
    assert time.monotonic() - started < 0.5  # loading the model alone takes longer

    wait_until_idle(provider)  # the abandoned call finishes in the background
    provider.query_timeout_s = 300.0
    assert len(provider.embed_query("a feline resting on a rug")) == 384


def test_while_an_abandoned_query_is_pending_the_next_fails_fast_as_busy(provider):
    """The model's lock is held here as a long sync batch would hold it."""
    provider.embed_query("load the model")
    provider.query_timeout_s = 0.2
    model = provider._loaded
    with model.lock:
        started = time.monotonic()
        with pytest.raises(ProviderError, match="took over 0.2 s"):
            provider.embed_query("first")
        assert 0.2 <= time.monotonic() - started < 1.0

        started = time.monotonic()
        with pytest.raises(ProviderError, match=r"is busy: a query embedding started 0 s ago went past the 0.2 s local"):
            provider.embed_query("second")
        assert time.monotonic() - started < 0.1 and provider.model_status().busy
    wait_until_idle(provider)  # the abandoned query gives up once the model is free

    # A query waits for a sync batch that holds the model briefly.
    provider.query_timeout_s = 5.0
    holder = threading.Thread(target=lambda: provider.embed_batch(["a sync batch"] * 8))
    holder.start()
    assert len(provider.embed_query("third")) == 384
    holder.join()


def test_queries_share_one_worker_thread_that_close_stops(provider):
    """A thread per query cost about 3 ms: one worker serves them all."""

    def workers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "memext-local-query"]

    before = set(workers())
    vectors = [provider.embed_query(q) for q in ("tea", "coffee", "a third query")]
    assert all(len(v) == 384 for v in vectors) and cos(vectors[0], vectors[1]) < 0.9999
    ours = set(workers()) - before
    assert len(ours) == 1
    provider.close()
    (worker,) = ours
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert len(provider.embed_query("after close: a new worker")) == 384


def test_local_threads_setting_reaches_the_model(workspace, tmp_path):
    agent = local_agent(workspace, tmp_path, local={"model_path": str(MODEL_PATH), "threads": 1})
    provider = create(agent, app_paths())
    assert provider.threads == 1 and len(provider.embed_query("one thread")) == 384
    assert create(local_agent(workspace, tmp_path), app_paths()).threads == max(1, min((os.cpu_count() or 1) - 1, 8))
    with pytest.raises(ConfigError, match="threads"):
        local_agent(workspace, tmp_path, local={"model_path": str(MODEL_PATH), "threads": -1})


def test_context_is_sized_to_the_chunk_budget():
    assert context_size(400, 512) == 512
    assert context_size(100, 512) == 256
    assert context_size(40, 512) == 64
    assert context_size(400, 0) == 1024


def test_semantic_hit_that_keyword_search_misses(workspace, tmp_path):
    query = "which hot drink does he enjoy"
    chunking = {"tokens": 16, "overlap": 0}
    keyword_agent = make_agent(workspace, "kw", db_path=tmp_path / "kw.sqlite", provider="none", chunking=chunking)
    with MemoryIndex(keyword_agent) as idx:
        idx.sync()
        assert not any("green tea" in r.snippet for r in idx.search(query))
    with MemoryIndex(local_agent(workspace, tmp_path, chunking=chunking)) as idx:
        idx.sync()
        # A workspace this small has no score distribution to calibrate a
        # meaning-only hit against (docs/trust.md): it comes back weak.
        res = idx.search(query, include_weak=True)
        assert (res.mode, res.provider, res.model) == ("hybrid", "local", MODEL_PATH.name)
        assert "green tea" in res[0].snippet
        assert res[0].path == "MEMORY.md"
        assert idx.status().vector.dims == 384


def test_auto_picks_the_local_model_when_present(workspace, tmp_path):
    agent = make_agent(workspace, local={"model_path": str(MODEL_PATH)})
    choice = choose_provider(agent, app_paths(), env={})
    assert choice.name == "local" and "local model file present" in choice.reason


# -- crash isolation and bad files ------------------------------------------------------


def test_model_that_kills_the_probe_is_unusable_and_the_host_survives(workspace, tmp_path, monkeypatch):
    """TEST DOUBLE for a native crash: FAULT_ENV makes the probe subprocess
    SIGSEGV itself before loading, standing in for llama.cpp dying on a
    model (which cannot be caused on demand on this CPU)."""
    monkeypatch.setenv(FAULT_ENV, "SIGSEGV")
    agent = local_agent(workspace, tmp_path)
    with pytest.raises(ProviderError) as err:
        create(agent, app_paths())
    msg = str(err.value)
    assert "unusable" in msg and "crashed the probe process (SIGSEGV)" in msg and "while loading the model" in msg
    # The crash verdict is remembered: even without the fault the model is not tried again...
    monkeypatch.delenv(FAULT_ENV)
    cache = app_paths().models_dir
    assert "SIGSEGV" in cached_probe(MODEL_PATH, cache).error
    with pytest.raises(ProviderError, match="SIGSEGV"):
        create(agent, app_paths())
    # ...until the verdict is dropped (`memext model status --reprobe`).
    forget_probe(MODEL_PATH, cache)
    assert create(agent, app_paths()).dims == 384


def test_crashing_model_leaves_the_index_keyword_only_and_says_why(workspace, tmp_path, monkeypatch):
    """TEST DOUBLE: FAULT_ENV crashes the probe subprocess (see above)."""
    monkeypatch.setenv(FAULT_ENV, "SIGSEGV")
    with MemoryIndex(local_agent(workspace, tmp_path)) as idx:  # fallback unset
        idx.sync()
        res = idx.search("green tea")
        assert res.mode == "keyword" and res[0].path == "MEMORY.md"
        assert "SIGSEGV" in res.notice
        st = idx.status()
        assert st.mode == "keyword-only"
        assert st.provider.requested == "local" and st.provider.in_force == "none"
        assert "crashed the probe process (SIGSEGV)" in st.provider.reason
        assert "keyword-only" in st.provider.reason


def test_garbage_file_is_reported_unusable_with_a_clear_reason(workspace, tmp_path):
    bad = tmp_path / "garbage.gguf"
    bad.write_bytes(b"this is not a model\n" * 1000)
    agent = local_agent(workspace, tmp_path, local={"model_path": str(bad)})
    with pytest.raises(ProviderError) as err:
        create(agent, app_paths())
    msg = str(err.value)
    assert str(bad) in msg and "unusable" in msg
    assert "failed to load" in msg and "invalid magic characters" in msg and "GGUF" in msg


def test_truncated_gguf_is_reported_unusable(workspace, tmp_path):
    bad = tmp_path / "truncated.gguf"
    bad.write_bytes(MODEL_PATH.read_bytes()[:4096])
    with pytest.raises(ProviderError, match="failed to load"):
        create(local_agent(workspace, tmp_path, local={"model_path": str(bad)}), app_paths())


def test_load_failures_are_not_remembered(tmp_path):
    bad = tmp_path / "garbage.gguf"
    bad.write_bytes(b"\0" * 100)
    assert not probe_model(bad, tmp_path).ok
    assert cached_probe(bad, tmp_path) is None  # a fixed file is probed again


def test_probe_verdict_is_remembered_so_later_processes_skip_it(tmp_path, monkeypatch):
    assert probe_model(MODEL_PATH, tmp_path).ok

    def no_subprocess(*args, **kwargs):
        raise AssertionError("the probe ran again")

    monkeypatch.setattr(probe_mod.subprocess, "run", no_subprocess)
    result = probe_model(MODEL_PATH, tmp_path)
    assert result.ok and result.dims == 384 and result.n_ctx_train == 512


def test_missing_and_unset_model_paths_say_what_to_do(workspace, tmp_path):
    with pytest.raises(ProviderError, match="does not exist"):
        create(local_agent(workspace, tmp_path, local={"model_path": str(tmp_path / "nope.gguf")}), app_paths())
    with pytest.raises(ProviderError, match="memext model install minilm"):
        create(local_agent(workspace, tmp_path, local={"model_path": ""}), app_paths())


def test_relative_model_path_is_resolved_against_the_workspace(workspace, tmp_path):
    (workspace / "models").mkdir()
    (workspace / "models" / "m.gguf").symlink_to(MODEL_PATH)
    p = create(local_agent(workspace, tmp_path, local={"model_path": "models/m.gguf"}), app_paths())
    assert p.model_file == workspace / "models" / "m.gguf" and p.dims == 384


def test_probe_runs_as_a_module_and_prints_json():
    proc = subprocess.run(
        [probe_mod.sys.executable, "-m", "memext.engine.providers.local.probe", str(MODEL_PATH)], capture_output=True, text=True, input=""
    )
    assert proc.returncode == 0
    assert proc.stdout.strip().splitlines()[-1] == '{"dims": 384, "n_ctx_train": 512}'


# -- which vectors are whose ------------------------------------------------------------


def quantised_copy(src, dst) -> None:
    """``src`` quantised to q8_0 by llama.cpp itself: the same model and
    name, other weights."""
    import ctypes

    from llama_cpp import llama_cpp as lowlevel

    params = lowlevel.llama_model_quantize_default_params()
    params.ftype = lowlevel.LLAMA_FTYPE_MOSTLY_Q8_0
    params.nthread = 1
    assert lowlevel.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params)) == 0


def test_the_cache_key_names_the_file_contents_not_its_name(tmp_path):
    copy = fresh_model_copy(tmp_path)
    assert LocalProvider(copy).endpoint_key == LocalProvider(MODEL_PATH).endpoint_key
    assert LocalProvider(copy).endpoint_key.startswith("sha256:")
    other = tmp_path / "q8.gguf"
    quantised_copy(MODEL_PATH, other)
    assert LocalProvider(other).endpoint_key != LocalProvider(MODEL_PATH).endpoint_key


def test_a_model_replaced_in_place_reuses_none_of_the_old_vectors(workspace, tmp_path):
    """The same file name with other weights (a quantised build written over
    the f16 one): the next sync rebuilds and embeds every chunk again."""
    model = fresh_model_copy(tmp_path)
    agent = local_agent(workspace, tmp_path, local={"model_path": str(model)})
    with MemoryIndex(agent) as idx:
        first = idx.sync()
    assert first.texts_embedded > 0
    quantised = tmp_path / "q8.gguf"
    quantised_copy(MODEL_PATH, quantised)
    os.replace(quantised, model)
    with MemoryIndex(agent) as idx:
        again = idx.sync()
        assert again.rebuilt and again.cache_hits == 0 and again.texts_embedded == first.texts_embedded
        assert idx.search("which hot drink does he enjoy").mode == "hybrid"
    with MemoryIndex(agent) as idx:  # and the new model's own vectors are reused from then on
        assert idx.sync().texts_embedded == 0
