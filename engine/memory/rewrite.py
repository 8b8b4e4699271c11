"""Rewriting a memory file in place, and keeping the citations that point
into it true (DESIGN.md §17).

Appends never rewrite; a mark (forget, supersede) and an entry written
under an existing heading in the middle of a file do. A rewrite writes a
full copy beside the file, fsyncs it and renames it over the file, so a
crash leaves the old file or the new one. Inserting lines moves every
line below them: the citations memext keeps in metadata comments
(``supersedes=``, ``by=``, ``from=``), in this file and in the agent's
other memory files, are moved with them.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Iterable

#: A citation inside a metadata comment: key=PATH:LINE or PATH:FROM-TO.
_CITED = re.compile(r"""(?P<key>\b(?:supersedes|by|from)\s*[=:]\s*["']?)(?P<path>[^\s"',;:]+):(?P<a>\d+)(?:-(?P<b>\d+))?""", re.IGNORECASE)
_COMMENT = re.compile(r"<!--\s*memext\b.*?-->", re.IGNORECASE)


def replace_file(real: Path, text: str) -> None:
    """Write ``text`` to a sibling temporary file, fsync it, rename it over
    ``real`` (its mode kept)."""
    mode = real.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def shift_citations(text: str, path: str, at: int, count: int) -> str:
    """``text`` with the citations of its metadata comments into ``path``
    moved for ``count`` lines inserted before line ``at``: a citation
    starting at or below ``at`` moves down, one spanning it grows."""
    if count <= 0 or "<!--" not in text:
        return text

    def cited(m: re.Match[str]) -> str:
        if m.group("path") != path:
            return m.group(0)
        return m.group("key") + _moved(path, int(m.group("a")), int(m.group("b") or m.group("a")), at, count)

    return _COMMENT.sub(lambda c: _CITED.sub(cited, c.group(0)), text)


def shift_citation(citation: str, path: str, at: int, count: int) -> str:
    """One citation (``PATH:LINE`` or ``PATH:FROM-TO``) moved as
    :func:`shift_citations` moves those of comments."""
    m = re.fullmatch(r"(?P<path>.+):(?P<a>\d+)(?:-(?P<b>\d+))?", citation.strip())
    if m is None or m.group("path") != path or count <= 0:
        return citation
    return _moved(path, int(m.group("a")), int(m.group("b") or m.group("a")), at, count)


def _moved(path: str, a: int, b: int, at: int, count: int) -> str:
    if a >= at:
        a, b = a + count, b + count
    elif b >= at:
        b += count
    return f"{path}:{a}" + (f"-{b}" if b != a else "")


def shift_elsewhere(files: Iterable[tuple[Path, str]], path: str, at: int, count: int) -> list[str]:
    """Move the citations into ``path`` held by ``files`` (real path, shown
    path) for ``count`` lines inserted before line ``at``; each changed
    file is rewritten whole. Returns the files changed. A file that cannot
    be read or written keeps its citations (the error is not the insert's)."""
    changed: list[str] = []
    for real, shown in files:
        if shown == path:
            continue
        try:
            text = real.read_bytes().decode("utf-8")  # line endings as they are
        except (OSError, UnicodeDecodeError):
            continue
        if f"{path}:" not in text:
            continue
        moved = shift_citations(text, path, at, count)
        if moved != text:
            try:
                replace_file(real, moved)
            except OSError:
                continue
            changed.append(shown)
    return changed
