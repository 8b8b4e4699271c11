"""The lines of a hit worth showing: the best-matching line and its neighbours.

A chunk can run to dozens of lines; a face that shows its first few often
hides the line that matched. :func:`make_excerpt` picks the line that holds
the most (IDF-weighted) query terms and keeps a few lines around it, each
with its line number in the file, and says whether lines of the chunk were
left out before or after, so a face can draw a marker there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .text import find_terms, highlight_terms, safe_cut

#: Lines shown before and after the best line.
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 3
#: Longer lines are cut (around their first hit for the best line).
LINE_CHARS = 240


@dataclass(frozen=True)
class ExcerptLine:
    """One line of an excerpt: its 1-based number in the file and its text."""

    number: int
    text: str
    hit: bool  # holds a query term


@dataclass(frozen=True)
class Excerpt:
    """A window of a chunk around its best-matching line."""

    best_line: int
    lines: tuple[ExcerptLine, ...]
    omitted_before: bool  # lines of the chunk precede the window
    omitted_after: bool  # lines of the chunk follow it


def make_excerpt(
    text: str,
    start_line: int,
    terms: Sequence[str],
    weights: dict[str, float] | None = None,
    *,
    before: int = CONTEXT_BEFORE,
    after: int = CONTEXT_AFTER,
    found: dict[str, list[int]] | None = None,
) -> Excerpt:
    """The excerpt of a chunk whose first line is line ``start_line`` of its
    file. Without a term in any line (a purely semantic hit) the window is
    the chunk's first lines. ``found``: :func:`~.text.find_terms` of
    ``text`` for (at least) ``terms``, when the caller has it."""
    lines = text.split("\n")
    shown = highlight_terms(list(terms)) or list(terms)
    if found is None:
        found = find_terms(text, shown)
    w = weights or {}
    # Only lines holding a term get a value: the weights of their terms,
    # added in the order of ``shown``; and the offset of their first hit.
    values: dict[int, float] = {}
    firsts: dict[int, int] = {}
    for t in shown:
        weight = w.get(t, 1.0)
        line, line_start, prev = -1, 0, 0
        for at in found.get(t, ()):  # ascending; no term spans a newline
            newlines = text.count("\n", prev, at)
            prev = at
            if not newlines and line >= 0:
                continue  # the term's line before: counted once
            line += newlines + (line < 0)
            line_start = text.rfind("\n", 0, at) + 1
            values[line] = values.get(line, 0) + weight
            pos = at - line_start
            firsts[line] = min(pos, firsts.get(line, pos))
    best = max(values, key=lambda i: (values[i], -i)) if values else 0
    if not values or values[best] <= 0:
        best, lo, hi = 0, 0, min(len(lines), before + after + 1)
    else:
        lo, hi = max(0, best - before), min(len(lines), best + after + 1)
    out = tuple(
        ExcerptLine(start_line + i, _cut(lines[i], firsts.get(i)), values.get(i, 0) > 0) for i in range(lo, hi)
    )
    return Excerpt(start_line + best, out, lo > 0, hi < len(lines))


def _cut(line: str, first_hit: int | None) -> str:
    """``line`` cut to LINE_CHARS, keeping its first hit in view."""
    if len(line) <= LINE_CHARS:
        return line
    start = 0 if first_hit is None or first_hit < LINE_CHARS // 2 else first_hit - LINE_CHARS // 4
    head = "…" if start else ""
    return head + safe_cut(line[start:], LINE_CHARS) + "…"
