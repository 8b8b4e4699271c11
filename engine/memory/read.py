"""Reading lines of a memory file (``get``, DESIGN.md §8).

Only the agent's memory can be read: ``MEMORY.md``, ``memory.md``,
``memory/**.md`` and files under ``extra_paths``, given workspace-relative
or absolute. Paths that climb out with ``..``, pass through a symlink, name
a hidden or non-``.md`` file, or lie anywhere else are refused with a
message that says which rule they broke; a path that cannot name a file
(NUL byte, too long, not text) is a :class:`BadPath`. A missing memory file
reads as empty text. Output is bounded.

The check and the read cannot be told apart by a race: the file is opened
one component at a time from ``/`` with ``O_NOFOLLOW`` (each folder, then
the file), so a memory file or folder swapped for a symlink after the check
fails the open instead of leading outside; what was opened must be a
regular file.
"""

from __future__ import annotations

import errno
import operator
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from ..citations import cite_lines
from ..errors import AccessDenied, BadLineRange, BadPath, LinesNotFound
from .chunking import split_lines
from .discovery import MemoryRoots
from .entries import Retired, parse_entries, strip_meta

MAX_LINES = 2000
MAX_CHARS = 200_000
#: Longer paths are refused before any system call (Linux's PATH_MAX).
MAX_PATH_CHARS = 4096
#: Longer file or folder names are refused (most file systems' NAME_MAX).
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class RetiredLine:
    """A line read whose entry no longer holds (DESIGN.md §17): ``status``
    forgotten or superseded, ``by`` the entry that replaced it."""

    line: int
    status: str
    by: str | None = None
    reason: str | None = None

    @property
    def why(self) -> str:
        """The words search shows for it: ``superseded by PATH:LINE``, ``forgotten``."""
        return Retired(self.status, self.by, self.reason).why


@dataclass
class ReadResult:
    """Lines ``from_line``..``to_line`` of ``path`` (1-based, inclusive),
    as the file holds them, and which of them are retired."""

    path: str
    text: str
    from_line: int
    to_line: int
    total_lines: int
    truncated: bool
    missing: bool = False
    #: The lines read whose entry is forgotten or superseded (its metadata,
    #: or its section heading's, says so; the heading may lie above).
    retired: tuple[RetiredLine, ...] = ()

    def shown_text(self) -> str:
        """The text as a person reads it: metadata comments left out (the
        file keeps them; ``text`` has them) and each retired line ending in
        ``[forgotten]`` or ``[superseded by PATH:LINE]``, with the reason
        when one was given (``[forgotten: moved to Berlin]``)."""
        why = {r.line: r.why + (f": {r.reason}" if r.reason else "") for r in self.retired}
        return "\n".join(
            f"{strip_meta(line).rstrip()}  [{why[n]}]" if n in why else strip_meta(line)
            for n, line in enumerate(self.text.split("\n"), start=self.from_line)
        )

    @property
    def citation(self) -> str:
        """The lines read as a citation: ``path:LINE`` or ``path:FROM-TO``."""
        return cite_lines(self.path, self.from_line, self.to_line)

    def to_dict(self) -> dict:
        return asdict(self)

    def require_lines(self) -> "ReadResult":
        """This read, or what every face says instead (``memext get``,
        ``%memget``): :class:`LinesNotFound` for a missing file or a first
        line past the end."""
        if self.missing:
            raise LinesNotFound(f"{self.path} does not exist")
        if self.from_line > max(self.total_lines, 1):
            raise LinesNotFound(f"{self.path} has {self.total_lines} line(s); line {self.from_line} is past the end")
        return self


def resolve_memory_path(raw: str, workspace: Path, extra_paths: list[Path], *, writing: bool = False) -> tuple[Path, str]:
    """Check ``raw`` against the rules; return (real path, display path).
    ``writing``: the path is to be written (appended to), which a refusal
    says instead of read."""
    _check_path_text(raw)
    try:
        return _resolve(raw, workspace, extra_paths, "written" if writing else "read")
    except (OSError, ValueError) as exc:  # what the checks above cannot foresee
        raise BadPath(f"{raw!r}: not a usable path ({exc})") from None


def _resolve(raw: str, workspace: Path, extra_paths: list[Path], done: str) -> tuple[Path, str]:
    roots = MemoryRoots.of(workspace, extra_paths)
    if not raw.lower().endswith(".md"):
        raise AccessDenied(f"{raw}: only Markdown (.md) memory files can be {done}")
    given = Path(os.path.expanduser(raw))
    lexical = Path(os.path.normpath(given if given.is_absolute() else roots.workspace / given))
    lexical = _rebase(lexical, workspace, extra_paths, roots)
    inside_extra = any(_within(lexical, d) for d in roots.extra_dirs) or lexical in roots.extra_files
    if ".." in given.parts and not inside_extra:
        raise AccessDenied(f"{raw}: '..' may not leave the workspace's memory")
    if any(part.startswith(".") for part in _parts_below_root(lexical, roots)):
        raise AccessDenied(f"{raw}: hidden files are not memory")
    real = Path(os.path.realpath(lexical))
    if real != lexical:
        raise AccessDenied(f"{raw}: is or passes through a symlink; memory files are {done} only where they are, not through links")
    if not roots.allows(real):
        raise AccessDenied(f"{raw}: not part of this agent's memory (MEMORY.md, memory.md, memory/**/*.md or extra_paths)")
    return real, roots.display_path(real)


def read_lines(
    raw: str,
    workspace: Path,
    extra_paths: list[Path],
    from_line: int | None = None,
    lines: int | None = None,
) -> ReadResult:
    """Read a memory file, or a window of it; see the module docstring.

    ``truncated`` is True only when MAX_LINES or MAX_CHARS stopped the read
    before both the requested end and the end of the file; ``to_line`` is
    the last line returned (``from_line - 1`` when none was).
    """
    from_line, lines = check_range(from_line, lines)
    real, shown = resolve_memory_path(raw, workspace, extra_paths)
    data = _read_checked(real, raw)
    if data is None:
        return ReadResult(shown, "", 0, 0, 0, False, missing=True)
    text = _decode(data)
    all_lines = split_lines(text)
    start = from_line or 1
    out, cut = _bounded(all_lines[start - 1 : start - 1 + min(lines or MAX_LINES, MAX_LINES)])
    total = len(all_lines)
    wanted_end = total if lines is None else min(start + lines - 1, total)
    end = min(start + len(out) - 1, total) if out else min(start - 1, total)
    return ReadResult(shown, "\n".join(out), start, end, total, cut or end < wanted_end, retired=_retired(all_lines, start, end))


def _retired(all_lines: list[str], start: int, end: int) -> tuple[RetiredLine, ...]:
    """The retired lines among ``start..end`` (the whole file is parsed: a
    heading above the window may mark its section)."""
    if not any("<!--" in line for line in all_lines):
        return ()
    entries = parse_entries(all_lines)
    out = []
    for n in range(start, end + 1):
        retired = entries.retired(n)
        if retired is not None:
            out.append(RetiredLine(n, *retired))
    return tuple(out)


def _check_path_text(raw: object) -> None:
    """Refuse what cannot be a file name before any system call sees it."""
    if not isinstance(raw, str):
        raise BadPath(f"a path must be text, got {type(raw).__name__}")
    if not raw or not raw.strip():
        raise AccessDenied("no path given")
    shown = repr(raw[:80]) + ("..." if len(raw) > 80 else "")
    if "\0" in raw:
        raise BadPath(f"{shown}: a path cannot contain a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise BadPath(f"{shown}: a path of {len(raw)} characters is too long (at most {MAX_PATH_CHARS})")
    try:
        encoded = os.fsencode(raw)
    except UnicodeError:
        raise BadPath(f"{shown}: not a valid file name in this system's encoding") from None
    longest = max(len(part) for part in encoded.split(os.fsencode(os.sep)))
    if longest > MAX_NAME_BYTES:
        raise BadPath(f"{shown}: a file or folder name of {longest} bytes is too long (at most {MAX_NAME_BYTES})")


def _read_checked(real: Path, raw: str) -> bytes | None:
    """The bytes of the regular file at ``real``, opened without following
    any symlink on the way; None when it does not exist."""
    try:
        fd = _open_no_symlinks(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: FreeBSD's O_NOFOLLOW answer
            raise AccessDenied(
                f"{raw}: is or passes through a symlink; memory files are read only where they are, not through links"
            ) from None
        if exc.errno == errno.ENOTDIR:
            return None  # a folder on the way is a file: no such memory file
        if exc.errno == errno.ENAMETOOLONG:
            raise BadPath(f"{raw}: the path is too long for the file system") from None
        raise AccessDenied(f"{raw}: cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise AccessDenied(f"{raw}: not a file")
        chunks = []
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            chunks.append(block)
        return b"".join(chunks)
    except OSError as exc:
        raise AccessDenied(f"{raw}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _open_no_symlinks(real: Path) -> int:
    """A read-only descriptor for ``real`` (an absolute, resolved path),
    walking from the file system root one component at a time with
    ``O_NOFOLLOW``: a symlink anywhere on the way raises ELOOP."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    # O_NONBLOCK: a FIFO named like a memory file must not block the open.
    file_flags = os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not nofollow or os.open not in os.supports_dir_fd:
        return _open_and_compare(real, file_flags)
    # O_PATH (Linux) opens a folder one may search but not list (mode 0711).
    dir_flags = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | nofollow | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(real.anchor or os.sep, dir_flags)
    except PermissionError:
        return _open_and_compare(real, file_flags)
    try:
        for part in real.parts[1:-1]:
            try:
                nxt = os.open(part, dir_flags, dir_fd=fd)
            except PermissionError:  # a folder on the way cannot be opened
                return _open_and_compare(real, file_flags)
            os.close(fd)
            fd = nxt
        return os.open(real.name, file_flags, dir_fd=fd)
    finally:
        os.close(fd)


def _open_and_compare(real: Path, flags: int) -> int:
    """Where descriptors relative to a folder are not available (Windows):
    open, then insist the opened file is the one the checked path names now."""
    before = os.lstat(real)
    if stat.S_ISLNK(before.st_mode):
        raise OSError(errno.ELOOP, "is a symlink", str(real))
    fd = os.open(real, flags)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino) or Path(os.path.realpath(real)) != real:
        os.close(fd)
        raise OSError(errno.ELOOP, "changed into a symlink while being opened", str(real))
    return fd


def _decode(data: bytes) -> str:
    """UTF-8 with undecodable bytes as U+FFFD, without a leading BOM (as the sync reads files)."""
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def check_range(from_line: int | None, lines: int | None) -> tuple[int | None, int | None]:
    """The window as ints; BadLineRange for one that cannot exist."""
    return _positive(from_line, "the first line", "lines are numbered from 1"), _positive(lines, "the number of lines", "")


def _positive(value: int | None, what: str, hint: str) -> int | None:
    if value is None:
        return None
    try:
        n = operator.index(value)
    except TypeError:
        raise BadLineRange(f"{what} must be a whole number, got {value!r}") from None
    if n < 1:
        raise BadLineRange(f"{what} must be at least 1{f' ({hint})' if hint else ''}, got {n}")
    return n


def _bounded(window: list[str]) -> tuple[list[str], bool]:
    """The leading lines of ``window`` that fit in MAX_CHARS, and whether a
    line was cut: a first line longer than that is cut rather than dropped,
    so a read always makes progress."""
    out: list[str] = []
    size = 0
    for line in window:
        if size + len(line) + 1 > MAX_CHARS:
            if not out:
                return [line[:MAX_CHARS]], True
            break
        out.append(line)
        size += len(line) + 1
    return out, False


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _rebase(lexical: Path, workspace: Path, extra_paths: list[Path], roots: MemoryRoots) -> Path:
    """Express a path given under an unresolved root (e.g. /tmp on macOS)
    under that root's real path, so only symlinks *inside* are noticed."""
    pairs = [(Path(os.path.abspath(workspace)), roots.workspace)]
    pairs += [(Path(os.path.abspath(p)), Path(os.path.realpath(p))) for p in extra_paths]
    for given_root, real_root in pairs:
        if given_root != real_root and _within(lexical, given_root):
            return real_root / lexical.relative_to(given_root)
    return lexical


def _parts_below_root(path: Path, roots: MemoryRoots) -> tuple[str, ...]:
    for root in (*roots.extra_dirs, roots.workspace):
        if _within(path, root):
            return path.relative_to(root).parts
    return (path.name,)
