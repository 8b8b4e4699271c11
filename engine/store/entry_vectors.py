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
40 MB at 8,000 chunks before it could answer. A search reads the entries
of all the chunks it meets for the first time in one query, and a file's
chunk lines (to find each entry's holder) only the first time. A long
process could read the whole index in the background instead; that
costs 0.6 s of CPU and 64 MB at 4,000 chunks, 5.3 s and 380 MB at
41,000, mostly for entries no search meets, and would take the
interpreter from the searches it runs beside.

Each entry is tied to the chunk of its file that holds it most centrally
(its lines inside the chunk's, the chunk's middle nearest the entry's), so
a hit on an entry is a candidate for that chunk and the search can cite
the entry's lines.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Sequence

from ..vector_math import float16_table
from .base import EntryHit

if TYPE_CHECKING:
    import numpy as np

#: The entries with a vector that overlap some chunks; both stores fill in
#: their own table names and ``{chunks_given}``, a condition on ``c.rowid``
#: naming the chunks (the query's one parameter). Per chunk, a range seek
#: in the entries' (path, start_line) index from the entry holding the
#: chunk's first line to its last line (a file's entries do not overlap),
#: as the stores' ``within``; an entry two chunks share comes twice.
ENTRIES_OF_CHUNKS_SQL = (
    "SELECT e.path, e.start_line, e.end_line, e.vector FROM {chunks} c JOIN {entries} e ON e.path = c.path AND e.start_line BETWEEN "
    "coalesce((SELECT max(f.start_line) FROM {entries} f WHERE f.path = c.path AND f.start_line <= c.start_line), c.start_line) "
    "AND c.end_line WHERE e.end_line >= c.start_line AND e.vector IS NOT NULL AND {chunks_given}"
)
#: Every chunk of some files (to find each entry's holder), ``{paths_given}``
#: a condition on ``path`` naming them.
CHUNKS_OF_FILES_SQL = "SELECT rowid, path, start_line, end_line FROM {chunks} WHERE {paths_given}"

#: ``load(chunk rowids, files known)``: the entries overlapping those
#: chunks, ``(path, start, end, float16 blob)`` (an entry may come more
#: than once), and every chunk of their files but the ones known,
#: ``(rowid, path, start, end)``: a file's chunks are read once.
Loader = Callable[[list[int], Collection[str]], tuple[Iterable[Sequence[Any]], Iterable[Sequence[Any]]]]


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
        entries, chunk_rows = self._load(missing, self._holders.by_path.keys())
        self._holders.add(chunk_rows)
        # An entry two chunks share comes twice; one of a file's entries has
        # its own lines.
        unique = {(path, int(start), int(end)): blob for path, start, end, blob in entries if blob is not None}
        by_size: dict[int, list[tuple[str, int, int, bytes]]] = {}
        for (path, start, end), blob in unique.items():
            blob = bytes(blob)
            by_size.setdefault(len(blob), []).append((path, start, end, blob))
        wanted = set(missing)
        found: dict[int, dict[int, np.ndarray]] = {}
        for size, group in by_size.items():
            holders = self._holders.of([e[0] for e in group], [e[1] for e in group], [e[2] for e in group])
            # An entry held by a chunk not read now is read with that chunk.
            keep = np.array([i for i, h in enumerate(holders.tolist()) if h in wanted], dtype=np.int64)
            if not len(keep):
                continue
            # By chunk, then line (a chunk's entries are of one file): each chunk's rows one run.
            keep = keep[np.lexsort(([group[i][1] for i in keep], holders[keep]))]
            chunk_ids = holders[keep]
            dims = size // 2
            block = self._blocks.get(dims)
            if block is None:
                block = self._blocks[dims] = _Block(dims)
            first = block.add([group[i] for i in keep], chunk_ids.tolist())
            bounds = np.flatnonzero(np.diff(chunk_ids)) + 1
            for run in np.split(np.arange(first, first + len(keep)), bounds):
                found.setdefault(int(chunk_ids[run[0] - first]), {})[dims] = run
        for c in missing:
            self.rows[c] = found.get(c, {})

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
        sims = float16_table().take(stacked.view(np.uint16)) @ (q / norm)
        k = min(k, len(rows))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [block.hit(int(rows[i]), float(sims[i]), stacked[i]) for i in top]


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
        bits = np.frombuffer(b"".join(e[3] for e in entries), dtype=np.uint16).reshape(len(entries), dims)
        matrix = float16_table().take(bits)
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
        self.paths += [e[0] for e in entries]
        self.starts += [e[1] for e in entries]
        self.ends += [e[2] for e in entries]
        return first

    def hit(self, row: int, similarity: float, vector: np.ndarray) -> EntryHit:
        return EntryHit(self.chunks[row], self.paths[row], self.starts[row], self.ends[row], similarity, vector)


#: How many of a file's chunks, the last to start at or before an entry's
#: last line, are looked at first for the entry's holder. Chunks are short
#: and overlap at most their neighbours, so the chunks an entry of a few
#: lines overlaps are among them; an entry longer than that (a long
#: paragraph or list item over many chunks) overlaps chunks before them,
#: and its holder is looked for among every chunk of its file.
HOLDER_WINDOW = 8


class _Holders:
    """The chunk that holds an entry most centrally: one whose lines hold
    all of the entry's if any does, else one that overlaps it; of those, the
    one whose middle is nearest the entry's (then the lowest rowid)."""

    def __init__(self) -> None:
        #: Each file's chunks by first line: starts, ends, rowids.
        self.by_path: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def add(self, chunks: Iterable[Sequence[Any]]) -> None:
        """Learn the chunks of files not met yet (``chunks``: every chunk of
        some files, ``(rowid, path, start, end)``)."""
        import numpy as np

        new: dict[str, list[tuple[int, int, int]]] = {}
        for rowid, path, start, end in chunks:
            if path not in self.by_path:
                new.setdefault(path, []).append((int(start), int(end), int(rowid)))
        for path, spans in new.items():
            spans.sort()
            columns = np.array(spans, dtype=np.int64).T
            self.by_path[path] = (columns[0], columns[1], columns[2])

    def of(self, paths: list[str], starts: list[int], ends: list[int]) -> np.ndarray:
        """The holders of the entries ``paths[i]`` lines ``starts[i]``-``ends[i]``
        (-1 where no chunk overlaps one), all at once: the chunks of the
        entries' files side by side, each entry's candidates the
        :data:`HOLDER_WINDOW` last to start at or before its last line, or
        every chunk of its file where one before those reaches the entry."""
        import numpy as np

        code = {p: i for i, p in enumerate(dict.fromkeys(p for p in paths if p in self.by_path))}
        if not code:
            return np.full(len(paths), -1, dtype=np.int64)
        files = [self.by_path[p] for p in code]
        sizes = np.array([len(f[0]) for f in files], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        c_start, c_end, c_row = (np.concatenate([f[k] for f in files]) for k in range(3))
        chunks = (c_start, c_end, c_row)
        c_file = np.repeat(np.arange(len(files), dtype=np.int64), sizes)
        e_file = np.array([code.get(p, -1) for p in paths], dtype=np.int64)
        known = e_file >= 0
        e_start, e_end = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
        # Sorted by (file, first line): one search finds, per entry, the first chunk of its file starting after its last line.
        shift = np.int64(1) << 32
        at = np.searchsorted(c_file * shift + c_start, np.maximum(e_file, 0) * shift + e_end, side="right")
        first = offsets[np.maximum(e_file, 0)]
        holders = _nearest(chunks, at, first, HOLDER_WINDOW, e_start, e_end, known)
        # The window settles an entry's holder unless a chunk of its file
        # before the window reaches the entry's first line (the chunks after
        # the window start after its last): the furthest line each file's
        # chunks reach so far, by one running maximum over them all.
        reach = np.maximum.accumulate(c_file * shift + c_end) - c_file * shift
        before = at - HOLDER_WINDOW - 1
        u = np.flatnonzero(known & (before >= first) & (reach[np.maximum(before, 0)] >= e_start))
        if len(u):
            holders[u] = _nearest(chunks, at[u], first[u], int((at - first)[u].max()), e_start[u], e_end[u], known[u])
        return holders


def _nearest(
    chunks: tuple[np.ndarray, np.ndarray, np.ndarray],
    at: np.ndarray,
    first: np.ndarray,
    width: int,
    e_start: np.ndarray,
    e_end: np.ndarray,
    known: np.ndarray,
) -> np.ndarray:
    """Each entry's holder (:class:`_Holders`) among the ``width`` chunks
    before index ``at`` of ``chunks`` (starts, ends, rowids, sorted by file
    and first line) that are of its file (from index ``first``); -1 where
    none overlaps it or its file is not ``known``."""
    import numpy as np

    c_start, c_end, c_row = chunks
    cand = at[:, None] - np.arange(1, width + 1, dtype=np.int64)
    ok = (cand >= first[:, None]) & known[:, None]
    cand = np.maximum(cand, 0)
    s, e = c_start[cand], c_end[cand]
    ok &= e >= e_start[:, None]
    inside = ok & (s <= e_start[:, None]) & (e >= e_end[:, None])
    ok &= inside | ~inside.any(axis=1)[:, None]
    far = np.iinfo(np.int64).max
    distance = np.where(ok, np.abs(s + e - (e_start + e_end)[:, None]), far)
    ok &= distance == distance.min(axis=1)[:, None]
    holders = np.where(ok, c_row[cand], far).min(axis=1)
    return np.where(ok.any(axis=1), holders, -1)
