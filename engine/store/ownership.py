"""Whose file is this? Deciding, before anything is written, whether a file
at an index path is memext's to write.

memext stamps its index files with an SQLite application id
(:data:`APPLICATION_ID`, ``PRAGMA application_id``) as the very first write,
before any table exists. Before a file is opened for writing it is
inspected through a read-only connection (no WAL switch, no checkpoint:
SQLite writes nothing): its application id, and only when that is not
memext's, its tables (indexes made before the stamp existed). So a
``store.path`` that names another program's database is refused, byte for
byte untouched (the old code switched it to WAL and added its tables beside
the other program's), and a file that is not a database at all is left to
the caller to move aside as damaged.

The file is never opened outside SQLite: closing any descriptor of a file
drops every POSIX lock this process holds on it, SQLite's included, and a
WAL index whose readers lost their lock can be checkpointed and truncated
under them by another process ("database disk image is malformed").

A file memext may not write now (a read-only file, folder or file system,
or a full disk with no room for SQLite's ``-shm``) is opened read-only:
:func:`read_only_reason` and :func:`no_write_reason` say why.
"""

from __future__ import annotations

import enum
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import db
from .damage import looks_damaged

#: ``PRAGMA application_id`` of memext's index files: "memx".
APPLICATION_ID = 0x6D656D78


class Kind(enum.Enum):
    NEW = "new"  # missing or empty: memext creates it
    MEMEXT = "memext"  # stamped with memext's application id
    UNSTAMPED = "unstamped"  # memext's tables, no stamp yet (an older index, or a flipped header)
    FOREIGN = "foreign"  # another program's database: never written
    DAMAGED = "damaged"  # not a database SQLite can read
    NOT_A_FILE = "not a file"  # a folder (or a device...) where the file should be


@dataclass(frozen=True)
class Ownership:
    """What :func:`inspect` found; ``detail`` says why (for messages)."""

    kind: Kind
    detail: str = ""


def inspect(path: Path) -> Ownership:
    """Classify the file at ``path`` without writing to it (see the module)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Ownership(Kind.NEW)
    if not stat.S_ISREG(st.st_mode):
        return Ownership(Kind.NOT_A_FILE, "a folder, not a file" if stat.S_ISDIR(st.st_mode) else "not a regular file")
    if st.st_size == 0 and _size(Path(str(path) + "-wal")) == 0:
        return Ownership(Kind.NEW)
    app_id: int | None = None
    try:
        conn = _read_only(path)
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            if app_id == APPLICATION_ID:
                return Ownership(Kind.MEMEXT)
            tables, schema_version = _tables(conn)
        finally:
            conn.close()
    except Exception as exc:
        # (UnicodeDecodeError: SQLite's message quoted a damaged schema.)
        if not db.is_sqlite_error(exc) and not isinstance(exc, UnicodeDecodeError):
            raise
        if app_id:  # someone else's stamp on a file SQLite cannot read: theirs
            return Ownership(Kind.FOREIGN, f"application id {app_id:#x}, unreadable ({exc})")
        if isinstance(exc, UnicodeDecodeError) or looks_damaged(exc):
            return Ownership(Kind.DAMAGED, str(exc))
        raise
    if "meta" in tables and schema_version is not None:
        return Ownership(Kind.UNSTAMPED)
    if not tables:
        return Ownership(Kind.FOREIGN, "an empty SQLite database memext did not create")
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    stamp = f", application id {app_id:#x}" if app_id else ""
    return Ownership(Kind.FOREIGN, f"tables {shown}{stamp}")


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _read_only(path: Path):
    """A bare read-only connection (the binding's own: no extension, no
    pragmas), immutable for a WAL file whose folder cannot take its -shm."""
    module = db.binding().module
    uri = Path(path).resolve().as_uri()
    conn = module.connect(uri + "?mode=ro", uri=True, timeout=db.BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite opens the file lazily
        return conn
    except Exception as exc:
        conn.close()
        if not db.is_sqlite_error(exc) or looks_damaged(exc):
            raise
    return module.connect(uri + "?mode=ro&immutable=1", uri=True, check_same_thread=False)


def _tables(conn) -> tuple[set[str], str | None]:
    """The table names and memext's schema version."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = None
    if "meta" in tables:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = row[0] if row else None
        except Exception as exc:  # a table named meta of another shape: not ours
            if not db.is_sqlite_error(exc):
                raise
    return tables, version


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
