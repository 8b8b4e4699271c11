"""Choosing and creating the embedding provider for an agent (DESIGN.md §6).

``auto`` picks the local model if one is configured and present, else
OpenAI if an API key resolves, else Gemini if a key resolves, else none
(keyword-only search, and status says why). Provider modules are imported
only when chosen, so a keyword-only setup never loads ``openai`` or
``llama_cpp``.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..config import AgentConfig
from ..errors import ProviderError
from ..paths import AppPaths
from .base import EmbeddingProvider, EmbedProgress

__all__ = [
    "EmbeddingProvider",
    "EmbedProgress",
    "ProviderChoice",
    "choose_provider",
    "create_provider",
    "resolve_api_key",
    "local_model_ready",
]

_FACTORIES = {
    "openai": "memext.engine.providers.openai",
    "gemini": "memext.engine.providers.gemini",
    "local": "memext.engine.providers.local.model",
}
_KEY_ENV = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


@dataclass
class ProviderChoice:
    """What was asked for, what is in force, and why."""

    requested: str
    provider: EmbeddingProvider | None
    #: Why there is no provider, or how ``auto`` decided.
    reason: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    #: The provider that was to be used but failed to start (and no
    #: fallback took over); None when keyword-only is by choice.
    failed: str | None = None
    #: Without a provider, ``reason``'s parts: why, and what would give
    #: one (None when there is no advice). Faces word these (``SearchMode``).
    cause: str | None = None
    advice: str | None = None

    @property
    def name(self) -> str:
        return self.provider.id if self.provider else "none"


def resolve_api_key(name: str, agent: AgentConfig, env: Mapping[str, str] | None = None) -> str | None:
    """``remote.api_key``, else ``OPENAI_API_KEY`` / ``GEMINI_API_KEY``."""
    env = os.environ if env is None else env
    key = agent.settings.remote.api_key or env.get(_KEY_ENV.get(name, ""), "")
    return key or None


def local_model_ready(agent: AgentConfig, paths: AppPaths) -> bool:
    """True when ``local.model_path`` names a file that exists, or an
    ``hf:`` model already downloaded into the cache."""
    spec = agent.settings.local.model_path
    if not spec:
        return False
    if spec.startswith("hf:"):
        cache = Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()
        return (cache / spec[3:].split("/")[-1]).is_file() or (cache / spec[3:]).is_file()
    p = Path(os.path.expanduser(spec))
    if not p.is_absolute():
        p = agent.workspace / p
    return p.is_file()


def create_provider(
    name: str,
    agent: AgentConfig,
    paths: AppPaths,
    env: Mapping[str, str] | None = None,
    *,
    primary: str | None = None,
) -> EmbeddingProvider:
    """Build the named provider; raises ProviderError with the reason.

    ``primary`` is the provider chosen as the primary, when ``name`` is
    built as its fallback: the shared remote settings (key, headers,
    model) then stay with the primary's vendor. None means ``name`` is
    the primary as configured; with ``provider = "auto"`` it is resolved
    here the way :func:`choose_provider` resolves it.
    """
    env = os.environ if env is None else env
    if primary is None:
        primary = agent.settings.provider
        if primary == "auto":
            primary = _auto(agent, paths, env)[0] or "none"
    module_name = _FACTORIES.get(name)
    if module_name is None:
        raise ProviderError(f"unknown embedding provider {name!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = " (pip install 'memext[local]')" if name == "local" else ""
        raise ProviderError(f"the {name} provider cannot load: {exc}{hint}") from exc
    return module.create(agent, paths, env=env, primary=primary)


def choose_provider(agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None) -> ProviderChoice:
    """Resolve ``provider`` (and ``fallback``) for an agent.

    A provider that fails to start hands over to the fallback; with no
    usable provider the choice says why and search is keyword-only.
    """
    env = os.environ if env is None else env
    requested = agent.settings.provider
    if requested == "none":
        return keyword_only(requested, 'provider = "none"')
    if requested == "auto":
        name, reason, advice = _auto(agent, paths, env)
        if name is None:
            return keyword_only(requested, reason, advice)
    else:
        name, reason = requested, None
    try:
        return ProviderChoice(requested, create_provider(name, agent, paths, env, primary=name), reason)
    except ProviderError as exc:
        return fallback_choice(agent, paths, requested, name, str(exc), env)


def fallback_choice(
    agent: AgentConfig, paths: AppPaths, requested: str, failed: str, why: str, env: Mapping[str, str] | None = None
) -> ProviderChoice:
    """The configured fallback after ``failed`` broke, or no provider.

    ``failed`` is the provider that was the primary (with ``auto``, what it
    resolved to): the fallback is built knowing it, so it does not take the
    primary's key, headers or model to another vendor.
    """
    fallback = agent.settings.fallback
    if fallback != "none" and fallback != failed:
        try:
            provider = create_provider(fallback, agent, paths, env, primary=failed)
            return ProviderChoice(requested, provider, None, fallback_from=failed, fallback_reason=why)
        except ProviderError as exc:
            why = f"{why}; fallback {fallback} also failed: {exc}"
    cause = f"{failed} provider unavailable: {why}"
    return ProviderChoice(requested, None, f"{cause}; keyword-only search", failed=failed, cause=cause)


def keyword_only(requested: str, cause: str, advice: str | None = None) -> ProviderChoice:
    """No provider, by choice or for want of one: ``reason`` says so in one
    sentence, ``cause`` and ``advice`` keep its parts apart."""
    reason = f"{cause}: keyword-only search" + (f"; {advice}" if advice else "")
    return ProviderChoice(requested, None, reason, cause=cause, advice=advice)


def _auto(agent: AgentConfig, paths: AppPaths, env: Mapping[str, str]) -> tuple[str | None, str, str | None]:
    """(provider, how auto chose or why none, what to do when none)."""
    if local_model_ready(agent, paths):
        return "local", "auto: local model file present", None
    if resolve_api_key("openai", agent, env):
        return "openai", "auto: OpenAI API key found", None
    if resolve_api_key("gemini", agent, env):
        return "gemini", "auto: Gemini API key found", None
    spec = agent.settings.local.model_path
    if spec:
        # The user configured a model: name the file that is missing rather
        # than suggest installing one they may already have moved.
        return (
            None,
            f"auto: the local model {_shown_model_path(spec, agent)} (local.model_path) is missing, "
            "and there is no OPENAI_API_KEY or GEMINI_API_KEY",
            "restore the file, fix local.model_path, or run `memext model install minilm`",
        )
    return (
        None,
        "auto: no local model (local.model_path), no OPENAI_API_KEY or GEMINI_API_KEY",
        "run `memext model install minilm` for local semantic search",
    )


def _shown_model_path(spec: str, agent: AgentConfig) -> str:
    if spec.startswith("hf:"):
        return f"{spec} (not downloaded yet)"
    p = Path(os.path.expanduser(spec))
    return str(p if p.is_absolute() else agent.workspace / p)
