"""Entry metadata in the Markdown (engine/memory/entries.py, DESIGN.md §17):
the comment form, a parser that survives hand edits, and the scope of a mark."""

from __future__ import annotations

from memext.engine.memory.entries import EntryMeta, Mark, mark_lines, parse_entries, parse_meta, split_meta, strip_meta, with_meta


def test_written_metadata_reads_back():
    meta = EntryMeta(
        origin="capture",
        via="conversation",
        category="preference",
        importance=0.7,
        date="2026-11-27",
        supersedes="MEMORY.md:3-4",
        untrusted=True,
        reason='said "no" twice; then left',
    )
    line = with_meta("## 10:42", meta)
    assert line.startswith("## 10:42 <!-- memext origin=capture ") and line.endswith(" -->")
    bare, back = split_meta(line)
    assert bare == "## 10:42" and back == meta


def test_hand_edits_are_tolerated():
    # Keys reordered and upper-cased, spaces around = and :, commas and
    # semicolons, single quotes, a word for importance, an unknown key.
    meta = parse_meta("  Importance = high ; CATEGORY: Fact,  reason='moved  away'   origin=agent colour=blue forgotten = 2026-11-28 ")
    assert (meta.origin, meta.category, meta.importance, meta.forgotten, meta.reason) == ("agent", "fact", 0.8, "2026-11-28", "moved  away")
    assert meta.extra == (("colour", "blue"),) and meta.status == "forgotten"
    # Values it cannot read are ignored, not fatal; a bare flag still marks.
    odd = parse_meta("importance=lots superseded untrusted=no")
    assert odd.importance is None and odd.status == "superseded" and not odd.untrusted
    # An unknown key survives a mark being merged in.
    marked = mark_lines(
        ["- tea <!-- memext colour=blue -->"], parse_entries("- tea <!-- memext colour=blue -->").blocks, Mark("2026-11-28")
    )
    assert marked == ["- tea <!-- memext forgotten=2026-11-28 colour=blue -->"]


def test_a_comment_that_is_not_memexts_is_text():
    assert split_meta("- see <!-- a note to self -->") == ("- see <!-- a note to self -->", None)
    assert strip_meta("## 10:42 <!-- memext origin=agent -->") == "## 10:42"
    assert strip_meta("plain") == "plain"


HAND_EDITED = """\
# Memory

## Preferences <!--memext:   category = preference,importance=0.9 ;origin=person   -->
- Tea in the morning.
- Window seats <!-- MEMEXT forgotten:2026-11-20  reason="flies less now" -->
  (aisle on night flights)

## 2026-11-27 10:42
Entry whose comment was deleted by hand.

```
## not a heading <!-- memext forgotten=2026-01-01 -->
```

- Lives in Paris <!-- memext superseded=2026-11-28 by=MEMORY.md:20-21 origin=agent -->
"""


def test_a_hand_edited_file_parses():
    entries = parse_entries(HAND_EDITED)
    assert [h.start for h in entries.headings] == [1, 3, 8]  # the fenced line is text
    assert entries.info(4).origin == "person" and entries.info(4).status == "live"
    # The mark on a list item covers its continuation line, not its neighbours.
    assert entries.info(5).status == entries.info(6).status == "forgotten"
    assert entries.info(5).origin == "person"  # from the section
    assert entries.info(9).origin is None and entries.info(9).status == "live"  # comment deleted: plain text
    assert entries.info(12).status == "live"  # inside the fence: no mark
    assert entries.info(15).status == "superseded" and entries.info(15).origin == "agent"
    # A span is retired only when all its lines with text are.
    assert entries.span_info(5, 6).status == "forgotten"
    assert entries.span_info(3, 6).status == "live"


def test_units_a_mark_goes_to():
    entries = parse_entries(HAND_EDITED)
    assert [(u.start, u.end) for u in entries.units_in(3, 3)] == [(3, 6)]  # a heading: its section
    assert [(u.start, u.end) for u in entries.units_in(6, 6)] == [(5, 6)]  # a continuation line: its item
    assert [(u.start, u.end) for u in entries.units_in(4, 5)] == [(4, 4), (5, 6)]
    assert [(u.start, u.end) for u in entries.units_in(1, 9)] == [(3, 6), (8, 15)]  # the empty title has no text under it


def test_marking_keeps_crlf_and_line_count():
    text = "# M\r\n\r\n- tea\r\n- coffee\r\n"
    lines = text.split("\n")
    entries = parse_entries(lines)
    out = mark_lines(lines, entries.units_in(3, 3), Mark("2026-11-28", "switched", None))
    assert len(out) == len(lines) and out[2] == "- tea <!-- memext forgotten=2026-11-28 reason=switched -->\r"
    assert out[3] == "- coffee\r"
