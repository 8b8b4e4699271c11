"""Finding an agent's memory files, and the rules for what counts as memory.

Memory is ``MEMORY.md``, ``memory.md`` and ``memory/**/*.md`` in the
workspace, plus the folders and files named in ``extra_paths``. Hidden files
and folders, non-``.md`` files and symlinks that lead outside those roots are
never read; files are de-duplicated by real path; files over the size cap are
skipped and reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .roots import MEMORY_DIR, ROOT_FILES, MemoryRoots, is_within
from .units import human_size

__all__ = ["MEMORY_DIR", "ROOT_FILES", "MemoryRoots", "SourceFile", "Skipped", "NotText", "discover_memory_files", "looks_binary", "read_text"]


@dataclass(frozen=True)
class SourceFile:
    """One file to index."""

    path: str  # as shown to users: workspace-relative, '/'-separated
    abs_path: Path
    source: str  # "memory" or "sessions"
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class Skipped:
    """A file that was not indexed (or was indexed with a problem), and why."""

    path: str
    reason: str


def discover_memory_files(
    workspace: Path, extra_paths: list[Path], max_bytes: int
) -> tuple[list[SourceFile], list[Skipped]]:
    """All memory files of a workspace, sorted by path, and what was skipped."""
    roots = MemoryRoots.of(workspace, extra_paths)
    found: dict[tuple[int, int], SourceFile] = {}
    skipped: list[Skipped] = []
    for name in ROOT_FILES:
        _consider(Path(workspace) / name, roots, max_bytes, found, skipped)
    # Walked from a resolved root without following symlinks, a file's
    # path is already its real path: no realpath() per file.
    for path in _walk(roots.memory_dir, skipped, roots):
        _consider(path, roots, max_bytes, found, skipped)
    for p in extra_paths:
        if p.is_dir() and not p.is_symlink():
            for path in _walk(Path(os.path.realpath(p)), skipped, roots):
                _consider(path, roots, max_bytes, found, skipped)
        elif p.is_symlink() or p.exists():
            _consider(p, roots, max_bytes, found, skipped)
        else:
            skipped.append(Skipped(str(p), "extra path does not exist"))
    files = sorted(found.values(), key=lambda f: f.path)
    return files, skipped


def _walk(folder: Path, skipped: list[Skipped], roots: MemoryRoots) -> Iterator[Path]:
    """``.md`` files under ``folder``: no hidden entries, and symlinked
    folders only when they resolve inside the memory roots.

    Each real folder is listed once (by device and inode), so symlink loops
    (``x -> .``, ``y -> .``, ``a/b -> ..``) end the walk instead of growing
    it without bound."""
    if not folder.is_dir():
        return
    visited: set[tuple[int, int]] = set()
    stack = [folder]
    while stack:
        current = stack.pop()
        if not _first_visit(current, visited):
            continue
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(roots.display_path(Path(current)), f"cannot list folder: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                elif entry.is_symlink():
                    target = Path(os.path.realpath(path))
                    if target.is_dir():
                        if _inside_memory_folders(target, roots):
                            # Walk the target itself: its files then carry real paths.
                            stack.append(target)
                        else:
                            skipped.append(Skipped(roots.display_path(path), "symlink leads outside the memory folders"))
                    elif entry.name.lower().endswith(".md"):
                        yield path
                elif entry.name.lower().endswith(".md"):
                    yield path
            except OSError:
                continue


def _consider(
    cand: Path, roots: MemoryRoots, max_bytes: int, found: dict[tuple[int, int], SourceFile], skipped: list[Skipped]
) -> None:
    if not (cand.exists() or cand.is_symlink()):
        return
    real = Path(os.path.realpath(cand))
    if not roots.allows(real):
        shown = roots.display_path(Path(os.path.abspath(cand)))
        if cand.is_symlink():
            skipped.append(Skipped(shown, "symlink leads outside the memory folders"))
        elif real.suffix.lower() != ".md":
            skipped.append(Skipped(shown, "not a .md file"))
        return
    try:
        st = real.stat()
    except OSError as exc:
        skipped.append(Skipped(roots.display_path(real), f"cannot read: {exc.strerror or exc}"))
        return
    # By inode, not name: MEMORY.md and memory.md are one file on
    # case-insensitive file systems, and symlinks may point at a file twice.
    key = (st.st_dev, st.st_ino)
    if key in found or not real.is_file():
        return
    if st.st_size > max_bytes:
        skipped.append(Skipped(roots.display_path(real), f"larger than the {human_size(max_bytes)} limit ({human_size(st.st_size)}; max_file_bytes)"))
        return
    if _starts_binary(real):
        skipped.append(Skipped(roots.display_path(real), BINARY_REASON))
        return
    found[key] = SourceFile(
        path=roots.display_path(real), abs_path=real, source="memory", mtime_ns=st.st_mtime_ns, size=st.st_size
    )


def _first_visit(folder: Path, visited: set[tuple[int, int]]) -> bool:
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


def _starts_binary(path: Path) -> bool:
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
    data = path.read_bytes()
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
