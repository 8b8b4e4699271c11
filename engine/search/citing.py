"""What a shown hit cites and where the query's terms are in it.

:class:`Citer` gives a hit the lines it owns (:func:`.spans.hit_lines`),
reading its neighbours from the store; :class:`TermsFound` finds the query
terms once per chunk for its citation, snippet and excerpt.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..store import ChunkRow, IndexStore
from ..text import find_terms, found_in_lines
from .spans import hit_lines
from .stems import with_stems


class TermsFound:
    """Where the query terms occur in each chunk a search shows, as words or
    by stem as the index matched them (:func:`~.stems.with_stems`), found
    once per chunk for its citation, snippet and
    excerpt alike."""

    def __init__(self, terms: Sequence[str]):
        self.terms = terms
        self._by_rowid: dict[int, dict[str, list[int]]] = {}

    def __call__(self, row: ChunkRow) -> dict[str, list[int]]:
        found = self._by_rowid.get(row.rowid)
        if found is None:
            found = self._by_rowid[row.rowid] = with_stems(row.text, self.terms, find_terms(row.text, self.terms))
        return found

    def in_lines(self, row: ChunkRow, first: int, text: str) -> dict[str, list[int]]:
        """The terms found in ``text``, the lines of ``row`` from its line
        ``first`` (0-based) on, with offsets in ``text``. No term spans a
        line break, so these are the matches a search of ``text`` itself
        finds."""
        return found_in_lines(row.text, self(row), first, text)


class Citer:
    """The lines a hit on a chunk cites (:func:`.spans.hit_lines`),
    with its neighbours' lines read from the store: those of the likely
    results in one query, any other's when first needed. ``sent``: the
    query terms the keyword search looked for."""

    def __init__(self, store: IndexStore, sent: Sequence[str], likely: Iterable[int], found: TermsFound):
        self.store = store
        self.sent = sent
        self.found = found
        self.neighbours = store.chunk_neighbours(list(likely))

    def __call__(self, row: ChunkRow, *, keyword_hit: bool, carried: tuple[int, int] | None = None) -> tuple[int, int, str]:
        """``(start, end, text)`` cited for a hit on ``row``; ``keyword_hit``:
        its words carried it (:func:`~.fusion.carried_by_words`; then they
        stay in view);
        ``carried``: the lines of the entries that found it by their vectors."""
        if row.rowid not in self.neighbours:
            self.neighbours.update(self.store.chunk_neighbours([row.rowid]))
        sent = self.sent

        def term_lines() -> list[int]:
            if not keyword_hit or not sent:  # carried by meaning: no term to keep in view
                return []
            found = find_terms(row.text, sent)
            return sorted({row.text.count("\n", 0, at) for t in sent for at in found.get(t, ())})

        return hit_lines(row.start_line, row.end_line, row.text, self.neighbours.get(row.rowid, (None, None)), term_lines, carried)
