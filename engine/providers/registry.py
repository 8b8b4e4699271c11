"""The embedding providers memext knows: one row each (DESIGN.md §6).

A row names the provider (its ``provider`` / ``fallback`` value in the
config), the module whose ``create()`` builds it (see
:class:`~engine.providers.base.ProviderFactory`), the environment
variables that hold its API key, the extra to install when that module
cannot be imported, whether it sends text off the machine, and its place
in the ``auto`` order. Config validation, ``auto``, the fallback and the
remote settings all read this table, so adding a provider is its module
plus one row here.

This module imports nothing from the engine at run time: ``engine.config``
reads it while it is being defined, and a keyword-only search must not
load a provider module to learn the names.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple

if TYPE_CHECKING:
    from ..paths import AppPaths
    from ..settings import AgentConfig

#: Why ``auto`` may pick a provider now (e.g. "OpenAI API key found"), or
#: None when it may not: called with the provider's row, the agent, the
#: app's paths and the environment. It must be cheap and never import the
#: provider's module.
ReadyCheck = Callable[["ProviderSpec", "AgentConfig", "AppPaths", Mapping[str, str]], "str | None"]


class ProviderSpec(NamedTuple):
    """One embedding provider, as the rest of the engine knows it."""

    #: The ``provider`` / ``fallback`` value, and the provider's ``id``.
    name: str
    #: How messages name it ("OpenAI").
    label: str
    #: The module whose ``create()`` builds the provider; imported only
    #: when the provider is built.
    module: str
    #: Environment variables holding its API key, the first one set wins
    #: (after ``remote.api_key``); empty when it needs no key.
    key_env: tuple[str, ...]
    #: The ``memext[...]`` extra its module needs; "" when the base install has it.
    extra: str
    #: True when it sends text off the machine (and reads ``remote.*``).
    remote: bool
    #: Its place in the ``auto`` order (lowest first); None: ``auto`` never picks it.
    auto_rank: int | None
    #: When ``auto`` may pick it (see :data:`ReadyCheck`).
    ready: ReadyCheck

    def ready_reason(self, agent: AgentConfig, paths: AppPaths, env: Mapping[str, str]) -> str | None:
        """Why ``auto`` may pick this provider now, or None when it may not."""
        return self.ready(self, agent, paths, env)

    @property
    def install_command(self) -> str:
        """What to run when its module cannot be imported ("" when nothing helps)."""
        return f"pip install 'memext[{self.extra}]'" if self.extra else ""


def resolve_api_key(name: str, agent: AgentConfig, env: Mapping[str, str] | None = None) -> str | None:
    """``remote.api_key``, else the first of the provider's key variables
    that is set (``OPENAI_API_KEY``, ``GEMINI_API_KEY``...); None when none is."""
    env = os.environ if env is None else env
    key = agent.settings.remote.api_key or env_api_key(name, env)
    return key or None


def env_api_key(name: str, env: Mapping[str, str]) -> str:
    """The provider's key from the environment alone ("" when unset)."""
    for var in provider_spec(name).key_env:
        if env.get(var):
            return env[var]
    return ""


#: The files ``memext model install minilm`` writes into the model cache
#: (GGUF for llama.cpp, ONNX for ONNX Runtime): an agent without
#: ``local.model_path`` uses one when it is there, so an installed model is
#: a configured one (``install.RECIPES`` names them too).
INSTALLED_MODEL_FILE = "all-minilm-l6-v2-f16.gguf"
INSTALLED_ONNX_FILE = "all-minilm-l6-v2.onnx"


def local_model_spec(agent: AgentConfig, paths: AppPaths) -> str:
    """``local.model_path``; when unset, the model ``memext model install``
    put in the model cache if it is there (the faster ONNX one first, when
    ONNX Runtime is installed to run it); else ""."""
    spec = agent.settings.local.model_path
    if spec:
        return spec
    cache = Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()
    onnx = cache / INSTALLED_ONNX_FILE
    if onnx.is_file() and importlib.util.find_spec("onnxruntime") is not None:
        return str(onnx)
    installed = cache / INSTALLED_MODEL_FILE
    return str(installed) if installed.is_file() else ""


def local_model_ready(agent: AgentConfig, paths: AppPaths) -> bool:
    """True when ``local.model_path`` names a file that exists, or an
    ``hf:`` model already downloaded into the cache, or (unset) an
    installed model is in the cache (:func:`local_model_spec`)."""
    spec = local_model_spec(agent, paths)
    if not spec:
        return False
    if spec.startswith("hf:"):
        cache = Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()
        return (cache / spec[3:].split("/")[-1]).is_file() or (cache / spec[3:]).is_file()
    p = Path(os.path.expanduser(spec))
    if not p.is_absolute():
        p = agent.workspace / p
    return p.is_file()


def api_key_found(spec: ProviderSpec, agent: AgentConfig, paths: AppPaths, env: Mapping[str, str]) -> str | None:
    """Ready when an API key resolves (:func:`resolve_api_key`)."""
    return f"{spec.label} API key found" if resolve_api_key(spec.name, agent, env) else None


def local_model_found(spec: ProviderSpec, agent: AgentConfig, paths: AppPaths, env: Mapping[str, str]) -> str | None:
    """Ready when the configured model file is present (:func:`local_model_ready`)."""
    return "local model file present" if local_model_ready(agent, paths) else None


#: Every provider, in the order the config's error messages list them.
PROVIDERS: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        name="openai",
        label="OpenAI",
        module="memext.engine.providers.openai",
        key_env=("OPENAI_API_KEY",),
        extra="",
        remote=True,
        auto_rank=2,
        ready=api_key_found,
    ),
    ProviderSpec(
        name="gemini",
        label="Gemini",
        module="memext.engine.providers.gemini",
        key_env=("GEMINI_API_KEY",),
        extra="",
        remote=True,
        auto_rank=3,
        ready=api_key_found,
    ),
    ProviderSpec(
        name="local",
        label="local",
        module="memext.engine.providers.local.model",
        key_env=(),
        extra="local",
        remote=False,
        # First: a model the user installed runs offline, and no text leaves the machine.
        auto_rank=1,
        ready=local_model_found,
    ),
)

_BY_NAME = {p.name: p for p in PROVIDERS}

#: The provider names, in :data:`PROVIDERS` order.
NAMES: tuple[str, ...] = tuple(_BY_NAME)


def provider_spec(name: str) -> ProviderSpec:
    """The row of provider ``name``; KeyError when there is none."""
    return _BY_NAME[name]


def auto_order() -> tuple[ProviderSpec, ...]:
    """The providers ``auto`` tries, first choice first."""
    ranked = [p for p in PROVIDERS if p.auto_rank is not None]
    return tuple(sorted(ranked, key=lambda p: p.auto_rank or 0))


def remote_names() -> tuple[str, ...]:
    """The providers that send text off the machine."""
    return tuple(p.name for p in PROVIDERS if p.remote)


def where_embedded(name: str) -> str:
    """Where the provider ``name`` computes embeddings, in the words status
    uses: "on this machine", "sent to OpenAI"; "" for ``none``."""
    if name == "none":
        return ""
    spec = _BY_NAME.get(name)
    return f"sent to {spec.label}" if spec is not None and spec.remote else "on this machine"


def all_key_env() -> tuple[str, ...]:
    """Every API-key variable of every provider (all of them are secrets)."""
    return tuple(var for p in PROVIDERS for var in p.key_env)
