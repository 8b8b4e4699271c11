"""The embedding providers (DESIGN.md §6).

:mod:`.registry` lists them (one row each), :mod:`.base` defines what a
provider is and what its module's ``create()`` must look like, and
:mod:`.choice` picks and builds the one an agent uses. The names below are
loaded on first use, so importing this package (as ``engine.config`` does,
for the registry) loads no provider module, no ``openai`` and no
``llama_cpp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_names

if TYPE_CHECKING:
    from .base import EmbeddingProvider, EmbedProgress, ProviderFactory
    from .choice import ProviderChoice, choose_provider, create_provider, fallback_choice
    from .registry import local_model_ready, resolve_api_key


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

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
