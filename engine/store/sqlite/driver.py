"""The SQLite row of the driver table (``store.driver = "sqlite"``, the default).

One index file per agent (``db_path``: ``store.path`` or the state folder),
written under a file lock beside it (:mod:`.lock`). The store itself loads
when an index is opened, so reading the config loads none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .lock import WriterLock, file_lock_held

if TYPE_CHECKING:
    from ...settings import AgentConfig, StoreSettings
    from ..base import StoreOptions
    from ..drivers import DriverFunctions
    from .store import Store


def open_store(agent: "AgentConfig", db_path: Path, options: "StoreOptions | None" = None) -> "Store":
    """The index file at ``db_path``."""
    from .store import Store

    return Store(db_path, options)


def location(agent: "AgentConfig", db_path: Path | None = None) -> str:
    """The index file's path."""
    return str(db_path or agent.db_path())


def writer_lock(agent: "AgentConfig", db_path: Path, timeout: float | None = 600) -> WriterLock:
    """The file lock beside the index (``<index>.lock``)."""
    return WriterLock(db_path, timeout)


def lock_held(agent: "AgentConfig", db_path: Path) -> bool:
    """True while a process on this machine holds the index's file lock."""
    return file_lock_held(db_path)


def check_settings(store: "StoreSettings", key: str, file: str | None) -> None:
    """Nothing beyond the settings' own checks: every vector backend and
    any ``store.path`` serve a file."""


if TYPE_CHECKING:
    from . import driver as _this_module

    _functions: DriverFunctions = _this_module
