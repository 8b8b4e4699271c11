"""The local provider on ONNX Runtime: the real all-MiniLM-L6-v2 built as
ONNX by `memext model install minilm --format onnx` (tests/conftest.py:
ONNX_MODEL_PATH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ONNX_MODEL_PATH, make_agent

from memext.engine.errors import ProviderError
from memext.engine.index import MemoryIndex
from memext.engine.paths import app_paths
from memext.engine.providers.local.model import create
from memext.engine.providers.local.onnx_engine import OnnxEmbedder, batches
from memext.engine.providers.local.probe import probe_model
from memext.engine.providers.local.runtime import load_engine


def onnx_agent(workspace, tmp_path, **settings):
    settings.setdefault("local", {"model_path": str(ONNX_MODEL_PATH)})
    return make_agent(workspace, "onnx", db_path=tmp_path / "onnx.sqlite", provider="local", **settings)


def test_batches_go_shortest_first_within_the_token_budget():
    lengths = [300, 5, 40, 5000, 12, 250, 7]
    groups = batches(lengths, max_tokens=600, max_rows=3)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    flat = [lengths[i] for g in groups for i in g]
    assert flat == sorted(lengths)
    for g in groups:
        assert len(g) <= 3
        assert len(g) == 1 or len(g) * max(lengths[i] for i in g) <= 600
    assert [3] in groups  # longer than the budget: alone


def test_a_batch_gives_each_text_the_vector_it_gets_alone():
    """Padding a short text to its batch's longest changes nothing (the mask
    keeps padding out of attention and pooling), and order is kept."""
    engine = load_engine(ONNX_MODEL_PATH, 512, 1)
    assert isinstance(engine, OnnxEmbedder) and engine.n_ctx_train() == 512
    texts = ["short", "a somewhat longer sentence about the vet and the cat", "x", "the Berlin trip is in May " * 20, "ok then"]
    together = np.asarray(engine.embed(texts))
    alone = np.asarray([engine.embed([t])[0] for t in texts])
    assert together.shape == (5, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert ((together * alone).sum(axis=1) > 0.99999).all()


def test_an_over_long_input_is_cut_to_the_context_not_an_error():
    engine = load_engine(ONNX_MODEL_PATH, 64, 1)
    (long,) = engine.embed(["word " * 2000])
    (cut,) = engine.embed([" ".join(["word"] * 62)])  # 62 words + [CLS] + [SEP] = the 64-token context
    assert float(np.dot(long, cut)) > 0.99999


def test_semantic_hit_through_the_onnx_model(workspace, tmp_path):
    with MemoryIndex(onnx_agent(workspace, tmp_path, chunking={"tokens": 16, "overlap": 0})) as idx:
        idx.sync()
        res = idx.search("which hot drink does he enjoy", include_weak=True)
        assert (res.mode, res.provider, res.model) == ("hybrid", "local", ONNX_MODEL_PATH.name)
        assert "green tea" in res[0].snippet and res[0].path == "MEMORY.md"


def test_an_onnx_model_memext_did_not_make_is_refused_with_the_reason(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])], "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]
        )
    )
    path = tmp_path / "other.onnx"
    onnx.save_model(model, str(path))
    with pytest.raises(ProviderError, match="not one made by `memext model install`"):
        load_engine(path, 512, 1)
    verdict = probe_model(path, tmp_path)
    assert not verdict.ok and "not one made by" in verdict.error
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\0" * 100)
    assert not probe_model(garbage, tmp_path).ok


def test_a_missing_onnx_runtime_names_the_extra(workspace, tmp_path):
    """The child process blocks onnxruntime's import (a plain install
    without the onnx extra; uninstalling it from the shared venv is not an
    option)."""
    agent_file = tmp_path / "config.toml"
    agent_file.write_text(
        f'[[agents]]\nid = "o"\nworkspace = "{workspace}"\n[agents.memory_search]\nprovider = "local"\n'
        f'[agents.memory_search.local]\nmodel_path = "{ONNX_MODEL_PATH}"\n'
    )
    code = (
        "import sys\nsys.modules['onnxruntime'] = None\n"
        "from memext.engine.config import load_config\nfrom memext.engine.paths import app_paths\n"
        "from memext.engine.providers.local.model import create\n"
        f"create(load_config({str(agent_file)!r}).agent('o'), app_paths())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert r.returncode != 0 and "pip install 'memext[onnx]'" in r.stderr


def test_the_probe_subprocess_runs_onnx_models():
    proc = subprocess.run(
        [sys.executable, "-m", "memext.engine.providers.local.probe", str(ONNX_MODEL_PATH)], capture_output=True, text=True, input=""
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"dims": 384, "n_ctx_train": 512}


def test_create_accepts_the_onnx_model(workspace, tmp_path):
    provider = create(onnx_agent(workspace, tmp_path), app_paths())
    assert provider.dims == 384 and provider.model == "all-minilm-l6-v2.onnx"
    assert provider.endpoint_key.startswith("sha256:")
