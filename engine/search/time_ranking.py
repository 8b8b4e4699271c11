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


def chunk_dates(path: str, text: str, start_line: int) -> list[date]:
    """The days a chunk of ``path`` starting at ``start_line`` is dated by."""
    days = [d for d in (name_date(path), front_matter_date(text) if start_line == 1 else None) if d]
    for m in _HEADING.finditer(text):
        days += named_days(m.group(1))
    return days


def in_cues(days: list[date], cues: list[TimeCue]) -> bool:
    """Some day falls inside some cue (widened by the days notes lag)."""
    return any(c.covers(d, DAYS_BEFORE, DAYS_AFTER) for c in cues for d in days)
