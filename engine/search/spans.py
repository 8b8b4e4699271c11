"""A reading budget for search results (DESIGN.md §7).

``max_lines`` asks for as many results as fit in a number of lines to read
(``end - start + 1`` each, what ``memory_get`` would pull). Hits of one file
that overlap or touch (chunks share their overlap lines) would make a reader
pull the same lines twice and cite them twice: they become one span, placed
at the rank of its best hit, with the best hit's score. Results are taken in
rank order; one that would pass the budget (or a merge that would add too
many lines) is left out and later, smaller ones still fill what is left, so
a budget never reorders what ranking decided and a first hit longer than
the budget does not leave the reader with nothing.

A hit cites the lines that hold its text (:func:`hit_lines`): chunks
overlap (by half with the default 240/120) so that each is indexed with
the lines around it, and a hit cites only the lines it does not share with
a neighbour, split at the middle of each overlap (:func:`own_lines`),
widened to a line holding a query term when its own lines hold none. The headings and blank lines that open those
lines, and blank lines that close them, are indexed but not cited
(:func:`cited_lines`), so they cost no lines of a budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

#: A Markdown ATX heading line (``# Title`` .. ``###### Title``).
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
#: First characters of a chunk that may open with a heading or a blank line.
_OPENERS = frozenset("# \t\r\n")


@dataclass
class Span:
    """One or more hits of one file read as one range of lines."""

    path: str
    start_line: int
    end_line: int
    members: list[int] = field(default_factory=list)  # indexes into the ranked hits, best first

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


def cited_lines(start_line: int, end_line: int, text: str) -> tuple[int, int, str]:
    """The lines of a chunk (``start_line..end_line``, ``text``) that a hit
    cites, as ``(start, end, text)``.

    Headings and blank lines that open the chunk, and blank lines that
    close it, are left out: they hold none of the hit's text (a heading is
    indexed with its chunk, so it still helps find it; the reader has the
    path, and the heading is one ``memory_get`` away). Measured on LoCoMo
    (bench/LOCOMO_RESULTS.md): the same turns found with fewer lines read.
    A chunk of only headings and blank lines, or whose text does not hold
    one line per file line (transcripts), is cited whole.
    """
    if text[:1] not in _OPENERS and not text[-1:].isspace():  # most chunks: nothing to leave out
        return start_line, end_line, text
    lines = text.split("\n")
    if len(lines) != end_line - start_line + 1:
        return start_line, end_line, text
    lo, hi = 0, len(lines) - 1
    while lo < hi and (not lines[lo].strip() or _HEADING.match(lines[lo])):
        lo += 1
    while hi > lo and not lines[hi].strip():
        hi -= 1
    if not lines[lo].strip() or _HEADING.match(lines[lo]):
        return start_line, end_line, text
    if (lo, hi) == (0, len(lines) - 1):
        return start_line, end_line, text
    return start_line + lo, start_line + hi, "\n".join(lines[lo : hi + 1])


def own_lines(start_line: int, end_line: int, prev_end: int | None, next_start: int | None) -> tuple[int, int]:
    """The lines of a chunk (``start_line..end_line``) that are its own.

    Chunks overlap so that each is indexed with the lines around it; the
    lines two neighbours share are split between them at the middle, so
    every line of a file is cited by exactly one chunk and a hit does not
    cite what its neighbour would. ``prev_end``: the last line of the chunk
    before it in its file, ``next_start``: the first line of the one after
    (None at either end; :meth:`~memext.engine.store.IndexStore.chunk_neighbours`). A chunk that
    its neighbours cover whole owns all its lines.
    """
    lo, hi = start_line, end_line
    if prev_end is not None and prev_end >= start_line:
        lo = (start_line + prev_end) // 2 + 1
    if next_start is not None and next_start <= end_line:
        hi = (next_start + end_line) // 2
    return (lo, hi) if lo <= hi else (start_line, end_line)


def hit_lines(
    start_line: int,
    end_line: int,
    text: str,
    neighbours: tuple[int | None, int | None],
    term_lines: Callable[[], list[int]],
    carried: tuple[int, int] | None = None,
) -> tuple[int, int, str]:
    """The lines a hit on a chunk cites, as ``(start, end, text)``: its own
    lines (:func:`own_lines`; ``neighbours`` is ``(prev_end, next_start)``)
    less the headings and blank lines at their edges (:func:`cited_lines`),
    widened to the nearest line that holds a query term when none of them
    does and the chunk has one (the words that found it stay in view).
    ``term_lines()``: the chunk's lines (0 for its first) that hold a query
    term, asked only when needed. ``carried``: the lines of the entries
    whose own vectors found the hit, cited too when they lie outside its
    own lines (an entry in the overlap it shares with a neighbour).
    """
    lines = text.split("\n")
    if len(lines) != end_line - start_line + 1:  # not one text line per file line (transcripts)
        return cited_lines(start_line, end_line, text)
    lo, hi = own_lines(start_line, end_line, *neighbours)
    if (lo, hi) == (start_line, end_line):
        lo, hi, _ = cited_lines(start_line, end_line, text)
    else:
        lo, hi, _ = cited_lines(lo, hi, "\n".join(lines[lo - start_line : hi - start_line + 1]))
    if carried is not None and start_line <= carried[0] <= carried[1] <= end_line:
        lo, hi = min(lo, carried[0]), max(hi, carried[1])
    if (lo, hi) != (start_line, end_line):
        found = term_lines()
        if found and not any(lo <= start_line + n <= hi for n in found):
            near = start_line + min(found, key=lambda n: min(abs(start_line + n - lo), abs(start_line + n - hi)))
            lo, hi = min(lo, near), max(hi, near)
    return lo, hi, "\n".join(lines[lo - start_line : hi - start_line + 1])


def budget_spans(
    hits: Iterable[tuple[str, int, int]], max_lines: int, max_results: int, free: Callable[[int], bool] = lambda i: False
) -> list[Span]:
    """Group ranked ``(path, start, end)`` hits into spans within ``max_lines``.

    A hit that overlaps or is adjacent to a span already taken joins it (the
    span grows to cover both, costing only the new lines); others start a
    new span. A hit that would pass the budget is skipped (greedy in rank
    order: later hits that fit are still taken; a hit inside a span taken
    costs nothing and joins it). Stops when ``max_results`` spans are taken
    and the next hit would start another; spans of ``free`` hits only (by
    their index in ``hits``) are not counted.
    """
    spans: list[Span] = []
    used = 0
    for i, (path, start, end) in enumerate(hits):
        joined = _touching(spans, path, start, end)
        if joined:
            lo = min(start, *(s.start_line for s in joined))
            hi = max(end, *(s.end_line for s in joined))
            cost = (hi - lo + 1) - sum(s.lines for s in joined)
            if used + cost > max_lines:
                continue
            keep = joined[0]  # the best-ranked of them keeps its place
            for other in joined[1:]:
                keep.members += other.members
                spans.remove(other)
            keep.start_line, keep.end_line = lo, hi
            keep.members = sorted([*keep.members, i])
            used += cost
            continue
        if sum(1 for s in spans if not all(free(m) for m in s.members)) >= max_results:
            break
        if used + (end - start + 1) > max_lines:
            continue
        spans.append(Span(path, start, end, [i]))
        used += end - start + 1
    return spans


def _touching(spans: list[Span], path: str, start: int, end: int) -> list[Span]:
    """Spans of ``path`` that overlap ``start..end`` or sit right next to it."""
    return [s for s in spans if s.path == path and s.start_line <= end + 1 and start <= s.end_line + 1]


def merged_text(pieces: list[tuple[int, int, str]]) -> str:
    """The text of lines ``min(start)..max(end)`` from overlapping chunks
    ``(start, end, text)`` that together cover them, each line once.

    A chunk normally holds one text line per file line; where it does not
    (transcript lines that share a number) the chunks are joined in line
    order instead, repeating their overlap rather than losing text.
    """
    by_line: dict[int, str] = {}
    for start, end, text in sorted(pieces):
        lines = text.split("\n")
        if len(lines) != end - start + 1:
            return "\n".join(t for _, _, t in sorted(pieces))
        for n, line in enumerate(lines, start=start):
            # A long line split across chunks: keep the longest piece seen.
            if len(line) > len(by_line.get(n, "")):
                by_line[n] = line
    return "\n".join(by_line.get(n, "") for n in range(min(by_line, default=0), max(by_line, default=-1) + 1))
