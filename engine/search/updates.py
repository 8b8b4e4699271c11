"""Knowledge updates: the newer of two notes on one subject first (DESIGN.md §7).

Notes revise each other ("vendor quote 2,400 EUR", later "negotiated down
to 2,150 EUR"); both match a question about the price, and the older,
shorter one often scores a little higher. Among the hits a search shows,
a newer one about the same subject moves above an older one it nearly
ties with. Nothing is added or dropped, so an old note that is the only
match, or clearly the best, keeps its place; a query that names a time
("in March") is left as ranked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..store import ChunkRow
    from .citing import TermsFound
    from .results import SearchResult

#: Two hits about one subject whose scores differ by at most this are
#: ranked newer first: a later note that revises a fact ("negotiated down
#: to 2,150 EUR") beats the one it replaces, while an old note that is
#: clearly the better match keeps its place.
UPDATE_MARGIN = 0.15


def newer_first(
    cues: Sequence[object], results: list["SearchResult"], found: "TermsFound", rows: dict[int, "ChunkRow"], rowids: Sequence[int]
) -> list["SearchResult"]:
    """``results`` with knowledge updates applied: where a hit is followed
    by a newer one (a later date, or a later line of the same file) about
    the same subject (they hold the same content terms of the query)
    within :data:`UPDATE_MARGIN` of its score, the newer moves up
    (``rowids``: each result's chunk, in order). Nothing is added or dropped, so an old note that is the only
    match stays. A query with time ``cues`` is left as ranked: the notes
    of that time are what it asks for. A result moved above one with a
    higher score says so (``reordered = "newer"``): its place no longer
    follows the score printed beside it."""
    if len(results) < 2 or cues:
        return results
    subjects = [_subject(found, rows.get(r)) for r in rowids[: len(results)]]
    order = list(range(len(results)))
    changed = True
    while changed:
        changed = False
        for i in range(len(order) - 1):
            a, b = results[order[i]], results[order[i + 1]]
            sa, sb = subjects[order[i]], subjects[order[i + 1]]
            if sa and sa == sb and a.score - b.score <= UPDATE_MARGIN and _newer(b, a) and b.confident:
                order[i], order[i + 1] = order[i + 1], order[i]
                changed = True
    for place, i in enumerate(order):
        if place < i and any(results[j].score > results[i].score for j in order[place + 1 :]):
            results[i].reordered = "newer"
    return [results[i] for i in order]


def _subject(found: "TermsFound", row: "ChunkRow | None") -> frozenset[str]:
    """The content terms a hit holds (the subject it shares with another)."""
    return frozenset(found(row)) if row is not None else frozenset()


def _newer(b: "SearchResult", a: "SearchResult") -> bool:
    """``b`` was written after ``a``: a later date, or, undated or on the
    same day in the same file, a later line (notes are appended)."""
    if a.date and b.date and a.date != b.date:
        return b.date > a.date
    return a.path == b.path and b.start_line > a.end_line
