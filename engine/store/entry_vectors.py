"""Entry-level vector search, the same for every store (DESIGN.md §7).

An entry (a list item, a paragraph, a turn) has a vector of its own, and
a short text's vector says what that text says where a chunk's averages a
whole exchange. The stores keep entry vectors as float16 blobs beside the
entries; a search ranks the entries of its candidate chunks (the chunk
vector and keyword pools), so no store needs a vector index over entries
and a search costs the same at any size. Scanning every entry instead
(130,000 in a 20,000-chunk index) took longer than the rest of the search,
and a chunk-vector pool of 200 to draw entries from cost the same for
nothing on LoCoMo.

The vectors of a chunk's entries are read when a search first meets the
chunk, and kept until the store's data changes (the store's ``cached``):
reading every entry of an index up front cost a one-shot search 1.8 s and
40 MB at 8,000 chunks before it could answer.

Each entry is tied to the chunk of its file that holds it most centrally
(its lines inside the chunk's, the chunk's middle nearest the entry's), so
a hit on an entry is a candidate for that chunk and the search can cite
the entry's lines.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Sequence

from .base import EntryHit

if TYPE_CHECKING:
    import numpy as np

#: The entries with a vector that overlap some chunks, and every chunk of
#: their files (to find each entry's holder); both stores fill in their
#: own table names and ``{chunks_given}``, a condition on ``c.rowid``
#: naming the chunks (the query's one parameter).
ENTRIES_OF_CHUNKS_SQL = (
    "SELECT DISTINCT e.path, e.start_line, e.end_line, e.vector FROM {entries} e JOIN {chunks} c "
    "ON e.path = c.path AND e.start_line <= c.end_line AND e.end_line >= c.start_line WHERE e.vector IS NOT NULL AND {chunks_given}"
)
CHUNKS_OF_FILES_SQL = (
    "SELECT rowid, path, start_line, end_line FROM {chunks} WHERE path IN (SELECT c.path FROM {chunks} c WHERE {chunks_given})"
)

#: ``load(chunk rowids)``: the entries overlapping those chunks, ``(path,
#: start, end, float16 blob)``, and every chunk of their files, ``(rowid,
#: path, start, end)``.
Loader = Callable[[list[int]], tuple[Iterable[Sequence[Any]], Iterable[Sequence[Any]]]]


class EntryVectors:
    """The entry vectors of an index, read a chunk at a time as searches
    meet the chunks: normalised float16 rows, and the rows of each chunk's
    entries."""

    def __init__(self, load: Loader):
        self._load = load
        # Searches of several threads (an HTTP server's) share one store.
        self._lock = threading.Lock()
        self.paths: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.chunks: list[int] = []
        self.vectors: list[np.ndarray] = []
        #: Every chunk read so far, with the rows of the entries it holds
        #: (none for a chunk whose entries have no vector).
        self.rows: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self.paths)

    def _read(self, chunks: Collection[int]) -> None:
        """Read the entries of the ``chunks`` not met yet."""
        import numpy as np

        missing = [c for c in chunks if c not in self.rows]
        if not missing:
            return
        entries, chunk_rows = self._load(missing)
        holder = _Holders(chunk_rows)
        wanted = set(missing)
        for c in missing:
            self.rows[c] = []
        kept: dict[int, list[tuple[int, str, int, int, bytes]]] = {}  # by vector size
        for path, start, end, blob in entries:
            chunk = holder(path, int(start), int(end))
            # An entry held by a chunk not read now is read with that chunk.
            if blob is not None and chunk in wanted:
                kept.setdefault(len(blob), []).append((chunk, path, int(start), int(end), bytes(blob)))
        for rows in kept.values():
            matrix = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float16).reshape(len(rows), -1).astype(np.float32)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            # Kept as float16, as stored: half the memory.
            matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float16)
            for (chunk, path, start, end, _), vec in zip(rows, matrix):
                self.rows[chunk].append(len(self.paths))
                self.paths.append(path)
                self.starts.append(start)
                self.ends.append(end)
                self.chunks.append(chunk)
                self.vectors.append(vec)

    def search(self, query: np.ndarray, k: int, chunks: Iterable[int]) -> list[EntryHit]:
        """The ``k`` entries of ``chunks`` nearest ``query`` by cosine, best first."""
        import numpy as np

        wanted = list(dict.fromkeys(int(c) for c in chunks))
        if k <= 0 or query is None or not wanted:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return []
        with self._lock:
            self._read(wanted)
            rows = [r for chunk in wanted for r in self.rows.get(chunk, ()) if len(self.vectors[r]) == len(q)]
            if not rows:
                return []
            stacked = np.vstack([self.vectors[r] for r in rows])
        sims = stacked.astype(np.float32) @ (q / norm)
        k = min(k, len(rows))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [
            EntryHit(self.chunks[rows[i]], self.paths[rows[i]], self.starts[rows[i]], self.ends[rows[i]], float(sims[i]), stacked[i])
            for i in top
        ]


class _Holders:
    """The chunk that holds an entry most centrally: one whose lines hold
    all of the entry's if any does, else one that overlaps it; of those, the
    one whose middle is nearest the entry's."""

    def __init__(self, chunks: Iterable[Sequence[Any]]):
        self.by_path: dict[str, list[tuple[int, int, int]]] = {}
        for rowid, path, start, end in chunks:
            self.by_path.setdefault(path, []).append((int(start), int(end), int(rowid)))
        for spans in self.by_path.values():
            spans.sort()
        self.firsts = {path: [s for s, _, _ in spans] for path, spans in self.by_path.items()}

    def __call__(self, path: str, start: int, end: int) -> int | None:
        spans = self.by_path.get(path)
        if not spans:
            return None
        # Chunks are short and overlap at most their neighbours: the ones
        # that may hold the entry start at most a few places before it.
        at = bisect_right(self.firsts[path], end)
        near = [s for s in spans[max(0, at - 8) : at] if s[1] >= start]
        if not near:
            return None
        best = min(near, key=lambda s: (not (s[0] <= start and s[1] >= end), abs(s[0] + s[1] - start - end), s[2]))
        return best[2]
