"""The last failed sync of an index, where every process sees it, even on a
full disk (DESIGN.md §5).

A sync that fails (a full disk, a damaged or vanished folder, a provider
that cannot rebuild) says so to its caller; ``memext status`` in another
process, the tray and the notebook must say so too, instead of showing
the index as fresh. The index itself cannot hold the news when the disk is
full (SQLite needs room to write anything), so it is kept beside the index
in ``<index>.sync-failure``: a small file of fixed size that is written in
place (:data:`RECORD_BYTES`, padded with spaces). It is made while there is
room (at the first successful sync), and overwriting bytes a file already
has needs no free space on ext4, XFS or tmpfs. A successful sync blanks it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..paths import PRIVATE_FILE_MODE

log = logging.getLogger("memext")

#: The record's fixed size; a longer message is cut to fit.
RECORD_BYTES = 4096
SUFFIX = ".sync-failure"


@dataclass(frozen=True)
class SyncFailure:
    """A sync that failed: when, and why."""

    at: float
    error: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.at))
        return f"the last sync failed ({when}): {self.error}"


def record_path(db_path: Path) -> Path:
    return Path(str(db_path) + SUFFIX)


def record_failure(db_path: Path, error: str) -> None:
    """Write the failure into the record (never raises: on a disk too full
    even for that, the caller's own message is all there is)."""
    message = error
    for _ in range(30):
        data = json.dumps({"at": time.time(), "error": message}, ensure_ascii=False).encode()
        if len(data) <= RECORD_BYTES:
            break
        message = message[: len(message) * 3 // 4] + "..."
    _write(record_path(db_path), data[:RECORD_BYTES])


def clear_failure(db_path: Path) -> None:
    """After a successful sync: the record is blank (made, full size, if
    missing, so a later failure finds its room already taken)."""
    path = record_path(db_path)
    try:
        with open(path, "rb") as fh:
            blank = fh.read(1) == b" " and os.fstat(fh.fileno()).st_size == RECORD_BYTES
    except FileNotFoundError:
        blank = False
    except OSError:
        return
    if not blank:
        _write(path, b"")


def last_failure(db_path: Path) -> SyncFailure | None:
    """The recorded failure, if the last sync failed (None when it did not,
    or the record cannot be read)."""
    try:
        raw = record_path(db_path).read_bytes().strip()
        if not raw:
            return None
        d = json.loads(raw)
        return SyncFailure(float(d["at"]), str(d["error"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write(path: Path, data: bytes) -> None:
    """Overwrite the record in place (no truncation: the bytes it has are
    rewritten, which needs no free space)."""
    block = data.ljust(RECORD_BYTES, b" ")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE)
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            view = memoryview(block)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as exc:
        log.debug("could not record the sync's outcome in %s: %s", path, exc)
