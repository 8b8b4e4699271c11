"""Time-aware ranking: chunks dated when the query says gain a little
(DESIGN.md §7).

A chunk's dates are its file's date from the name (daily logs such as
``memory/2023-05-08.md``, :func:`..note_dates.name_date`), the ``date:`` of
the file's front matter when the chunk starts the file, and the days named
by dated headings inside the chunk (``## 2023-05-08``, ``## 8 May 2023``).
A chunk with a date inside a query's time cue (widened by
:data:`DAYS_BEFORE` / :data:`DAYS_AFTER`) has its score multiplied by
``1 + query.time_boost``. Queries without a cue are not touched at all.
"""

from __future__ import annotations

import re
from datetime import date

from ..note_dates import front_matter_date, name_date
from .time_cues import TimeCue, named_days

#: Notes are written on the day or in the days after what they tell of; a
#: plan may be noted the day before.
DAYS_BEFORE = 1
DAYS_AFTER = 3
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.MULTILINE)
_LEVEL = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+)$")


def chunk_dates(path: str, text: str, start_line: int) -> list[date]:
    """The days a chunk of ``path`` starting at ``start_line`` is dated by."""
    days = [d for d in (name_date(path), front_matter_date(text) if start_line == 1 else None) if d]
    for m in _HEADING.finditer(text):
        days += named_days(m.group(1))
    return days


def entry_day(path: str, text: str, start_line: int, line: int) -> date | None:
    """The day the entry at file line ``line`` of a chunk of ``path``
    (``text``, from file line ``start_line``) is from (DESIGN.md §17): the
    day named by the nearest heading above it that names one, following
    the headings it sits under (a deeper heading after it is another
    section's), else its file's date (name, front matter); None when
    nothing dates it. Never the newest heading of the chunk."""
    lines = text.split("\n")
    deepest = 7  # a heading above must be shallower than the last one passed
    for i in range(min(line - start_line, len(lines) - 1), -1, -1):
        m = _LEVEL.match(lines[i])
        if m is None or len(m.group(1)) >= deepest:
            continue
        days = named_days(m.group(2))
        if days:
            return days[0]
        deepest = len(m.group(1))
    return name_date(path) or (front_matter_date(text) if start_line == 1 else None)


def in_cues(days: list[date], cues: list[TimeCue]) -> bool:
    """Some day falls inside some cue (widened by the days notes lag)."""
    return any(c.covers(d, DAYS_BEFORE, DAYS_AFTER) for c in cues for d in days)
