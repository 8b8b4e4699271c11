"""Citations: the one way memext names lines of a memory file, printed by
every face and read back by ``get``, ``forget`` and ``supersedes``.

- ``path:LINE`` is that one line (``memory/2026-10-24.md:4``);
- ``path:FROM-TO`` the lines FROM to TO, both included;
- ``path:FROM-`` from FROM to the end of the file (``get`` only: a mark
  must say which entry it is for).

A result or an entry that is one line long is cited ``path:4``, never
``path:4-4``, so what is printed can be pasted back and mean the same.
"""

from __future__ import annotations

import re

from .errors import BadLineRange

_SPEC = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d+)(?:(?P<dash>-)(?P<end>\d+)?)?)?$")
#: ``something.md:rest``: a citation whose range part must then be valid.
_MD_WITH_RANGE = re.compile(r"^(?P<path>.+?\.md):(?P<range>.*)$", re.IGNORECASE)


def cite_lines(path: str, first: int, last: int) -> str:
    """``path:LINE`` for one line, else ``path:FIRST-LAST``."""
    return f"{path}:{first}" if first == last else f"{path}:{first}-{last}"


def parse_get_spec(spec: str) -> tuple[str, int | None, int | None]:
    """``path``, ``path:LINE``, ``path:FROM-TO`` or ``path:FROM-`` ->
    (path, first line, how many lines): ``(p, None, None)`` the whole file,
    ``(p, 4, 1)`` line 4, ``(p, 4, 3)`` lines 4-6, ``(p, 4, None)`` line 4
    to the end. The form every face accepts (``memext get``, ``%memget``).

    A malformed range after ``.md:`` (``MEMORY.md:abc``) is a
    :class:`BadLineRange` that says which forms are accepted."""
    ranged = _MD_WITH_RANGE.match(spec)
    if ranged and not re.fullmatch(r"\d+(?:-\d*)?", ranged.group("range")):
        path = ranged.group("path")
        raise BadLineRange(
            f"{spec}: {ranged.group('range')!r} is not a line range; use {path}:LINE, {path}:FROM-TO or {path}:FROM- (to the end)"
        )
    m = _SPEC.match(spec)
    if not m or m.group("start") is None:
        return spec, None, None
    start = int(m.group("start"))
    end = int(m.group("end")) if m.group("end") else None
    if start == 0 or end == 0:
        raise BadLineRange(f"{spec}: line numbers start at 1")
    if end is not None:
        if end < start:
            raise BadLineRange(f"{spec}: the range ends before it starts")
        return m.group("path"), start, end - start + 1
    return m.group("path"), start, None if m.group("dash") else 1
