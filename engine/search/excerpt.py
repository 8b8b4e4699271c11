"""What a hit shows: a snippet, and the best-matching line with its neighbours.

:func:`make_snippet` cuts a chunk to at most 700 characters from where the
window covers the most (IDF-weighted) query terms. A chunk can run to
dozens of lines; a face that shows its first few often hides the line that
matched. :func:`make_excerpt` picks the line that holds the most query terms
and keeps a few lines around it, each with its line number in the file, and
says whether lines of the chunk were left out before or after, so a face
can draw a marker there. Both take the term positions of
:func:`~..text.find_terms`, found once per hit.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from typing import Sequence

from ..text import find_terms, highlight_terms, safe_cut

SNIPPET_CHARS = 700
#: Characters of context shown before a hit that starts a snippet mid-line.
SNIPPET_LEAD = 80
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
    #: Matched the query: holds a query term, or is the line that carries
    #: the meaning of a hit found by meaning alone (faces mark it).
    hit: bool
    #: Why the line's entry no longer holds (``"superseded by PATH:LINE"``,
    #: ``"forgotten"``; DESIGN.md §17), None while it does. A search that
    #: leaves retired entries out empties ``text``.
    retired: str | None = None

    @property
    def shown(self) -> str:
        """The line as a face shows it: its text, or ``⋮`` and why it is
        left out, or its text and why it no longer holds."""
        if self.retired is None:
            return self.text
        return f"{self.text}  [{self.retired}]" if self.text else f"⋮ {self.retired}"


@dataclass(frozen=True)
class Excerpt:
    """A window of a chunk around its best-matching line."""

    best_line: int
    lines: tuple[ExcerptLine, ...]
    omitted_before: bool  # lines of the chunk precede the window
    omitted_after: bool  # lines of the chunk follow it

    def to_text(self) -> str:
        """The excerpt as plain text for agents and logs: each line with its
        file line number, ``>`` at the best-matching line and ``⋮`` where
        lines of the result are left out (the CLI shows the same layout)."""
        width = len(str(self.lines[-1].number)) if self.lines else 1
        gap = f"  {'⋮':>{width}}"
        out = [gap] if self.omitted_before else []
        for ln in self.lines:
            mark = ">" if ln.number == self.best_line and ln.hit else " "
            out.append(f"{mark} {ln.number:>{width}}  {ln.shown}".rstrip())
        if self.omitted_after:
            out.append(gap)
        return "\n".join(out)


def make_excerpt(
    text: str,
    start_line: int,
    terms: Sequence[str],
    weights: dict[str, float] | None = None,
    *,
    before: int = CONTEXT_BEFORE,
    after: int = CONTEXT_AFTER,
    found: dict[str, list[int]] | None = None,
    entry: tuple[int, int] | None = None,
) -> Excerpt:
    """The excerpt of a chunk whose first line is line ``start_line`` of its
    file. ``entry``: the lines (0-based in ``text``, inclusive) of the
    entry that answers (:mod:`.judging`): the best line is its line that
    holds the most query terms, else its first, and is marked. Without an
    entry, the line of the chunk that holds the most; without a term in
    any line, the window is the chunk's first lines, none marked.
    ``found``: :func:`~..text.find_terms` of ``text`` for (at least)
    ``terms``, when the caller has it."""
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
    if entry is not None and 0 <= entry[0] <= entry[1] < len(lines):
        inside = [i for i in values if entry[0] <= i <= entry[1] and values[i] > 0]
        best = max(inside, key=lambda i: (values[i], -i)) if inside else entry[0]
        values = {**values, best: values.get(best) or 1.0}
        lo, hi = max(0, best - before), min(len(lines), best + after + 1)
    elif not values or values[best] <= 0:
        best, lo, hi = 0, 0, min(len(lines), before + after + 1)
    else:
        lo, hi = max(0, best - before), min(len(lines), best + after + 1)
    out = tuple(ExcerptLine(start_line + i, _cut(lines[i], firsts.get(i)), values.get(i, 0) > 0) for i in range(lo, hi))
    return Excerpt(start_line + best, out, lo > 0, hi < len(lines))


def _cut(line: str, first_hit: int | None) -> str:
    """``line`` cut to LINE_CHARS, keeping its first hit in view."""
    if len(line) <= LINE_CHARS:
        return line
    start = 0 if first_hit is None or first_hit < LINE_CHARS // 2 else first_hit - LINE_CHARS // 4
    head = "…" if start else ""
    return head + safe_cut(line[start:], LINE_CHARS) + "…"


def make_snippet(
    text: str,
    terms: Sequence[str],
    limit: int = SNIPPET_CHARS,
    weights: dict[str, float] | None = None,
    *,
    found: dict[str, list[int]] | None = None,
) -> str:
    """At most ``limit`` characters of ``text``, from where the window covers
    the most query terms (:func:`snippet_window`)."""
    return snippet_window(text, terms, limit, weights, found=found)[1]


def snippet_window(
    text: str,
    terms: Sequence[str],
    limit: int = SNIPPET_CHARS,
    weights: dict[str, float] | None = None,
    *,
    found: dict[str, list[int]] | None = None,
) -> tuple[int, str]:
    """(where in ``text`` the snippet starts, the snippet): at most ``limit``
    characters of ``text``, from where the window covers the most query
    terms, each weighted (e.g. by IDF, so "fusion" counts more than "what").
    Windows start at a line, or inside a line too long to show whole, a
    little before a hit; on a tie the earlier line start wins. ``found``:
    :func:`~..text.find_terms` of ``text`` and ``terms``, when the caller
    has it."""
    if len(text) <= limit:
        return 0, text
    if found is None:
        found = find_terms(text, terms)
    # The window at the start covers every term found: the best, and the
    # first start wins ties.
    if all(at[-1] < limit for at in found.values()):
        return 0, safe_cut(text, limit)
    w = weights or {}
    hits = [(at, t) for t, ats in found.items() for at in ats]
    lines = text.split("\n")
    starts = list(accumulate([len(line) + 1 for line in lines[:-1]], initial=0))
    if len(starts) > 1 and starts[-1] >= len(text):  # no window starts at the very end
        starts.pop()
    # A hit deep inside a long line: also try starting at a word boundary
    # shortly before it.
    if max(map(len, lines)) > limit - SNIPPET_LEAD:
        for p, _ in hits:
            line_start = text.rfind("\n", 0, p) + 1
            if p - line_start > limit - SNIPPET_LEAD:
                cut = text.rfind(" ", line_start, max(line_start, p - SNIPPET_LEAD)) + 1
                starts.append(max(cut, line_start))
    by_pos = sorted(hits)
    positions = [p for p, _ in by_pos]
    # The weights of a window's terms are added in the query's order: one
    # order for every window, so equal coverage is an exact tie, and no
    # window can beat one that covers every term found (a subset's sum in
    # the same order is never larger).
    most = sum(w.get(t, 1.0) for t in found)
    best_start, best_value = 0, -1.0
    seen = (-1, -1)
    for start in starts:
        span = (bisect_left(positions, start), bisect_left(positions, start + limit))
        if span == seen:  # the same hits as the window before: the same value
            continue
        seen = span
        covered = {t for _, t in by_pos[span[0] : span[1]]}
        value = sum(w.get(t, 1.0) for t in found if t in covered)
        if value > best_value:
            best_start, best_value = start, value
            if value >= most:
                break
    return best_start, safe_cut(text[best_start:], limit)
