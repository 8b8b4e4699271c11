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
#: naming the chunks (the query's one parameter). Per chunk, a range seek
#: in the entries' (path, start_line) index from the entry holding the
#: chunk's first line to its last line (a file's entries do not overlap),
#: as the stores' ``within``; an entry two chunks share comes twice.
ENTRIES_OF_CHUNKS_SQL = (
    "SELECT e.path, e.start_line, e.end_line, e.vector FROM {chunks} c JOIN {entries} e ON e.path = c.path AND e.start_line BETWEEN "
    "coalesce((SELECT max(f.start_line) FROM {entries} f WHERE f.path = c.path AND f.start_line <= c.start_line), c.start_line) "
    "AND c.end_line WHERE e.end_line >= c.start_line AND e.vector IS NOT NULL AND {chunks_given}"
)
CHUNKS_OF_FILES_SQL = (
    "SELECT rowid, path, start_line, end_line FROM {chunks} WHERE path IN (SELECT c.path FROM {chunks} c WHERE {chunks_given})"
)

#: ``load(chunk rowids)``: the entries overlapping those chunks, ``(path,
#: start, end, float16 blob)`` (an entry may come more than once), and
#: every chunk of their files, ``(rowid, path, start, end)``.
Loader = Callable[[list[int]], tuple[Iterable[Sequence[Any]], Iterable[Sequence[Any]]]]


class EntryVectors:
    """The entry vectors of an index, read a chunk at a time as searches
    meet the chunks: normalised float16 rows, one matrix per vector size,
    and the rows of each chunk's entries."""

    def __init__(self, load: Loader):
        self._load = load
        # Searches of several threads (an HTTP server's) share one store.
        self._lock = threading.Lock()
        self._holders = _Holders()
        self._blocks: dict[int, _Block] = {}  # by dimensions
        #: Every chunk read so far, with the rows of the entries it holds
        #: in each vector size's block (none for a chunk whose entries
        #: have no vector).
        self.rows: dict[int, dict[int, np.ndarray]] = {}

    def __len__(self) -> int:
        return sum(len(b) for b in self._blocks.values())

    def _read(self, chunks: Collection[int]) -> None:
        """Read the entries of the ``chunks`` not met yet."""
        import numpy as np

        missing = [c for c in chunks if c not in self.rows]
        if not missing:
            return
        entries, chunk_rows = self._load(missing)
        holder = self._holders
        holder.add(chunk_rows)
        wanted = set(missing)
        kept: dict[int, dict[tuple[str, int, int, bytes], int]] = {}  # by vector size: entry -> its chunk
        for path, start, end, blob in entries:
            if blob is None:
                continue
            blob = bytes(blob)
            key = (path, int(start), int(end), blob)
            by_size = kept.setdefault(len(blob), {})
            if key in by_size:
                continue
            chunk = holder(path, key[1], key[2])
            # An entry held by a chunk not read now is read with that chunk.
            by_size[key] = chunk if chunk in wanted else -1
        found: dict[int, dict[int, list[np.ndarray]]] = {}
        for size, by_entry in kept.items():
            held = sorted((chunk, key) for key, chunk in by_entry.items() if chunk >= 0)
            if not held:
                continue
            dims = size // 2
            block = self._blocks.get(dims)
            if block is None:
                block = self._blocks[dims] = _Block(dims)
            first = block.add([key for _, key in held], [chunk for chunk, _ in held])
            chunk_ids = np.fromiter((chunk for chunk, _ in held), dtype=np.int64, count=len(held))
            # ``held`` is sorted by chunk: each chunk's rows are one run.
            bounds = np.flatnonzero(np.diff(chunk_ids)) + 1
            for run in np.split(np.arange(first, first + len(held)), bounds):
                found.setdefault(int(chunk_ids[run[0] - first]), {})[dims] = run
        for c in missing:
            self.rows[c] = {dims: rows for dims, rows in found.get(c, {}).items()}

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
        dims = len(q)
        with self._lock:
            self._read(wanted)
            block = self._blocks.get(dims)
            runs = [r for r in (self.rows[c].get(dims) for c in wanted) if r is not None]
            if block is None or not runs:
                return []
            rows = np.concatenate(runs)
            stacked = block.vectors[rows]
        sims = stacked.astype(np.float32) @ (q / norm)
        k = min(k, len(rows))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [block.hit(int(rows[i]), float(sims[i])) for i in top]


class _Block:
    """The entries of one vector size: a float16 matrix of their normalised
    vectors, grown by doubling, and each row's chunk and lines."""

    def __init__(self, dims: int):
        import numpy as np

        self.vectors = np.empty((0, dims), dtype=np.float16)
        self.count = 0
        self.chunks: list[int] = []
        self.paths: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def __len__(self) -> int:
        return self.count

    def add(self, entries: list[tuple[str, int, int, bytes]], chunks: list[int]) -> int:
        """Append ``entries`` (path, start, end, float16 blob) held by
        ``chunks``; returns the first new row."""
        import numpy as np

        dims = self.vectors.shape[1]
        matrix = np.frombuffer(b"".join(e[3] for e in entries), dtype=np.float16).reshape(len(entries), dims).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms > 0, norms, 1.0)
        first, end = self.count, self.count + len(entries)
        if end > len(self.vectors):
            grown = np.empty((max(end, 2 * len(self.vectors), 256), dims), dtype=np.float16)
            grown[:first] = self.vectors[:first]
            self.vectors = grown
        # Kept as float16, as stored: half the memory.
        self.vectors[first:end] = matrix
        self.count = end
        self.chunks += chunks
        for path, start, stop, _ in entries:
            self.paths.append(path)
            self.starts.append(start)
            self.ends.append(stop)
        return first

    def hit(self, row: int, similarity: float) -> EntryHit:
        return EntryHit(self.chunks[row], self.paths[row], self.starts[row], self.ends[row], similarity)


class _Holders:
    """The chunk that holds an entry most centrally: one whose lines hold
    all of the entry's if any does, else one that overlaps it; of those, the
    one whose middle is nearest the entry's."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[tuple[int, int, int]]] = {}
        self.firsts: dict[str, list[int]] = {}

    def add(self, chunks: Iterable[Sequence[Any]]) -> None:
        """Learn the chunks of files not met yet (``chunks``: every chunk of
        some files, ``(rowid, path, start, end)``)."""
        new: dict[str, list[tuple[int, int, int]]] = {}
        for rowid, path, start, end in chunks:
            if path not in self.by_path:
                new.setdefault(path, []).append((int(start), int(end), int(rowid)))
        for path, spans in new.items():
            spans.sort()
            self.by_path[path] = spans
            self.firsts[path] = [s for s, _, _ in spans]

    def __call__(self, path: str, start: int, end: int) -> int | None:
        spans = self.by_path.get(path)
        if not spans:
            return None
        # Chunks are short and overlap at most their neighbours: the ones
        # that may hold the entry start at most a few places before it.
        at = bisect_right(self.firsts[path], end)
        near = [s for s in spans[max(0, at - 8) : at] if s[1] >= start]
        if len(near) < 2:
            return near[0][2] if near else None
        best = min(near, key=lambda s: (not (s[0] <= start and s[1] >= end), abs(s[0] + s[1] - start - end), s[2]))
        return best[2]
