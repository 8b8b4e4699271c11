"""Entry-level vector search, the same for every store (DESIGN.md §7).

An entry (a list item, a paragraph, a turn) has a vector of its own, and
a short text's vector says what that text says where a chunk's averages a
whole exchange. The stores keep entry vectors as float16 blobs beside the
entries; a search ranks them all at once in an in-memory matrix that the
store loads on first use and again when its data changed (the store's
``cached``), so no store needs a vector index over entries.

Each entry is tied to the chunk that holds it most centrally (its lines
inside the chunk's, the chunk's middle nearest the entry's; found when the
matrix loads), so a hit on an
entry is a candidate for that chunk and the search can cite the entry's
lines.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Collection, Iterable, Sequence

from .base import EntryHit, entry_vector

if TYPE_CHECKING:
    import numpy as np

#: Per entry with a vector: its lines, its source and its vector; and per
#: chunk its lines. Both stores run these with their own table names.
ENTRIES_SQL = "SELECT path, start_line, end_line, source, vector FROM {entries} WHERE vector IS NOT NULL"
CHUNKS_SQL = "SELECT rowid, path, start_line, end_line FROM {chunks}"


class EntryMatrix:
    """Every entry vector of an index as one normalised float32 matrix."""

    def __init__(self, entries: Iterable[Sequence[Any]], chunks: Iterable[Sequence[Any]]):
        """``entries``: (path, start, end, source, float16 blob) rows;
        ``chunks``: (rowid, path, start, end) rows."""
        import numpy as np

        holder = _Holders(chunks)
        paths: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        sources: list[str] = []
        rowids: list[int] = []
        vectors: list[np.ndarray] = []
        for path, start, end, source, blob in entries:
            vec = entry_vector(bytes(blob) if blob is not None else None)
            chunk = holder(path, int(start), int(end))
            if vec is None or chunk is None:
                continue
            paths.append(path)
            starts.append(int(start))
            ends.append(int(end))
            sources.append(source)
            rowids.append(chunk)
            vectors.append(vec)
        self.paths, self.starts, self.ends, self.sources = paths, starts, ends, sources
        self.chunks = np.asarray(rowids, dtype=np.int64)
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), dtype=np.float32)
        if len(matrix):
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix /= np.where(norms > 0, norms, 1.0)
        self.matrix = matrix

    def __len__(self) -> int:
        return len(self.paths)

    def search(
        self, query: np.ndarray, k: int, sources: Sequence[str] | None = None, paths: Collection[str] | None = None
    ) -> list[EntryHit]:
        """The ``k`` entries nearest ``query`` by cosine, best first, among
        those of ``sources`` and ``paths`` (None: all)."""
        import numpy as np

        if not len(self) or k <= 0 or query is None or len(query) != self.matrix.shape[1]:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return []
        sims = self.matrix @ (q / norm)
        if sources is not None or paths is not None:
            wanted_sources = set(sources) if sources is not None else None
            wanted_paths = set(paths) if paths is not None else None
            keep = np.fromiter(
                (
                    (wanted_sources is None or s in wanted_sources) and (wanted_paths is None or p in wanted_paths)
                    for s, p in zip(self.sources, self.paths)
                ),
                dtype=bool,
                count=len(self),
            )
            sims = np.where(keep, sims, -np.inf)
        k = min(k, len(self))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(self) else np.arange(len(self))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [
            EntryHit(int(self.chunks[i]), self.paths[i], self.starts[i], self.ends[i], float(sims[i])) for i in top if np.isfinite(sims[i])
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
