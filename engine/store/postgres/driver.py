"""The PostgreSQL row of the driver table (``store.driver = "postgres"``, DESIGN.md §16).

A schema per agent in the database at ``store.url``, written under an
advisory lock on the server (:mod:`.lock`). Opening a store or a lock
loads psycopg; showing where the index is and checking the settings are
pure string work (:mod:`.url`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError
from .url import agent_schema, check_url, redact_url

if TYPE_CHECKING:
    from ...settings import AgentConfig, StoreSettings
    from ..base import StoreOptions
    from ..drivers import DriverFunctions
    from .lock import AdvisoryLock
    from .store import PostgresStore


def open_store(agent: "AgentConfig", db_path: Path, options: "StoreOptions | None" = None) -> "PostgresStore":
    """The agent's schema on the server (``db_path``: this machine's local
    name for the index, kept for the files beside it)."""
    from .store import PostgresStore

    return PostgresStore(agent.settings.store.url, agent.id, db_path, options)


def location(agent: "AgentConfig", db_path: Path | None = None) -> str:
    """The server URL (never with its password) and the agent's schema."""
    return f"{redact_url(agent.settings.store.url)} (schema {agent_schema(agent.id)})"


def writer_lock(agent: "AgentConfig", db_path: Path, timeout: float | None = 600) -> "AdvisoryLock":
    """The advisory lock on the server, which works across machines."""
    from .lock import AdvisoryLock

    return AdvisoryLock(agent.settings.store.url, agent.id, timeout)


def lock_held(agent: "AgentConfig", db_path: Path) -> bool:
    """True while some connection, from any machine, holds the agent's lock."""
    from .lock import advisory_lock_held

    return advisory_lock_held(agent.settings.store.url, agent.id)


def check_settings(store: "StoreSettings", key: str, file: str | None) -> None:
    """``store.url`` is a PostgreSQL URL, and vectors are pgvector's to search."""
    problem = check_url(store.url)
    if problem:
        raise ConfigError(problem, key=f"{key}.url", path=file)
    if store.vector.backend != "auto":
        raise ConfigError(
            f'"{store.vector.backend}" is a SQLite backend; with store.driver = "postgres" vectors are searched '
            'by pgvector (exact or HNSW, chosen by size): use "auto"',
            key=f"{key}.vector.backend",
            path=file,
        )


if TYPE_CHECKING:
    from . import driver as _this_module

    _functions: DriverFunctions = _this_module
