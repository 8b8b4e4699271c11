"""Time cues in queries resolved against a reference time (engine/search/time_cues.py)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from memext.engine.search.time_cues import find_time_cues, named_days

WED = datetime(2023, 8, 16, 10, 30)  # a Wednesday
MON = date(2024, 1, 1)  # a Monday, early in a year


def D(s: str) -> date:  # noqa: N802
    return date.fromisoformat(s)


@pytest.mark.parametrize(
    "query, now, expected",
    [
        # absolute
        ("notes from 2023-05-07", WED, [("2023-05-07", "2023-05-07")]),
        ("what happened on May 7, 2023?", WED, [("2023-05-07", "2023-05-07")]),
        ("December 1,2023 photo", WED, [("2023-12-01", "2023-12-01")]),
        ("on 8th December, 2023", WED, [("2023-12-08", "2023-12-08")]),
        ("the 7 July 2023 flood", MON, [("2023-07-07", "2023-07-07")]),
        ("in May 2023", WED, [("2023-05-01", "2023-05-31")]),
        ("in February 2024", WED, [("2024-02-01", "2024-02-29")]),
        ("summer 2021 trip", WED, [("2021-06-01", "2021-08-31")]),
        ("winter 2023", WED, [("2023-12-01", "2024-02-29")]),
        ("beach visits in 2023", MON, [("2023-01-01", "2023-12-31")]),
        # a day or month without a year: the latest one on or before now
        ("what did we do on May 7", WED, [("2023-05-07", "2023-05-07")]),
        ("what did we do on May 7", MON, [("2023-05-07", "2023-05-07")]),
        ("camping in June", WED, [("2023-06-01", "2023-06-30")]),
        ("camping in September", WED, [("2022-09-01", "2022-09-30")]),
        ("during August", WED, [("2023-08-01", "2023-08-31")]),
        # relative
        ("what did we decide yesterday", WED, [("2023-08-15", "2023-08-15")]),
        ("today's standup", WED, [("2023-08-16", "2023-08-16")]),
        ("last week", WED, [("2023-08-07", "2023-08-13")]),
        ("last week", MON, [("2023-12-25", "2023-12-31")]),
        ("this week", WED, [("2023-08-14", "2023-08-16")]),
        ("last weekend", WED, [("2023-08-12", "2023-08-13")]),
        ("on Friday", WED, [("2023-08-11", "2023-08-11")]),
        ("last Wednesday", WED, [("2023-08-09", "2023-08-09")]),
        ("last month", WED, [("2023-07-01", "2023-07-31")]),
        ("last month", MON, [("2023-12-01", "2023-12-31")]),
        ("last year", WED, [("2022-01-01", "2022-12-31")]),
        ("3 days ago", WED, [("2023-08-13", "2023-08-13")]),
        ("two weeks ago", WED, [("2023-07-31", "2023-08-06")]),
        ("a couple of months ago", WED, [("2023-06-01", "2023-06-30")]),
        # relative words said from the exact day a question names
        ("What did Joanna finish last Friday on 23 January, 2022?", WED, [("2022-01-23", "2022-01-23"), ("2022-01-21", "2022-01-21")]),
        ("last weekend before April 10, 2023", WED, [("2023-04-10", "2023-04-10"), ("2023-04-08", "2023-04-09")]),
        # no cue
        ("what may happen to the roadmap", WED, []),
        ("one of May's friends", WED, []),
        ("when did Caroline go to the support group?", WED, []),
        ("build a828e60 failed with 404", WED, []),
        ("", WED, []),
    ],
)
def test_expressions_resolve_against_the_reference_time(query, now, expected):
    got = [(c.first, c.last) for c in find_time_cues(query, now)]
    assert got == [(D(a), D(b)) for a, b in expected]


def test_a_cue_covers_its_days_widened():
    (cue,) = find_time_cues("on May 7, 2023", WED)
    assert cue.text == "May 7, 2023"
    assert cue.covers(D("2023-05-07")) and not cue.covers(D("2023-05-08"))
    assert cue.covers(D("2023-05-06"), before=1) and cue.covers(D("2023-05-10"), after=3)
    assert not cue.covers(D("2023-05-11"), before=1, after=3)


def test_named_days_read_dated_headings_without_a_reference():
    assert named_days("2023-05-08") == [D("2023-05-08")]
    assert named_days("Sunday, 7 May 2023 (standup)") == [D("2023-05-07")]
    assert named_days("Session 3 (1:56 pm)") == []
    assert named_days("May 2023") == []  # a month is not a day
    assert named_days("\u0662\u0660\u0662\u0663-05-08") == [D("2023-05-08")]  # digits of any script, as the patterns read them


def test_named_days_skips_the_patterns_for_a_heading_that_cannot_hold_a_date(monkeypatch):
    # A heading with no digit names no day; one with no letter, no day by
    # month name: the patterns that cannot match are not run (nor compiled).
    from memext.engine.search import time_cues

    ran: list[list[str]] = []
    names = {id(getattr(time_cues, n)): n for n in ("_ISO", "_MDY", "_DMY")}
    take_all = time_cues._take_all

    def recording(readers, *args):
        ran.append([names[id(p)] for p, _ in readers])
        return take_all(readers, *args)

    monkeypatch.setattr(time_cues, "_take_all", recording)
    assert named_days("Decisions and open questions") == [] and ran == []
    assert named_days("2023-05-08") == [D("2023-05-08")] and ran == [["_ISO"]]
    assert named_days("Sunday, 7 May 2023") == [D("2023-05-07")] and ran[-1] == ["_ISO", "_MDY", "_DMY"]
    assert named_days("7 May, 2023") == [D("2023-05-07")] and ran[-1] == ["_ISO", "_MDY", "_DMY"]


def test_queries_without_a_digit_or_a_time_word_skip_the_patterns(monkeypatch):
    # The shortcut must never hide a cue: every query the patterns read a
    # cue in passes the check.
    import random

    from memext.engine.search import time_cues

    check = time_cues.may_name_a_time
    words = [
        "in",
        "may",
        "May's",
        "last",
        "this",
        "past",
        "on",
        "friday",
        "weekend",
        "weeks",
        "ago",
        "two",
        "a few",
        "summer",
        "of",
        "sept.",
        "night",
        "morning",
        "today",
        "yesterday's",
        "mayday",
        "decide",
        "plan",
        "2023",
        "7th",
        "-",
        ",",
        "x1",
        "MARCH",
        "Tonight",
        "june",
        "month",
        "year",
        "days",
    ]
    rng = random.Random(11)
    queries = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    skipped = [q for q in queries if not check(q)]
    assert len(skipped) > 100 and not check("what did we decide about the plan")
    monkeypatch.setattr(time_cues, "may_name_a_time", lambda query: True)
    for q in queries:
        if find_time_cues(q, WED):
            assert check(q), q
