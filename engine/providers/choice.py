"""Choosing and creating the embedding provider for an agent (DESIGN.md §6).

``auto`` tries the providers of :mod:`.registry` in their ``auto`` order
(the local model if one is configured and present, else OpenAI if an API
key resolves, else Gemini if a key resolves) and otherwise picks none:
keyword-only search, and status says why. A remote provider is a candidate
only when ``allow_remote`` names it: an API key in the environment, set for
some other tool, is no consent to send notes off the machine. A provider's module is imported
only when it is built, so a keyword-only setup never loads ``openai`` or
``llama_cpp``.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from ..errors import ProviderError
from ..paths import AppPaths
from ..settings import AgentConfig
from .registry import ProviderSpec, auto_order, provider_spec

if TYPE_CHECKING:  # the providers' base classes load with a provider
    from .base import EmbeddingProvider, ProviderFactory


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


class ProviderInForce:
    """An index's provider: ``given``, or chosen on first use
    (:func:`choose_provider`), and switched to the configured fallback when
    it fails. ``on_fallback(choice)`` hears of every choice that is a
    fallback (the index records it, for status)."""

    def __init__(
        self,
        agent: AgentConfig,
        paths: AppPaths,
        env: Mapping[str, str] | None,
        given: ProviderChoice | None,
        on_fallback: Callable[[ProviderChoice], None],
    ):
        self._agent = agent
        self._paths = paths
        self._env = env
        self._choice = given
        self._on_fallback = on_fallback
        self._lock = threading.Lock()

    @property
    def choice(self) -> ProviderChoice:
        """The provider in force (resolved on first use), and why."""
        with self._lock:
            if self._choice is None:
                self._choice = choose_provider(self._agent, self._paths, self._env)
                if self._choice.fallback_from:
                    self._on_fallback(self._choice)
            return self._choice

    def switch_to_fallback(self, failed: str, why: str) -> bool:
        """Move to the configured fallback; False when there is none."""
        with self._lock:
            old = self._choice
            choice = fallback_choice(self._agent, self._paths, self._agent.settings.provider, failed, why, self._env)
            if choice.provider is None:
                return False
            self._choice = choice
        if old and old.provider:
            old.provider.close()
        self._on_fallback(choice)
        import logging  # here: a search that never falls back never logs

        logging.getLogger("memext").warning("provider %s failed (%s); falling back to %s", failed, why, choice.provider.id)
        return True

    def close(self) -> None:
        """Close the provider in force, if one was made."""
        if self._choice and self._choice.provider:
            self._choice.provider.close()


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
    try:
        spec = provider_spec(name)
    except KeyError:
        raise ProviderError(f"unknown embedding provider {name!r}") from None
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        hint = f" ({spec.install_command})" if spec.install_command else ""
        raise ProviderError(f"the {name} provider cannot load: {exc}{hint}") from exc
    create: ProviderFactory = module.create
    return create(agent, paths, env=env, primary=primary)


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
    """(provider, how auto chose or why none, what to do when none). A
    remote provider is chosen only when ``allow_remote`` names it: a key in
    the environment is not consent to send notes off this machine."""
    withheld: list[ProviderSpec] = []
    for spec in auto_order():
        why = spec.ready_reason(agent, paths, env)
        if not why:
            continue
        if spec.remote and spec.name not in agent.settings.allow_remote:
            withheld.append(spec)
            continue
        return spec.name, f"auto: {why}" + (f", sending notes to {spec.label} allowed (allow_remote)" if spec.remote else ""), None
    if withheld:
        cause, advice = _withheld(withheld)
        return None, cause, advice
    keys = _or(tuple(var for p in auto_order() for var in p.key_env))
    model_path = agent.settings.local.model_path
    if model_path:
        # The user configured a model: name the file that is missing rather
        # than suggest installing one they may already have moved.
        return (
            None,
            f"auto: the local model {_shown_model_path(model_path, agent)} (local.model_path) is missing, and there is no {keys}",
            "restore the file, fix local.model_path, or run `memext model install minilm`",
        )
    return (
        None,
        f"auto: no local model (local.model_path), no {keys}",
        "run `memext model install minilm` for local semantic search",
    )


def _withheld(withheld: list[ProviderSpec]) -> tuple[str, str]:
    """Why ``auto`` is keyword-only although a remote provider's key is
    there, and what to do: (cause, advice)."""
    first = withheld[0]
    return (
        f"auto: {_or(tuple(s.label for s in withheld))} API key found, but notes are sent off this machine only if you allow it",
        f"run `memext model install minilm` for local semantic search, "
        f"or `memext config allow-remote {first.name}` to send your notes to {first.label}",
    )


def _or(names: tuple[str, ...]) -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    return " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"


def _shown_model_path(spec: str, agent: AgentConfig) -> str:
    if spec.startswith("hf:"):
        return f"{spec} (not downloaded yet)"
    p = Path(os.path.expanduser(spec))
    return str(p if p.is_absolute() else agent.workspace / p)
