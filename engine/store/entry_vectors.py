"""Entry-level vector search, the same for every store (DESIGN.md §7).

An entry (a list item, a paragraph, a turn) has a vector of its own, and
a short text's vector says what that text says where a chunk's averages a
whole exchange. The stores keep entry vectors as float16 blobs beside the
entries; a search ranks the entries of its candidate chunks (the chunk
vector and keyword pools) in an in-memory matrix that the store loads on
first use and again when its data changed (the store's ``cached``), so no
store needs a vector index over entries and a search costs the same at
any size. Scanning every entry instead (130,000 in a 20,000-chunk index)
took longer than the rest of the search, and a chunk-vector pool of 200 to
draw entries from cost the same for nothing on LoCoMo.

Each entry is tied to the chunk that holds it most centrally (its lines
inside the chunk's, the chunk's middle nearest the entry's; found when the
matrix loads), so a hit on an entry is a candidate for that chunk and the
search can cite the entry's lines.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .base import EntryHit, entry_vector

if TYPE_CHECKING:
    import numpy as np

#: Per entry with a vector: its lines and its vector; and per
#: chunk its lines. Both stores run these with their own table names.
ENTRIES_SQL = "SELECT path, start_line, end_line, vector FROM {entries} WHERE vector IS NOT NULL"
CHUNKS_SQL = "SELECT rowid, path, start_line, end_line FROM {chunks}"


class EntryMatrix:
    """Every entry vector of an index as one normalised float16 matrix,
    with the rows of each chunk's entries."""

    def __init__(self, entries: Iterable[Sequence[Any]], chunks: Iterable[Sequence[Any]]):
        """``entries``: (path, start, end, float16 blob) rows;
        ``chunks``: (rowid, path, start, end) rows."""
        import numpy as np

        holder = _Holders(chunks)
        paths: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        rowids: list[int] = []
        vectors: list[np.ndarray] = []
        for path, start, end, blob in entries:
            vec = entry_vector(bytes(blob) if blob is not None else None)
            chunk = holder(path, int(start), int(end))
            if vec is None or chunk is None:
                continue
            paths.append(path)
            starts.append(int(start))
            ends.append(int(end))
            rowids.append(chunk)
            vectors.append(vec)
        self.paths, self.starts, self.ends = paths, starts, ends
        self.chunks = np.asarray(rowids, dtype=np.int64)
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), dtype=np.float32)
        if len(matrix):
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix /= np.where(norms > 0, norms, 1.0)
        # Kept as float16, as stored: half the memory, and a search reads
        # only the rows of its candidate chunks.
        self.matrix = matrix.astype(np.float16)
        self.rows: dict[int, list[int]] = {}
        for row, chunk in enumerate(rowids):
            self.rows.setdefault(chunk, []).append(row)

    def __len__(self) -> int:
        return len(self.paths)

    def search(self, query: np.ndarray, k: int, chunks: Iterable[int]) -> list[EntryHit]:
        """The ``k`` entries of ``chunks`` nearest ``query`` by cosine, best first."""
        import numpy as np

        if not len(self) or k <= 0 or query is None or len(query) != self.matrix.shape[1]:
            return []
        rows = np.asarray([r for chunk in dict.fromkeys(chunks) for r in self.rows.get(chunk, ())], dtype=np.int64)
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not len(rows) or norm == 0:
            return []
        sims = self.matrix[rows].astype(np.float32) @ (q / norm)
        k = min(k, len(rows))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [
            EntryHit(int(self.chunks[rows[i]]), self.paths[rows[i]], self.starts[rows[i]], self.ends[rows[i]], float(sims[i])) for i in top
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
