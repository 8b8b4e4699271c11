"""Opening an agent's index with the driver its config names (``store.driver``).

``sqlite`` (the default) opens the agent's index file; ``postgres`` the
agent's schema in the database at ``store.url`` (psycopg is imported only
then, so SQLite users never need it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .base import IndexStore, StoreOptions

if TYPE_CHECKING:
    from ..config import AgentConfig


def open_store(agent: "AgentConfig", db_path: Path, options: StoreOptions | None = None) -> IndexStore:
    """The agent's index. ``db_path`` is its SQLite file, or for a postgres
    agent this machine's local path for it (the index is on the server).

    Raises CorruptIndex (SQLite: an unusable file), IndexOpenError, or
    StoreUnavailable (PostgreSQL: the server cannot be reached)."""
    store = agent.settings.store
    if store.driver == "postgres":
        from .postgres.store import PostgresStore

        return PostgresStore(store.url, agent.id, db_path, options)
    from .sqlite.store import Store

    return Store(db_path, options)


def store_location(agent: "AgentConfig", db_path: Path | None = None) -> str:
    """Where the agent's index lives, as users are shown it, without opening
    it: the SQLite file, or the server URL (never with its password) and schema."""
    store = agent.settings.store
    if store.driver == "postgres":
        from .postgres.url import agent_schema, redact_url

        return f"{redact_url(store.url)} (schema {agent_schema(agent.id)})"
    return str(db_path or agent.db_path())
