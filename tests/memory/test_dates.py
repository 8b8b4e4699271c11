"""engine/memory/dates.py: file dates and the after/before filters, as pure functions."""

from __future__ import annotations

import os
import time
from datetime import date, datetime, timedelta, timezone

import pytest
from conftest import MODEL_PATH, make_agent

from memext.engine import MemoryIndex
from memext.engine.errors import MemextError
from memext.engine.memory.dates import BadDate, DayRange, day_range, file_date, parse_when
from memext.engine.note_dates import content_date, front_matter_date, name_date

NOW = datetime(2026, 3, 31, 15, 45)


@pytest.mark.parametrize(
    "path, expected",
    [
        ("memory/2026-03-01.md", date(2026, 3, 1)),
        ("memory/2026-03-01-standup.md", date(2026, 3, 1)),
        ("memory/2026/03/2026-03-01.md", date(2026, 3, 1)),
        ("memory\\2026\\2026-03-01.md", date(2026, 3, 1)),
        ("notes/2025-12-31 retro.md", date(2025, 12, 31)),
        ("memory/2026-02-30.md", None),  # no such day
        ("memory/2026-03-011.md", None),  # not a date followed by the rest of the name
        ("memory/2026-03-01/notes.md", None),  # a dated folder dates nothing: only the file name counts
        ("MEMORY.md", None),
        ("memory/projects/x.md", None),
    ],
)
def test_name_date(path, expected):
    assert name_date(path) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("---\ndate: 2026-02-14\ntitle: x\n---\nbody", date(2026, 2, 14)),
        ("---\ntitle: x\nDate: '2026-02-14'\n---\n", date(2026, 2, 14)),
        ('\ufeff---\ndate: "2026-02-14T09:30:00"\n---\n', date(2026, 2, 14)),
        ("---\ndate: 2026-02-14 # written on the train\n---\n", date(2026, 2, 14)),
        ("---\ndate: soon\n---\n", None),
        ("---\ntitle: x\n---\ndate: 2026-02-14\n", None),  # after the front matter: body text
        ("# Notes\ndate: 2026-02-14\n", None),  # no front matter at all
        ("", None),
    ],
)
def test_front_matter_date(text, expected):
    assert front_matter_date(text) == expected


def test_file_date_prefers_the_name_then_front_matter_then_mtime():
    fm = "---\ndate: 2026-02-14\n---\n"
    mtime = datetime(2026, 3, 20, 12, 0).timestamp()
    assert file_date("memory/2026-03-01.md", fm, mtime) == date(2026, 3, 1)
    assert file_date("MEMORY.md", fm, mtime) == date(2026, 2, 14)
    assert file_date("MEMORY.md", "# no dates here", mtime) == date(2026, 3, 20)


def test_file_date_from_mtime_is_the_local_day(tmp_path):
    f = tmp_path / "MEMORY.md"
    f.write_text("x", encoding="utf-8")
    stamp = time.mktime((2026, 1, 2, 23, 59, 0, 0, 0, -1))  # local time, late in the day
    os.utime(f, (stamp, stamp))
    assert file_date("MEMORY.md", "x", f.stat().st_mtime) == date(2026, 1, 2)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-03-01", datetime(2026, 3, 1)),
        ("2026-03-01T14:30", datetime(2026, 3, 1, 14, 30)),
        ("2026-03-01 14:30:05", datetime(2026, 3, 1, 14, 30, 5)),
        ("  today ", datetime(2026, 3, 31)),
        ("Yesterday", datetime(2026, 3, 30)),
        ("7d", NOW - timedelta(days=7)),
        ("7 days", NOW - timedelta(days=7)),
        ("1 day ago", NOW - timedelta(days=1)),
        ("2w", NOW - timedelta(weeks=2)),
        ("2 weeks ago", NOW - timedelta(weeks=2)),
        ("1m", datetime(2026, 2, 28, 15, 45)),  # 31 March, a month back: clamped to February's last day
        ("3M", datetime(2025, 12, 31, 15, 45)),
        ("13 months", datetime(2025, 2, 28, 15, 45)),
        ("1y", datetime(2025, 3, 31, 15, 45)),
        ("2 years ago", datetime(2024, 3, 31, 15, 45)),
        ("0d", NOW),
    ],
)
def test_parse_when(text, expected):
    assert parse_when(text, NOW) == expected


def test_parse_when_takes_dates_datetimes_and_zones():
    assert parse_when(date(2026, 3, 1), NOW) == datetime(2026, 3, 1)
    assert parse_when(datetime(2026, 3, 1, 8), NOW) == datetime(2026, 3, 1, 8)
    utc = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    local = utc.astimezone().replace(tzinfo=None)
    assert parse_when(utc, NOW) == local
    assert parse_when("2026-03-01T12:00:00Z", NOW) == local
    assert parse_when("2026-03-01T12:00:00+00:00", NOW) == local


@pytest.mark.parametrize("text", ["", "soon", "last week", "7", "7x", "d7", "2026-13-01", "2026-3-1x", "-7d", "1e9d", "99999y", "9999999d"])
def test_bad_input_names_the_accepted_forms(text):
    with pytest.raises(BadDate) as err:
        parse_when(text, NOW)
    assert isinstance(err.value, MemextError)
    message = str(err.value)
    assert "2026-03-01" in message or "smaller age" in message
    if "smaller age" not in message:
        assert "7d" in message and "yesterday" in message


def test_bad_type():
    with pytest.raises(BadDate, match="must be text"):
        parse_when(7, NOW)  # type: ignore[arg-type]


def test_day_range():
    assert day_range(None, None, NOW) is None
    assert day_range("7d", None, NOW) == DayRange(date(2026, 3, 24), None)
    assert day_range(None, "2026-03-01", NOW) == DayRange(None, date(2026, 3, 1))
    # A time of day after midnight: part of that day is before it.
    assert day_range(None, "2026-03-01T09:00", NOW) == DayRange(None, date(2026, 3, 2))
    assert day_range("yesterday", "today", NOW) == DayRange(date(2026, 3, 30), date(2026, 3, 31))
    r = day_range("2026-03-01", "2026-03-05", NOW)
    assert r is not None and r.bounds == ("2026-03-01", "2026-03-05")
    assert [r.contains(date(2026, 3, d)) for d in (1, 4, 5)] == [True, True, False]
    assert r.describe() == "from 2026-03-01, before 2026-03-05"


def test_day_range_that_leaves_no_day_is_refused():
    with pytest.raises(BadDate, match=r"the start \(after, --since\) must come before the end"):
        day_range("2026-03-05", "2026-03-01", NOW)
    with pytest.raises(BadDate):
        day_range("today", "today", NOW)


def test_day_range_defaults_to_now():
    r = day_range("today", None)
    assert r is not None and r.first == date.today()


def test_content_date_is_the_name_then_the_front_matter():
    assert content_date("memory/2026-03-01.md", "---\ndate: 2026-02-14\n---\n") == date(2026, 3, 1)
    assert content_date("notes/x.md", "---\ndate: 2026-02-14\n---\n") == date(2026, 2, 14)
    assert content_date("MEMORY.md", "# undated") is None


def test_keeps_reads_the_stored_day_else_the_mtime():
    r = DayRange(date(2026, 3, 1), date(2026, 3, 5))
    assert [r.keeps(d, 0) for d in ("2026-02-28", "2026-03-01", "2026-03-04", "2026-03-05")] == [False, True, True, False]
    inside = int(datetime(2026, 3, 2, 23, 30).timestamp() * 1e9)
    outside = int(datetime(2026, 3, 5, 0, 30).timestamp() * 1e9)
    assert r.keeps(None, inside) and not r.keeps(None, outside)
    assert DayRange(None, date(2026, 3, 5)).keeps("1999-01-01", 0) and DayRange(date(2026, 3, 1)).keeps("2030-01-01", 0)


# -- through MemoryIndex.search ---------------------------------------------------------------


def _stamp(path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def _example(example_workspace, tmp_path, **settings) -> MemoryIndex:
    # MEMORY.md has no date in its name or front matter: its mtime dates it.
    _stamp(example_workspace / "MEMORY.md", datetime(2026, 9, 1, 12, 0))
    (example_workspace / "memory" / "trip.md").write_text(
        "---\ndate: 2026-10-30\n---\n# Trip\nBiscuit stays with the neighbour.\n", encoding="utf-8"
    )
    idx = MemoryIndex(
        make_agent(example_workspace, "ex", db_path=tmp_path / "ex.sqlite", **settings), **({"provider": None} if not settings else {})
    )
    idx.sync()
    return idx


def _files(resp) -> list[str]:
    return sorted({r.path for r in resp})


def test_a_date_filtered_search_on_the_example_memory(example_workspace, tmp_path):
    with _example(example_workspace, tmp_path) as idx:
        q = "Biscuit"
        assert _files(idx.search(q, max_results=20)) == [
            "MEMORY.md",
            "memory/2026-10-05.md",
            "memory/2026-10-09.md",
            "memory/2026-11-02.md",
            "memory/trip.md",
        ]
        # Daily logs by name, trip.md by its front matter, MEMORY.md by its mtime.
        assert _files(idx.search(q, max_results=20, after="2026-10-20")) == ["memory/2026-11-02.md", "memory/trip.md"]
        assert _files(idx.search(q, max_results=20, before="2026-10-09")) == ["MEMORY.md", "memory/2026-10-05.md"]
        assert _files(idx.search(q, max_results=20, after=date(2026, 10, 6), before=datetime(2026, 10, 31))) == [
            "memory/2026-10-09.md",
            "memory/trip.md",
        ]
        # Relative ages count back from now.
        assert _files(idx.search(q, max_results=20, after="3w", now=datetime(2026, 11, 12))) == ["memory/2026-11-02.md", "memory/trip.md"]
        assert _files(idx.search(q, max_results=20, before="2m", now=datetime(2026, 11, 12))) == ["MEMORY.md"]
        # A range nobody wrote in: no results, and the notice says why.
        empty = idx.search(q, after="2027-01-01")
        assert len(empty) == 0 and "no memory is dated from 2027-01-01" in (empty.notice or "")
        with pytest.raises(BadDate, match="cannot read 'last tuesday' as a date"):
            idx.search(q, after="last tuesday")
        with pytest.raises(BadDate, match="must come before the end"):
            idx.search(q, after="2026-11-01", before="2026-10-01")


def test_a_date_filtered_hybrid_search_with_the_real_model(example_workspace, tmp_path):
    with _example(example_workspace, tmp_path, provider="local", local={"model_path": str(MODEL_PATH)}) as idx:
        q = "When is the cat's vet appointment?"
        # About the date filter, not confidence: weak matches count too.
        assert set(_files(idx.search(q, max_results=6, include_weak=True))) - {"MEMORY.md", "memory/2026-10-05.md"}  # later notes too
        resp = idx.search(q, max_results=6, before="2026-10-08", include_weak=True)
        assert resp.mode == "hybrid" and "memory/2026-10-05.md" in _files(resp)
        assert set(_files(resp)) <= {"MEMORY.md", "memory/2026-10-05.md", "memory/2026-10-07.md"}  # the notes dated before 8 October
        late = idx.search(q, max_results=6, after="2026-11-01", min_score=0, include_weak=True)
        # min_score 0: every chunk dated in November comes back, whatever its rank among all.
        assert late.mode == "hybrid" and _files(late) == [f"memory/2026-11-{d}.md" for d in ("02", "06", "10", "18")]


def test_the_filter_comes_before_ranking(tmp_path, hashing_provider):
    """Many newer chunks outrank the old ones: filtering the top hits after
    ranking would return few or none; filtering first returns k."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    for day in range(1, 31):  # 30 new notes, all about the boat
        (ws / "memory" / f"2026-06-{day:02d}.md").write_text(
            f"# June {day}\nSailing boat boat boat repairs, sails and boat paint.\n", encoding="utf-8"
        )
    for day in range(1, 9):  # 8 old notes that mention it in passing
        (ws / "memory" / f"2025-01-{day:02d}.md").write_text(
            f"# January {day}\nGroceries, a long walk, emails, a call with the bank, and a boat in for repairs.\n", encoding="utf-8"
        )
    with MemoryIndex(make_agent(ws, "b", db_path=tmp_path / "b.sqlite"), provider=hashing_provider) as idx:
        idx.sync()
        top = idx.search("boat repairs", max_results=6)
        assert top.mode == "hybrid" and all(r.path.startswith("memory/2026-06") for r in top)
        old = idx.search("boat repairs", max_results=6, before="2026-01-01")
        assert len(old) == 6 and all(r.path.startswith("memory/2025-01") for r in old)
        one = idx.search("boat repairs", max_results=6, after="2025-01-03", before="2025-01-04")
        assert [r.path for r in one] == ["memory/2025-01-03.md"]
