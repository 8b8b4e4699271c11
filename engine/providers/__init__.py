"""The embedding providers (DESIGN.md §6).

:mod:`.registry` lists them (one row each), :mod:`.base` defines what a
provider is and what its module's ``create()`` must look like, and
:mod:`.choice` picks and builds the one an agent uses. The names below are
loaded on first use, so importing this package (as ``engine.config`` does,
for the registry) loads no provider module, no ``openai`` and no
``llama_cpp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import EmbeddingProvider, EmbedProgress, ProviderFactory
    from .choice import ProviderChoice, choose_provider, create_provider, fallback_choice
    from .registry import local_model_ready, resolve_api_key

__all__ = [
    "EmbeddingProvider",
    "EmbedProgress",
    "ProviderChoice",
    "ProviderFactory",
    "choose_provider",
    "create_provider",
    "fallback_choice",
    "resolve_api_key",
    "local_model_ready",
]

#: Name -> the submodule that defines it.
_EXPORTS = {
    "EmbeddingProvider": "base",
    "EmbedProgress": "base",
    "ProviderFactory": "base",
    "ProviderChoice": "choice",
    "choose_provider": "choice",
    "create_provider": "choice",
    "fallback_choice": "choice",
    "resolve_api_key": "registry",
    "local_model_ready": "registry",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
