"""Whose file is this? Deciding, before anything is written, whether a file
at an index path is memext's to write.

memext stamps its index files with an SQLite application id
(:data:`APPLICATION_ID`, ``PRAGMA application_id``) as the very first write,
before any table exists. Before a file is opened for writing it is
inspected without SQLite writing a byte: the 100-byte header is read as
plain bytes, and only when the application id is not memext's is the file
opened read-only to look for memext's tables (indexes made before the
stamp existed). So a ``store.path`` that names another program's database
is refused, byte for byte untouched (the old code switched it to WAL and
added its tables beside the other program's), and a file that is not a
database at all is left to the caller to move aside as damaged.
"""

from __future__ import annotations

import enum
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import db

#: ``PRAGMA application_id`` of memext's index files: "memx".
APPLICATION_ID = 0x6D656D78
_MAGIC = b"SQLite format 3\x00"
_HEADER_BYTES = 100
_APP_ID_AT = 68


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
    with open(path, "rb") as fh:
        head = fh.read(_HEADER_BYTES)
    if len(head) < _HEADER_BYTES or not head.startswith(_MAGIC):
        return Ownership(Kind.DAMAGED, "not an SQLite database file")
    app_id = int.from_bytes(head[_APP_ID_AT : _APP_ID_AT + 4], "big")
    if app_id == APPLICATION_ID:
        return Ownership(Kind.MEMEXT)
    try:
        tables, schema_version = _peek(path)
    except Exception as exc:
        # (UnicodeDecodeError: SQLite's message quoted a damaged schema.)
        if not db.is_sqlite_error(exc) and not isinstance(exc, UnicodeDecodeError):
            raise
        if app_id:  # someone else's stamp on a file SQLite cannot read: theirs
            return Ownership(Kind.FOREIGN, f"application id {app_id:#x}, unreadable ({exc})")
        return Ownership(Kind.DAMAGED, str(exc))
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


def _peek(path: Path) -> tuple[set[str], str | None]:
    """The table names and memext's schema version, read through a read-only
    connection (no WAL switch, no checkpoint: the file stays as it is)."""
    try:
        conn, _ = db.connect(path, load_vec=False, readonly=True)
    except Exception as exc:
        if not db.is_sqlite_error(exc):
            raise
        # A WAL database in a folder where SQLite cannot make its -shm.
        conn, _ = db.connect(path, load_vec=False, readonly=True, immutable=True)
    try:
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
    finally:
        conn.close()
