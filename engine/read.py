"""Reading lines of a memory file (``get``, SPEC §8).

Only the agent's memory can be read: ``MEMORY.md``, ``memory.md``,
``memory/**.md`` and files under ``extra_paths``, given workspace-relative
or absolute. Paths that climb out with ``..``, pass through a symlink, name
a hidden or non-``.md`` file, or lie anywhere else are refused with a
message that says which rule they broke. A missing memory file reads as
empty text. Output is bounded.
"""

from __future__ import annotations

import operator
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .chunking import split_lines
from .errors import AccessDenied, BadLineRange
from .sources import MemoryRoots, read_text

MAX_LINES = 2000
MAX_CHARS = 200_000


@dataclass
class ReadResult:
    """Lines ``from_line``..``to_line`` of ``path`` (1-based, inclusive)."""

    path: str
    text: str
    from_line: int
    to_line: int
    total_lines: int
    truncated: bool
    missing: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_memory_path(raw: str, workspace: Path, extra_paths: list[Path]) -> tuple[Path, str]:
    """Check ``raw`` against the rules; return (real path, display path)."""
    if not raw or not raw.strip():
        raise AccessDenied("no path given")
    if "\0" in raw:
        raise AccessDenied(f"{raw!r}: a path cannot contain a NUL character")
    roots = MemoryRoots.of(workspace, extra_paths)
    if not raw.lower().endswith(".md"):
        raise AccessDenied(f"{raw}: only Markdown (.md) memory files can be read")
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
        raise AccessDenied(f"{raw}: is or passes through a symlink, which get() does not follow")
    if not roots.allows(real):
        raise AccessDenied(
            f"{raw}: not part of this agent's memory (MEMORY.md, memory.md, memory/**/*.md or extra_paths)"
        )
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
    if not real.exists():
        return ReadResult(shown, "", 0, 0, 0, False, missing=True)
    if not real.is_file():
        raise AccessDenied(f"{raw}: not a file")
    text, _ = read_text(real)
    all_lines = split_lines(text)
    start = from_line or 1
    out, cut = _bounded(all_lines[start - 1 : start - 1 + min(lines or MAX_LINES, MAX_LINES)])
    total = len(all_lines)
    wanted_end = total if lines is None else min(start + lines - 1, total)
    end = min(start + len(out) - 1, total) if out else min(start - 1, total)
    return ReadResult(shown, "\n".join(out), start, end, total, cut or end < wanted_end)


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
    out, size = [], 0
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
