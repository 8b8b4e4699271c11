"""A SQLite index as files on this machine: what the engine does with them
besides opening the store (the SQLite row's ``IndexFiles``, DESIGN.md §4,
§14).

Telling damage and setting a damaged file aside (:mod:`.repair`), checking
a file after a writer died holding the lock (:func:`quick_check`), removing
rebuild shadows a crashed sync left, reading which workspace an index was
built for without opening it as a store, and deleting an index with every
file that belongs to it (WAL companions, vector sidecars, copies set
aside), under its writer lock.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .damage import quick_check
from .index_files import INDEX_COMPANIONS, aside_copies, clean_stale_shadows
from .lock import WriterLock
from .repair import damage_of, set_aside, writer_died

if TYPE_CHECKING:
    from ..drivers import IndexFiles

__all__ = [
    "built_for",
    "clean_stale_shadows",
    "damage_of",
    "not_ours",
    "quick_check",
    "remove",
    "remove_aside_copies",
    "set_aside",
    "writer_died",
]


def built_for(db_path: Path) -> str | None:
    """The workspace recorded in an index's fingerprint (read-only)."""
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        finally:
            conn.close()
        return str(json.loads(row[0]).get("workspace")) if row else None
    except (sqlite3.Error, ValueError, AttributeError):
        return None


def not_ours(db_path: Path, own_path: bool = False) -> str | None:
    """Why the file at ``db_path`` is not an index memext made (so it must
    not be deleted), or None when it is one (or there is none). At memext's
    own index path (``own_path``) an empty database is an unfinished index
    of memext's."""
    from .ownership import Kind, inspect

    found = inspect(db_path, own_path=own_path)
    if found.kind not in (Kind.NEW, Kind.UNFINISHED, Kind.MEMEXT, Kind.UNSTAMPED, Kind.DAMAGED):
        return found.detail or found.kind.value
    return None


def remove(db_path: Path, also: Sequence[Path] = ()) -> list[Path]:
    """Delete an index file, its SQLite companions, its vector sidecars, the
    files ``also`` names and its lock file, holding the index's writer lock
    meanwhile (LockTimeout when a process is writing it: then nothing is
    deleted). Returns the files deleted (the lock file aside)."""
    from .sidecar import sidecar_files

    with WriterLock(db_path, timeout=0):
        deleted = _delete(_companions(db_path), strict=True)
        # Best effort: a sidecar another process still maps may refuse (Windows).
        deleted += _delete([*sidecar_files(db_path), *also], strict=False)
    try:
        Path(str(db_path) + ".lock").unlink()
    except OSError:
        pass  # another process took the lock meanwhile: it may keep its file
    return deleted


def remove_aside_copies(db_path: Path) -> list[Path]:
    """Delete the copies of the index set aside when it was damaged (and
    their companions); returns the files deleted."""
    deleted: list[Path] = []
    for copy in aside_copies(db_path):
        deleted += _delete(_companions(copy), strict=False)
    return deleted


def _companions(path: Path) -> list[Path]:
    """An SQLite file and its journal/WAL companions."""
    return [Path(str(path) + suffix) for suffix in INDEX_COMPANIONS]


def _delete(files: list[Path], *, strict: bool) -> list[Path]:
    """Delete the files that exist; returns those deleted. ``strict``: an
    error other than a missing file is raised, else the file is left."""
    deleted = []
    for f in files:
        try:
            f.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            if strict:
                raise
            continue
        deleted.append(f)
    return deleted


if TYPE_CHECKING:
    from . import files as _this_module

    _files: IndexFiles = _this_module
