"""Telling damage in an SQLite index file from other errors.

SQLite reports a damaged page in many words ("database disk image is
malformed", "file is not a database"), and sqlite-vec and FTS5 in their own
("vectors blob read error", "chunks iter error"). :func:`looks_damaged`
knows the words that can only mean damage; :func:`may_be_damage` accepts
any SQLite error but those that say nothing about the file (busy, locked,
full, read-only); :func:`quick_check` decides, with SQLite's own check.
"""

from __future__ import annotations

from pathlib import Path

from . import db

#: SQLITE_CORRUPT and SQLITE_NOTADB (primary result codes).
_DAMAGE_CODES = {11, 26}
_DAMAGE_TEXT = (
    "not a database",
    "malformed",
    "file is encrypted",
    "disk image",
    "corrupt",
    "could not decode to utf-8",
    "no such table",
    "no such column",
)


def looks_damaged(exc: BaseException) -> bool:
    """True for an SQLite error that damage to the file can cause (then
    :func:`quick_check` tells whether it is damaged)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _DAMAGE_CODES:
        return True
    text = str(exc).lower()
    return any(s in text for s in _DAMAGE_TEXT)


#: Result codes that say nothing about the file's state: busy or locked by
#: another connection, full disk, read-only, interrupted.
_NOT_DAMAGE_CODES = {5, 6, 8, 9, 13}


def may_be_damage(exc: BaseException) -> bool:
    """True for an SQLite error that a damaged file could have caused: any,
    but for busy, locked, full, read-only and interrupted (sqlite-vec and
    FTS5 report a damaged page in words of their own, "blob read error")."""
    if isinstance(exc, UnicodeDecodeError):
        return True  # SQLite's message quoted damaged text
    if not db.is_sqlite_error(exc):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _NOT_DAMAGE_CODES:
        return False
    text = str(exc).lower()
    return not any(s in text for s in ("database is locked", "is full", "readonly database", "interrupted"))


#: SQLITE_TOOBIG: a check that meets it read a record claiming more bytes
#: than SQLite allows a value, which no write of memext's can leave.
_CHECK_DAMAGE_CODES = {18}


def _check_found_damage(exc: BaseException) -> bool:
    """True for an error the check itself raised that only damage explains."""
    code = getattr(exc, "sqlite_errorcode", None)
    return looks_damaged(exc) or (isinstance(code, int) and code & 0xFF in _CHECK_DAMAGE_CODES) or "too big" in str(exc).lower()


def quick_check(path: Path, *, thorough: bool = False) -> str | None:
    """SQLite's ``quick_check`` of an index file (``integrity_check`` when
    ``thorough``: it also compares every index with its table), through a
    read-only connection of its own: None when it passes (or the file
    cannot be read for reasons damage does not explain), else what it found."""
    pragma = "integrity_check" if thorough else "quick_check"
    for immutable in (False, True):  # immutable: a WAL file in a read-only folder
        try:
            conn, _ = db.connect(path, load_vec=False, readonly=True, immutable=immutable)
            try:
                rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}(5)").fetchall()]
            finally:
                conn.close()
        except UnicodeDecodeError as exc:  # SQLite's message quoted a damaged schema
            return f"damaged schema ({exc})"
        except Exception as exc:
            if not db.is_sqlite_error(exc):
                raise
            if _check_found_damage(exc):
                return str(exc)
            continue
        return None if rows == ["ok"] else "; ".join(str(r) for r in rows)
    return None
