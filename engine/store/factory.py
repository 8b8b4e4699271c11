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
        from .postgres import PostgresStore

        return PostgresStore(store.url, agent.id, db_path, options)
    from .sqlite import Store

    return Store(db_path, options)


def is_local(agent: "AgentConfig") -> bool:
    """True when the agent's index is a file on this machine (SQLite)."""
    return agent.settings.store.driver == "sqlite"
