"""The store drivers: one row per backend that ``store.driver`` can name.

A :class:`StoreDriver` is everything the engine asks of a backend beyond
the :class:`~.base.IndexStore` interface: opening an agent's index, where
it is as users are shown it, the writer lock that goes with it, and
whether the index is a file on this machine. :data:`DRIVERS` is the table
of them by name; config accepts exactly its names (``store.driver``), and
nothing else in the engine asks which backend an agent uses.

Each backend's functions live in its own folder (``sqlite/driver.py``,
``postgres/driver.py``); a row names that module and it is imported when
one of them is first called, so SQLite users never import the PostgreSQL
half (nor psycopg) and config can read the table's names without loading
any backend. Adding a backend is one folder and one row: DESIGN.md §14.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Protocol, Sequence

if TYPE_CHECKING:
    from ..settings import AgentConfig, StoreSettings
    from .base import IndexStore, StoreOptions


class AgentLock(Protocol):
    """An agent's writer lock: ``with lock:`` or acquire/release.

    ``acquire`` raises LockTimeout after the lock's timeout (0: try once,
    None: wait forever); ``holder`` says who holds it, for messages."""

    timeout: float | None
    #: Set at acquire: the last holder died holding the lock (SQLite: its
    #: owner note outlived it, so the file is checked; a server's
    #: transactions leave nothing half-written, so never for PostgreSQL).
    previous_holder_died: bool

    def acquire(self) -> "AgentLock": ...

    def release(self) -> None: ...

    def holder(self) -> dict | None: ...

    @property
    def is_locked(self) -> bool: ...

    def __enter__(self) -> "AgentLock": ...

    def __exit__(self, *exc: object) -> None: ...


class IndexFiles(Protocol):
    """What the engine does with an index that is a file on this machine,
    beyond opening its store (DESIGN.md §4): a local row's
    :meth:`StoreDriver.index_files` (``sqlite/files.py``). An index on a
    server has none: the server keeps its own data sane."""

    def quick_check(self, db_path: Path, *, thorough: bool = False) -> str | None:
        """What is wrong with the file (a quick or a thorough check), None when it checks out."""
        ...

    def damage_of(self, exc: BaseException, db_path: Path) -> str | None:
        """What is wrong with the file when ``exc`` came from damage to it, else None."""
        ...

    def set_aside(self, db_path: Path, problem: str) -> str:
        """Move a damaged file aside (the caller holds the writer lock); what to tell the user."""
        ...

    def writer_died(self, db_path: Path) -> bool:
        """True when the last writer died holding the lock (the file is worth a check)."""
        ...

    def clean_stale_shadows(self, db_path: Path) -> None:
        """Remove what rebuilds that crashed left beside the file (under the writer lock)."""
        ...

    def built_for(self, db_path: Path) -> str | None:
        """The workspace the index was built for, read without opening a store."""
        ...

    def not_ours(self, db_path: Path, own_path: bool = False) -> str | None:
        """Why the file is not an index memext made (never deleted then), else
        None. ``own_path``: the file is at memext's own index path (no
        ``store.path``), where an empty database is an unfinished index."""
        ...

    def remove(self, db_path: Path, also: Sequence[Path] = ()) -> list[Path]:
        """Delete the index's files (and ``also``) under its writer lock; the files deleted."""
        ...

    def remove_aside_copies(self, db_path: Path) -> list[Path]:
        """Delete the copies of the index set aside when it was damaged; the files deleted."""
        ...


class DriverFunctions(Protocol):
    """The functions a backend's driver module defines (the module a
    :class:`StoreDriver` row names). A driver module ends with
    ``if TYPE_CHECKING: _functions: DriverFunctions = <the module itself>``
    so that mypy checks their shapes."""

    def open_store(self, agent: AgentConfig, db_path: Path, options: StoreOptions | None = None) -> IndexStore: ...

    def location(self, agent: AgentConfig, db_path: Path | None = None) -> str: ...

    def writer_lock(self, agent: AgentConfig, db_path: Path, timeout: float | None = 600) -> AgentLock: ...

    def lock_held(self, agent: AgentConfig, db_path: Path) -> bool: ...

    def check_settings(self, store: StoreSettings, key: str, file: str | None) -> None: ...


class StoreDriver(NamedTuple):
    """One storage backend, as the engine uses it: a row of :data:`DRIVERS`.

    A row is data: the backend's name and the module that holds its
    functions (``open_store``, ``location``, ``writer_lock``, ``lock_held``,
    ``check_settings``, of the shapes below), imported the first time one
    is called. ``db_path`` in them is the agent's index file
    (:meth:`~memext.engine.settings.AgentConfig.db_path`); a backend whose
    index is elsewhere uses it at most as this machine's local name for it."""

    #: The ``store.driver`` value that picks it.
    name: str
    #: The backend's driver module, relative to this package (``.sqlite.driver``).
    module: str
    #: For an index that is a file on this machine, the module of its
    #: :class:`IndexFiles` functions (``.sqlite.files``); "" for an index on
    #: a server.
    files_module: str = ""

    @property
    def local(self) -> bool:
        """The index is a file on this machine: it may record this machine's
        paths (a shared index's fingerprint leaves them out, DESIGN.md §16),
        and file damage, crashed writers' notes and integrity checks concern it."""
        return bool(self.files_module)

    def index_files(self) -> IndexFiles | None:
        """The index's files on this machine (imported on first use); None
        for an index on a server."""
        if not self.files_module:
            return None
        module: Any = import_module(self.files_module, __package__)
        return module

    def _functions(self) -> DriverFunctions:
        """The driver module (imported on first use, then from ``sys.modules``)."""
        module: Any = import_module(self.module, __package__)
        return module

    def open(self, agent: AgentConfig, db_path: Path, options: StoreOptions | None = None) -> IndexStore:
        """Open the agent's index."""
        return self._functions().open_store(agent, db_path, options)

    def location(self, agent: AgentConfig, db_path: Path | None = None) -> str:
        """Where the index is as users are shown it, without opening it, and
        never with a password."""
        return self._functions().location(agent, db_path)

    def writer_lock(self, agent: AgentConfig, db_path: Path, timeout: float | None = 600) -> AgentLock:
        """The agent's writer lock, not yet acquired."""
        return self._functions().writer_lock(agent, db_path, timeout)

    def lock_held(self, agent: AgentConfig, db_path: Path) -> bool:
        """True while a process (anywhere) holds the writer lock; never waits."""
        return self._functions().lock_held(agent, db_path)

    def check_settings(self, store: StoreSettings, key: str, file: str | None) -> None:
        """Checks of the ``store`` settings this backend needs beyond their
        types; raises ConfigError naming a key under ``key`` (``...store``)."""
        self._functions().check_settings(store, key, file)


#: Every backend by its ``store.driver`` name; a row's module loads on first use.
DRIVERS: Mapping[str, StoreDriver] = MappingProxyType(
    {
        "sqlite": StoreDriver("sqlite", ".sqlite.driver", files_module=".sqlite.files"),
        "postgres": StoreDriver("postgres", ".postgres.driver"),
    }
)


def store_driver(name: str) -> StoreDriver:
    """The backend named ``name`` (config has checked it is in :data:`DRIVERS`)."""
    return DRIVERS[name]


def driver_of(agent: "AgentConfig") -> StoreDriver:
    """The backend that ``agent``'s ``store.driver`` names."""
    return store_driver(agent.settings.store.driver)


def open_store(agent: "AgentConfig", db_path: Path, options: StoreOptions | None = None) -> IndexStore:
    """The agent's index, opened by its driver.

    Raises CorruptIndex (SQLite: an unusable file), IndexOpenError, or
    StoreUnavailable (PostgreSQL: the server cannot be reached)."""
    return driver_of(agent).open(agent, db_path, options)


def store_location(agent: "AgentConfig", db_path: Path | None = None) -> str:
    """Where the agent's index lives, as users are shown it, without opening
    it: the SQLite file, or the server URL (never with its password) and schema."""
    return driver_of(agent).location(agent, db_path)


def writer_lock(agent: "AgentConfig", db_path: Path, timeout: float | None = 600) -> AgentLock:
    """The writer lock of ``agent``'s store (not acquired): a file lock
    beside a SQLite index, an advisory lock on a PostgreSQL server."""
    return driver_of(agent).writer_lock(agent, db_path, timeout)


def writer_lock_held(agent: "AgentConfig", db_path: Path) -> bool:
    """True while a process (anywhere) holds ``agent``'s writer lock; never waits."""
    return driver_of(agent).lock_held(agent, db_path)
