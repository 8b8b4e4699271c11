"""The lines around a hit's best-matching line (engine/search/excerpt.py)."""

from memext.engine.search.excerpt import LINE_CHARS, make_excerpt
from memext.engine.text import query_terms


def test_the_best_line_is_the_one_with_the_rarest_terms():
    text = "\n".join(["# Notes", "the plan", "x", "y", "fusion decision: weighted", "z", "a", "b", "c", "d"])
    ex = make_excerpt(text, 11, query_terms("what did we decide about fusion plan"), {"fusion": 5.0, "plan": 1.0})
    assert ex.best_line == 15 and ex.omitted_before and ex.omitted_after
    assert [ln.number for ln in ex.lines] == [13, 14, 15, 16, 17, 18]
    assert [ln.hit for ln in ex.lines] == [False, False, True, False, False, False]


def test_a_hit_without_terms_shows_the_first_lines():
    ex = make_excerpt("one\ntwo\nthree", 1, query_terms("nothing here"))
    assert ex.best_line == 1 and not ex.omitted_before and not ex.omitted_after
    assert [ln.text for ln in ex.lines] == ["one", "two", "three"] and not any(ln.hit for ln in ex.lines)


def test_long_lines_are_cut_around_their_hit():
    line = "word " * 200 + "needle " + "tail " * 100
    ex = make_excerpt(line, 1, ["needle"])
    shown = ex.lines[0].text
    assert "needle" in shown and shown.startswith("…") and len(shown) <= LINE_CHARS + 2


def test_the_entry_that_answers_holds_the_marked_line():
    text = "# 2026-09-03\n\n- Vendor quote: 2,400 EUR per month.\n- Ran 5 km in 27 minutes.\n- Gym membership cancelled."
    # Found by meaning alone (no query word in it): the entry's line is marked.
    ex = make_excerpt(text, 1, query_terms("how fast did I go 5k"), entry=(3, 3))
    assert ex.best_line == 4 and [ln.number for ln in ex.lines if ln.hit] == [4]
    assert [line for line in ex.to_text().splitlines() if line.startswith(">")] == ["> 4  - Ran 5 km in 27 minutes."]
    # A line of another entry holding a query word is shown, not marked.
    worded = make_excerpt(text, 1, query_terms("gym run"), entry=(3, 3))
    assert worded.best_line == 4 and [ln.number for ln in worded.lines if ln.hit] == [4, 5]


def test_within_a_long_entry_its_line_with_the_most_query_words_is_marked():
    text = "- Ines moved to Porto last spring,\n  works at the harbour office\n  and drinks black coffee.\n- Lars: tea."
    ex = make_excerpt(text, 10, query_terms("what does Ines drink, coffee?"), {"coffee": 3.0, "ines": 1.0}, entry=(0, 2))
    assert ex.best_line == 12
