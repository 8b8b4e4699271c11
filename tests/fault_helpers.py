"""Helpers for the fault tests: hurting an index file on purpose and
looking at it without changing it (through memext's own SQLite binding: a
second SQLite library in one process would break the other's locks), full
disks, folders only root could read, and workspaces put out of reach."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from pathlib import Path
from typing import Callable

from memext.engine.store.sqlite import db


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


def mount_tmpfs(folder: Path, size: str) -> bool:
    """A tmpfs of ``size`` at ``folder`` (created); False where mounting is
    not allowed (not root), and the caller falls back to RLIMIT_FSIZE."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    return done.returncode == 0


def unmount(folder: Path) -> None:
    import subprocess

    subprocess.run(["umount", str(folder)], check=False, capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the file system holding ``folder`` to the last byte."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for chunk in (65536, 1):
            try:
                while True:
                    os.write(fd, b"x" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


#: Runs ``memext`` with file growth capped at argv[1] bytes: a stand-in for
#: a full disk where no tmpfs can be mounted (writes past it fail with
#: EFBIG instead of killing the process).
CAPPED_MEMEXT = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
cap = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
sys.argv = ["memext", *sys.argv[2:]]
runpy.run_module("memext", run_name="__main__")
"""


#: A command prefix that runs a program as this user without the
#: capabilities that let root ignore file modes (CAP_DAC_OVERRIDE,
#: CAP_DAC_READ_SEARCH): the kernel then refuses it a folder of mode 000
#: as it refuses any user. The tests run as root, for whom chmod alone
#: changes nothing.
NO_FILE_MODE_OVERRIDE = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


class OutOfReach:
    """A workspace (at :attr:`ws`, its files written by ``fill``) that
    :meth:`take_away` puts out of reach for real and :meth:`bring_back`
    restores, files and modification times alike: renamed, replaced by a
    file, reached through a path that now runs through a file, or on a
    tmpfs (the workspace itself, or its parent) that is unmounted."""

    KINDS = ("moved away", "replaced by a file", "path through a file", "unmounted drive", "parent's drive unmounted")

    def __init__(self, kind: str, tmp_path: Path, fill: Callable[[Path], None]):
        self.kind = kind
        self.tmp = tmp_path
        self.mount: Path | None = None
        if kind == "path through a file":
            self.ws = tmp_path / "home" / "ws"
        elif kind == "unmounted drive":  # the workspace is the mount point itself
            self.mount = self.ws = tmp_path / "drive"
        elif kind == "parent's drive unmounted":
            self.mount = tmp_path / "drive"
            self.ws = self.mount / "ws"
        else:
            self.ws = tmp_path / "ws"
        if self.mount is not None:
            assert mount_tmpfs(self.mount, "4m"), f"cannot mount a tmpfs at {self.mount}: these tests need root"
        fill(self.ws)

    def take_away(self) -> None:
        if self.mount is not None:
            shutil.copytree(self.mount, self.tmp / "backup", copy_function=shutil.copy2)
            unmount(self.mount)
        elif self.kind == "path through a file":
            self.ws.parent.rename(self.tmp / "home.moved")
            self.ws.parent.write_text("a file where a folder was")
        else:
            self.ws.rename(self.tmp / "ws.moved")
            if self.kind == "replaced by a file":
                self.ws.write_text("a file where a folder was")

    def bring_back(self) -> None:
        if self.mount is not None:
            assert mount_tmpfs(self.mount, "4m")
            shutil.copytree(self.tmp / "backup", self.mount, copy_function=shutil.copy2, dirs_exist_ok=True)
        elif self.kind == "path through a file":
            self.ws.parent.unlink()
            (self.tmp / "home.moved").rename(self.ws.parent)
        else:
            if self.kind == "replaced by a file":
                self.ws.unlink()
            (self.tmp / "ws.moved").rename(self.ws)

    def close(self) -> None:
        if self.mount is not None:
            unmount(self.mount)
