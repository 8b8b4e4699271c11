"""Whose file is this? Deciding, before anything is written, whether a file
at an index path is memext's to write.

memext stamps its index files with an SQLite application id
(:data:`APPLICATION_ID`, ``PRAGMA application_id``) as the very first write,
before any table exists. Before a file is opened for writing it is
inspected without a byte written: a read-only SQLite connection reads the
application id from the header. Only a file carrying that id is memext's to
write, repair or move aside; the one exception is an index made before the
stamp existed, recognised by having no application id at all and exactly
what memext wrote then (all of its tables, ``meta`` saying schema
:data:`UNSTAMPED_SCHEMA`): it is stamped at its first writable open.
Anything else, even with a ``meta`` table and a ``schema_version`` row, is
another program's database, with one more exception: a database holding
nothing at all (no table, no view, not even an application id) at
memext's own index path (no ``store.path``: the index folder in memext's
state folder) is an index whose first write never came, left by a crash
right after the file was made or by a tool that opened it, and is built
there; at a path the user chose it stays another program's, since anyone
may have made it.

The header is read through SQLite, never with a plain ``open()``: closing
any file descriptor of a database file drops every POSIX lock this process
holds on it, including the locks of the index's own open connections, and
another process could then reset the WAL under them ("database disk image
is malformed"). SQLite's own file layer keeps such descriptors open until
its locks are gone. So a ``store.path`` that names another program's database
is refused, byte for byte untouched (the old code switched it to WAL and
added its tables beside the other program's), and a file that is not a
database at all is left to the caller to move aside as damaged.

A file memext may not write now (a read-only file, folder or file system,
or a full disk with no room for SQLite's ``-shm``) is opened read-only:
:func:`read_only_reason` and :func:`no_write_reason` say why.
"""

from __future__ import annotations

import enum
import os
import stat
from pathlib import Path
from typing import NamedTuple

from ...errors import ForeignDatabase, IndexOpenError
from ..base import CorruptIndex
from . import db
from .damage import looks_damaged

#: ``PRAGMA application_id`` of memext's index files: "memx".
APPLICATION_ID = 0x6D656D78
#: The schema version of every index memext wrote before it stamped them.
UNSTAMPED_SCHEMA = "1"
#: The tables such an index always held.
UNSTAMPED_TABLES = frozenset({"meta", "files", "chunks", "embedding_cache"})
_HEADER_BYTES = 100


class Kind(enum.Enum):
    NEW = "new"  # missing or empty: memext creates it
    UNFINISHED = "unfinished"  # a database holding nothing at memext's own index path: memext builds it
    MEMEXT = "memext"  # stamped with memext's application id
    UNSTAMPED = "unstamped"  # no application id, exactly memext's tables and schema: an index older than the stamp
    FOREIGN = "foreign"  # another program's database: never written
    DAMAGED = "damaged"  # not a database SQLite can read
    NOT_A_FILE = "not a file"  # a folder (or a device...) where the file should be


class Ownership(NamedTuple):
    """What :func:`inspect` found; ``detail`` says why (for messages)."""

    kind: Kind
    detail: str = ""


def inspect(path: Path, *, own_path: bool = False) -> Ownership:
    """Classify the file at ``path`` without writing to it (see the module);
    ``own_path``: it is memext's own index path, not one the user chose."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Ownership(Kind.NEW)
    if not stat.S_ISREG(st.st_mode):
        return Ownership(Kind.NOT_A_FILE, "a folder, not a file" if stat.S_ISDIR(st.st_mode) else "not a regular file")
    if st.st_size == 0 and _size(Path(str(path) + "-wal")) == 0:
        return Ownership(Kind.NEW)
    if st.st_size < _HEADER_BYTES:
        return Ownership(Kind.DAMAGED, "not an SQLite database file")
    try:
        app_id, tables, schema_version, nothing = _peek(path)
    except Exception as exc:
        if isinstance(exc, _StampOnUnreadable):  # someone else's stamp on a file SQLite cannot read: theirs
            return Ownership(Kind.FOREIGN, f"application id {exc.app_id:#x}, unreadable ({exc.__cause__})")
        # (UnicodeDecodeError: SQLite's message quoted a damaged schema.)
        if not db.is_sqlite_error(exc) and not isinstance(exc, UnicodeDecodeError):
            raise
        if "not a database" in str(exc).lower():
            return Ownership(Kind.DAMAGED, "not an SQLite database file")
        return Ownership(Kind.DAMAGED, str(exc))
    if app_id == APPLICATION_ID:
        return Ownership(Kind.MEMEXT)
    if app_id == 0 and tables >= UNSTAMPED_TABLES and schema_version == UNSTAMPED_SCHEMA:
        return Ownership(Kind.UNSTAMPED)
    if nothing and app_id == 0 and own_path:
        return Ownership(Kind.UNFINISHED, "an empty SQLite database at memext's own index path")
    if not tables:
        return Ownership(Kind.FOREIGN, "an empty SQLite database memext did not create")
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    stamp = f", application id {app_id:#x}" if app_id else ", no memext application id"
    version = f", schema_version {schema_version[:20]!r}" if schema_version is not None else ""
    return Ownership(Kind.FOREIGN, f"tables {shown}{stamp}{version}")


def setting_hint(own_path: bool) -> str:
    """What an error about an index file adds: the setting that chose the
    path, when one did (``own_path``: none did)."""
    return "" if own_path else " (check store.path)"


def kind_to_open(path: Path, *, own_path: bool) -> Kind:
    """:func:`inspect` the file at ``path`` before opening it as an index:
    its kind, or the error for a file memext must not open (IndexOpenError
    when it cannot be read or is not a file, ForeignDatabase, CorruptIndex)."""
    try:
        owner = inspect(path, own_path=own_path)
    except Exception as exc:
        if not isinstance(exc, OSError) and not db.is_sqlite_error(exc):
            raise
        reason = getattr(exc, "strerror", None) or exc
        raise IndexOpenError(f"cannot read the index {path}: {reason}{setting_hint(own_path)}") from exc
    if owner.kind is Kind.NOT_A_FILE:
        raise IndexOpenError(f"cannot open the index {path}: it is {owner.detail}{setting_hint(own_path)}")
    if owner.kind is Kind.FOREIGN:
        raise foreign_database(path, owner.detail, own_path=own_path)
    if owner.kind is Kind.DAMAGED:
        raise CorruptIndex(f"{path} is not a usable index ({owner.detail})")
    if owner.kind is Kind.UNFINISHED:
        import logging  # here: opening a finished index logs nothing

        logging.getLogger("memext").info("%s holds an empty database: an index whose first write never came; building it", path)
    return owner.kind


def foreign_database(path: Path, detail: str, *, own_path: bool = False) -> ForeignDatabase:
    """The error for another program's database at ``path`` (``detail``:
    what was found); ``own_path``: at memext's own index path, where no
    setting of the user's put it."""
    what = (
        "move it out of memext's index folder (memext then builds the index there)"
        if own_path
        else "point store.path at another file (or remove the setting)"
    )
    return ForeignDatabase(
        f"{path} is a database of another program, not a memext index ({detail}); memext never "
        f"writes to or moves a file it did not create: {what}"
    )


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


class _StampOnUnreadable(Exception):
    """The header carries another program's application id, but SQLite
    cannot read the schema behind it."""

    def __init__(self, app_id: int):
        super().__init__(f"application id {app_id:#x}")
        self.app_id = app_id


def _peek(path: Path) -> tuple[int, set[str], str | None, bool]:
    """The application id, the table names, memext's schema version and
    whether the schema holds nothing at all, read through a read-only
    connection (no WAL switch, no checkpoint: the file stays as it is).
    Only the header is read for a memext index."""
    try:
        return _peek_with(path, immutable=False)
    except _StampOnUnreadable:
        raise
    except Exception as exc:
        if not db.is_sqlite_error(exc) or "not a database" in str(exc).lower():
            raise
        # A WAL database in a folder where SQLite cannot make its -shm.
        return _peek_with(path, immutable=True)


def _peek_with(path: Path, *, immutable: bool) -> tuple[int, set[str], str | None, bool]:
    conn, _ = db.connect(path, load_vec=False, readonly=True, immutable=immutable)
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0]) & 0xFFFFFFFF
        if app_id == APPLICATION_ID:
            return app_id, set(), None, False
        try:
            schema = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
            tables = {name for kind, name in schema if kind == "table"}
        except Exception as exc:
            if app_id and (db.is_sqlite_error(exc) or isinstance(exc, UnicodeDecodeError)):
                raise _StampOnUnreadable(app_id) from exc
            raise
        version = None
        if "meta" in tables:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                version = str(row[0]) if row else None
            except Exception as exc:  # a table named meta of another shape: not ours
                if not db.is_sqlite_error(exc):
                    raise
        return app_id, tables, version, not schema
    finally:
        conn.close()


# -- may memext write it now ---------------------------------------------------------

#: SQLite result codes of a file that cannot be opened for writing now:
#: READONLY, IOERR (its -shm cannot grow), FULL, CANTOPEN.
_CANNOT_WRITE_CODES = {8, 10, 13, 14}


def cannot_write(exc: BaseException) -> bool:
    """True for an SQLite error of a file that cannot be opened for writing now."""
    code = getattr(exc, "sqlite_errorcode", None)
    return db.is_sqlite_error(exc) and not looks_damaged(exc) and isinstance(code, int) and code & 0xFF in _CANNOT_WRITE_CODES


def no_write_reason(path: Path, exc: BaseException) -> str:
    """Why the index at ``path`` could not be opened for writing (after
    :func:`cannot_write` said so): a full disk, else SQLite's words."""
    try:
        if os.statvfs(path.parent).f_bavail == 0:
            return "its disk is full"
    except (OSError, AttributeError):
        pass
    return f"it cannot be opened for writing ({exc})"


def read_only_reason(path: Path, *, new: bool) -> str | None:
    """Why memext may not write the index at ``path`` (None: it may). SQLite
    needs the folder too, for its ``-wal``/``-shm`` and the writer lock."""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
    except (OSError, AttributeError):  # no statvfs (Windows), or no folder yet
        pass
    if not new and not os.access(path, os.W_OK):
        return "the index file is read-only"
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return f"its folder {folder} is read-only"
    return None
