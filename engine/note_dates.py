"""The date a memory file says it is from: the date its name starts with
(daily logs such as ``memory/2026-03-01.md``), else a ``date:`` field in
its YAML front matter (:func:`content_date`).

Pure functions of a file's name and text, used by every stage that dates
memory: the sync stores each file's date in the index, the store dates the
files of an index made before it kept them, search ranks and filters by
date (engine/memory/dates.py: ``after`` / ``before``, a file's mtime when
it names no date).
"""

from __future__ import annotations

import re
from datetime import date, datetime

_NAME_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?!\d)")
_FRONT_MATTER_LINES = 100
_DATE_FIELD = re.compile(r"^date\s*:\s*(.*?)\s*$", re.IGNORECASE)


def name_date(rel_path: str) -> date | None:
    """The date a file's name starts with (``2026-03-01.md``,
    ``2026-03-01-standup.md``, in any folder), else None."""
    name = rel_path.replace("\\", "/").rsplit("/", 1)[-1]
    m = _NAME_DATE.match(name)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:  # 2026-02-30
        return None


def front_matter_date(text: str) -> date | None:
    """The ``date:`` field of YAML front matter at the top of ``text``
    (``---`` lines around it), else None. The value may be quoted and may
    carry a time; one that is not a date is ignored."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:_FRONT_MATTER_LINES]:
        if line.strip() in ("---", "..."):
            return None
        m = _DATE_FIELD.match(line)
        if m:
            value = m.group(1).split(" #", 1)[0].strip().strip("\"'")
            parsed = parse_iso(value)
            return parsed.date() if parsed is not None else None
    return None


def content_date(rel_path: str, text: str) -> date | None:
    """The date a file's name or its front matter's ``date:`` gives it,
    else None (its mtime then dates it)."""
    return name_date(rel_path) or front_matter_date(text)


def parse_iso(value: str) -> datetime | None:
    """An ISO 8601 date or datetime as a naive local datetime, else None."""
    if not value or not value[:1].isdigit():
        return None
    try:
        if len(value) == 10:
            d = date.fromisoformat(value)
            return datetime(d.year, d.month, d.day)
        return as_local(datetime.fromisoformat(value))
    except ValueError:
        return None


def as_local(moment: datetime) -> datetime:
    """A datetime with a zone as naive local time (file dates are local days)."""
    return moment.astimezone().replace(tzinfo=None) if moment.tzinfo is not None else moment
