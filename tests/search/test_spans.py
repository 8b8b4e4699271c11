"""The reading budget's span grouping (engine/search/spans.py, DESIGN.md §7)."""

from __future__ import annotations

import pytest

from memext.engine.search.spans import budget_spans, cited_lines, hit_lines, merged_text, own_lines


def _ranges(spans):
    return [(s.path, s.start_line, s.end_line, s.members) for s in spans]


def test_spans_are_taken_in_rank_order_skipping_what_would_pass_the_budget():
    hits = [("a.md", 1, 10), ("b.md", 1, 20), ("c.md", 1, 40), ("d.md", 1, 1)]
    # 10 + 20 = 30; c would make 70 > 60: it is left out, d still fits.
    assert _ranges(budget_spans(hits, 60, 80)) == [("a.md", 1, 10, [0]), ("b.md", 1, 20, [1]), ("d.md", 1, 1, [3])]
    assert _ranges(budget_spans(hits, 70, 80)) == [("a.md", 1, 10, [0]), ("b.md", 1, 20, [1]), ("c.md", 1, 40, [2])]
    # A first hit longer than the budget does not leave the reader with nothing.
    assert _ranges(budget_spans(hits, 9, 80)) == [("d.md", 1, 1, [3])]
    assert budget_spans(hits[:3], 9, 80) == []
    # With the budget used up, a hit inside a span still joins it (it costs nothing).
    assert _ranges(budget_spans([("a.md", 1, 5), ("a.md", 6, 9), ("a.md", 2, 3)], 5, 80)) == [("a.md", 1, 5, [0, 2])]


def test_max_results_caps_the_spans():
    hits = [("a.md", 1, 2), ("b.md", 1, 2), ("c.md", 1, 2)]
    assert [s.path for s in budget_spans(hits, 100, 2)] == ["a.md", "b.md"]


def test_overlapping_and_adjacent_hits_of_one_file_become_one_span_costing_only_new_lines():
    hits = [("a.md", 10, 20), ("b.md", 1, 5), ("a.md", 18, 30), ("a.md", 31, 35), ("a.md", 12, 14)]
    spans = budget_spans(hits, 31, 80)
    # a: 10-35 (26 lines) + b: 5 lines = 31: everything fits, a keeps rank 1.
    assert _ranges(spans) == [("a.md", 10, 35, [0, 2, 3, 4]), ("b.md", 1, 5, [1])]
    # A gap of one line is not adjacent: a separate span.
    assert len(budget_spans([("a.md", 1, 5), ("a.md", 7, 9)], 60, 80)) == 2


def test_a_hit_bridging_two_spans_joins_them():
    hits = [("a.md", 1, 5), ("a.md", 20, 25), ("a.md", 4, 21)]
    assert _ranges(budget_spans(hits, 60, 80)) == [("a.md", 1, 25, [0, 1, 2])]
    # The bridge would cost 14 new lines: 11 + 14 = 25 > 24, so it is left out.
    assert _ranges(budget_spans(hits, 24, 80)) == [("a.md", 1, 5, [0]), ("a.md", 20, 25, [1])]
    # A later hit that fits is still taken.
    assert _ranges(budget_spans([*hits, ("b.md", 1, 3)], 24, 80))[-1] == ("b.md", 1, 3, [3])


def test_a_merge_never_counts_a_line_twice():
    hits = [("a.md", 1, 10), ("a.md", 5, 14), ("a.md", 1, 14)]
    spans = budget_spans(hits, 14, 80)
    assert _ranges(spans) == [("a.md", 1, 14, [0, 1, 2])]


def test_merged_text_holds_each_line_once():
    a = (1, 3, "one\ntwo\nthree")
    b = (3, 5, "three\nfour\nfive")
    assert merged_text([b, a]) == "one\ntwo\nthree\nfour\nfive"
    # Pieces of one long line split across chunks: the longest is kept.
    assert merged_text([(1, 2, "x\nlong li"), (2, 3, "long line\nz")]) == "x\nlong line\nz"


@pytest.mark.parametrize(
    "start, text, cited",
    [
        # A daily log's first chunk: the date and session headings open it.
        (1, "# 2023-05-08\n\n## Session 1 (1:56 pm)\n\n- **Mel**: hi\n- **Caro**: hey", (5, 6, "- **Mel**: hi\n- **Caro**: hey")),
        (10, "\n## Plans\n- buy kiwis\n\n", (12, 12, "- buy kiwis")),  # blank lines closing it too
        (3, "  ### Indented heading\nText", (4, 4, "Text")),
        # Nothing to leave out: cited whole.
        (1, "- buy kiwis\n\n## Next\n- more", (1, 4, "- buy kiwis\n\n## Next\n- more")),  # headings inside stay
        (1, "#hashtag line\nText", (1, 2, "#hashtag line\nText")),  # not a heading
        (1, "    # code, not a heading\nText", (1, 2, "    # code, not a heading\nText")),
        (7, "# Only\n\n## Headings", (7, 9, "# Only\n\n## Headings")),  # no text to cite instead
    ],
)
def test_a_hit_cites_its_text_without_the_headings_and_blank_lines_that_open_it(start, text, cited):
    assert cited_lines(start, start + text.count("\n"), text) == cited


def test_a_chunk_whose_text_is_not_one_line_per_file_line_is_cited_whole():
    # Transcript chunks can hold several text lines for one file line.
    assert cited_lines(4, 4, "# Title\nbody") == (4, 4, "# Title\nbody")


def test_neighbours_split_the_lines_they_share_at_the_middle():
    # Chunks 1-10, 6-15, 11-20 of one file: each pair shares five lines.
    ranges = [(1, 10), (6, 15), (11, 20)]
    neighbours = [(None, 6), (10, 11), (15, None)]  # (prev_end, next_start) of each
    owned = [own_lines(s, e, *n) for (s, e), n in zip(ranges, neighbours)]
    assert owned == [(1, 8), (9, 13), (14, 20)]
    # Every line of the file is owned by exactly one chunk.
    lines = [n for lo, hi in owned for n in range(lo, hi + 1)]
    assert lines == list(range(1, 21))
    # Without overlap, or without neighbours, all its lines are its own.
    assert own_lines(11, 20, 10, None) == (11, 20)
    assert own_lines(3, 7, None, None) == (3, 7)
    # Two chunks of the same lines (a long line split in pieces) own them both.
    assert own_lines(4, 4, 4, 4) == (4, 4)


def _chunk(start, n):
    return "\n".join(f"line {start + i}" for i in range(n))


def test_a_hit_cites_its_own_lines_widened_to_a_line_holding_a_query_term():
    text = _chunk(6, 10)  # lines 6-15; its own: 9-13 (neighbours 1-10 and 11-20)
    around = (10, 11)
    asked = []

    def none():
        asked.append(True)
        return []

    assert hit_lines(6, 15, text, around, none)[:2] == (9, 13)
    # The words that found it are in line 6 (offset 0), outside its own lines: cited too.
    start, end, cited = hit_lines(6, 15, text, around, lambda: [0, 8])
    assert (start, end) == (9, 14) and cited.splitlines() == [f"line {n}" for n in range(9, 15)]
    assert hit_lines(6, 15, text, around, lambda: [0])[:2] == (6, 13)
    # A term in its own lines: nothing to widen.
    assert hit_lines(6, 15, text, around, lambda: [0, 4])[:2] == (9, 13)
    # A chunk that owns all its lines never asks where the terms are.
    asked.clear()
    assert hit_lines(1, 10, _chunk(1, 10), (None, None), none) == (1, 10, _chunk(1, 10)) and not asked


def test_a_hit_cites_the_entries_that_carried_it_where_its_own_lines_do_not():
    text = _chunk(6, 10)  # lines 6-15; its own: 9-13 (neighbours 1-10 and 11-20)
    around = (10, 11)
    # An entry in the overlap with the neighbour before: cited with the own lines.
    assert hit_lines(6, 15, text, around, lambda: [], carried=(7, 7))[:2] == (7, 13)
    # One within its own lines: nothing more to read.
    assert hit_lines(6, 15, text, around, lambda: [], carried=(10, 11))[:2] == (9, 13)
    # Lines outside the chunk are not the hit's to cite.
    assert hit_lines(6, 15, text, around, lambda: [], carried=(14, 17))[:2] == (9, 13)


def test_own_lines_leave_out_the_headings_that_open_them():
    text = "- a\n- b\n\n## Session 2\n\n- c\n- d\n- e"  # lines 11-18, neighbours end at 13 and start at 17
    # Own lines 13-17 open with a blank line and a heading: cited from "- c".
    assert hit_lines(11, 18, text, (13, 17), lambda: [])[:2] == (16, 17)
