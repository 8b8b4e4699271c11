"""The SQLite connection of one index: open, schema, refresh after a swap,
meta, transactions, and what to do with an unusable file.

Readers check ``PRAGMA data_version`` before each read and reopen when
another process swapped in a rebuilt index (the ``generation`` in ``meta``
changed, or the file was replaced). One :class:`Connection` is shared by the
parts of a :class:`~memext.engine.store.sqlite.store.Store`; they reach SQLite
through :attr:`Connection.conn` under :attr:`Connection.lock`.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, TypeVar

from ...errors import IndexOpenError, MemextError
from ...paths import private_dir, private_file
from ...text import FTS_TOKENIZER
from ..base import READER_STATEMENTS, CorruptIndex, StoreOptions
from . import db, entries as entry_table, file_summary, ownership, schema_check
from .damage import looks_damaged
from .index_files import INDEX_COMPANIONS
from .ownership import Kind, cannot_write, foreign_database, no_write_reason, read_only_reason

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    hash TEXT,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    chunks INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    indexed_at REAL NOT NULL,
    day TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    source TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    updated_at REAL NOT NULL
);
-- (path, lines): a hit's neighbours are read from the index alone (chunk_neighbours).
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, start_line, end_line);
CREATE TABLE IF NOT EXISTS embedding_cache (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    endpoint_key TEXT NOT NULL,
    hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    embedding BLOB NOT NULL,
    used_at REAL NOT NULL,
    PRIMARY KEY (provider, model, endpoint_key, hash)
);
CREATE INDEX IF NOT EXISTS embedding_cache_used ON embedding_cache(used_at);
"""
_FTS_SCHEMA = f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, content='', tokenize=\"{FTS_TOKENIZER}\")"

T = TypeVar("T")


class Connection:
    """One open connection to an index file (reopened after a swap).

    Before SQLite writes a byte, the file is checked to be memext's
    (:mod:`.ownership`): another program's database is refused with
    :class:`ForeignDatabase`, a file that is no database raises
    :class:`CorruptIndex`. A file or folder memext may not write is opened
    read-only (:attr:`read_only` says why): it can be searched, not synced.
    New index files are created 0600 (SQLite gives its ``-wal``/``-shm``
    the same mode); looser existing ones are tightened.
    """

    def __init__(self, path: Path, options: StoreOptions):
        self.path = path
        self.options = options
        #: Serialises use of :attr:`conn` across threads (reentrant: a write
        #: method holds it around its transaction).
        self.lock = threading.RLock()
        #: Bumped at every (re)open, so work started on an older connection
        #: (a background matrix load) can tell its result is stale.
        self.epoch = 0
        #: Open :class:`Transaction` levels (only the outermost commits).
        self.tx_depth = 0
        #: Why this index cannot be written (None: it can).
        self.read_only: str | None = None
        self._immutable = False
        self._memo: dict[str, tuple[Any, Any]] = {}
        self._meta: tuple[int, dict[str, str]] | None = None
        #: ``files`` has its ``day`` column (an old read-only index may not).
        self.file_days = True
        #: The index keeps its file list in one row (:mod:`.file_summary`).
        self.file_summary = False
        #: The index has its ``entries`` table (an old read-only one may not).
        self.entries = False
        self._open()

    # -- opening ------------------------------------------------------------------

    def _open(self) -> None:
        self._meta = None  # a snapshot of the connection before: never valid for this one
        try:
            private_dir(self.path.parent, tighten=False)
        except OSError as exc:
            raise IndexOpenError(f"cannot create the folder of the index {self.path}: {exc.strerror or exc}{self._check_setting}") from exc
        kind = ownership.kind_to_open(self.path, own_path=self.options.own_path)
        self.read_only = read_only_reason(self.path, new=kind is Kind.NEW)
        self._immutable = False
        if kind is Kind.UNSTAMPED and not self.read_only:
            self._check_unstamped()
        self._connect_file(kind)
        self._data_version = self._read_data_version()
        self._meta = None
        self._generation = self.get_meta("generation")
        self._inode = _inode(self.path)
        self._memo = {}
        self.epoch += 1

    @property
    def _check_setting(self) -> str:
        return ownership.setting_hint(self.options.own_path)

    def _check_unstamped(self) -> None:
        """Read an index older than the stamp through a read-only connection
        before memext writes its first byte to it (the WAL switch, the
        stamp): a file that only looks like one, with a ``meta`` table but
        not memext's schema or values, is another program's and is left as
        it was."""
        self.read_only = "it is checked before its first write"
        try:
            self._connect_file(Kind.UNSTAMPED)
            self._close_quietly()
        except CorruptIndex as exc:
            raise foreign_database(self.path, f"no memext application id, and {exc}", own_path=self.options.own_path) from exc
        finally:
            self.read_only = None

    def _connect_file(self, kind: Kind) -> None:
        """Connect to the file :func:`ownership.inspect` found of ``kind``
        (creating the schema in a new one); an unusable file raises
        :class:`CorruptIndex`, one that cannot be opened IndexOpenError."""
        try:
            if kind in (Kind.NEW, Kind.UNFINISHED):
                if self.read_only:
                    raise IndexOpenError(f"cannot create the index {self.path}: {self.read_only}{self._check_setting}")
                private_file(self.path, create=True)
                self.conn, self.caps = self._connect(wal=False)
                # The stamp is the first write, before any table: from then
                # on the file says it is memext's (engine/store/sqlite/ownership.py).
                self.conn.execute(f"PRAGMA application_id = {ownership.APPLICATION_ID}")
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                self._init_schema()
            else:
                if not self.read_only:
                    for suffix in INDEX_COMPANIONS:  # one line for the index, not one per companion
                        private_file(Path(str(self.path) + suffix), quiet=bool(suffix))
                self._open_existing(stamp=kind is Kind.UNSTAMPED)
        except (CorruptIndex, MemextError):
            self._close_quietly()
            raise
        except UnicodeDecodeError as exc:  # SQLite's message quotes damaged schema text
            self._close_quietly()
            raise CorruptIndex(f"{self.path} is not a usable index (damaged schema: {exc})") from exc
        except Exception as exc:
            self._close_quietly()
            if db.is_sqlite_error(exc) and looks_damaged(exc):
                raise CorruptIndex(f"{self.path} is not a usable index ({exc})") from exc
            if isinstance(exc, OSError) or db.is_sqlite_error(exc):
                raise IndexOpenError(f"cannot open the index {self.path}: {exc}{self._check_setting}") from exc
            raise

    def _open_existing(self, *, stamp: bool) -> None:
        try:
            self.conn, self.caps = self._connect_existing()
            self._init_schema(stamp=stamp)
        except Exception as exc:
            if self.read_only or not cannot_write(exc):
                raise
            # No room for its -shm on a full disk, say: it can still be read.
            self._close_quietly()
            self.read_only = no_write_reason(self.path, exc)
            self.conn, self.caps = self._connect_existing()
            self._init_schema()

    def _connect_existing(self) -> tuple[Any, db.Capabilities]:
        if not self.read_only:
            return self._connect()
        conn, caps = self._connect()
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite opens the file lazily
            return conn, caps
        except Exception as exc:
            conn.close()
            if not db.is_sqlite_error(exc) or looks_damaged(exc):
                raise
        # A WAL index in a read-only folder: SQLite cannot make its -shm.
        self._immutable = True
        return self._connect()

    def connect(self) -> tuple[Any, db.Capabilities]:
        """A new DB-API connection to the file with this store's options
        (the background matrix loader reads through its own)."""
        return self._connect()

    def _connect(self, *, wal: bool = True) -> tuple[Any, db.Capabilities]:
        return db.connect(
            self.path,
            load_vec=self.options.vector_enabled,
            extension_path=self.options.extension_path,
            readonly=self.read_only is not None,
            immutable=self._immutable,
            wal=wal,
            cached_statements=READER_STATEMENTS if self.options.reader else None,
        )

    def _init_schema(self, *, stamp: bool = False) -> None:
        # Readers must not take the write lock, so only write when needed.
        exists = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
        if not exists and self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            # Tables, but not ours (the stamp said otherwise: a damaged file).
            raise CorruptIndex(f"{self.path} holds no memext tables")
        if not exists or self.get_meta("schema_version") is None:
            if self.read_only:
                raise IndexOpenError(f"the index {self.path} is empty and {self.read_only}, so it cannot be built")
            with self.transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                if self.caps.fts5:
                    self.conn.execute(_FTS_SCHEMA)
                if self.get_meta("schema_version") is None:
                    self.set_meta("schema_version", str(SCHEMA_VERSION))
                    self.set_meta("generation", uuid.uuid4().hex)
                    self.set_meta("created_at", str(time.time()))
        raw = self.get_meta("schema_version")
        try:
            version = int(raw or "")
        except ValueError:
            raise CorruptIndex(f"{self.path} has a damaged schema version in its meta table ({raw!r})") from None
        if version != SCHEMA_VERSION:
            raise CorruptIndex(f"{self.path} has index schema {version}, this memext uses {SCHEMA_VERSION}")
        missing = schema_check.schema_problem(self.conn, _SCHEMA, fts=self.caps.fts5, vectors=self.get_meta("dims") is not None)
        if missing:
            raise CorruptIndex(f"{self.path} has a damaged schema ({missing})")
        self.file_days = self._add_file_days()
        self.file_summary = file_summary.ensure(self)
        self.entries = entry_table.ensure(self)
        if stamp and not self.read_only:
            self._stamp()

    def _add_file_days(self) -> bool:
        """Give an index made before ``files.day`` existed the column, filled
        from what it holds (the names, and each file's first chunk for its
        front matter); True when the column is there. An index that cannot
        be written (read-only) is read without it: ``file_rows`` then dates
        files by name and mtime."""
        if _has_column(self.conn, "files", "day"):
            return True
        if self.read_only:
            return False
        from ...note_dates import content_date

        try:
            with self.transaction():
                if _has_column(self.conn, "files", "day"):  # another process was quicker
                    return True
                self.conn.execute("ALTER TABLE files ADD COLUMN day TEXT")
                heads = self.conn.execute(
                    "SELECT f.path, c.text FROM files f LEFT JOIN chunks c ON c.path = f.path AND c.start_line = 1"
                ).fetchall()
                for path, text in heads:
                    day = content_date(path, text or "")
                    if day is not None:
                        self.conn.execute("UPDATE files SET day = ? WHERE path = ?", (day.isoformat(), path))
        except Exception as exc:
            if not db.is_sqlite_error(exc):
                raise
            return False
        return True

    def _stamp(self) -> None:
        """Give an index made before application ids its stamp (once)."""
        try:
            with self.transaction():
                self.conn.execute(f"PRAGMA application_id = {ownership.APPLICATION_ID}")
        except Exception as exc:  # busy, or a full disk: the next open tries again
            if not db.is_sqlite_error(exc):
                raise

    def close(self) -> None:
        with self.lock:
            self._close_quietly()

    def _close_quietly(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    def reopen(self) -> None:
        """Close and open again (after this file's content was replaced)."""
        with self.lock:
            self._close_quietly()
            self._open()

    # -- seeing other processes' changes -----------------------------------------------

    def _read_data_version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def refresh(self) -> bool:
        """Reopen when another process replaced the index; True if it did.

        Cheap enough to call before every read: one stat and one pragma.
        """
        with self.lock:
            if _inode(self.path) != self._inode:
                self._close_quietly()
                self._open()
                return True
            version = self._read_data_version()
            if version == self._data_version:
                return False
            self._data_version = version
            self._meta = None  # another connection wrote: read meta again
            if self.get_meta("generation") != self._generation:
                self._close_quietly()
                self._open()
                return True
            return False

    def data_key(self) -> tuple[int, int]:
        """Changes whenever this or any other connection changed the data."""
        return (self._read_data_version(), self.conn.total_changes)

    def cached(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` remembered until the data changes (searches ask for
        counts every time, and count(*) scans). Call it holding :attr:`lock`."""
        key = self.data_key()
        hit = self._memo.get(name)
        if hit is None or hit[0] != key:
            hit = (key, compute())
            self._memo[name] = hit
        return hit[1]

    # -- transactions and meta -------------------------------------------------------

    def transaction(self) -> "Transaction":
        """``with connection.transaction():`` one write transaction (BEGIN IMMEDIATE)."""
        return Transaction(self)

    def get_meta(self, key: str) -> str | None:
        """A value of the ``meta`` table as of the last :meth:`refresh` (or
        this connection's own last write): a search asks for several keys,
        and one read of the small table serves them all."""
        with self.lock:
            changes = self.conn.total_changes
            if self._meta is None or self._meta[0] != changes:
                self._meta = (changes, self._checked_meta(dict(self.conn.execute("SELECT key, value FROM meta").fetchall())))
            return self._meta[1].get(key)

    def _checked_meta(self, meta: dict[str, str]) -> dict[str, str]:
        """``meta`` as read, once it holds only what memext writes (else
        :class:`CorruptIndex`): checked where it is read, so no reader of a
        value can crash on one that damage made."""
        for key, shape in _META_SHAPES.items():
            raw = meta.get(key)
            if raw:
                self._decode(key, raw, shape)
        dims = meta.get("dims")
        if dims and not (dims.isascii() and dims.isdigit() and 0 < int(dims) <= 1_000_000):
            raise CorruptIndex(f"{self.path} has damaged bookkeeping: meta 'dims' is {dims[:40]!r}")
        store = meta.get("vector_store")
        if store and store not in ("vec0", "blob"):
            raise CorruptIndex(f"{self.path} has damaged bookkeeping: meta 'vector_store' is {store[:40]!r}")
        return meta

    def _decode(self, key: str, raw: str, shape: type | None) -> Any:
        try:
            value = json.loads(raw)
        except ValueError:
            raise CorruptIndex(f"{self.path} has damaged bookkeeping: meta {key!r} is not valid JSON") from None
        if shape is not None and not isinstance(value, shape):
            raise CorruptIndex(f"{self.path} has damaged bookkeeping: meta {key!r} holds a {type(value).__name__}")
        return value

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta_json(self, key: str, default: Any = None) -> Any:
        """A JSON value of ``meta``; :class:`CorruptIndex` when it is not JSON
        or not of the shape memext writes for that key."""
        raw = self.get_meta(key)
        return self._decode(key, raw, _META_SHAPES.get(key)) if raw else default

    def set_meta_json(self, key: str, value: Any) -> None:
        self.set_meta(key, json.dumps(value, sort_keys=True, ensure_ascii=False))


class Transaction:
    """A write transaction holding the connection's lock.

    Nested ones (a sync writing a group of files, each file a
    ``replace_file``) join the outermost: it alone commits, or rolls back
    everything when an exception leaves it."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self._outer = False

    def __enter__(self) -> Connection:
        c = self.connection
        c.lock.acquire()
        if c.tx_depth:
            c.tx_depth += 1
            return c
        try:
            c.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            c.lock.release()
            raise
        c.tx_depth, self._outer = 1, True
        return c

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        c = self.connection
        try:
            c.tx_depth -= 1
            if not self._outer:
                return
            if exc_type is not None:
                _roll_back(c.conn)
                return
            try:
                c.conn.execute("COMMIT")
            except BaseException:
                _roll_back(c.conn)  # a COMMIT that failed busy leaves the transaction open
                raise
        finally:
            c.lock.release()


def _roll_back(conn: Any) -> None:
    """Undo what is left of a failed transaction. SQLite itself rolls back
    on some errors (a full disk, an I/O error): then nothing is left, and a
    ROLLBACK would fail with "no transaction is active", hiding the error
    that says what happened. A rollback that fails is dropped for the same
    reason: the error being raised is the one to report."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except Exception as exc:
        if not db.is_sqlite_error(exc):
            raise


def schema_damage(path: Path) -> str | None:
    """What memext's tables lack in the index file at ``path``
    (:func:`.schema_check.schema_damage`), None when nothing."""
    return schema_check.schema_damage(path, _SCHEMA)


def _has_column(conn: Any, table: str, column: str) -> bool:
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


#: The JSON shape memext writes under each ``meta`` key it reads back.
_META_SHAPES: dict[str, type] = {"fingerprint": dict, "last_sync": dict, "skipped": list, "fallback": dict}
