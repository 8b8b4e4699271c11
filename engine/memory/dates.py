"""Dates of memory files and the ``after`` / ``before`` search filters.

Small pure functions, so search filters (here), status displays and
time-aware ranking can share one reading of "when is this memory from":

- :func:`file_date` dates a file: the date its name starts with (daily logs
  such as ``memory/2026-03-01.md``, ``memory/2026/2026-03-01-standup.md``),
  else a ``date:`` field in its YAML front matter, else its mtime (local
  time). :func:`~memext.engine.note_dates.content_date` (name, else front
  matter) is its part that a sync stores per file, as the mtime may change
  without the content (engine/note_dates.py).
- :func:`parse_when` reads what a user or an agent types for a point in
  time: an ISO date (``2026-03-01``), an ISO date and time
  (``2026-03-01T14:30``, ``2026-03-01 14:30:00+02:00``), an age (``7d``,
  ``2w``, ``3m``, ``1y``, also ``7 days``, ``2 weeks ago``) or ``today`` /
  ``yesterday``; anything else is a :class:`BadDate` naming these forms.
- :func:`day_range` turns ``after`` / ``before`` into the :class:`DayRange`
  of file dates a search keeps.

Dates are whole local days: a file is from one day, so ``after`` keeps
files from the day ``after`` falls on onwards, and ``before`` keeps files
from days before it (``before`` with a time of day after midnight keeps
that day too, as part of it is before that time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import Union

from ..errors import MemextError
from ..note_dates import as_local, content_date, parse_iso

#: What :func:`parse_when` accepts, for error messages and help texts.
ACCEPTED_FORMS = (
    "an ISO date (2026-03-01), an ISO date and time (2026-03-01T14:30), "
    "an age such as 7d, 2w, 3m or 1y (days, weeks, months, years ago), today or yesterday"
)

#: A bound as the API takes it: text to parse, or a date / datetime.
When = Union[str, date, datetime]

_AGE = re.compile(
    r"^(\d{1,5})\s*(d|days?|w|weeks?|m|months?|y|years?)(?:\s+ago)?$",
    re.IGNORECASE,
)


class BadDate(MemextError, ValueError):
    """A date or age that cannot be read, or bounds that leave no days."""


@dataclass(frozen=True)
class DayRange:
    """The file dates a search keeps: ``first <= day < end`` (None: open)."""

    first: date | None = None
    end: date | None = None

    def __post_init__(self) -> None:
        if self.first is not None and self.end is not None and self.first >= self.end:
            raise BadDate(
                f"no day is on or after {self.first.isoformat()} and before {self.end.isoformat()}: "
                "the start (after, --since) must come before the end (before)"
            )

    def contains(self, day: date) -> bool:
        """True when a file dated ``day`` is kept."""
        return (self.first is None or day >= self.first) and (self.end is None or day < self.end)

    def keeps(self, day: str | None, mtime_ns: int) -> bool:
        """True when an indexed file is kept: ``day`` is its stored
        :func:`content_date` (ISO), None to date it by ``mtime_ns``."""
        if day is None:
            return self.contains(datetime.fromtimestamp(mtime_ns / 1e9).date())
        first, end = self.bounds  # ISO dates order as text
        return (first is None or day >= first) and (end is None or day < end)

    @cached_property
    def bounds(self) -> tuple[str | None, str | None]:
        """``(first, end)`` as ISO dates, the form the index stores dates in."""
        return (
            self.first.isoformat() if self.first else None,
            self.end.isoformat() if self.end else None,
        )

    def describe(self) -> str:
        """In words, e.g. "from 2026-03-01" or "from 2026-03-01, before 2026-04-01"."""
        parts = []
        if self.first is not None:
            parts.append(f"from {self.first.isoformat()}")
        if self.end is not None:
            parts.append(f"before {self.end.isoformat()}")
        return ", ".join(parts) or "any date"


# -- the date of a file --------------------------------------------------------------


def file_date(rel_path: str, text: str, mtime: float) -> date:
    """When a memory file is from: its name's date, else its front matter's
    ``date:``, else the local day of ``mtime`` (seconds since the epoch)."""
    return content_date(rel_path, text) or datetime.fromtimestamp(mtime).date()


# -- reading a point in time ------------------------------------------------------------


def parse_when(text: When, now: datetime) -> datetime:
    """A point in time from an ISO date or datetime, an age (``7d``, ``2w``,
    ``3m``, ``1y``) or ``today`` / ``yesterday``, as a naive local datetime.

    Ages count back from ``now`` (months and years by the calendar, the day
    clamped to the month's length). Raises :class:`BadDate` naming the
    accepted forms.
    """
    if isinstance(text, datetime):
        return as_local(text)
    if isinstance(text, date):
        return datetime(text.year, text.month, text.day)
    if not isinstance(text, str):
        raise BadDate(f"a date must be text, a date or a datetime, not {type(text).__name__}; use {ACCEPTED_FORMS}")
    value = text.strip()
    word = value.lower()
    midnight = datetime(now.year, now.month, now.day)
    if word == "today":
        return midnight
    if word == "yesterday":
        return midnight - timedelta(days=1)
    m = _AGE.match(value)
    if m:
        return _ago(now, int(m.group(1)), m.group(2)[0].lower())
    parsed = parse_iso(value)
    if parsed is None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise BadDate(f"cannot read {shown!r} as a date: use {ACCEPTED_FORMS}")
    return parsed


def day_range(after: When | None, before: When | None, now: datetime | None = None) -> DayRange | None:
    """The file dates kept by ``after`` (on or after) and ``before``
    (strictly before); None when neither is given. ``now`` defaults to the
    local time. Raises :class:`BadDate` for unreadable input or bounds
    that leave no day."""
    if after is None and before is None:
        return None
    now = now or datetime.now()
    first = parse_when(after, now).date() if after is not None else None
    end = None
    if before is not None:
        b = parse_when(before, now)
        # Part of that day is before b: its files count as before it.
        end = b.date() if b.time() == datetime.min.time() else b.date() + timedelta(days=1)
    return DayRange(first, end)


def _ago(now: datetime, n: int, unit: str) -> datetime:
    if unit in ("d", "w"):
        try:
            return now - timedelta(days=n * (7 if unit == "w" else 1))
        except OverflowError:
            raise BadDate(f"{n}{unit} reaches back before the year 1: use a smaller age") from None
    months = n * 12 if unit == "y" else n
    year, month = divmod(now.year * 12 + now.month - 1 - months, 12)
    if year < 1:
        raise BadDate(f"{n}{unit} reaches back before the year 1: use a smaller age")
    month += 1
    last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
    return now.replace(year=year, month=month, day=min(now.day, last))
