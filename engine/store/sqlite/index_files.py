"""An index's files on disk: its WAL companions, rebuild shadows, and the
copies of a damaged index set aside.

A damaged index is renamed to ``<name>.corrupt-<time>`` rather than
deleted, since ``store.path`` may name a file that was never memext's. The
first such copy is always kept (it is the one that may not be ours) and
so are the :data:`KEEP_LATEST_ASIDE` latest, for a look at what went
wrong; those in between are deleted when their header carries memext's
application id (a file memext made), so an index damaged again and again
(a failing disk, a tool that keeps writing into it) does not fill the
folder with copies of itself, and nothing that may be someone else's is
deleted even if the clock went back and the names sort wrong.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from ...errors import IndexOpenError
from ...paths import private_file
from .ownership import APPLICATION_ID

INDEX_COMPANIONS = ("", "-wal", "-shm", "-journal")
_SHADOW_MARK = ".rebuild-"
#: Copies of a damaged index kept besides the first one.
KEEP_LATEST_ASIDE = 2


def shadow_path(path: Path) -> Path:
    """A fresh name beside ``path`` for a rebuild shadow of it."""
    return path.with_name(f"{path.name}{_SHADOW_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")


def clean_stale_shadows(path: Path) -> None:
    """Remove rebuild shadows of ``path`` left by a crashed process (the
    caller holds the writer lock, so no live rebuild owns them)."""
    for p in path.parent.glob(path.name + _SHADOW_MARK + "*"):
        try:
            p.unlink()
        except OSError:
            pass


def move_aside(path: Path) -> Path:
    """Rename an unusable index file and its WAL companions to
    ``<name>.corrupt-<time>`` (the first and the latest such copies are
    kept, see the module docstring); returns the new name of the main file."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    # Numbered after every copy of this second, so names keep their order
    # when copies between them have been deleted.
    n = max((n for s, n, _ in _aside_named(path) if s == stamp), default=0) + 1
    aside = path.with_name(f"{path.name}.corrupt-{stamp}" + (f"-{n}" if n > 1 else ""))
    while any(Path(str(aside) + s).exists() for s in INDEX_COMPANIONS):
        n += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    try:
        for suffix in INDEX_COMPANIONS:
            src = Path(str(path) + suffix)
            if src.exists():
                os.replace(src, str(aside) + suffix)
                private_file(Path(str(aside) + suffix))  # it holds the notes' text: 0600 like the index
    except OSError as exc:
        raise IndexOpenError(f"{path} is not a usable index and could not be moved aside: {exc.strerror or exc}") from exc
    _prune_aside(path)
    return aside


def aside_copies(path: Path) -> list[Path]:
    """The copies of a damaged ``path`` set aside, oldest first (main files only)."""
    return [p for _, _, p in sorted(_aside_named(path))]


def _aside_named(path: Path) -> list[tuple[str, int, Path]]:
    named = re.compile(re.escape(path.name) + r"\.corrupt-(\d{8}T\d{6})(?:-(\d+))?")
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return [(m[1], int(m[2] or 1), path.with_name(name)) for name in names if (m := named.fullmatch(name))]


def _prune_aside(path: Path) -> None:
    for old in aside_copies(path)[1:-KEEP_LATEST_ASIDE]:
        if not _made_by_memext(old):
            continue
        for suffix in INDEX_COMPANIONS:
            try:
                os.remove(str(old) + suffix)
            except OSError:
                pass  # missing, or not ours to delete: it stays


def _made_by_memext(path: Path) -> bool:
    """True when ``path`` starts with an SQLite header stamped with memext's
    application id. (The copy is no live index: reading it through its own
    descriptor cannot drop another connection's locks.)"""
    try:
        with open(path, "rb") as f:
            header = f.read(72)
    except OSError:
        return False
    return header[:16] == b"SQLite format 3\x00" and int.from_bytes(header[68:72], "big") == APPLICATION_ID


def remove_index_files(path: Path) -> None:
    """Delete an index file and its WAL companions (missing ones are fine).

    Only for files memext made itself (rebuild shadows): an unusable index
    is moved aside with :func:`move_aside` instead."""
    for suffix in INDEX_COMPANIONS:
        try:
            os.remove(str(path) + suffix)
        except FileNotFoundError:
            pass
