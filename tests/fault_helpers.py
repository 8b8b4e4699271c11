"""Helpers for the damaged-index tests: hurting an index file on purpose
and looking at it without changing it (through memext's own SQLite binding:
a second SQLite library in one process would break the other's locks)."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

from memext.engine import db


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a file, read-only: "ok" or what is wrong
    (a file SQLite cannot open says why)."""
    try:
        conn, _ = db.connect(path, load_vec=False, readonly=True)
    except BaseException as exc:  # noqa: BLE001 - a damaged header fails in many ways
        return f"cannot open: {exc!r}"[:300]
    try:
        return "; ".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)").fetchall())
    except BaseException as exc:  # noqa: BLE001
        return f"check failed: {exc!r}"[:300]
    finally:
        conn.close()


def root_page(path: Path, name: str) -> tuple[int, int]:
    """(root page number, page size) of a table or index."""
    conn, _ = db.connect(path, load_vec=False, readonly=True)
    try:
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return page, size
    finally:
        conn.close()


def break_page(path: Path, name: str) -> None:
    """Overwrite the b-tree header of ``name``'s root page with garbage, so
    any read of it fails ("database disk image is malformed")."""
    page, size = root_page(path, name)
    offset = (page - 1) * size + (100 if page == 1 else 0)
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(b"\xff" * 12)


def set_meta(path: Path, key: str, value: str) -> None:
    """Write a raw ``meta`` value, as damage (or another tool) could."""
    conn, _ = db.connect(path, load_vec=False)
    try:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
    finally:
        conn.close()


def flip_bits(data: bytearray, rnd: random.Random, count: int) -> None:
    for _ in range(count):
        off = rnd.randrange(len(data))
        data[off] ^= 1 << rnd.randrange(8)


def scribble(data: bytearray, rnd: random.Random, max_len: int = 2048) -> None:
    off = rnd.randrange(len(data))
    n = min(rnd.randint(1, max_len), len(data) - off)
    data[off : off + n] = os.urandom(n)
