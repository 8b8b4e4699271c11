"""Citations (engine/citations.py): ``path:LINE`` is one line wherever it
is read or printed, ``path:FROM-TO`` a range, ``path:FROM-`` to the end."""

from __future__ import annotations

import re

import pytest

from memext.engine import MemextError
from memext.engine.citations import cite_lines, parse_get_spec


def test_a_line_is_one_line_a_range_is_a_range():
    assert parse_get_spec("memory/a.md") == ("memory/a.md", None, None)
    assert parse_get_spec("memory/a.md:5") == ("memory/a.md", 5, 1)
    assert parse_get_spec("memory/a.md:5-7") == ("memory/a.md", 5, 3)
    assert parse_get_spec("memory/a.md:5-5") == ("memory/a.md", 5, 1)
    assert parse_get_spec("memory/a.md:5-") == ("memory/a.md", 5, None)  # to the end


@pytest.mark.parametrize(
    "bad, message",
    [
        ("a.md:0", "start at 1"),
        ("a.md:0-2", "start at 1"),
        ("a.md:3-0", "start at 1"),
        ("a.md:7-5", "ends before"),
        ("a.md:abc", "'abc' is not a line range; use a.md:LINE, a.md:FROM-TO or a.md:FROM- (to the end)"),
        ("a.md:-3", "not a line range"),
        ("a.md:", "not a line range"),
    ],
)
def test_malformed_ranges_say_which_forms_are_read(bad, message):
    with pytest.raises(MemextError, match=re.escape(message)):
        parse_get_spec(bad)


def test_one_line_is_cited_without_a_range():
    assert cite_lines("memory/a.md", 4, 4) == "memory/a.md:4"
    assert cite_lines("memory/a.md", 3, 6) == "memory/a.md:3-6"
    for first, last in ((4, 4), (3, 6)):  # what is printed reads back the same
        path, start, count = parse_get_spec(cite_lines("memory/a.md", first, last))
        assert (path, start, start + count - 1) == ("memory/a.md", first, last)
