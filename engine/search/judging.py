"""Which entry of a hit answers the query, and how sure search is of it
(DESIGN.md §7).

A chunk holds several entries (list items, paragraphs, turns); a name
shared by many of them must not decide which one answers. The entries the
judged hits' cited lines overlap are read from the index once
(:meth:`~..store.IndexStore.entries_within`), each judged by
:class:`~.confidence.Judge` on its own cosine and words (one product and
one pass over them all); a hit's best live entry is the hit's: its
confidence is the hit's, its line is the one marked. Lines no stored entry
covers (an index made before entries were kept, a heading alone) are
judged as one entry with the chunk's cosine. A superseded entry hands its
evidence to the entry that replaced it (DESIGN.md §17).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple, Sequence

from ..store import ChunkRow, EntryRow, IndexStore
from ..vector_math import float16_table
from .citing import TermsFound
from .confidence import Evidence, Judge

if TYPE_CHECKING:
    import numpy as np


class Judged(NamedTuple):
    """A hit's best entry: its evidence and its lines (clipped to the
    hit's cited lines, 1-based), and every entry judged as (first line,
    last line, evidence), for ``explain`` (empty unless asked)."""

    evidence: Evidence
    start: int
    end: int
    entries: tuple[tuple[int, int, Evidence], ...] = ()

    @property
    def confidence(self) -> float:
        return self.evidence.confidence


class Hit(NamedTuple):
    """What judging needs of a hit: its chunk, the lines it cites
    (``start``, ``end``) and the chunk's cosine to the query."""

    row: ChunkRow
    start: int
    end: int
    cosine: float | None


class FileMarks(NamedTuple):
    """The retired entries of one file as it says now (DESIGN.md §17): the
    first lines of forgotten or superseded blocks, and the retired
    sections, each with the citation of the entry that superseded it
    (``by=``, None when forgotten)."""

    blocks: Mapping[int, str | None]
    sections: tuple[tuple[int, int, str | None], ...] = ()

    def state(self, start: int, end: int) -> tuple[bool, str | None]:
        """(retired, by) of the entry at ``start``..``end``."""
        if start in self.blocks:
            return True, self.blocks[start]
        for a, b, by in self.sections:
            if a <= start and end <= b:
                return True, by
        return False, None


NO_MARKS = FileMarks({})
#: The marks of a file by (source, path).
Marks = Callable[[str, str], FileMarks]


class _Entry(NamedTuple):
    path: str
    start: int
    end: int
    stems: str | None  # None: the hit's own lines, judged by its terms found
    held: tuple[str, ...]


def judge_hits(
    store: IndexStore,
    judge: Judge,
    hits: Sequence[Hit],
    query_vector: np.ndarray | None,
    found: TermsFound,
    marks: Marks | None = None,
    explain: bool = False,
    retired_too: bool = False,
) -> list[Judged]:
    """The best entry of each hit (see the module docstring): its best live
    entry (``marks`` says which are retired), a retired one only when it
    has no other; with ``retired_too`` (a search that shows retired
    entries) the best of all, each judged on its own."""
    if not hits:
        return []
    stored = store.entries_within(_spans(hits))
    entries = [_Entry(e.path, e.start_line, e.end_line, e.stems, ()) for e in stored]
    cosines = _cosines(stored, query_vector)
    members = _members(hits, stored)
    for i, (h, mine) in enumerate(zip(hits, members)):
        if not mine:  # no stored entry: the cited lines are one entry, judged by the chunk's cosine
            first = h.start - h.row.start_line
            text = "\n".join(h.row.text.split("\n")[first : h.end - h.row.start_line + 1])
            members[i] = [len(entries)]
            entries.append(_Entry(h.row.path, h.start, h.end, None, tuple(found.in_lines(h.row, first, text))))
            cosines.append(h.cosine)
    # A few dozen entries: plain floats cost less than numpy's calls.
    sem = _semantic(cosines, judge.null)
    cov = judge.coverages_of([e.stems or "" for e in entries])
    for i, e in enumerate(entries):
        if e.stems is None:
            cov[i] = judge.coverage(None, e.held)
    exact = [0.0] * len(entries)
    if judge.ids or judge.phrases:
        texts = _texts(hits, members, entries)
        exact = [judge.exact(texts.get(i, "")) for i in range(len(entries))]
    hit_p = judge.confidences(sem, cov, exact)
    # The answer's confidence breaks ties and is shown for the best entry
    # of each hit: reckoned only where it is asked for.
    answers: dict[int, float] = {}

    def answer(i: int) -> float:
        if i not in answers:
            answers[i] = judge.confidences([sem[i]], [cov[i]], [exact[i]], "answer")[0]
        return answers[i]

    states = _states(entries, hits, marks)
    if not retired_too:  # a search that shows retired entries judges each on its own
        _hand_over(entries, states, hit_p, answer, answers)

    def evidence(i: int) -> Evidence:
        s = sem[i]
        return Evidence(None if s is None else round(s, 6), round(cov[i], 6), exact[i], round(judge.missing, 6), hit_p[i], answer(i))

    out = []
    for h, mine in zip(hits, members):
        live = mine if retired_too else [i for i in mine if not states[i][0]] or mine
        top = max(hit_p[i] for i in live)
        tied = [i for i in live if hit_p[i] == top]
        best = tied[0] if len(tied) == 1 else max(tied, key=lambda i: (answer(i), -entries[i].start))
        shown = tuple((entries[i].start, entries[i].end, evidence(i)) for i in mine) if explain else ()
        out.append(Judged(evidence(best), max(entries[best].start, h.start), min(entries[best].end, h.end), shown))
    return out


def _spans(hits: Sequence[Hit]) -> list[tuple[str, int, int]]:
    """The hits' cited lines, those of one file that overlap merged: each
    stored entry is read once."""
    by_path: dict[str, list[tuple[int, int]]] = {}
    for h in hits:
        by_path.setdefault(h.row.path, []).append((h.start, h.end))
    spans = []
    for path, ranges in by_path.items():
        ranges.sort()
        lo, hi = ranges[0]
        for a, b in ranges[1:]:
            if a <= hi + 1:
                hi = max(hi, b)
            else:
                spans.append((path, lo, hi))
                lo, hi = a, b
        spans.append((path, lo, hi))
    return spans


def _cosines(stored: Sequence[EntryRow], query_vector: np.ndarray | None) -> list[float | None]:
    """Each entry's cosine to the query (None without a vector of its
    size): one product over them all."""
    out: list[float | None] = [None] * len(stored)
    if query_vector is None:
        return out
    import numpy as np

    size = len(query_vector)
    have, vectors = [], []
    for i, e in enumerate(stored):
        if e.vector is not None and len(e.vector) == size:
            have.append(i)
            vectors.append(e.vector)
    if have:
        if all(v.dtype == np.float16 for v in vectors):
            # float16 to float32 by table, the halves joined as bytes:
            # numpy's own stacking and cast of a few dozen vectors cost
            # more than the product.
            bits = np.frombuffer(b"".join([v.data for v in vectors]), dtype=np.uint16).reshape(len(vectors), size)
            matrix = float16_table().take(bits)
        else:
            matrix = np.array(vectors, dtype=np.float32)
        for i, c in zip(have, (matrix @ np.asarray(query_vector, dtype=np.float32)).tolist()):
            out[i] = c
    return out


def _semantic(cosines: Sequence[float | None], null: float | None) -> list[float | None]:
    """:func:`~.confidence.semantic` of each cosine, in one pass."""
    if null is None:
        return [None] * len(cosines)
    scale = max(1e-6, 1.0 - null)
    return [None if c is None else max(-1.0, min(1.0, (c - null) / scale)) for c in cosines]


def _members(hits: Sequence[Hit], stored: Sequence[EntryRow]) -> list[list[int]]:
    """The indexes of the stored entries each hit's cited lines overlap
    (``stored`` is in file and line order)."""
    by_path: dict[str, list[int]] = {}
    for i, e in enumerate(stored):
        by_path.setdefault(e.path, []).append(i)
    starts = {p: [stored[i].start_line for i in ix] for p, ix in by_path.items()}
    out = []
    for h in hits:
        ix = by_path.get(h.row.path, [])
        upto = bisect_right(starts.get(h.row.path, []), h.end)
        out.append([i for i in ix[:upto] if stored[i].end_line >= h.start])
    return out


def _texts(hits: Sequence[Hit], members: list[list[int]], entries: Sequence[_Entry]) -> dict[int, str]:
    """Each entry's text as its hit's chunk holds it (for an exact match)."""
    texts: dict[int, str] = {}
    for h, mine in zip(hits, members):
        lines = h.row.text.split("\n")
        for i in mine:
            if i not in texts:
                lo, hi = max(entries[i].start, h.row.start_line), min(entries[i].end, h.row.end_line)
                texts[i] = "\n".join(lines[lo - h.row.start_line : hi - h.row.start_line + 1])
    return texts


def _states(entries: Sequence[_Entry], hits: Sequence[Hit], marks: Marks | None) -> list[tuple[bool, str | None]]:
    live = (False, None)
    if marks is None:
        return [live] * len(entries)
    source = {h.row.path: h.row.source for h in hits}
    files: dict[str, FileMarks | None] = {}
    out = []
    for e in entries:
        if e.path not in files:
            got = marks(source.get(e.path, "memory"), e.path)
            files[e.path] = got if got.blocks or got.sections else None  # most files retire nothing
        file = files[e.path]
        out.append(live if file is None else file.state(e.start, e.end))
    return out


def _hand_over(
    entries: Sequence[_Entry],
    states: Sequence[tuple[bool, str | None]],
    hit_p: list[float],
    answer: Callable[[int], float],
    answers: dict[int, float],
) -> None:
    """A superseded entry's evidence goes to the entry that replaced it
    (``by=``) when that one is judged too and has less: a question the old
    entry answers, the new one answers now ("what does Ines drink?" after
    "Ines switched to black coffee" superseded "Ines drinks green tea").
    ``answer(i)``: entry ``i``'s answer confidence, kept in ``answers``."""
    for i, (retired, by) in enumerate(states):
        if not retired or not by or ":" not in by:
            continue
        path, _, lines = by.rpartition(":")
        first, _, last = lines.partition("-")
        if not first.isdigit():
            continue
        a, b = int(first), int(last) if last.isdigit() else int(first)
        for j, e in enumerate(entries):
            if e.path == path and e.start <= b and a <= e.end and hit_p[j] < hit_p[i]:
                hit_p[j], answers[j] = hit_p[i], max(answer(i), answer(j))
