"""What the remote providers (the registry's rows with ``remote``: OpenAI,
Gemini) read from an agent's settings.

``remote.api_key`` (else the row's key variable: ``OPENAI_API_KEY``,
``GEMINI_API_KEY``),
``remote.base_url``, ``remote.headers``, ``remote.deadline_ms``,
``remote.query_deadline_ms`` and ``model``. The endpoint key
that goes into the index fingerprint and the embedding cache is the base
URL plus the sorted header *names*: never a secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import ProviderError
from ..settings import AgentConfig
from .registry import all_key_env, env_api_key, provider_spec, remote_names, resolve_api_key


@dataclass(frozen=True)
class RemoteTarget:
    """Where a remote provider sends its requests, and as whom."""

    api_key: str = field(repr=False)
    base_url: str
    model: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    #: Every value that must never appear in a message: the key, header
    #: values, and the configured and environment keys (see engine.redact).
    extra_secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key, *self.headers.values(), *self.extra_secrets)

    @property
    def endpoint_key(self) -> str:
        return endpoint_key(self.base_url, self.headers)


def endpoint_key(base_url: str, headers: Mapping[str, str] | None = None) -> str:
    """``base_url`` plus the sorted header names (values may be secrets)."""
    key = base_url.rstrip("/")
    names = sorted({h.lower() for h in (headers or {})})
    return f"{key} headers={','.join(names)}" if names else key


def _primary(agent: AgentConfig, primary: str | None) -> str:
    """The provider in force as the primary: ``primary`` when the caller
    knows it (what ``auto`` resolved to), else ``provider`` as configured."""
    return agent.settings.provider if primary is None else primary


def _fallback_behind_other_remote(name: str, agent: AgentConfig, primary: str | None) -> bool:
    p = _primary(agent, primary)
    return p != name and agent.settings.fallback == name and p in remote_names()


def owns_settings(name: str, agent: AgentConfig, primary: str | None = None) -> bool:
    """Whether ``model`` and ``remote.*`` apply to provider ``name``.

    They describe the primary provider's endpoint. When ``name`` is only the
    fallback behind the *other* remote provider and no ``remote.base_url``
    names a shared endpoint (a gateway serving both APIs), they belong to
    the primary: a Gemini fallback must not send the OpenAI key to Google,
    nor ask for ``text-embedding-3-large``. It then uses its own environment
    key, its default endpoint and its default model.

    ``primary`` is the provider actually chosen as the primary. With
    ``provider = "auto"`` only the caller knows it (auto picks local, OpenAI
    or Gemini at run time), so :func:`engine.providers.create_provider`
    always passes it; None means ``provider`` as configured.
    """
    return not _fallback_behind_other_remote(name, agent, primary) or bool(agent.settings.remote.base_url)


def configured_model(name: str, agent: AgentConfig, primary: str | None = None) -> str:
    """``model`` as it applies to provider ``name`` ("" means its default).

    ``model`` names one model: a fallback behind the other remote provider
    always uses its own default.
    """
    return "" if _fallback_behind_other_remote(name, agent, primary) else agent.settings.model


def remote_target(
    name: str,
    agent: AgentConfig,
    env: Mapping[str, str] | None,
    *,
    default_base_url: str,
    default_model: str,
    primary: str | None = None,
) -> RemoteTarget:
    """Resolve key, base URL, headers and model; a missing key says how to set one.

    ``primary``: the provider chosen as the primary (see :func:`owns_settings`).
    """
    owns = owns_settings(name, agent, primary)
    env = os.environ if env is None else env
    key = resolve_api_key(name, agent, env) if owns else env_api_key(name, env)
    if not key:
        variables = " or ".join(provider_spec(name).key_env)
        raise ProviderError(
            f"no API key for the {name} embedding provider: set memory_search.remote.api_key "
            f"in the config file or the {variables} environment variable"
        )
    r = agent.settings.remote
    return RemoteTarget(
        api_key=key,
        base_url=((r.base_url if owns else "") or default_base_url).rstrip("/"),
        model=configured_model(name, agent, primary) or default_model,
        headers=dict(r.headers) if owns else {},
        # Whatever key or header this agent could send anywhere: a server
        # (or a gateway in front of both vendors) may echo any of them.
        extra_secrets=tuple(v for v in (r.api_key, *r.headers.values(), *(env.get(k, "") for k in all_key_env())) if v),
    )


def deadlines(agent: AgentConfig, options: Mapping[str, Any]) -> dict[str, Any]:
    """A remote provider's ``options`` with ``remote.deadline_ms`` as the
    deadline of one embedding call of a sync and ``remote.query_deadline_ms``
    (capped at it) as a query's (DESIGN.md §6), unless ``options`` set them
    (tests shorten them directly)."""
    r = agent.settings.remote
    seconds = r.deadline_ms / 1000
    return {"query_timeout_s": min(r.query_deadline_ms / 1000, seconds), "embedding_deadline_s": seconds, **options}
