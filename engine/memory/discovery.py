"""Finding an agent's memory files, and the rules for what counts as memory.

Memory is ``MEMORY.md``, ``memory.md`` and ``memory/**/*.md`` in the
workspace, plus the folders and files named in ``extra_paths``. Hidden files
and folders, non-``.md`` files and symlinks that lead outside those roots are
never read; files are de-duplicated by real path; files over the size cap are
skipped and reported.
"""

from __future__ import annotations

import operator
import os
import stat
import time
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple, Protocol

from ..human_size import human_size
from .roots import MEMORY_DIR, ROOT_FILES, MemoryRoots, is_within

__all__ = [
    "MEMORY_DIR",
    "ROOT_FILES",
    "FileRead",
    "MemoryRoots",
    "NotText",
    "SourceFile",
    "Skipped",
    "discover_memory_files",
    "looks_binary",
    "read_file",
    "read_text",
]


class SourceFile(NamedTuple):
    """One file to index (a named tuple: discovery builds one per file on
    every scan, three times faster than a frozen dataclass)."""

    path: str  # as shown to users: workspace-relative, '/'-separated
    fs_path: str  # on disk, resolved for memory files (a str: a Path per file costs a scan a third of its time)
    source: str  # "memory" or "sessions"
    mtime_ns: int
    size: int

    @property
    def abs_path(self) -> Path:
        return Path(self.fs_path)


class Skipped(NamedTuple):
    """A file that was not indexed (or was indexed with a problem), and why."""

    path: str
    reason: str


class IndexedStat(Protocol):
    """What the index remembers of a file: its stat when it was indexed."""

    @property
    def mtime_ns(self) -> int: ...

    @property
    def size(self) -> int: ...


def discover_memory_files(
    workspace: Path,
    extra_paths: list[Path],
    max_bytes: int,
    indexed: Mapping[str, IndexedStat] | None = None,
    *,
    sniff: bool = True,
) -> tuple[list[SourceFile], list[Skipped]]:
    """All memory files of a workspace, sorted by path, and what was skipped.

    ``indexed`` (path -> stat when indexed) spares the binary check of files
    the index holds unchanged: they were text when they were read.
    ``sniff=False`` leaves the binary check to a caller that reads every
    changed file anyway (a sync: :func:`read_file` raises :class:`NotText`),
    so no file is opened twice.
    """
    scan = Scan(MemoryRoots.of(workspace, extra_paths), max_bytes, indexed or {}, sniff)
    scan.run(workspace, extra_paths)
    files = sorted(scan.found.values(), key=lambda f: f.path)
    return files, scan.skipped


class Scan:
    """One discovery pass: the files found (by device and inode) and skipped.

    Discovery runs before every search of a one-shot ``memext search`` and
    on every tray rescan, so a regular file met by the walk costs one
    ``lstat`` and string checks (no Path objects, no realpath): the walk
    starts from resolved folders and does not follow symlinks, so such a
    file's path is already its real path. Symlinks and the single files
    take the general path (:meth:`consider`).
    """

    #: Whether each folder's entries are taken sorted by name (see
    #: :func:`~.matching.memory_files_match` for when the order cannot matter).
    ordered = True

    def __init__(self, roots: MemoryRoots, max_bytes: int, indexed: Mapping[str, IndexedStat], sniff: bool = True):
        self.roots = roots
        self.max_bytes = max_bytes
        self.indexed = indexed
        self.sniff = sniff
        self.found: dict[tuple[int, int], SourceFile] = {}
        self.skipped: list[Skipped] = []

    def run(self, workspace: Path, extra_paths: list[Path]) -> None:
        """The root files, the memory folder, then each extra path."""
        for name in ROOT_FILES:
            self.consider(Path(workspace) / name)
        self.walk(str(self.roots.memory_dir))
        for p in extra_paths:
            if p.is_dir() and not p.is_symlink():
                self.walk(os.path.realpath(p))
            elif p.is_symlink() or p.exists():
                self.consider(p)
            else:
                self.skipped.append(Skipped(str(p), "extra path does not exist"))

    def walk(self, folder: str) -> None:
        """``.md`` files under ``folder``: no hidden entries, and symlinked
        folders only when they resolve inside the memory roots.

        Each real folder is listed once (by device and inode), so symlink loops
        (``x -> .``, ``y -> .``, ``a/b -> ..``) end the walk instead of growing
        it without bound."""
        if not os.path.isdir(folder):
            return
        roots = self.roots
        workspace = str(roots.workspace)
        visited: set[tuple[int, int]] = set()
        # (folder, whether its path is its real path: then so are those of
        # the plain files and folders below it)
        stack = [(folder, os.path.realpath(folder) == folder)]
        while stack:
            current, real = stack.pop()
            if not _first_visit(current, visited):
                continue
            # Asked once per folder: the same for every plain .md file in it.
            allowed = roots.allows_all_in(current) if real else None
            shown_dir = "" if current == workspace else roots.display_path(current) + "/"
            try:
                with os.scandir(current) as it:
                    if self.ordered:
                        entries = sorted(it, key=_entry_name)
                    elif allowed:
                        entries = self._take_plain(it, shown_dir)  # as listed, no list of every entry
                    else:
                        entries = list(it)
            except OSError as exc:
                self.skipped.append(Skipped(roots.display_path(current), f"cannot list folder: {exc.strerror or exc}"))
                continue
            plain: list[os.DirEntry] = []  # taken in one go below (the change check's tight loop)
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):  # most entries: asked first
                        if name.lower().endswith(".md"):
                            if allowed is None:
                                self.consider(Path(entry.path))
                            elif allowed:
                                plain.append(entry)
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, real))
                    elif entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if os.path.isdir(target):
                            if _inside_memory_folders(Path(target), roots):
                                # Walk the target itself: its files then carry real paths.
                                stack.append((target, True))
                            else:
                                self.skipped.append(Skipped(roots.display_path(entry.path), "symlink leads outside the memory folders"))
                        elif name.lower().endswith(".md"):
                            self.consider(Path(entry.path))
                    elif name.lower().endswith(".md"):  # not a regular file: consider() says what it is
                        self.consider(Path(entry.path))
                except OSError:
                    continue
            if plain:
                self._plain_files(plain, shown_dir)

    def _take_plain(self, entries: Iterable[os.DirEntry], shown_dir: str) -> list[os.DirEntry]:
        """For an unordered scan (:attr:`ordered` False) of a folder whose
        files are memory (see the class): the entries left for the walk's
        general loop. The change check's scan takes the regular files here,
        in one pass over the listing."""
        return list(entries)

    def _plain_files(self, entries: list[os.DirEntry], shown_dir: str) -> None:
        """Regular files met by the walk in a real folder whose files are
        memory (see the class), shown as ``shown_dir`` + name."""
        for entry in entries:
            shown = shown_dir + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                self.skipped.append(Skipped(shown, f"cannot read: {exc.strerror or exc}"))
                continue
            self._add(entry.path, shown, st)

    def consider(self, cand: Path) -> None:
        """Any candidate path: a root file, an extra file, a symlink."""
        roots = self.roots
        if not (cand.exists() or cand.is_symlink()):
            return
        real = os.path.realpath(cand)
        if not roots.allows(real):
            shown = roots.display_path(os.path.abspath(cand))
            if cand.is_symlink():
                self.skipped.append(Skipped(shown, "symlink leads outside the memory folders"))
            elif Path(real).suffix.lower() != ".md":
                self.skipped.append(Skipped(shown, "not a .md file"))
            return
        try:
            st = os.stat(real)
        except OSError as exc:
            self.skipped.append(Skipped(roots.display_path(real), f"cannot read: {exc.strerror or exc}"))
            return
        if not stat.S_ISREG(st.st_mode):
            return
        self._add(real, roots.display_path(real), st)

    def _add(self, real: str, shown: str, st: os.stat_result) -> None:
        # By inode, not name: MEMORY.md and memory.md are one file on
        # case-insensitive file systems, and symlinks may point at a file twice.
        key = (st.st_dev, st.st_ino)
        if key in self.found:
            return
        if st.st_size > self.max_bytes:
            self.skipped.append(
                Skipped(shown, f"larger than the {human_size(self.max_bytes)} limit ({human_size(st.st_size)}; max_file_bytes)")
            )
            return
        if self.sniff and not self._unchanged(shown, st) and starts_binary(real):
            self.skipped.append(Skipped(shown, BINARY_REASON))
            return
        self.found[key] = SourceFile(shown, real, "memory", st.st_mtime_ns, st.st_size)

    def _unchanged(self, shown: str, st: os.stat_result) -> bool:
        known = self.indexed.get(shown)
        return known is not None and known.mtime_ns == st.st_mtime_ns and known.size == st.st_size


_entry_name = operator.attrgetter("name")


def _first_visit(folder: str, visited: set[tuple[int, int]]) -> bool:
    """Record ``folder``'s identity; False when it was listed before (or is gone)."""
    try:
        st = os.stat(folder)
    except OSError:
        return True  # let scandir report why it cannot be listed
    key = (st.st_dev, st.st_ino)
    if key in visited:
        return False
    visited.add(key)
    return True


def _inside_memory_folders(target: Path, roots: MemoryRoots) -> bool:
    return any(is_within(target, r) or target == r for r in roots.recursive_dirs)


#: How much of a file :func:`looks_binary` inspects.
BINARY_SNIFF_BYTES = 8192
#: Share of undecodable bytes above which a file is binary, not text with a
#: few stray bytes.
BINARY_BAD_SHARE = 0.3
#: Why a binary file is not indexed (one reason, shown once by status).
BINARY_REASON = "binary content, not text: not indexed"


class NotText(ValueError):
    """The file holds binary data (an image or archive renamed ``.md``)."""


def looks_binary(data: bytes) -> bool:
    """True for bytes no Markdown file holds: a NUL byte, or mostly invalid
    UTF-8, in the first BINARY_SNIFF_BYTES."""
    head = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in head:
        return True
    decoded = head.decode("utf-8", errors="replace")
    # Short files with a few stray bytes stay text (their bytes are replaced).
    return len(decoded) >= 256 and decoded.count("\ufffd") > BINARY_BAD_SHARE * len(decoded)


#: Bytes read per file at discovery: enough for the NUL bytes that image,
#: archive and PDF headers hold, cheap enough for every scan.
BINARY_HEAD_BYTES = 1024


def starts_binary(path: str) -> bool:
    """Whether the file's first bytes are binary. Checked at discovery, so a
    binary file is never a pending change (a sync would skip it every time)."""
    try:
        with open(path, "rb") as fh:
            return looks_binary(fh.read(BINARY_HEAD_BYTES))
    except OSError:
        return False  # the sync's read reports why it cannot be read


def read_text(path: Path) -> tuple[str, bool]:
    """Read a file as UTF-8; undecodable bytes become U+FFFD.

    Returns ``(text, had_bad_bytes)``; a leading BOM is dropped. Raises
    :class:`NotText` for binary content (see :func:`looks_binary`).
    """
    return decode_text(path.read_bytes())


def decode_text(data: bytes) -> tuple[str, bool]:
    """:func:`read_text` on bytes already read."""
    if looks_binary(data):
        raise NotText(BINARY_REASON)
    try:
        text = data.decode("utf-8")
        bad = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        bad = True
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, bad


class FileRead(NamedTuple):
    """A file's text and the stat it had while it was read (for the index)."""

    text: str
    bad_bytes: bool
    mtime_ns: int
    size: int
    #: The wall clock (ns) just before the read began: an mtime not safely
    #: older than this cannot vouch for the text (see engine/indexing/changes.py).
    read_at_ns: int
    #: False when the file kept changing while it was read (size or mtime
    #: differed before and after each attempt): the text may be torn.
    settled: bool


#: How often a file that changes while it is read is read again in one go.
READ_ATTEMPTS = 3


def read_file(path: str | Path, attempts: int = READ_ATTEMPTS) -> FileRead:
    """Read a file as :func:`read_text` does, with the stat that goes with it.

    The file is stat'ed (through the open descriptor) before and after the
    read; when the two differ, or the bytes read are not the size it had,
    it was written meanwhile (an editor saving, a log growing) and is read
    again, up to ``attempts`` times. A file still changing after that comes
    back with ``settled`` False and the stat of what was read.
    Raises OSError or :class:`NotText`.
    """
    with open(path, "rb") as fh:
        # The head first: a binary file is not read whole (a sync, which
        # does not sniff at discovery, meets it every time).
        if looks_binary(fh.read(BINARY_HEAD_BYTES)):
            raise NotText(BINARY_REASON)
        fd = fh.fileno()
        for _ in range(max(1, attempts)):
            read_at = time.time_ns()
            before = os.fstat(fd)
            fh.seek(0)
            data = fh.read()
            after = os.fstat(fd)
            settled = before.st_mtime_ns == after.st_mtime_ns and before.st_size == after.st_size and len(data) == after.st_size
            if settled:
                break
    text, bad = decode_text(data)
    mtime = before.st_mtime_ns if settled else after.st_mtime_ns
    return FileRead(text, bad, mtime, len(data), read_at, settled)
