"""The entries that superseded a hit's retired entries, brought in beside
it (DESIGN.md §17).

A superseded entry keeps its text and its place; the entry that replaced
it (``by=``) may sit in another chunk or another file and share no word
with the old one's questions ("where is the wifi password?" after "Router
credentials now live in the team vault." replaced "The office wifi
password is on the fridge."). Judged beside its predecessor, the new
entry takes the old one's evidence (:mod:`.judging`), so the question
finds it; a successor that answers nothing is not shown
(:func:`~.pipeline.run_search`).
"""

from __future__ import annotations

from typing import Iterator

from ..store import ChunkRow, IndexStore
from .fusion import Candidate
from .judging import FileMarks, Marks


def with_successors(
    stream: Iterator[Candidate],
    store: IndexStore,
    rows: dict[int, ChunkRow],
    cands: dict[int, Candidate],
    marks: Marks,
    min_score: float,
    pulled: set[int],
) -> Iterator[Candidate]:
    """``stream``, each hit preceded by the chunks of the entries that
    superseded the retired entries it holds (``by=``, DESIGN.md §17), each
    chunk once: judged with it, a successor takes the evidence of the entry
    it replaced (:mod:`.judging`), so the questions the old entry answered
    find the new one in whatever chunk or file it sits. A successor that
    was no candidate comes with its predecessor's score; one that would not
    have been shown on its own (no candidate, or below ``min_score``) is
    added to ``pulled``."""
    seen: set[int] = set()
    for c in stream:
        if c.rowid in seen:
            continue
        seen.add(c.rowid)
        # The successors come first: a caller that stops at this hit has them.
        # A successor replaced in turn brings its own (a chain of supersedes
        # ends at the entry that holds now).
        queue = [rows[c.rowid]]
        while queue:
            row = queue.pop(0)
            for path, line in _successors(marks(row.source, row.path), row):
                found = store.chunk_at(path, line)
                if found is None or found.rowid in seen:
                    continue
                seen.add(found.rowid)
                rows[found.rowid] = found
                queue.append(found)
                known = cands.get(found.rowid)
                if known is None or known.score < min_score:
                    pulled.add(found.rowid)
                yield known or Candidate(found.rowid, score=c.score)
        yield c


def _successors(marks: FileMarks, row: ChunkRow) -> list[tuple[str, int]]:
    """(path, first line) of each entry named by ``by=`` on a retired entry
    of ``row``'s lines."""
    bys = [by for at, by in marks.blocks.items() if by and row.start_line <= at <= row.end_line]
    bys += [by for a, b, by in marks.sections if by and a <= row.end_line and row.start_line <= b]
    out = []
    for by in bys:
        path, _, lines = by.rpartition(":")
        first = lines.partition("-")[0]
        if path and first.isdigit():
            out.append((path, int(first)))
    return out
