"""The provider registry is the one list of embedding providers (DESIGN.md §6):
the config accepts its names, ``auto`` follows its order, every row's
module builds the provider through a ``create()`` of the agreed shape, and
a keyword-only search loads none of their modules."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from conftest import ROOT, make_agent

from memext.engine.config import load_config
from memext.engine.errors import ConfigError, ProviderError
from memext.engine.paths import app_paths
from memext.engine.providers import EmbeddingProvider, ProviderFactory, choose_provider, create_provider, registry
from memext.engine.providers.registry import NAMES, PROVIDERS, auto_order, provider_spec

REMOTE = [p for p in PROVIDERS if p.remote]
#: An API key for every provider that takes one.
ALL_KEYS = {var: f"key-for-{var.lower()}" for var in registry.all_key_env()}


def config_with(tmp_path: Path, **settings: str):
    body = "\n".join(f'{k} = "{v}"' for k, v in settings.items())
    path = tmp_path / "config.toml"
    path.write_text(f'[memory_search]\n{body}\n\n[[agents]]\nid = "a"\nworkspace = "ws"\n', encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize("name", NAMES)
def test_the_config_accepts_every_registered_provider_as_provider_and_fallback(tmp_path, name):
    settings = config_with(tmp_path, provider=name, fallback=name).agents[0].settings
    assert (settings.provider, settings.fallback) == (name, name)


def test_the_config_accepts_nothing_else(tmp_path):
    for key, value in (("provider", "voyage"), ("fallback", "auto")):
        with pytest.raises(ConfigError) as err:
            config_with(tmp_path, **{key: value})
        listed = str(err.value).split("must be one of ")[1].split(", got")[0]
        expected = ("auto", *NAMES, "none") if key == "provider" else ("none", *NAMES)
        assert listed == ", ".join(f'"{n}"' for n in expected)


def test_auto_tries_the_local_model_first_then_the_remote_providers_in_rank_order():
    assert [p.name for p in auto_order()] == ["local", "openai", "gemini"]
    ranks = [p.auto_rank for p in auto_order()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_auto_picks_the_first_ready_provider_in_the_registry_order(workspace):
    agent = make_agent(workspace, allow_remote=[p.name for p in REMOTE])
    for i, spec in enumerate(REMOTE):
        # Only this provider and the ones after it have a key.
        env = {var: ALL_KEYS[var] for p in REMOTE[i:] for var in p.key_env}
        choice = choose_provider(agent, app_paths(), env)
        assert choice.name == spec.name
        assert choice.reason == f"auto: {spec.label} API key found, sending notes to {spec.label} allowed (allow_remote)"
        choice.provider.close()


def test_auto_picks_no_remote_provider_the_user_did_not_allow(workspace):
    """A key in the environment is no consent: keyword-only, saying why and how to allow it."""
    for spec in REMOTE:
        env = {var: ALL_KEYS[var] for var in spec.key_env}
        choice = choose_provider(make_agent(workspace), app_paths(), env)
        assert choice.provider is None and choice.failed is None
        assert choice.reason == (
            f"auto: {spec.label} API key found, but notes are sent off this machine only if you allow it: "
            "keyword-only search; run `memext model install minilm` for local semantic search, "
            f"or `memext config allow-remote {spec.name}` to send your notes to {spec.label}"
        )
        # Consent to another vendor is not consent to this one.
        others = [p.name for p in REMOTE if p is not spec]
        assert choose_provider(make_agent(workspace, allow_remote=others), app_paths(), env).provider is None
        allowed = choose_provider(make_agent(workspace, allow_remote=[spec.name]), app_paths(), env)
        assert allowed.name == spec.name
        allowed.provider.close()
    # Named in the config, the provider is the user's choice: no consent needed.
    named = choose_provider(make_agent(workspace, provider=REMOTE[0].name), app_paths(), ALL_KEYS)
    assert named.name == REMOTE[0].name
    named.provider.close()


def test_allow_remote_accepts_only_remote_provider_names(workspace):
    with pytest.raises(ConfigError, match=r'allow_remote: "local" is not a remote provider \(use "openai", "gemini"\)'):
        make_agent(workspace, allow_remote=["local"])


def test_auto_follows_a_changed_rank(workspace, monkeypatch):
    agent = make_agent(workspace, allow_remote=[p.name for p in REMOTE])
    first, second = REMOTE[0], REMOTE[1]
    assert choose_provider(agent, app_paths(), ALL_KEYS).name == first.name
    swapped = tuple(
        p._replace(auto_rank=second.auto_rank) if p is first else p._replace(auto_rank=first.auto_rank) if p is second else p
        for p in PROVIDERS
    )
    monkeypatch.setattr(registry, "PROVIDERS", swapped)
    assert choose_provider(agent, app_paths(), ALL_KEYS).name == second.name


def test_a_present_local_model_outranks_every_api_key(workspace):
    # Not a GGUF file: auto picks local for being present, and its failure
    # to load then shows that local was the one picked.
    (workspace / "model.gguf").write_bytes(b"not a model" * 100)
    agent = make_agent(workspace, local={"model_path": "model.gguf"})
    choice = choose_provider(agent, app_paths(), ALL_KEYS)
    assert choice.provider is None and choice.failed == "local"
    assert "model.gguf is unusable" in (choice.reason or "")


def test_without_any_provider_ready_auto_names_every_key_variable(workspace):
    choice = choose_provider(make_agent(workspace), app_paths(), {})
    assert choice.provider is None and choice.failed is None
    assert choice.reason == (
        "auto: no local model (local.model_path), no OPENAI_API_KEY or GEMINI_API_KEY: keyword-only search; "
        "run `memext model install minilm` for local semantic search"
    )


@pytest.mark.parametrize("spec", PROVIDERS, ids=NAMES)
def test_every_rows_module_has_a_create_of_the_factory_shape(spec):
    create = importlib.import_module(spec.module).create
    sig = inspect.signature(create)
    want = inspect.signature(ProviderFactory.__call__)
    for name, param in want.parameters.items():
        if name == "self":
            continue
        assert name in sig.parameters, f"{spec.module}.create has no {name!r}"
        got = sig.parameters[name]
        assert got.kind == param.kind and got.default == param.default, f"{spec.module}.create: {name} is {got}"
    extra = [p for n, p in sig.parameters.items() if n not in want.parameters]
    assert all(p.kind == p.VAR_KEYWORD or p.default is not p.empty for p in extra)  # anything more is optional
    built = typing.get_type_hints(create)["return"]
    assert issubclass(built, EmbeddingProvider) and built.id == spec.name


@pytest.mark.parametrize("spec", REMOTE, ids=[p.name for p in REMOTE])
def test_a_remote_provider_is_built_from_its_own_key_variable(workspace, spec):
    agent = make_agent(workspace, provider=spec.name)
    provider = create_provider(spec.name, agent, app_paths(), {spec.key_env[0]: "key-of-the-test-123"})
    try:
        assert provider.id == spec.name and "key-of-the-test-123" in provider.redact.secrets
    finally:
        provider.close()
    with pytest.raises(ProviderError) as err:
        create_provider(spec.name, agent, app_paths(), {v: "k" for p in REMOTE if p is not spec for v in p.key_env})
    assert f"or the {spec.key_env[0]} environment variable" in str(err.value)


def test_a_module_that_cannot_load_names_the_extra_to_install(workspace, monkeypatch):
    spec = provider_spec("local")
    assert spec.install_command == "pip install 'memext[local]'"
    monkeypatch.setitem(sys.modules, spec.module, None)  # what an uninstalled dependency looks like to import
    with pytest.raises(ProviderError) as err:
        create_provider("local", make_agent(workspace, provider="local"), app_paths(), {})
    message = str(err.value)
    assert message.startswith("the local provider cannot load: ") and message.endswith(" (pip install 'memext[local]')")
    assert "\n" not in message


def test_a_keyword_only_auto_search_loads_no_provider_module(tmp_path, workspace):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "auto"\n\n[[agents]]\nid = "a"\nworkspace = "{workspace}"\n', encoding="utf-8")
    code = (
        "import sys\nfrom memext.cli import cli\n"
        f"cli.main(['--config', {str(cfg)!r}, 'search', 'Anna'], prog_name='memext', standalone_mode=False)\n"
        "print('LOADED', *sorted(sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "MEMORY.md:" in r.stdout  # it searched, keyword-only
    loaded = set(r.stdout.split("LOADED", 1)[1].split())
    assert "memext.engine.providers.registry" in loaded
    assert sorted(loaded & {*(p.module for p in PROVIDERS), "openai", "llama_cpp"}) == []


def test_design_section_6_and_the_configuration_reference_name_every_registered_provider():
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    section = design.split("\n## 6. ", 1)[1].split("\n## 7. ", 1)[0]
    assert [name for name in NAMES if f"\n- `{name}`: " not in section] == []
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    listed = reference.split('\nprovider = "auto"', 1)[1].split("\n", 1)[0]
    assert [name for name in NAMES if f" {name} " not in f"{listed} "] == []
