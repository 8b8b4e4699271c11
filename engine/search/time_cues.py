"""Time cues in a query: "yesterday", "last week", "in May", "2023",
"May 7, 2023" resolved to ranges of days (DESIGN.md §7).

:func:`find_time_cues` reads what a question says about *when*, relative to
a reference time (now, or the time a replayed conversation took place).
Search boosts chunks dated inside those ranges and leaves queries without a
cue untouched. Rules, chosen to be predictable rather than clever:

- absolute forms first: ISO dates, "May 7, 2023", "7 May 2023", "8th
  December, 2023", "May 2023", "summer 2021", a year alone ("2023");
- a day or month without a year ("May 7", "in May") is the latest one on or
  before the reference day; a bare month needs a preposition ("in May",
  "during May") since "may" is also a verb;
- relative forms ("yesterday", "last week", "last weekend", "on Friday",
  "last month", "this year", "3 days ago", "two weeks ago") count back from
  the reference day; when the query also names an exact day ("last Friday
  on 23 January, 2022"), they count back from that day instead, as the
  question is then asked from that day;
- weeks run Monday to Sunday; "on Friday" is the latest Friday before the
  reference day.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Callable, NamedTuple, Sequence

# English names written out, not the calendar module's: those follow the
# process's LC_TIME (a host application may set it), and queries are read
# as English whatever the locale.
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)}
_MONTHS.update({name[:3]: i for i, name in enumerate(_MONTH_NAMES, 1)})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
    "few": 3,
}
_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}


#: Reads one match against a reference day: the days it names, or None.
Reader = Callable[[re.Match[str], date], "tuple[date, date] | None"]


class TimeCue(NamedTuple):
    """Days a query refers to: ``first`` to ``last``, both included."""

    text: str  # the words of the query that say it
    first: date
    last: date

    def covers(self, day: date, before: int = 0, after: int = 0) -> bool:
        """``day`` falls in the range widened by ``before`` / ``after`` days."""
        return self.first - timedelta(days=before) <= day <= self.last + timedelta(days=after)


class _Pattern:
    """A pattern compiled on first use: compiling all of them costs a
    one-shot search about 5 ms, and most queries name no time (see
    :func:`may_name_a_time`)."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str):
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def sub(self, repl: Callable[[re.Match[str]], str], text: str) -> str:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.IGNORECASE)
        return self._compiled.sub(repl, text)


def _rx(pattern: str) -> _Pattern:
    # Not inside a word, a number or a possessive ("May's" is a name).
    return _Pattern(r"(?<![\w-])" + pattern + r"(?![\w'’-])")


# Absolute forms, most specific first; each match is blanked out of the
# query so that "May 7, 2023" is not read again as "2023".
_ISO = _rx(r"(?P<year>\d{4})-(?P<mm>\d{2})-(?P<dd>\d{2})")
_MDY = _rx(_MONTH + r"\s+" + _DAY + r"(?:,\s*|\s+)" + _YEAR)
_DMY = _rx(_DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,\s*|\s+)" + _YEAR)
_MY = _rx(_MONTH + r"(?:,\s*|\s+)(?:of\s+)?" + _YEAR)
_SEASON_YEAR = _rx(r"(?P<season>spring|summer|autumn|fall|winter)\s+(?:of\s+)?" + _YEAR)
_MD = _rx(_MONTH + r"\s+" + _DAY)
_DM = _rx(_DAY + r"\s+(?:of\s+)?" + _MONTH)
_IN_MONTH = _rx(r"(?:in|during|since|early|late|mid|through|throughout|of|this past|last)\s+" + _MONTH)
_YEAR_ALONE = _rx(_YEAR)
# Relative forms.
_AGO = _rx(_NUMBER + r"\s+(?P<unit>day|week|month|year)s?\s+ago")
_LAST_UNIT = _rx(r"(?P<which>last|this|past|previous)\s+(?P<unit>week|weekend|month|year)")
_ON_WEEKDAY = _rx(r"(?:on|last|this past|past)\s+" + _WEEKDAY)
# "yesterday's meeting" still means yesterday.
_YESTERDAY = _Pattern(r"(?<![\w-])(?P<word>yesterday|today|tonight|last night|this morning|this evening)(?![\w-])")


#: Every cue holds a digit or one of these words (a month, weekday or
#: season, a unit counted back, "ago", "yesterday", ...), each as a whole
#: word: without them the patterns need not run (most queries).
_CUE_WORDS = (
    frozenset(_MONTHS)
    | frozenset(_WEEKDAYS)
    | frozenset(_SEASONS)
    | frozenset("ago week weekend month year yesterday today tonight night morning evening".split())
)
_ASCII_LETTERS = re.compile(r"[a-z]+")


def may_name_a_time(query: str) -> bool:
    """False when ``query`` cannot hold a cue (checked for ASCII queries;
    any other query is read in full)."""
    if not query.isascii():
        return True
    low = query.lower()
    return any(ch.isdigit() for ch in low) or not _CUE_WORDS.isdisjoint(_ASCII_LETTERS.findall(low))


def find_time_cues(query: str, now: datetime | date) -> list[TimeCue]:
    """The time ranges ``query`` names, resolved against ``now``."""
    if not may_name_a_time(query):
        return []
    today = now.date() if isinstance(now, datetime) else now
    text = query
    absolute: list[TimeCue] = []
    text = _take_all(((_ISO, _iso), (_MDY, _mdy), (_DMY, _mdy), (_MY, _month_year), (_SEASON_YEAR, _season)), text, today, absolute)
    days = [c.first for c in absolute if c.first == c.last]
    # Relative words are said from the exact day the question names, if any.
    anchor = max(days) if days else today
    relative: list[TimeCue] = []
    text = _take_all(
        (
            (_MD, _month_day),
            (_DM, _month_day),
            (_IN_MONTH, _bare_month),
            (_AGO, _ago),
            (_LAST_UNIT, _last_unit),
            (_ON_WEEKDAY, _weekday),
            (_YESTERDAY, _word),
        ),
        text,
        anchor,
        relative,
    )
    _take_all(((_YEAR_ALONE, _year),), text, today, absolute)
    return absolute + relative


def _take_all(readers: Sequence[tuple[_Pattern, Reader]], text: str, ref: date, out: list[TimeCue]) -> str:
    """Append the cue of each match that reads as one, pattern by pattern;
    blank the matches so later patterns do not read them again."""
    for pattern, read in readers:

        def one(m: re.Match[str], read: Reader = read) -> str:
            span = read(m, ref)
            if span is None:
                return m.group(0)
            out.append(TimeCue(m.group(0).strip(), span[0], span[1]))
            return " " * len(m.group(0))

        text = pattern.sub(one, text)
    return text


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _day_span(d: date | None) -> tuple[date, date] | None:
    return (d, d) if d else None


def _month_span(year: int, month: int) -> tuple[date, date]:
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return date(year, month, 1), following - timedelta(days=1)


def _iso(m: re.Match[str], today: date) -> tuple[date, date] | None:
    return _day_span(_safe_date(int(m["year"]), int(m["mm"]), int(m["dd"])))


def _mdy(m: re.Match[str], today: date) -> tuple[date, date] | None:
    return _day_span(_safe_date(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])))


def _month_year(m: re.Match[str], today: date) -> tuple[date, date] | None:
    return _month_span(int(m["year"]), _MONTHS[m["month"].lower()])


def _season(m: re.Match[str], today: date) -> tuple[date, date] | None:
    start, end = _SEASONS[m["season"].lower()]
    year = int(m["year"])
    if start > end:  # winter 2023: December 2023 to February 2024
        return date(year, start, 1), _month_span(year + 1, end)[1]
    return date(year, start, 1), _month_span(year, end)[1]


def _year(m: re.Match[str], today: date) -> tuple[date, date] | None:
    year = int(m["year"])
    return date(year, 1, 1), date(year, 12, 31)


def _month_day(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    month, day = _MONTHS[m["month"].lower()], int(m["day"])
    d = _safe_date(anchor.year, month, day)
    if d is not None and d > anchor:
        d = _safe_date(anchor.year - 1, month, day)
    return _day_span(d)


def _bare_month(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    month = _MONTHS[m["month"].lower()]
    year = anchor.year if month <= anchor.month else anchor.year - 1
    if m.group(0).lower().startswith("last") and month == anchor.month:
        year -= 1
    return _month_span(year, month)


def _count(raw: str) -> int:
    return int(raw) if raw.isdigit() else _NUMBERS[" ".join(raw.lower().split())]


def _ago(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    n, unit = _count(m["n"]), m["unit"].lower()
    if unit == "day":
        return _day_span(anchor - timedelta(days=n))
    if unit == "week":
        start = anchor - timedelta(days=anchor.weekday()) - timedelta(weeks=n)
        return start, start + timedelta(days=6)
    if unit == "month":
        months = anchor.year * 12 + anchor.month - 1 - n
        return _month_span(months // 12, months % 12 + 1)
    return date(anchor.year - n, 1, 1), date(anchor.year - n, 12, 31)


def _last_unit(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    this = m["which"].lower() == "this"
    unit = m["unit"].lower()
    monday = anchor - timedelta(days=anchor.weekday())
    if unit == "week":
        return (monday, anchor) if this else (monday - timedelta(days=7), monday - timedelta(days=1))
    if unit == "weekend":
        # The latest Saturday and Sunday before the anchor day.
        saturday = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        return saturday, saturday + timedelta(days=1)
    if unit == "month":
        if this:
            return date(anchor.year, anchor.month, 1), anchor
        months = anchor.year * 12 + anchor.month - 2
        return _month_span(months // 12, months % 12 + 1)
    year = anchor.year if this else anchor.year - 1
    return date(year, 1, 1), (anchor if this else date(year, 12, 31))


def _weekday(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    back = (anchor.weekday() - _WEEKDAYS[m["weekday"].lower()]) % 7 or 7
    return _day_span(anchor - timedelta(days=back))


def _word(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    word = " ".join(m["word"].lower().split())
    if word in ("yesterday", "last night"):
        return _day_span(anchor - timedelta(days=1))
    return _day_span(anchor)


def named_days(text: str) -> list[date]:
    """The exact days ``text`` names with a year (ISO, "May 7, 2023", "7 May
    2023"): how a heading such as ``## 2023-05-07`` or ``## Sunday, 7 May
    2023`` dates the lines under it. Needs no reference time."""
    # Each form names its year in digits, and the last two a month by name:
    # most headings ("## Decisions") hold neither, and need no pattern
    # compiled (about 3 ms, once per process).
    if not any(c.isdigit() for c in text):
        return []
    forms = ((_ISO, _iso), (_MDY, _mdy), (_DMY, _mdy)) if any(c.isalpha() for c in text) else ((_ISO, _iso),)
    found: list[TimeCue] = []
    _take_all(forms, text, date.min, found)
    return [c.first for c in found]
