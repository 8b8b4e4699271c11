"""Opening SQLite with the sqlite-vec extension and FTS5 (the binding's
FTS5 also tokenizes text as the index does: engine/store/tokenizer.py).

Many Python builds (pyenv, macOS framework builds, this project's own dev
machine) ship a ``sqlite3`` module without ``enable_load_extension``, so
sqlite-vec can never load through it. We therefore pick the first binding
that can load extensions: the standard module when it can, else
``sqlean`` (sqlean-py, a drop-in ``sqlite3`` with its own SQLite), else
``pysqlite3``. If none can, vectors fall back to a numpy scan (store.py).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

BUSY_TIMEOUT_MS = 10_000


class Binding(NamedTuple):
    """The DB-API module in use and what it can do."""

    name: str  # "sqlite3", "sqlean" or "pysqlite3"
    module: ModuleType
    sqlite_version: str
    can_load_extensions: bool


@functools.lru_cache(maxsize=1)
def binding() -> Binding:
    """The best available binding (cached: it never changes within a process)."""
    candidates = ["sqlite3", "sqlean", "pysqlite3.dbapi2"]
    first: Binding | None = None
    for name in candidates:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        can = hasattr(mod.Connection, "enable_load_extension")
        b = Binding(name=name.split(".")[0], module=mod, sqlite_version=mod.sqlite_version, can_load_extensions=can)
        if can:
            return b
        first = first or b
    assert first is not None  # the standard module always imports
    return first


@dataclass
class Capabilities:
    """What one connection can do: vector extension and FTS5."""

    vec_version: str | None = None
    vec_error: str | None = None
    fts5: bool = False
    fts5_error: str | None = None


def connect(
    path: str | Path,
    *,
    load_vec: bool = True,
    extension_path: str = "",
    readonly: bool = False,
    immutable: bool = False,
    wal: bool = True,
    cached_statements: int | None = None,
):
    """Open ``path`` in WAL mode with a busy timeout; load sqlite-vec if asked.

    ``readonly`` opens it read-only (no journal switch); ``immutable`` too,
    trusting that nothing changes the file meanwhile, for a WAL database in
    a folder where SQLite cannot make its ``-shm`` (a read-only copy).
    ``wal=False`` leaves the journal mode as it is (the caller writes
    something first). ``cached_statements``: how many prepared statements
    the connection keeps (the binding's default when None). Returns ``(connection, Capabilities)``. The
    connection may be shared across threads by its owner
    (check_same_thread is off); callers serialise access.
    """
    b = binding()
    target = str(path)
    uri = False
    if readonly or immutable:
        target = Path(path).resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
        uri = True
    extra = {} if cached_statements is None else {"cached_statements": cached_statements}
    conn = b.module.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None, uri=uri, **extra)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if wal and not uri and str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    caps = Capabilities()
    if load_vec:
        _load_vec(conn, b, extension_path, caps)
    else:
        caps.vec_error = "disabled by store.vector.enabled = false"
    _check_fts5(conn, caps)
    return conn, caps


def _load_vec(conn: Any, b: Binding, extension_path: str, caps: Capabilities) -> None:
    if not b.can_load_extensions:
        caps.vec_error = (
            f"the {b.name} module of this Python cannot load SQLite extensions; "
            "install sqlean-py (pip install sqlean-py) for vector search in SQLite"
        )
        return
    try:
        conn.enable_load_extension(True)
        if extension_path:
            conn.load_extension(str(Path(extension_path).expanduser()))
        else:
            conn.load_extension(_bundled_vec_path())
        conn.enable_load_extension(False)
        caps.vec_version = conn.execute("select vec_version()").fetchone()[0]
    except Exception as exc:  # any failure here means "no vec0", not a crash
        caps.vec_error = f"sqlite-vec did not load: {exc}"


@functools.lru_cache(maxsize=1)
def _bundled_vec_path() -> str:
    """The extension shipped in the sqlite-vec package, found without
    importing the package: its ``__init__`` imports numpy (about 0.1 s that
    a keyword-only search would pay for nothing)."""
    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        # sqlite_vec.loadable_path(): "vec0" beside __init__.py; SQLite adds the suffix.
        if any(Path(folder, "vec0" + ext).is_file() for ext in (".so", ".dylib", ".dll")):
            return str(Path(folder, "vec0"))
    import sqlite_vec  # an unusual layout: ask the package

    return str(sqlite_vec.loadable_path())


def _check_fts5(conn: Any, caps: Capabilities) -> None:
    # FTS5 registers this function wherever it is built in or loaded: 2 µs,
    # where making and dropping a probe table took 180 µs per connection.
    try:
        conn.execute("SELECT fts5_source_id()").fetchone()
        caps.fts5 = True
    except Exception as exc:
        caps.fts5_error = f"FTS5 is not available in SQLite {binding().sqlite_version}: {exc}"


def is_sqlite_error(exc: BaseException) -> bool:
    """True for errors raised by whichever binding is in use."""
    return isinstance(exc, binding().module.Error)
